//! Encoding of every value the store writes, behind one module. Values use bincode 2 (its
//! `standard` configuration: little-endian varints) through serde; decoding is bounded to
//! [`MAX_VALUE_LEN`] bytes of allocation so a damaged or hostile value cannot exhaust memory.
//!
//! | family | value | encoding |
//! |---|---|---|
//! | `block0..3` | empty | — |
//! | `docs` | [`Document`] | bincode: fingerprint (varint u64) · key (option: 0, or 1 · varint length · UTF-8) · text_len (option of varint u64) · added (varint u64, µs since the Unix epoch) |
//! | `keys` | document id | 8 bytes big-endian (see [`crate::keys`]) |
//! | `meta` `format_version` | u32 | 4 bytes big-endian |
//! | `meta` `simhasher` | [`SimhashConfig`] | bincode of the serde form |
//! | `meta` `doc_count` | u64 | 8 bytes big-endian |

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::keys;
use crate::simhash::SimhashConfig;

/// The largest value decoding will allocate for.
pub(crate) const MAX_VALUE_LEN: usize = 64 * 1024;

/// Everything the store keeps about one document (its id is the key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Document {
    /// The document's fingerprint.
    pub fingerprint: Fingerprint,
    /// The external key (URL, file path), if it was given one.
    pub key: Option<String>,
    /// Length in bytes of the text it was fingerprinted from, when known.
    pub text_len: Option<u64>,
    /// When it was stored, in microseconds since the Unix epoch.
    pub added: u64,
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<MAX_VALUE_LEN>()
}

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    // Encoding into a Vec only fails for types serde cannot describe, which ours are not,
    // or past the size limit, which callers prevent by bounding the key length.
    bincode::serde::encode_to_vec(value, config()).unwrap_or_default()
}

fn decode<T: for<'de> Deserialize<'de>>(
    bytes: &[u8],
    column_family: &'static str,
    key: &[u8],
    what: &'static str,
) -> Result<T> {
    let err = |message: String| Error::Decode {
        column_family,
        key: keys::hex(key),
        what,
        message,
    };
    let (value, used) =
        bincode::serde::decode_from_slice(bytes, config()).map_err(|e| err(e.to_string()))?;
    if used != bytes.len() {
        return Err(err(format!("{} trailing bytes", bytes.len() - used)));
    }
    Ok(value)
}

pub(crate) fn encode_document(doc: &Document) -> Vec<u8> {
    encode(doc)
}

pub(crate) fn decode_document(bytes: &[u8], key: &[u8]) -> Result<Document> {
    decode(bytes, keys::DOCS_FAMILY, key, "document")
}

pub(crate) fn encode_config(config: &SimhashConfig) -> Vec<u8> {
    encode(config)
}

pub(crate) fn decode_config(bytes: &[u8]) -> Result<SimhashConfig> {
    decode(
        bytes,
        keys::META_FAMILY,
        keys::META_SIMHASHER,
        "fingerprint configuration",
    )
}

/// Encodes another `meta` record (the bulk loader's journal) in the same bincode configuration.
pub(crate) fn encode_meta<T: Serialize>(value: &T) -> Vec<u8> {
    encode(value)
}

/// Decodes a `meta` record written by [`encode_meta`].
pub(crate) fn decode_meta<T: for<'de> Deserialize<'de>>(
    bytes: &[u8],
    key: &[u8],
    what: &'static str,
) -> Result<T> {
    decode(bytes, keys::META_FAMILY, key, what)
}

pub(crate) fn encode_u32(v: u32) -> [u8; 4] {
    v.to_be_bytes()
}

pub(crate) fn decode_u32(bytes: &[u8], key: &[u8]) -> Result<u32> {
    bytes
        .try_into()
        .map(u32::from_be_bytes)
        .map_err(|_| Error::Decode {
            column_family: keys::META_FAMILY,
            key: keys::hex(key),
            what: "u32",
            message: format!("expected 4 bytes, found {}", bytes.len()),
        })
}

pub(crate) fn encode_u64(v: u64) -> [u8; 8] {
    v.to_be_bytes()
}

pub(crate) fn decode_u64(bytes: &[u8], key: &[u8]) -> Result<u64> {
    bytes
        .try_into()
        .map(u64::from_be_bytes)
        .map_err(|_| Error::Decode {
            column_family: keys::META_FAMILY,
            key: keys::hex(key),
            what: "u64",
            message: format!("expected 8 bytes, found {}", bytes.len()),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn documents_round_trip(fp: u64, key in proptest::option::of(".{0,40}"), text_len: Option<u64>, added: u64) {
            let doc = Document { fingerprint: Fingerprint(fp), key, text_len, added };
            prop_assert_eq!(decode_document(&encode_document(&doc), b"k").unwrap(), doc);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_document(&bytes, b"k");
            let _ = decode_config(&bytes);
        }
    }

    #[test]
    fn hostile_length_is_refused_without_allocating() {
        // fingerprint 0, Some(key) with a claimed length of 2^40 bytes.
        let mut bytes = vec![0u8, 1, 253];
        bytes.extend_from_slice(&(1u64 << 40).to_le_bytes());
        let err = decode_document(&bytes, b"k").unwrap_err();
        assert!(
            matches!(
                err,
                Error::Decode {
                    column_family: "docs",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn trailing_bytes_are_an_error() {
        let doc = Document {
            fingerprint: Fingerprint(1),
            key: None,
            text_len: None,
            added: 0,
        };
        let mut bytes = encode_document(&doc);
        bytes.push(0);
        assert!(matches!(
            decode_document(&bytes, b"k"),
            Err(Error::Decode { .. })
        ));
    }

    #[test]
    fn config_round_trips() {
        let c = SimhashConfig::default();
        assert_eq!(decode_config(&encode_config(&c)).unwrap(), c);
    }
}
