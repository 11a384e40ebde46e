//! The settings record of format 6 on: JSON that names every field.
//!
//! ```text
//! {"settings":{"normalize":true,"hmm":true,...,"latin_count_pieces_ratio":2},
//!  "word_lists":{"boilerplate":"<16 hex digits>","stop_words":"<16 hex digits>"}}
//! ```
//!
//! `settings` is [`SimhashConfig`]'s serde form; a field it lacks reads as the field's serde
//! default. `word_lists` holds the xxh3-64 content hash of each built-in list the settings
//! use. A name this build does not know, at any level, is [`Error::UnknownSetting`].

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use super::Recorded;
use crate::codec::MAX_VALUE_LEN;
use crate::error::{Error, Result};
use crate::keys;
use crate::simhash::SimhashConfig;

const SETTINGS: &str = "settings";
const WORD_LISTS: &str = "word_lists";

/// A content hash as the record writes it: 16 lowercase hex digits.
pub(super) fn hex(hash: u64) -> String {
    format!("{hash:016x}")
}

#[derive(Serialize)]
struct Written<'a> {
    settings: &'a SimhashConfig,
    word_lists: BTreeMap<&'a str, String>,
}

pub(super) fn encode(recorded: &Recorded) -> Vec<u8> {
    let written = Written {
        settings: &recorded.config,
        word_lists: recorded
            .word_lists
            .iter()
            .map(|(name, hash)| (name.as_str(), hex(*hash)))
            .collect(),
    };
    // Serializing plain fields and strings into a Vec cannot fail.
    serde_json::to_vec(&written).unwrap_or_default()
}

pub(super) fn decode(bytes: &[u8], path: &Path) -> Result<Recorded> {
    let damaged = |message: String| Error::Decode {
        column_family: keys::META_FAMILY,
        key: keys::hex(keys::META_SIMHASHER),
        what: "settings record",
        message,
    };
    let unknown = |name: String| Error::UnknownSetting {
        path: path.to_path_buf(),
        name,
    };
    if bytes.len() > MAX_VALUE_LEN {
        return Err(damaged(format!("{} bytes", bytes.len())));
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| damaged(e.to_string()))?;
    let Value::Object(mut record) = value else {
        return Err(damaged("not a JSON object".into()));
    };
    let settings = record
        .remove(SETTINGS)
        .ok_or_else(|| damaged(format!("no `{SETTINGS}`")))?;
    let lists = record
        .remove(WORD_LISTS)
        .unwrap_or_else(|| Value::Object(Map::new()));
    if let Some(name) = record.keys().next() {
        return Err(unknown(name.clone()));
    }

    let Value::Object(settings) = settings else {
        return Err(damaged(format!("`{SETTINGS}` is not an object")));
    };
    let known = super::named(&SimhashConfig::default());
    if let Some(name) = settings.keys().find(|name| !known.contains_key(*name)) {
        return Err(unknown(name.clone()));
    }
    let config: SimhashConfig = serde_json::from_value(Value::Object(settings))
        .map_err(|e| damaged(format!("{SETTINGS}: {e}")))?;

    let Value::Object(lists) = lists else {
        return Err(damaged(format!("`{WORD_LISTS}` is not an object")));
    };
    let mut word_lists = BTreeMap::new();
    for (name, hash) in lists {
        if !SimhashConfig::WORD_LISTS.iter().any(|l| l.name == name) {
            return Err(unknown(format!("{WORD_LISTS}.{name}")));
        }
        let hash = hash
            .as_str()
            .filter(|h| h.len() == 16)
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .ok_or_else(|| damaged(format!("{WORD_LISTS}.{name} is not 16 hex digits: {hash}")))?;
        word_lists.insert(name, hash);
    }
    Ok(Recorded { config, word_lists })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record_with(edit: impl FnOnce(&mut Map<String, Value>)) -> Vec<u8> {
        let config = SimhashConfig::default();
        let mut record = match serde_json::from_slice(&super::super::encode(&config)) {
            Ok(Value::Object(m)) => m,
            other => panic!("{other:?}"),
        };
        edit(&mut record);
        serde_json::to_vec(&record).unwrap()
    }

    #[test]
    fn the_record_names_every_setting_and_the_lists_it_uses() {
        let bytes = super::super::encode(&SimhashConfig::default());
        let text = std::str::from_utf8(&bytes).unwrap();
        assert!(
            text.starts_with(r#"{"settings":{"normalize":true,"hmm":true,"#),
            "{text}"
        );
        assert!(text.contains(
            r#""latin_count_pieces_ratio":2,"sketch":"None"},"word_lists":{"boilerplate":""#
        ));
        let recorded = decode(&bytes, Path::new("s")).unwrap();
        assert_eq!(recorded.config, SimhashConfig::default());
        assert_eq!(recorded.word_lists.len(), 2);
    }

    #[test]
    fn unknown_names_are_refused_asking_for_an_upgrade() {
        let path = Path::new("store");
        let cases: [(&str, Vec<u8>); 3] = [
            (
                "stem_words",
                record_with(|r| {
                    r["settings"]["stem_words"] = json!(true);
                }),
            ),
            (
                "word_lists.synonyms",
                record_with(|r| {
                    r["word_lists"]["synonyms"] = json!("0000000000000001");
                }),
            ),
            (
                "tokenizer",
                record_with(|r| {
                    r.insert("tokenizer".into(), json!("jieba-0.12"));
                }),
            ),
        ];
        for (name, bytes) in cases {
            let err = decode(&bytes, path).unwrap_err();
            assert!(
                matches!(&err, Error::UnknownSetting { name: n, .. } if n == name),
                "{err}"
            );
            let message = err.to_string();
            assert!(
                message.contains(&format!("setting `{name}`, which this build does not know"))
                    && message.contains("upgrade simhash-store"),
                "{message}"
            );
        }
    }

    #[test]
    fn a_missing_setting_reads_as_the_behaviour_from_before_it() {
        // The settings 0.2 had, as 0.2 would have named them: every later one is absent.
        let bytes = record_with(|r| {
            let settings = r["settings"].as_object_mut().unwrap();
            for newer in [
                "drop_boilerplate",
                "word_char_shingles_within_words",
                "latin_count_pieces",
                "latin_count_pieces_ratio",
            ] {
                settings.remove(newer).unwrap();
            }
            r["word_lists"]
                .as_object_mut()
                .unwrap()
                .remove("boilerplate");
        });
        let recorded = decode(&bytes, Path::new("s")).unwrap();
        assert_eq!(Some(recorded.config), SimhashConfig::release_default(2));
        // A setting that every record has is required.
        let bytes = record_with(|r| {
            r["settings"].as_object_mut().unwrap().remove("seed");
        });
        assert!(matches!(
            decode(&bytes, Path::new("s")),
            Err(Error::Decode {
                what: "settings record",
                ..
            })
        ));
    }

    #[test]
    fn damaged_records_are_decode_errors() {
        let path = Path::new("s");
        for bytes in [
            &b""[..],
            b"[]",
            b"{}",
            br#"{"settings":1}"#,
            br#"{"settings":{"normalize":2}}"#,
            br#"{"settings":{},"word_lists":{"idf":"12"}}"#,
        ] {
            assert!(
                matches!(decode(bytes, path), Err(Error::Decode { .. })),
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
        let mut trailing = super::super::encode(&SimhashConfig::default());
        trailing.push(b'x');
        assert!(matches!(decode(&trailing, path), Err(Error::Decode { .. })));
    }
}
