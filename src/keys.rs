//! The byte layout of every key. Nothing else in the crate builds or slices key bytes.
//!
//! All integers are big-endian, so byte order is numeric order.
//!
//! | family          | key                                                            | value                 |
//! |-----------------|----------------------------------------------------------------|-----------------------|
//! | `block0..block3`| block *i* (2 B) · the other three blocks in order (6 B) · id (8 B) | empty             |
//! | `docs`          | id (8 B)                                                       | [`crate::codec`] `Document` |
//! | `keys`          | external key (UTF-8 bytes, 1..=4096 B)                         | id (8 B)              |
//! | `meta`          | ASCII name (`format_version`, `simhasher`, `doc_count`)        | see [`crate::codec`]  |
//!
//! A block key sorts first by the block value, so all documents sharing block *i* form one
//! contiguous range: the range a query scans.

use crate::fingerprint::{Fingerprint, BLOCKS};

/// Length of a key in a block family.
pub(crate) const BLOCK_KEY_LEN: usize = 16;
/// Length of a key in the documents family.
pub(crate) const DOC_KEY_LEN: usize = 8;

/// Column family names of the four block indexes, in block order.
pub(crate) const BLOCK_FAMILIES: [&str; BLOCKS] = ["block0", "block1", "block2", "block3"];
/// Column family of documents: id -> fingerprint, external key, metadata.
pub(crate) const DOCS_FAMILY: &str = "docs";
/// Column family of external keys: key -> id.
pub(crate) const KEYS_FAMILY: &str = "keys";
/// Column family of store metadata: format version, fingerprint configuration, counts.
pub(crate) const META_FAMILY: &str = "meta";
/// Every column family the store opens, besides RocksDB's `default` (kept empty).
pub(crate) const ALL_FAMILIES: [&str; 7] = [
    BLOCK_FAMILIES[0],
    BLOCK_FAMILIES[1],
    BLOCK_FAMILIES[2],
    BLOCK_FAMILIES[3],
    DOCS_FAMILY,
    KEYS_FAMILY,
    META_FAMILY,
];

/// Longest external key accepted, in bytes.
pub const MAX_EXTERNAL_KEY_LEN: usize = 4096;

/// Meta key of the on-disk format version.
pub(crate) const META_FORMAT_VERSION: &[u8] = b"format_version";
/// Meta key of the fingerprint configuration.
pub(crate) const META_SIMHASHER: &[u8] = b"simhasher";
/// Meta key of the document count.
pub(crate) const META_DOC_COUNT: &[u8] = b"doc_count";
/// Meta key of the bulk loader's journal, present only while a run is being ingested.
pub(crate) const META_BULK_JOURNAL: &[u8] = b"bulk_journal";

/// Key of document `id` with fingerprint `fp` in block family `i`.
#[inline]
pub(crate) fn block_key(i: usize, fp: Fingerprint, id: u64) -> [u8; BLOCK_KEY_LEN] {
    let blocks = fp.blocks();
    let mut key = [0u8; BLOCK_KEY_LEN];
    key[0..2].copy_from_slice(&blocks[i].to_be_bytes());
    let mut at = 2;
    for (j, b) in blocks.iter().enumerate() {
        if j != i {
            key[at..at + 2].copy_from_slice(&b.to_be_bytes());
            at += 2;
        }
    }
    key[8..16].copy_from_slice(&id.to_be_bytes());
    key
}

/// The 2-byte prefix shared by all keys of family `i` whose block `i` is `value`.
#[inline]
pub(crate) fn block_prefix(value: u16) -> [u8; 2] {
    value.to_be_bytes()
}

/// Decodes a key of block family `i` into (fingerprint, id), or `None` if it is not 16 bytes.
#[inline]
pub(crate) fn decode_block_key(i: usize, key: &[u8]) -> Option<(Fingerprint, u64)> {
    let key: &[u8; BLOCK_KEY_LEN] = key.try_into().ok()?;
    let word = |at: usize| u16::from_be_bytes([key[at], key[at + 1]]);
    let mut blocks = [0u16; BLOCKS];
    blocks[i] = word(0);
    let mut at = 2;
    for (j, b) in blocks.iter_mut().enumerate() {
        if j != i {
            *b = word(at);
            at += 2;
        }
    }
    let mut id = [0u8; 8];
    id.copy_from_slice(&key[8..16]);
    Some((Fingerprint::from_blocks(blocks), u64::from_be_bytes(id)))
}

/// Key of document `id` in the documents family.
#[inline]
pub(crate) fn doc_key(id: u64) -> [u8; DOC_KEY_LEN] {
    id.to_be_bytes()
}

/// Decodes a documents-family key.
#[inline]
pub(crate) fn decode_doc_key(key: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(key.try_into().ok()?))
}

/// Encodes an id as a `keys`-family value.
#[inline]
pub(crate) fn id_value(id: u64) -> [u8; 8] {
    id.to_be_bytes()
}

/// Decodes a `keys`-family value.
#[inline]
pub(crate) fn decode_id_value(value: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(value.try_into().ok()?))
}

/// Lowercase hex of a key, for error messages (at most 64 bytes shown).
pub(crate) fn hex(key: &[u8]) -> String {
    let mut s: String = key.iter().take(64).map(|b| format!("{b:02x}")).collect();
    if key.len() > 64 {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn layout_is_block_then_rest_then_id() {
        let fp = Fingerprint(0x1111_2222_3333_4444);
        assert_eq!(
            block_key(2, fp, 7),
            [0x33, 0x33, 0x11, 0x11, 0x22, 0x22, 0x44, 0x44, 0, 0, 0, 0, 0, 0, 0, 7]
        );
        assert_eq!(block_key(0, fp, 1)[..8], fp.0.to_be_bytes());
    }

    #[test]
    fn wrong_lengths_do_not_decode() {
        assert_eq!(decode_block_key(0, &[0; 15]), None);
        assert_eq!(decode_doc_key(&[0; 9]), None);
        assert_eq!(decode_id_value(&[]), None);
    }

    proptest! {
        #[test]
        fn block_keys_round_trip(fp: u64, id: u64, i in 0usize..4) {
            let key = block_key(i, Fingerprint(fp), id);
            prop_assert_eq!(decode_block_key(i, &key), Some((Fingerprint(fp), id)));
            prop_assert!(key.starts_with(&block_prefix(Fingerprint(fp).block(i))));
        }

        #[test]
        fn block_key_order_is_block_then_fingerprint_then_id(a: u64, b: u64, ia: u64, ib: u64, i in 0usize..4) {
            let (fa, fb) = (Fingerprint(a), Fingerprint(b));
            let ka = block_key(i, fa, ia);
            let kb = block_key(i, fb, ib);
            prop_assert_eq!(ka.cmp(&kb), (fa.block(i), &ka[2..8], ia).cmp(&(fb.block(i), &kb[2..8], ib)));
        }

        #[test]
        fn doc_keys_round_trip(id: u64) {
            prop_assert_eq!(decode_doc_key(&doc_key(id)), Some(id));
            prop_assert_eq!(decode_id_value(&id_value(id)), Some(id));
        }
    }
}
