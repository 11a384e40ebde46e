//! A store's fingerprint settings record (`meta/simhasher`): what it is made of, how each
//! format writes it, and the checks on open.
//!
//! From format 6 on the record names its fields (`record.rs`): the [`SimhashConfig`] by field
//! name, and the content hash of each built-in word list those settings fingerprint with
//! ([`SimhashConfig::WORD_LISTS`]). A new setting or an edited list needs no new format: a
//! record without a field reads as that field's serde default (the behaviour from before
//! it), a field this build does not know is refused ([`Error::UnknownSetting`]), and a list
//! whose hash differs from this build's is refused ([`Error::WordListChanged`]), so no store
//! mixes fingerprints made two ways. Formats 1 to 5 wrote the fields in order, without names
//! (`legacy.rs`); their records are read, never rewritten, so the builds that made them can
//! still open them.

mod legacy;
mod record;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::format::{Format, SettingsEncoding};
use crate::simhash::SimhashConfig;

/// What a settings record holds, whichever format wrote it.
#[derive(Debug, Clone, PartialEq)]
struct Recorded {
    config: SimhashConfig,
    /// The content hash (xxh3-64) of each built-in word list, by name.
    word_lists: BTreeMap<String, u64>,
}

/// The settings record a new store writes (format 6 on).
pub(crate) fn encode(config: &SimhashConfig) -> Vec<u8> {
    record::encode(&Recorded {
        config: config.clone(),
        word_lists: word_lists_of(config),
    })
}

/// The configuration recorded by the store at `path` (of `format`), once this
/// build's word lists are known to be those its fingerprints were made with.
///
/// # Errors
/// [`Error::Decode`] for a damaged record, [`Error::UnknownSetting`] for a setting this build
/// does not know, [`Error::WordListChanged`] for a list it has another version of.
pub(crate) fn decode(bytes: &[u8], format: Format, path: &Path) -> Result<SimhashConfig> {
    let recorded = match format.settings_encoding() {
        SettingsEncoding::ByName => record::decode(bytes, path)?,
        SettingsEncoding::Positional => legacy::decode(bytes, format)?,
    };
    check_word_lists(&recorded, path)?;
    Ok(recorded.config)
}

/// Fails with [`Error::ConfigMismatch`], naming each setting that differs, unless `requested`
/// is the configuration `stored` by the store at `path`.
pub(crate) fn check_requested(
    path: &Path,
    stored: &SimhashConfig,
    requested: &SimhashConfig,
) -> Result<()> {
    if stored == requested {
        return Ok(());
    }
    let json = |c: &SimhashConfig| serde_json::to_string(c).unwrap_or_else(|e| e.to_string());
    Err(Error::ConfigMismatch {
        path: path.to_path_buf(),
        differences: differences(stored, requested),
        stored: json(stored),
        requested: json(requested),
    })
}

/// `config` by field name.
fn named(config: &SimhashConfig) -> Map<String, Value> {
    match serde_json::to_value(config) {
        Ok(Value::Object(fields)) => fields,
        _ => Map::new(),
    }
}

impl SimhashConfig {
    /// Each setting whose value in `self` (a store's) differs from `requested`'s, by name:
    /// "`seed` is 1 in the store, 0 requested", joined by "; " in the order of the names;
    /// empty when they agree. The text of [`Error::ConfigMismatch`]'s `differences`.
    pub fn differences(&self, requested: &SimhashConfig) -> String {
        differences(self, requested)
    }
}

/// Each setting whose values differ, by name: "`seed` is 1 in the store, 0 requested", in
/// the order of the names.
fn differences(stored: &SimhashConfig, requested: &SimhashConfig) -> String {
    let (stored, requested) = (named(stored), named(requested));
    stored
        .iter()
        .filter_map(|(name, value)| {
            let asked = requested.get(name).unwrap_or(&Value::Null);
            (asked != value).then(|| format!("`{name}` is {value} in the store, {asked} requested"))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The content hash of each built-in list `config` fingerprints with, by name.
fn word_lists_of(config: &SimhashConfig) -> BTreeMap<String, u64> {
    SimhashConfig::WORD_LISTS
        .iter()
        .filter(|list| (list.used_by)(config))
        .map(|list| (list.name.to_string(), (list.content_hash)()))
        .collect()
}

/// Fails with [`Error::WordListChanged`] for the first list the recorded settings use whose
/// recorded hash is not this build's.
fn check_word_lists(recorded: &Recorded, path: &Path) -> Result<()> {
    for list in SimhashConfig::WORD_LISTS {
        if !(list.used_by)(&recorded.config) {
            continue;
        }
        let current = (list.content_hash)();
        let stored = recorded.word_lists.get(list.name).copied();
        if stored != Some(current) {
            return Err(Error::WordListChanged {
                path: path.to_path_buf(),
                list: list.what,
                stored: stored.map_or_else(|| "none".into(), record::hex),
                current: record::hex(current),
            });
        }
    }
    Ok(())
}

/// The settings records' part of `codec::check_decoders`: every format's decoder on
/// `bytes`, which must not panic, and re-encodes what it decodes to the same settings.
#[cfg(any(test, fuzzing))]
pub(crate) fn check_decoders(bytes: &[u8]) {
    let path = Path::new("fuzz");
    if let Ok(recorded) = record::decode(bytes, path) {
        let again = record::decode(&record::encode(&recorded), path);
        assert!(
            again.as_ref().ok() == Some(&recorded),
            "{recorded:?} -> {again:?}"
        );
        // A stored configuration is validated on open, never trusted.
        let _ = crate::Simhasher::new(recorded.config);
    }
    legacy::check_decoders(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simhash::{IdfWeighting, TfScaling};
    use crate::sketch::SketchKind;

    /// Every setting, each with a value other than its default (a new field needs a line here
    /// only if the generic tests below should see it changed).
    fn every_setting_changed() -> SimhashConfig {
        let mut changed = named(&SimhashConfig::default());
        for value in changed.values_mut() {
            let other = match &*value {
                Value::Bool(b) => Value::Bool(!b),
                Value::Number(n) => Value::from(if n.as_u64() == Some(2) { 3 } else { 2 }),
                unchanged => unchanged.clone(),
            };
            *value = other;
        }
        changed.insert("tf".into(), serde_json::json!(TfScaling::LengthAdaptive));
        changed.insert("idf".into(), serde_json::json!(IdfWeighting::Jieba));
        changed.insert("sketch".into(), serde_json::json!(SketchKind::MinHash));
        let config: SimhashConfig =
            serde_json::from_value(Value::Object(changed)).expect("every field by name");
        config
    }

    #[test]
    fn every_setting_round_trips_and_is_named_in_a_mismatch() -> Result<()> {
        // The record and the mismatch message go through the settings' names: no field is
        // listed here or in `record.rs`, so a new field is covered without a change.
        let (default, changed) = (SimhashConfig::default(), every_setting_changed());
        let names = named(&default);
        for (name, value) in &named(&changed) {
            assert_ne!(Some(value), names.get(name), "{name} is not changed");
        }
        let path = Path::new("store");
        for config in [&default, &changed] {
            let decoded = decode(&encode(config), Format::V6, path)?;
            assert_eq!(&decoded, config);
        }
        let err = check_requested(path, &default, &changed).unwrap_err();
        let message = err.to_string();
        for (name, value) in &names {
            let stored = format!("`{name}` is {value} in the store");
            assert!(message.contains(&stored), "{name} not named: {message}");
        }
        assert!(matches!(
            &err,
            Error::ConfigMismatch { differences, .. } if differences.matches("; ").count() == names.len() - 1
        ));
        assert!(check_requested(path, &changed, &changed).is_ok());
        // One setting: one difference, with both values.
        let seed = default.clone().with_seed(7);
        let err = check_requested(path, &seed, &default).unwrap_err();
        assert!(matches!(
            &err,
            Error::ConfigMismatch { differences, .. } if differences == "`seed` is 7 in the store, 0 requested"
        ));
        Ok(())
    }

    #[test]
    fn a_changed_list_is_refused_naming_it_and_both_hashes() {
        let path = Path::new("store");
        let config = SimhashConfig::default()
            .with_idf(IdfWeighting::Jieba)
            .with_drop_boilerplate(true)
            .with_stop_words(true);
        let recorded = Recorded {
            word_lists: word_lists_of(&config),
            config,
        };
        assert_eq!(recorded.word_lists.len(), SimhashConfig::WORD_LISTS.len());
        assert!(check_word_lists(&recorded, path).is_ok());
        for list in SimhashConfig::WORD_LISTS {
            let current = (list.content_hash)();
            let mut edited = recorded.clone();
            edited.word_lists.insert(list.name.into(), current ^ 1);
            let bytes = record::encode(&edited);
            let err = decode(&bytes, Format::V6, path).unwrap_err();
            let (stored, now) = (record::hex(current ^ 1), record::hex(current));
            assert!(
                matches!(&err, Error::WordListChanged { list: l, stored: s, current: c, .. }
                    if *l == list.what && *s == stored && *c == now),
                "{err}"
            );
            let message = err.to_string();
            for part in [list.what, &stored, &now, "new store"] {
                assert!(message.contains(part), "{part}: {message}");
            }
            // A list the settings do not use is not checked.
            let mut unused = edited.clone();
            unused.config = SimhashConfig::default()
                .with_idf(IdfWeighting::None)
                .with_drop_boilerplate(false)
                .with_stop_words(false);
            assert!(check_word_lists(&unused, path).is_ok());
            // A list the settings use must be recorded.
            let mut missing = recorded.clone();
            missing.word_lists.remove(list.name);
            assert!(matches!(
                check_word_lists(&missing, path),
                Err(Error::WordListChanged { stored, .. }) if stored == "none"
            ));
        }
    }

    #[test]
    fn new_stores_record_only_the_lists_they_use() {
        let none = SimhashConfig::default()
            .with_stop_words(false)
            .with_drop_boilerplate(false);
        assert!(word_lists_of(&none).is_empty());
        let default = word_lists_of(&SimhashConfig::default());
        let names: Vec<&str> = default.keys().map(String::as_str).collect();
        assert_eq!(names, ["boilerplate", "stop_words"]);
        let hashes: std::collections::HashSet<u64> = SimhashConfig::WORD_LISTS
            .iter()
            .map(|list| (list.content_hash)())
            .collect();
        assert_eq!(hashes.len(), 3, "each list hashes to its own value");
    }

    #[test]
    fn fuzz_checks_hold_for_records_of_every_format() {
        for config in [SimhashConfig::default(), every_setting_changed()] {
            check_decoders(&encode(&config));
        }
        let old = SimhashConfig::release_default(4).expect("0.4");
        check_decoders(&legacy::encode(&old, Format::V4));
    }
}
