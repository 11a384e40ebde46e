//! The byte layout of every key. Nothing else in the crate builds or slices key bytes.
//!
//! All integers are big-endian, so byte order is numeric order.
//!
//! | family          | key                                                            | value                 |
//! |-----------------|----------------------------------------------------------------|-----------------------|
//! | `block0..block3`, formats 1-6 | block *i* (2 B) · the other three blocks in order (6 B) · id (8 B) | empty |
//! | `block0..block3`, formats 7 to 9: a delta | block *i* (2 B) · `0x00` · the other three blocks in order (6 B) · id (8 B) | empty (added), or a removal: segment watermark (4 B) |
//! | `block0..block3`, formats 7 to 9: a chunk | block *i* (2 B) · `0x01` · `u32::MAX` − segment (4 B) · chunk number (4 B) | a packed chunk ([`crate::postings`]) |
//! | `block0..block3`, formats 8 and 9: a chunk's ids | block *i* (2 B) · `0x02` · `u32::MAX` − segment (4 B) · chunk number (4 B) | the chunk's packed ids |
//! | `block0..block3`, format 9: a split segment's mark | block *i* (2 B) · `0x01` · `u32::MAX` − segment (4 B) · `80000000` | empty |
//! | `block0..block3`, format 9: a chunk of a split group's part | block *i* (2 B) · `0x03` · `u32::MAX` − segment (4 B) · `1` · part (2 bits) · part value (12 bits) · chunk (17 bits) | a packed chunk, ids inline |
//! | `docs`          | id (8 B)                                                       | [`crate::codec`] `Document` |
//! | `keys`          | external key (UTF-8 bytes, 1..=4096 B)                         | id (8 B)              |
//! | `meta`          | ASCII name (`format_version`, `simhasher`, `doc_count`)        | see [`crate::codec`]  |
//!
//! A block key sorts first by the block value, so all documents sharing block *i* form one
//! contiguous range: the range a query scans. In formats 7 to 9 that range holds the value's
//! deltas (single writes not yet folded into chunks) first, then its packed chunks, the newest
//! segment first: whatever chunk is written later sorts before the chunks already there, so a
//! chunk written as its group's last chunk stays the last (`postings::chunk`, the final flag).
//! From format 8 on the chunks' ids follow, in the same order (under the same segment and chunk
//! number), so that a query reads the chunks without them. In format 9 a group too large to
//! scan may be written *split*: a segment of it is then a mark among the chunks
//! ([`split_mark_key`]) and four copies of its entries after the ids ([`part_key`]), the copy
//! of part `j` in chunks keyed by the entries' part `j`.

use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::pigeonhole;

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

/// Whether `key` is an external key the store accepts: 1..=[`MAX_EXTERNAL_KEY_LEN`] bytes.
/// The one check of a key's length: inserts, staged batches, the bulk loader and the
/// service's requests call it.
///
/// ```
/// use simhash_store::{external_key_fits, MAX_EXTERNAL_KEY_LEN};
/// assert!(external_key_fits("https://example.com/a"));
/// assert!(!external_key_fits(""));
/// assert!(!external_key_fits(&"k".repeat(MAX_EXTERNAL_KEY_LEN + 1)));
/// ```
pub fn external_key_fits(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_EXTERNAL_KEY_LEN
}

/// Meta key of the on-disk format version.
pub(crate) const META_FORMAT_VERSION: &[u8] = b"format_version";
/// Meta key of the fingerprint configuration.
pub(crate) const META_SIMHASHER: &[u8] = b"simhasher";
/// Meta key of the document count.
pub(crate) const META_DOC_COUNT: &[u8] = b"doc_count";
/// Meta key of the bulk loader's journal, present only while a run is being ingested.
pub(crate) const META_BULK_JOURNAL: &[u8] = b"bulk_journal";
/// Meta key of a bulk load whose runs are spooled, present from its first spooled run until
/// its merge is ingested (`src/storage/load_record.rs`).
pub(crate) const META_BULK_LOAD: &[u8] = b"bulk_load";
/// Meta key of the next chunk segment number (formats 7 to 9).
pub(crate) const META_NEXT_SEGMENT: &[u8] = b"next_segment";

/// Length of a chunk key (and of an ids key) in a block family (formats 7 to 9).
pub(crate) const CHUNK_KEY_LEN: usize = 11;
/// Length of a delta key in a block family (formats 7 to 9).
pub(crate) const DELTA_KEY_LEN: usize = 17;
const DELTA_KIND: u8 = 0x00;
const CHUNK_KIND: u8 = 0x01;
const IDS_KIND: u8 = 0x02;
const PART_KIND: u8 = 0x03;

/// Block `i` of `fp` and its remainder ([`pigeonhole::split`]).
#[inline]
pub(crate) fn split(i: usize, fp: Fingerprint) -> (u16, u64) {
    pigeonhole::split(fp.0, i)
}

/// The fingerprint whose block `i` is `value` and whose remainder is `remainder`
/// ([`pigeonhole::join`]).
#[inline]
pub(crate) fn join(i: usize, value: u16, remainder: u64) -> Fingerprint {
    Fingerprint(pigeonhole::join(i, value, remainder))
}

/// Key of chunk `chunk` of segment `segment` of block value `value` (formats 7 to 9): later
/// segments sort first.
#[inline]
pub(crate) fn chunk_key(value: u16, segment: u32, chunk: u32) -> [u8; CHUNK_KEY_LEN] {
    segment_key(CHUNK_KIND, value, segment, chunk)
}

/// The number of chunk `seq` of the entries of a split group whose part `part` is `sub`
/// (`src/postings/write.rs`, "Split groups"), under its segment in the group's part keys
/// ([`part_key`]): the top bit set, then the part (2 bits), the part's value (12 bits) and
/// `seq` (17 bits: 2^17 chunks of 4,096 entries, half a billion entries equal on one part).
#[inline]
pub(crate) const fn part_number(part: usize, sub: u16, seq: u32) -> u32 {
    PART_FLAG | (part as u32) << 29 | (sub as u32 & 0xfff) << PART_SEQ_BITS | (seq & PART_SEQ_MASK)
}

/// Key of chunk `seq` of segment `segment` of split group `value` whose part `part` is `sub`:
/// after the group's chunks and their ids (kind `03`), so that a read of the chunks (bounded
/// by [`ids_prefix`]) never reads the copies.
#[inline]
pub(crate) fn part_key(
    value: u16,
    segment: u32,
    part: usize,
    sub: u16,
    seq: u32,
) -> [u8; CHUNK_KEY_LEN] {
    segment_key(PART_KIND, value, segment, part_number(part, sub, seq))
}

/// Key of the mark that segment `segment` of group `value` is split: among the chunks, after
/// any plain chunk of the segment (a chunk number with the top bit set), its value empty. A
/// read of the chunks meets it and reads the copies ([`part_key`]) as it needs them.
#[inline]
pub(crate) fn split_mark_key(value: u16, segment: u32) -> [u8; CHUNK_KEY_LEN] {
    chunk_key(value, segment, PART_FLAG)
}

/// The most chunks a split group holds of one part value.
pub(crate) const MAX_PART_CHUNKS: u32 = PART_SEQ_MASK + 1;
const PART_FLAG: u32 = 1 << 31;
const PART_SEQ_BITS: u32 = 17;
const PART_SEQ_MASK: u32 = (1 << PART_SEQ_BITS) - 1;

/// Key of the first chunk of segment `segment` of block value `value` whose part `part` is
/// `sub` (split groups): where a query of that part starts reading.
#[inline]
pub(crate) fn part_start(value: u16, segment: u32, part: usize, sub: u16) -> [u8; CHUNK_KEY_LEN] {
    part_key(value, segment, part, sub, 0)
}

/// The first key after the chunks of segment `segment` of block value `value` whose part
/// `part` is `sub` (split groups): the bound of a read of them.
pub(crate) fn part_end(value: u16, segment: u32, part: usize, sub: u16) -> Vec<u8> {
    if sub < 0xfff {
        part_start(value, segment, part, sub + 1).to_vec()
    } else if part + 1 < pigeonhole::PARTS {
        part_start(value, segment, part + 1, 0).to_vec()
    } else if let Some(older) = segment.checked_sub(1) {
        segment_key(PART_KIND, value, older, 0).to_vec()
    } else {
        kind_prefix(value, PART_KIND + 1).to_vec()
    }
}

/// Key of the ids of chunk `chunk` of segment `segment` of block value `value` (format 8):
/// after every chunk of the value, in the chunks' order.
#[inline]
pub(crate) fn ids_key(value: u16, segment: u32, chunk: u32) -> [u8; CHUNK_KEY_LEN] {
    segment_key(IDS_KIND, value, segment, chunk)
}

fn segment_key(kind: u8, value: u16, segment: u32, chunk: u32) -> [u8; CHUNK_KEY_LEN] {
    let mut key = [0u8; CHUNK_KEY_LEN];
    key[0..2].copy_from_slice(&value.to_be_bytes());
    key[2] = kind;
    key[3..7].copy_from_slice(&(u32::MAX - segment).to_be_bytes());
    key[7..11].copy_from_slice(&chunk.to_be_bytes());
    key
}

/// Whether `key` is the key of a chunk's ids ([`ids_key`]).
#[inline]
pub(crate) fn is_ids_key(key: &[u8]) -> bool {
    key.len() == CHUNK_KEY_LEN && key[2] == IDS_KIND
}

/// The first key of block value `value` after its deltas and chunks: where its chunks' ids
/// begin (format 8), the bound of a read of the chunks alone.
#[inline]
pub(crate) fn ids_prefix(value: u16) -> [u8; 3] {
    kind_prefix(value, IDS_KIND)
}

/// The prefix of the keys of the copies of split group `value`'s parts, every segment's
/// ([`part_key`]).
#[inline]
pub(crate) fn parts_prefix(value: u16) -> [u8; 3] {
    kind_prefix(value, PART_KIND)
}

/// The prefix of the keys of kind `kind` of group `value`.
#[inline]
fn kind_prefix(value: u16, kind: u8) -> [u8; 3] {
    let [hi, lo] = value.to_be_bytes();
    [hi, lo, kind]
}

/// Key of the delta of document `id` with fingerprint `fp` in block family `i` (formats 7 to 9).
#[inline]
pub(crate) fn delta_key(i: usize, fp: Fingerprint, id: u64) -> [u8; DELTA_KEY_LEN] {
    let legacy = block_key(i, fp, id);
    let mut key = [0u8; DELTA_KEY_LEN];
    key[0..2].copy_from_slice(&legacy[0..2]);
    key[2] = DELTA_KIND;
    key[3..].copy_from_slice(&legacy[2..]);
    key
}

/// A key of a block family of format 7 or 8, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PackedKey {
    /// Chunk `number` of block value `value`, written in segment `segment`.
    Chunk {
        value: u16,
        segment: u32,
        number: u32,
    },
    /// The mark that segment `segment` of group `value` is split (format 9).
    SplitMark { value: u16, segment: u32 },
    /// Chunk `seq` of the entries of split group `value`, segment `segment`, whose part
    /// `part` (0..4) is `sub` (format 9; ids inline).
    Part {
        value: u16,
        segment: u32,
        part: usize,
        sub: u16,
        seq: u32,
    },
    /// The ids of chunk `number` of block value `value` and segment `segment` (format 8).
    Ids {
        value: u16,
        segment: u32,
        number: u32,
    },
    /// The delta of one document.
    Delta { fingerprint: Fingerprint, id: u64 },
}

/// Decodes a key of block family `i` of format 7 or 8, or `None` if it is none of their
/// keys.
#[inline]
pub(crate) fn decode_packed_key(i: usize, key: &[u8]) -> Option<PackedKey> {
    let segment_key = |key: &[u8]| {
        let word = |at: usize| u32::from_be_bytes([key[at], key[at + 1], key[at + 2], key[at + 3]]);
        (
            u16::from_be_bytes([key[0], key[1]]),
            u32::MAX - word(3),
            word(7),
        )
    };
    match (key.len(), key.get(2)) {
        (CHUNK_KEY_LEN, Some(&kind @ (CHUNK_KIND | IDS_KIND | PART_KIND))) => {
            let (value, segment, number) = segment_key(key);
            Some(if kind == CHUNK_KIND && number == PART_FLAG {
                PackedKey::SplitMark { value, segment }
            } else if kind == PART_KIND && number & PART_FLAG != 0 {
                PackedKey::Part {
                    value,
                    segment,
                    part: ((number >> 29) & 3) as usize,
                    sub: ((number >> PART_SEQ_BITS) & 0xfff) as u16,
                    seq: number & PART_SEQ_MASK,
                }
            } else if kind == CHUNK_KIND {
                PackedKey::Chunk {
                    value,
                    segment,
                    number,
                }
            } else if kind == IDS_KIND {
                PackedKey::Ids {
                    value,
                    segment,
                    number,
                }
            } else {
                return None;
            })
        }
        (DELTA_KEY_LEN, Some(&DELTA_KIND)) => {
            let mut legacy = [0u8; BLOCK_KEY_LEN];
            legacy[0..2].copy_from_slice(&key[0..2]);
            legacy[2..].copy_from_slice(&key[3..]);
            let (fingerprint, id) = decode_block_key(i, &legacy)?;
            Some(PackedKey::Delta { fingerprint, id })
        }
        _ => None,
    }
}

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

/// A block key ([`block_key`]) as one big-endian number: the numbers sort as the keys do,
/// which the bulk loader's radix sort uses. Built from the block and its remainder
/// ([`pigeonhole::split`]) with shifts, not through the bytes: the radix sort builds one per
/// document and block family.
#[inline]
pub(crate) fn block_key_number(i: usize, fp: Fingerprint, id: u64) -> u128 {
    let (value, remainder) = pigeonhole::split(fp.0, i);
    (u128::from(value) << BLOCK_KEY_NUMBER_VALUE_SHIFT)
        | (u128::from(remainder) << 64)
        | u128::from(id)
}

/// The position, in a [`block_key_number`], of its block value (the key's first two bytes).
pub(crate) const BLOCK_KEY_NUMBER_VALUE_SHIFT: u32 = 128 - 16;

/// The block value a [`block_key_number`] starts with.
#[inline]
pub(crate) fn block_value_of_key_number(key: u128) -> u16 {
    (key >> BLOCK_KEY_NUMBER_VALUE_SHIFT) as u16
}

/// The block value, remainder and id of a [`block_key_number`].
#[inline]
pub(crate) fn split_block_key_number(key: u128) -> (u16, u64, u64) {
    let remainder = (key >> 64) as u64 & ((1 << 48) - 1);
    (block_value_of_key_number(key), remainder, key as u64)
}

/// The 2-byte prefix shared by all keys of family `i` whose block `i` is `value`.
#[inline]
pub(crate) fn block_prefix(value: u16) -> [u8; 2] {
    value.to_be_bytes()
}

/// Where a read of the keys of block value `value` seeks: the smallest key it can have (its
/// prefix followed by a zero byte), not the prefix itself. RocksDB indexes each data block by
/// a short separator between its last key and the next block's first, and the separator after
/// the last key of value `value − 1` is the 2-byte prefix of `value`: a seek to the prefix
/// lands in that block and reads it (at 1B documents another group's ids, 15 KB, from disk
/// on a fresh query) before it reaches the group.
#[inline]
pub(crate) fn group_start(value: u16) -> [u8; 3] {
    let [hi, lo] = value.to_be_bytes();
    [hi, lo, 0]
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

    #[test]
    fn split_marks_and_part_keys_decode_and_sort_after_chunks_and_ids() {
        for (part, sub, seq) in [
            (0usize, 0u16, 0u32),
            (3, 0xfff, MAX_PART_CHUNKS - 1),
            (1, 0x5ee, 7),
        ] {
            let key = part_key(0x1234, 5, part, sub, seq);
            assert_eq!(
                decode_packed_key(2, &key),
                Some(PackedKey::Part {
                    value: 0x1234,
                    segment: 5,
                    part,
                    sub,
                    seq
                })
            );
            // After every chunk and every ids key of the group, before the next group.
            assert!(ids_key(0x1234, 0, u32::MAX)[..] < key[..]);
            assert!(key[..] < block_prefix(0x1235)[..]);
            assert!(key < part_key(0x1234, 4, 0, 0, 0));
            assert!(key[..] < part_end(0x1234, 5, 3, 0xfff)[..]);
        }
        let mark = split_mark_key(0x1234, 5);
        assert_eq!(
            decode_packed_key(0, &mark),
            Some(PackedKey::SplitMark {
                value: 0x1234,
                segment: 5
            })
        );
        assert!(chunk_key(0x1234, 5, (1 << 31) - 1) < mark && mark < chunk_key(0x1234, 4, 0));
        assert!(mark[..] < ids_prefix(0x1234)[..]);
        // Parts, then part values, then chunks, in key order; the last part ends its segment.
        assert!(part_start(1, 1, 0, 0xfff) < part_start(1, 1, 1, 0));
        assert!(part_key(1, 1, 2, 3, 1) < part_start(1, 1, 2, 4));
        let end = part_end(1, 1, 3, 0xfff);
        assert!(part_key(1, 1, 3, 0xfff, MAX_PART_CHUNKS - 1)[..] < end[..]);
        assert!(end[..] <= part_start(1, 0, 0, 0)[..]);
        assert!(part_key(1, 0, 3, 0xfff, MAX_PART_CHUNKS - 1)[..] < part_end(1, 0, 3, 0xfff)[..]);
    }

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
        fn block_key_numbers_are_the_keys_bytes(fp: u64, id: u64, i in 0usize..4) {
            prop_assert_eq!(
                block_key_number(i, Fingerprint(fp), id).to_be_bytes(),
                block_key(i, Fingerprint(fp), id)
            );
        }

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
        fn split_and_join_round_trip(fp: u64, i in 0usize..4) {
            let (value, remainder) = split(i, Fingerprint(fp));
            prop_assert!(remainder < 1 << 48);
            prop_assert_eq!(value, Fingerprint(fp).block(i));
            prop_assert_eq!(join(i, value, remainder), Fingerprint(fp));
            // The remainder is the legacy key's bytes 2..8, so both layouts sort alike.
            let key = block_key(i, Fingerprint(fp), 0);
            let mut six = [0u8; 8];
            six[2..].copy_from_slice(&key[2..8]);
            prop_assert_eq!(u64::from_be_bytes(six), remainder);
        }

        #[test]
        fn packed_keys_round_trip(fp: u64, id: u64, i in 0usize..4, segment: u32, chunk in 0u32..1 << 31) {
            let fp = Fingerprint(fp);
            let value = fp.block(i);
            let delta = delta_key(i, fp, id);
            prop_assert_eq!(decode_packed_key(i, &delta), Some(PackedKey::Delta { fingerprint: fp, id }));
            let key = chunk_key(value, segment, chunk);
            prop_assert_eq!(decode_packed_key(i, &key), Some(PackedKey::Chunk { value, segment, number: chunk }));
            let ids = ids_key(value, segment, chunk);
            prop_assert_eq!(decode_packed_key(i, &ids), Some(PackedKey::Ids { value, segment, number: chunk }));
            // A value's deltas sort before its chunks, later segments before earlier ones,
            // every chunk before the first ids (the bound of a read of chunks alone), and
            // all inside the value's prefix.
            prop_assert!(delta.as_slice() < key.as_slice());
            if segment > 0 {
                prop_assert!(key.as_slice() < chunk_key(value, segment - 1, 0).as_slice());
                prop_assert!(ids.as_slice() < ids_key(value, segment - 1, 0).as_slice());
            }
            let first_ids = ids_prefix(value);
            prop_assert!(chunk_key(value, 0, u32::MAX).as_slice() < first_ids.as_slice());
            prop_assert!(first_ids.as_slice() <= ids_key(value, u32::MAX, 0).as_slice());
            prop_assert!(ids.starts_with(&first_ids));
            prop_assert!(is_ids_key(&ids) && !is_ids_key(&key) && !is_ids_key(&delta));
            prop_assert!(key.starts_with(&block_prefix(value)) && delta.starts_with(&block_prefix(value)));
        }

        #[test]
        fn doc_keys_round_trip(id: u64) {
            prop_assert_eq!(decode_doc_key(&doc_key(id)), Some(id));
            prop_assert_eq!(decode_id_value(&id_value(id)), Some(id));
        }
    }
}
