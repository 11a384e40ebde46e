//! The settings records of formats 1 to 5, read and never written: the fingerprint
//! configuration of their time in bincode (`codec`'s configuration), its fields in the order
//! below without names. Each format appended fields (`Format::appended_settings`), so a format's record is
//! the one of format 5 less the fields it did not have; those read as absent, that is as
//! the field's serde default in [`SimhashConfig`] (off, the way such a store fingerprinted).
//!
//! These formats recorded no word lists: their stores were all made with the lists of
//! simhash-store 0.1 to 0.5 ([`WORD_LISTS`]), and are checked against them like the lists a
//! newer record names.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Recorded;
use crate::codec;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::keys;
use crate::simhash::SimhashConfig;

/// `TfScaling` as these formats wrote it: the variant index, the serde name the same.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum Tf {
    Raw,
    Sqrt,
    Log,
    Binary,
    LengthAdaptive,
}

/// `IdfWeighting` as these formats wrote it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum Idf {
    None,
    Jieba,
}

/// The record of format 5, field for field; the names are [`SimhashConfig`]'s.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    normalize: bool,
    hmm: bool,
    stop_words: bool,
    words: bool,
    word_shingles: u8,
    cjk_char_shingles: u8,
    word_char_shingles: u8,
    tf: Tf,
    idf: Idf,
    seed: u64,
    drop_boilerplate: bool,
    word_char_shingles_within_words: bool,
    latin_count_pieces: u8,
    latin_count_pieces_ratio: u8,
}

/// The content hashes (xxh3-64) of the built-in word lists of simhash-store 0.1 to 0.5,
/// which every store of formats 1 to 5 fingerprinted with.
const WORD_LISTS: [(&str, u64); 3] = [
    ("stop_words", 0x9220_4730_927f_2037),
    ("idf", 0xcda5_7e1d_1ed9_996a),
    ("boilerplate", 0xa70e_f778_3cdb_055d),
];

/// The fields a record of `format` lacks (those later formats appended), in record order.
fn missing_in(format: Format) -> impl Iterator<Item = &'static str> {
    Format::ALL
        .into_iter()
        .filter(move |later| *later > format)
        .flat_map(|later| later.appended_settings().iter().copied())
}

/// Reads the record of a store of `format` (1 to 5).
pub(super) fn decode(bytes: &[u8], format: Format) -> Result<Recorded> {
    let key = keys::META_SIMHASHER;
    let missing: Vec<&str> = missing_in(format).collect();
    // The missing fields are one byte each: decode as format 5 with them zero, then drop them.
    let padded = [bytes, &[0; 4][..missing.len()]].concat();
    let record: Record = codec::decode_meta(&padded, key, format.settings_what())?;
    let damaged = |message: String| Error::Decode {
        column_family: keys::META_FAMILY,
        key: keys::hex(key),
        what: format.settings_what(),
        message,
    };
    let Ok(Value::Object(mut named)) = serde_json::to_value(&record) else {
        return Err(damaged("not a record".into()));
    };
    for name in missing {
        named.remove(name);
    }
    let config: SimhashConfig =
        serde_json::from_value(Value::Object(named)).map_err(|e| damaged(e.to_string()))?;
    Ok(Recorded {
        config,
        word_lists: WORD_LISTS
            .iter()
            .map(|(name, hash)| (name.to_string(), *hash))
            .collect(),
    })
}

/// The record a store of `format` (1 to 5) would hold for `config`, whose fields
/// that format lacks must be absent-default (off). The tests and the fuzz check write old
/// records with it; stores never do.
#[cfg(any(test, fuzzing))]
pub(super) fn encode(config: &SimhashConfig, format: Format) -> Vec<u8> {
    let Ok(record) = serde_json::to_value(config).and_then(serde_json::from_value::<Record>) else {
        return Vec::new();
    };
    let mut bytes = codec::encode_meta(&record);
    let missing = missing_in(format).count();
    debug_assert!(
        bytes[bytes.len() - missing..].iter().all(|&b| b == 0),
        "{format} cannot hold {config:?}"
    );
    bytes.truncate(bytes.len() - missing);
    bytes
}

/// The legacy part of `settings::check_decoders`.
#[cfg(any(test, fuzzing))]
pub(super) fn check_decoders(bytes: &[u8]) {
    if let Ok(recorded) = decode(bytes, Format::V1) {
        // Formats 1 and 2 read as format 3 without `drop_boilerplate`.
        assert!(!recorded.config.drop_boilerplate);
        let mut v3 = bytes.to_vec();
        v3.push(0);
        assert_eq!(decode(&v3, Format::V3).ok().as_ref(), Some(&recorded));
        assert_eq!(
            decode(&encode(&recorded.config, Format::V1), Format::V1)
                .ok()
                .as_ref(),
            Some(&recorded)
        );
    }
    for version in [Format::V3, Format::V4, Format::V5] {
        if let Ok(recorded) = decode(bytes, version) {
            let again = decode(&encode(&recorded.config, version), version);
            assert!(
                again.as_ref().ok() == Some(&recorded),
                "{recorded:?} -> {again:?}"
            );
            // A stored configuration is validated on open, never trusted.
            let _ = crate::Simhasher::new(recorded.config);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simhash::TfScaling;
    use proptest::prelude::*;

    fn format(version: u32) -> Format {
        Format::from_version(version).unwrap()
    }

    /// The module's `decode` by format number.
    fn decode(bytes: &[u8], version: u32) -> Result<Recorded> {
        super::decode(bytes, format(version))
    }

    /// The module's `encode` by format number.
    fn encode(config: &SimhashConfig, version: u32) -> Vec<u8> {
        super::encode(config, format(version))
    }

    fn config(bytes: &[u8], version: u32) -> Result<SimhashConfig> {
        decode(bytes, version).map(|r| r.config)
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            for version in 1..=5 {
                let _ = decode(&bytes, version);
            }
            check_decoders(&bytes);
        }
    }

    #[test]
    fn the_record_is_simhash_configs_fields_in_order() {
        // Every field of the record is a setting of the same name, in the same order.
        let record = serde_json::to_string(&encode_as_record(&SimhashConfig::default())).unwrap();
        let config = serde_json::to_string(&SimhashConfig::default()).unwrap();
        assert!(config.starts_with(&record[..record.len() - 1]), "{record}");
        let appended: Vec<&str> = missing_in(Format::V1).collect();
        assert_eq!(
            appended,
            [
                "drop_boilerplate",
                "word_char_shingles_within_words",
                "latin_count_pieces",
                "latin_count_pieces_ratio"
            ]
        );
    }

    fn encode_as_record(config: &SimhashConfig) -> Record {
        serde_json::from_value(serde_json::to_value(config).unwrap()).unwrap()
    }

    #[test]
    fn the_word_lists_of_0_1_to_0_5_are_this_builds() {
        // Holds while the built-in lists are those 0.1 to 0.5 shipped. Once one is edited,
        // this fails, and so do the fixtures of the formats whose settings use it: stores of
        // those formats are then refused (Error::WordListChanged), as they must be.
        for list in SimhashConfig::WORD_LISTS {
            let old = WORD_LISTS.iter().find(|(name, _)| *name == list.name);
            assert_eq!(
                old.map(|(_, h)| *h),
                Some((list.content_hash)()),
                "{}",
                list.name
            );
        }
    }

    #[test]
    fn tf_scalings_keep_their_recorded_form() {
        // Formats 1 to 5 write an enum variant as its index: these bytes never change
        // (format 1 stores hold 0..=3, format 2 on also 4).
        let default = encode(&SimhashConfig::default(), 5);
        // Seven one-byte fields (four bools, three u8) come first.
        const TF_BYTE: usize = 7;
        for (tf, index) in [
            (TfScaling::Raw, 0u8),
            (TfScaling::Sqrt, 1),
            (TfScaling::Log, 2),
            (TfScaling::Binary, 3),
            (TfScaling::LengthAdaptive, 4),
        ] {
            let with_tf = SimhashConfig::default().with_tf(tf);
            let bytes = encode(&with_tf, 5);
            assert_eq!(bytes[TF_BYTE], index, "{tf:?}");
            assert_eq!(bytes[..TF_BYTE], default[..TF_BYTE]);
            assert_eq!(config(&bytes, 5).unwrap(), with_tf);
        }
    }

    #[test]
    fn older_formats_read_with_the_newer_fields_off() {
        // Format 3 appended `drop_boilerplate` (a bool), format 4
        // `word_char_shingles_within_words` (a bool) and `latin_count_pieces` (a u8), format
        // 5 `latin_count_pieces_ratio` (a u8): one byte each.
        let v1_config = SimhashConfig::default()
            .with_drop_boilerplate(false)
            .with_word_char_shingles_within_words(false)
            .with_latin_count_pieces(0)
            .with_latin_count_pieces_ratio(0)
            .with_tf(TfScaling::LengthAdaptive)
            .with_seed(300);
        let v3_config = v1_config.clone().with_drop_boilerplate(true);
        let v4_config = v3_config
            .clone()
            .with_word_char_shingles_within_words(true)
            .with_latin_count_pieces(4);
        let current = encode(&v1_config, 5);
        assert_eq!(current[current.len() - 4..], [0, 0, 0, 0]);
        let v1 = &current[..current.len() - 4];
        for version in [1, 2] {
            assert_eq!(encode(&v1_config, version), v1);
            assert_eq!(config(v1, version).unwrap(), v1_config);
            // A newer record in a store that says 1 or 2 is damage, not a configuration.
            assert!(matches!(
                config(&current, version),
                Err(Error::Decode { .. })
            ));
        }
        let v3 = encode(&v3_config, 3);
        assert_eq!(v3, encode(&v3_config, 5)[..v3.len()]);
        assert_eq!(v3.last(), Some(&1));
        assert_eq!(config(&v3, 3).unwrap(), v3_config);
        let v4 = encode(&v4_config, 4);
        assert_eq!(v4, encode(&v4_config, 5)[..v4.len()]);
        assert_eq!(v4[v4.len() - 3..], [1, 1, 4]);
        assert_eq!(config(&v4, 4).unwrap(), v4_config);
        // Each format's record is too short or too long for the others.
        let records = [(v1, [1, 2]), (&v3[..], [3, 3]), (&v4[..], [4, 4])];
        for (bytes, [from, to]) in records {
            for version in 1..=5 {
                if !(from..=to).contains(&version) {
                    assert!(
                        matches!(config(bytes, version), Err(Error::Decode { .. })),
                        "a format {from} record read as format {version}"
                    );
                }
            }
        }
        let new = SimhashConfig::default();
        let bytes = encode(&new, 5);
        assert_eq!(bytes[bytes.len() - 4..], [1, 1, 4, 2]);
        assert_eq!(config(&bytes, 5).unwrap(), new);
        assert!(matches!(config(&bytes, 4), Err(Error::Decode { .. })));
    }

    #[test]
    fn every_release_default_reads_back_from_its_format() {
        for (minor, format) in [(2, 1), (3, 3), (4, 4), (5, 5)] {
            let old = SimhashConfig::release_default(minor).unwrap();
            assert_eq!(
                config(&encode(&old, format), format).unwrap(),
                old,
                "0.{minor}"
            );
        }
    }

    #[test]
    fn config_round_trips() {
        let c = SimhashConfig::default();
        assert_eq!(config(&encode(&c, 5), 5).unwrap(), c);
    }
}
