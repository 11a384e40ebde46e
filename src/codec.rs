//! Encoding of every value the store writes, behind one module (the settings record, its
//! own concept, is in `crate::settings`). Values use bincode 2 (its `standard`
//! configuration: little-endian varints) through serde; decoding is bounded to
//! [`MAX_VALUE_LEN`] bytes of allocation so a damaged or hostile value cannot exhaust memory.
//!
//! | family | value | encoding |
//! |---|---|---|
//! | `block0..3`, formats 1-6 | empty | — |
//! | `block0..3`, formats 7 to 9: a chunk | up to 4,096 entries, bit-packed | [`crate::postings`] (`chunk.rs`) |
//! | `block0..3`, formats 8 and 9: a chunk's ids | its entries' ids, bit-packed | [`crate::postings`] (`chunk.rs`) |
//! | `block0..3`, formats 7 to 9: a delta | [`Delta`] | empty: added; 4 bytes big-endian: removed from the chunks of segments below this number |
//! | `docs` | [`Document`] | bincode: fingerprint (varint u64) · key (option: 0, or 1 · varint length · UTF-8) · text_len (option: 0, or 1 · varint u64) · added (varint u64, µs since the Unix epoch) · sketch (only in a store that keeps sketches: its [`SKETCH_BYTES`] bytes, no tag; a record that ends after `added` has none) |
//! | `keys` | document id | 8 bytes big-endian (see [`crate::keys`], which lays out every key) |
//! | `meta` `format_version` | u32 | 4 bytes big-endian |
//! | `meta` `simhasher` | fingerprint settings | format 6 on: JSON naming every setting and the content hash of each built-in word list they use (`settings/record.rs`); formats 1 to 5: bincode of the configuration's fields in order, without names (`settings/legacy.rs`) |
//! | `meta` `doc_count` | u64 | 8 bytes big-endian |
//! | `meta` `next_segment` (formats 7 to 9) | u32 | 4 bytes big-endian: the segment number the next bulk run writes its chunks in |
//! | `meta` `bulk_journal` (while a bulk run is ingested) | journal | bincode: doc_count (varint u64) · files (varint count · each: family, path as varint length · UTF-8) |

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::keys;
use crate::sketch::{Sketch, SKETCH_BYTES};

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
    /// Its [`Sketch`], in a store that keeps them
    /// ([`SimhashConfig::sketch`](crate::SimhashConfig::sketch)) and when it was given one.
    #[serde(
        default,
        with = "trailing_sketch",
        skip_serializing_if = "Option::is_none"
    )]
    pub sketch: Option<Sketch>,
}

/// The sketch as the last field of a document record: present or absent, without a tag (the
/// record's length tells). In JSON, `null` or absent for none.
mod trailing_sketch {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::sketch::Sketch;

    pub(super) fn serialize<S: Serializer>(
        sketch: &Option<Sketch>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match sketch {
            Some(sketch) => sketch.serialize(serializer),
            None => serializer.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Sketch>, D::Error> {
        Option::<Sketch>::deserialize(deserializer)
    }
}

/// The fields of a [`Document`] before its sketch: what every record starts with.
#[derive(Deserialize)]
struct DocumentHead {
    fingerprint: Fingerprint,
    key: Option<String>,
    text_len: Option<u64>,
    added: u64,
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

/// A [`Document`] borrowed from elsewhere (the bulk loader's run), encoded to the same bytes
/// without building one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DocumentRef<'a> {
    pub(crate) fingerprint: Fingerprint,
    pub(crate) key: Option<&'a str>,
    pub(crate) text_len: Option<u64>,
    pub(crate) added: u64,
    pub(crate) sketch: Option<&'a Sketch>,
}

impl Document {
    pub(crate) fn view(&self) -> DocumentRef<'_> {
        DocumentRef {
            fingerprint: self.fingerprint,
            key: self.key.as_deref(),
            text_len: self.text_len,
            added: self.added,
            sketch: self.sketch.as_ref(),
        }
    }
}

/// Appends bincode's `standard` varint of `v`: one byte below 251, else a tag (251, 252, 253)
/// and the value as little-endian u16, u32 or u64.
#[inline]
fn put_varint(out: &mut Vec<u8>, v: u64) {
    if v < 251 {
        out.push(v as u8);
    } else if v <= u64::from(u16::MAX) {
        out.push(251);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v <= u64::from(u32::MAX) {
        out.push(252);
        out.extend_from_slice(&(v as u32).to_le_bytes());
    } else {
        out.push(253);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Replaces the contents of `out` with the encoding of `doc`: the bytes bincode writes for
/// the [`Document`] (the table at the top; a unit test compares both), without serde, a
/// `String` or a new vector per document. The bulk loader encodes millions of documents
/// into one reused buffer.
pub(crate) fn encode_document_into(doc: &DocumentRef<'_>, out: &mut Vec<u8>) {
    out.clear();
    put_varint(out, doc.fingerprint.0);
    match doc.key {
        Some(key) => {
            out.push(1);
            put_varint(out, key.len() as u64);
            out.extend_from_slice(key.as_bytes());
        }
        None => out.push(0),
    }
    match doc.text_len {
        Some(len) => {
            out.push(1);
            put_varint(out, len);
        }
        None => out.push(0),
    }
    put_varint(out, doc.added);
    if let Some(sketch) = doc.sketch {
        out.extend_from_slice(sketch.as_bytes());
    }
}

#[cfg(test)]
pub(crate) fn encode_document(doc: &Document) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + SKETCH_BYTES + doc.key.as_ref().map_or(0, String::len));
    encode_document_into(&doc.view(), &mut out);
    out
}

/// Decodes a document record: the fields every record has, then a sketch if exactly
/// [`SKETCH_BYTES`] bytes follow (none if none do; anything else is damage).
pub(crate) fn decode_document(bytes: &[u8], key: &[u8]) -> Result<Document> {
    let err = |message: String| Error::Decode {
        column_family: keys::DOCS_FAMILY,
        key: keys::hex(key),
        what: "document",
        message,
    };
    let (head, used): (DocumentHead, usize) =
        bincode::serde::decode_from_slice(bytes, config()).map_err(|e| err(e.to_string()))?;
    let sketch = match bytes.get(used..).unwrap_or_default() {
        [] => None,
        rest => match <[u8; SKETCH_BYTES]>::try_from(rest) {
            Ok(sketch) => Some(Sketch::from_bytes(sketch)),
            Err(_) => {
                return Err(err(format!(
                    "{} trailing bytes (a sketch has {SKETCH_BYTES})",
                    rest.len()
                )))
            }
        },
    };
    Ok(Document {
        fingerprint: head.fingerprint,
        key: head.key,
        text_len: head.text_len,
        added: head.added,
        sketch,
    })
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

/// The value of a delta key (formats 7 to 9): what a single write did to one document's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delta {
    /// The entry was added.
    Added,
    /// The entry was removed from every chunk of a segment numbered below `watermark`
    /// (chunks written later, by later bulk runs, may hold it again).
    Removed { watermark: u32 },
}

pub(crate) fn encode_delta(delta: Delta) -> Vec<u8> {
    match delta {
        Delta::Added => Vec::new(),
        Delta::Removed { watermark } => watermark.to_be_bytes().to_vec(),
    }
}

pub(crate) fn decode_delta(bytes: &[u8]) -> Option<Delta> {
    match bytes.len() {
        0 => Some(Delta::Added),
        4 => Some(Delta::Removed {
            watermark: u32::from_be_bytes(bytes.try_into().ok()?),
        }),
        _ => None,
    }
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

/// Runs every value decoder on `bytes` but the settings record's (`settings::check_decoders`,
/// a layer above): with it, the check of the `decode_values` fuzz target (in `fuzz/`) and of
/// the replay of its corpus. No decoder may panic or allocate past
/// [`MAX_VALUE_LEN`] (the fuzzer runs under a malloc limit), and a value that decodes
/// re-encodes to bytes that decode to the same value.
#[cfg(any(test, fuzzing))]
pub(crate) fn check_decoders(bytes: &[u8]) {
    if let Ok(doc) = decode_document(bytes, b"k") {
        let again = decode_document(&encode_document(&doc), b"k");
        assert!(again.as_ref().ok() == Some(&doc), "{doc:?} -> {again:?}");
    }
    // The bulk loader's journal has this shape (`store::journal::Journal`).
    type Journal = (u64, Vec<(String, String)>);
    if let Ok(journal) = decode_meta::<Journal>(bytes, b"bulk_journal", "bulk load journal") {
        let again = decode_meta::<Journal>(&encode_meta(&journal), b"j", "journal");
        assert!(
            again.as_ref().ok() == Some(&journal),
            "{journal:?} -> {again:?}"
        );
    }
    if let Ok(v) = decode_u32(bytes, b"k") {
        assert_eq!(encode_u32(v).as_slice(), bytes);
    }
    if let Ok(v) = decode_u64(bytes, b"k") {
        assert_eq!(encode_u64(v).as_slice(), bytes);
    }
    for i in 0..crate::BLOCKS {
        if let Some((fp, id)) = keys::decode_block_key(i, bytes) {
            assert_eq!(keys::block_key(i, fp, id).as_slice(), bytes);
        }
    }
    if let Some(id) = keys::decode_doc_key(bytes) {
        assert_eq!(keys::doc_key(id).as_slice(), bytes);
    }
    if let Some(id) = keys::decode_id_value(bytes) {
        assert_eq!(keys::id_value(id).as_slice(), bytes);
    }
    // Fingerprints as text: the JSON Lines reader and `simhash-store load` parse them.
    if let Ok(text) = std::str::from_utf8(bytes) {
        if let Ok(fp) = text.parse::<Fingerprint>() {
            assert_eq!(fp.to_string().parse::<Fingerprint>().ok(), Some(fp));
        }
        if let Ok(fp) = serde_json::from_str::<Fingerprint>(text) {
            let json = serde_json::to_string(&fp).unwrap_or_default();
            assert_eq!(serde_json::from_str::<Fingerprint>(&json).ok(), Some(fp));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn documents_round_trip(fp: u64, key in proptest::option::of(".{0,40}"), text_len: Option<u64>, added: u64, sketch in sketches()) {
            let doc = Document { fingerprint: Fingerprint(fp), key, text_len, added, sketch };
            prop_assert_eq!(decode_document(&encode_document(&doc), b"k").unwrap(), doc);
        }

        #[test]
        fn documents_encode_as_bincode_does(
            fp in prop_oneof![any::<u64>(), 0u64..300, 60_000u64..70_000, 0u64..1 << 33],
            key in proptest::option::of(".{0,300}"),
            text_len in proptest::option::of(prop_oneof![any::<u64>(), 0u64..300, 0u64..1 << 33]),
            added in prop_oneof![any::<u64>(), 0u64..300, 0u64..1 << 33],
            sketch in sketches(),
        ) {
            let doc = Document { fingerprint: Fingerprint(fp), key, text_len, added, sketch };
            prop_assert_eq!(encode_document(&doc), encode(&doc));
        }

        #[test]
        fn a_sketch_adds_its_bytes_and_nothing_else(fp: u64, key in proptest::option::of(".{0,40}"), text_len: Option<u64>, added: u64, sketch in sketches()) {
            let without = Document { fingerprint: Fingerprint(fp), key, text_len, added, sketch: None };
            let with = Document { sketch, ..without.clone() };
            let bytes = encode_document(&with);
            let head = encode_document(&without);
            prop_assert_eq!(&bytes[..head.len()], &head[..]);
            prop_assert_eq!(&bytes[head.len()..], sketch.as_ref().map_or(&[][..], |s| &s.as_bytes()[..]));
            // A record with a partial or an overlong sketch is damage.
            for cut in [1, SKETCH_BYTES - 1] {
                let mut damaged = head.clone();
                damaged.extend(std::iter::repeat_n(7u8, cut));
                let decoded = decode_document(&damaged, b"k");
                prop_assert!(matches!(decoded, Err(Error::Decode { .. })), "{:?}", decoded);
            }
            let mut long = encode_document(&Document { sketch: Some(Sketch::from_bytes([1; SKETCH_BYTES])), ..without });
            long.push(0);
            let decoded = decode_document(&long, b"k");
            prop_assert!(matches!(decoded, Err(Error::Decode { .. })), "{:?}", decoded);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_document(&bytes, b"k");
        }
    }

    fn sketches() -> impl Strategy<Value = Option<Sketch>> {
        proptest::option::of(
            proptest::collection::vec(any::<u8>(), SKETCH_BYTES).prop_map(|v| {
                let mut bytes = [0u8; SKETCH_BYTES];
                bytes.copy_from_slice(&v);
                Sketch::from_bytes(bytes)
            }),
        )
    }

    #[test]
    fn documents_without_a_sketch_keep_their_bytes() {
        // A record of 0.5.0: fingerprint 300 (251, then u16), key "a", text length 5, added 7.
        let old = [251, 44, 1, 1, 1, b'a', 1, 5, 7];
        let doc = decode_document(&old, b"k").unwrap();
        assert_eq!(
            doc,
            Document {
                fingerprint: Fingerprint(300),
                key: Some("a".into()),
                text_len: Some(5),
                added: 7,
                sketch: None
            }
        );
        assert_eq!(encode_document(&doc), old);
        let json = serde_json::to_value(&doc).unwrap();
        assert!(json.get("sketch").is_none());
        assert_eq!(serde_json::from_value::<Document>(json).unwrap(), doc);
        let sketched = Document {
            sketch: Some(Sketch::from_bytes([0xab; SKETCH_BYTES])),
            ..doc
        };
        let json = serde_json::to_value(&sketched).unwrap();
        assert_eq!(json["sketch"], "ab".repeat(SKETCH_BYTES));
        assert_eq!(serde_json::from_value::<Document>(json).unwrap(), sketched);
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
            sketch: None,
        };
        let mut bytes = encode_document(&doc);
        bytes.push(0);
        assert!(matches!(
            decode_document(&bytes, b"k"),
            Err(Error::Decode { .. })
        ));
    }

    /// Replays the committed corpus of the `decode_values` fuzz target (`fuzz/`) through
    /// the same check, on the stable toolchain.
    #[test]
    fn fuzz_corpus_replays() {
        let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
        if !fuzz.join("Cargo.toml").exists() {
            // A packaged crate: the fuzz workspace is not in it.
            return;
        }
        let dir = fuzz.join("corpus").join("decode_values");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            check_decoders(&bytes);
            crate::settings::check_decoders(&bytes);
            n += 1;
        }
        assert!(n > 0, "no corpus in {}", dir.display());
    }
}
