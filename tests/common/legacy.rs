//! Stores of formats 6 (one key per document and block family, the *entries* layout) and 7
//! (packed chunks with their ids inline), which this build reads but no longer writes: a
//! closed store written by this build, rewritten in place with RocksDB alone, by the byte
//! layout of `docs/design.md` ("Bytes on disk", "Packed posting blocks").

use std::path::Path;

use rocksdb::{Options, WriteBatch, DB};

use super::families::{ALL_FAMILIES, BLOCK_FAMILIES, DOCS_FAMILY, META_FAMILY};

/// The fingerprint at the start of a `docs` value (a bincode 2 varint).
fn fingerprint_of(value: &[u8]) -> u64 {
    let le = |n: usize| {
        let mut bytes = [0u8; 8];
        bytes[..n].copy_from_slice(&value[1..1 + n]);
        u64::from_le_bytes(bytes)
    };
    match value[0] {
        tag @ 0..=250 => u64::from(tag),
        251 => le(2),
        252 => le(4),
        253 => le(8),
        tag => panic!("not a varint tag: {tag}"),
    }
}

/// The entries layout's key of document `id` with fingerprint `fp` in family `i`: block `i`,
/// the other three blocks in block order, the id.
fn entry_key(i: usize, fp: u64, id: u64) -> Vec<u8> {
    let blocks = [
        (fp >> 48) as u16,
        (fp >> 32) as u16,
        (fp >> 16) as u16,
        fp as u16,
    ];
    let mut key = blocks[i].to_be_bytes().to_vec();
    for (j, b) in blocks.iter().enumerate() {
        if j != i {
            key.extend_from_slice(&b.to_be_bytes());
        }
    }
    key.extend_from_slice(&id.to_be_bytes());
    key
}

/// Rewrites the closed store at `path` (format 9 without a split group, made by this build) as the store of
/// format 7 with the same documents: each chunk with its ids inline. A format 8 chunk is the
/// inline one less its ids, with bit 128 of its fourth byte set; both end with 16 bytes of
/// padding, as the ids value does: so the inline chunk is the chunk less its padding, then the
/// ids value, the bit cleared. The ids keys (kind byte `02`) go.
pub fn rewrite_as_format7(path: &Path) {
    const CHUNK_KIND: u8 = 0x01;
    const IDS_KIND: u8 = 0x02;
    const PADDING: usize = 16;
    let db = DB::open_cf(&Options::default(), path, ALL_FAMILIES).expect("raw open");
    let cf = |name: &str| db.cf_handle(name).expect("family");
    let mut batch = WriteBatch::default();
    for family in BLOCK_FAMILIES {
        let items = db
            .iterator_cf(cf(family), rocksdb::IteratorMode::Start)
            .map(|item| item.expect("read"));
        for (key, value) in items {
            if key.len() != 11 || key[2] != CHUNK_KIND {
                continue;
            }
            let mut ids_key = key.to_vec();
            ids_key[2] = IDS_KIND;
            let ids = db
                .get_cf(cf(family), &ids_key)
                .expect("read")
                .expect("every chunk of format 8 has its ids");
            assert_ne!(value[3] & 0x80, 0, "a chunk of format 8 has its ids apart");
            let mut inline = value[..value.len() - PADDING].to_vec();
            inline[3] &= 0x7f;
            inline.extend_from_slice(&ids);
            batch.put_cf(cf(family), &key, inline);
            batch.delete_cf(cf(family), ids_key);
        }
    }
    batch.put_cf(cf(META_FAMILY), b"format_version", 7u32.to_be_bytes());
    db.write(batch).expect("write");
    db.flush_wal(true).expect("flush");
}

/// Rewrites the closed store at `path` (format 9 without a split group, made by this build) as the store of
/// format 6 with the same documents and settings (format 6's settings record is format 8's).
pub fn rewrite_as_format6(path: &Path) {
    let db = DB::open_cf(&Options::default(), path, ALL_FAMILIES).expect("raw open");
    let cf = |name: &str| db.cf_handle(name).expect("family");
    let mut batch = WriteBatch::default();
    for (i, family) in BLOCK_FAMILIES.iter().enumerate() {
        for item in db.iterator_cf(cf(family), rocksdb::IteratorMode::Start) {
            let (key, _) = item.expect("read");
            batch.delete_cf(cf(family), key);
        }
        for item in db.iterator_cf(cf(DOCS_FAMILY), rocksdb::IteratorMode::Start) {
            let (key, value) = item.expect("read");
            let id = u64::from_be_bytes(key[..8].try_into().expect("8-byte id"));
            batch.put_cf(cf(family), entry_key(i, fingerprint_of(&value), id), []);
        }
    }
    batch.delete_cf(cf(META_FAMILY), b"next_segment");
    batch.put_cf(cf(META_FAMILY), b"format_version", 6u32.to_be_bytes());
    db.write(batch).expect("write");
    db.flush_cf(cf(META_FAMILY)).expect("flush");
}

/// Rewrites the closed store at `path` (format 9 without a split group, made by this build) as a store of
/// `format`: 6 or 7 as above, 8 by its format number alone (format 8 is format 9 without split
/// groups), 9 as it is.
pub fn rewrite_as(path: &Path, format: u32) {
    match format {
        6 => rewrite_as_format6(path),
        7 => rewrite_as_format7(path),
        8 => rewrite_as_format8(path),
        9 => {}
        _ => panic!("no rewrite into format {format}"),
    }
}

/// Rewrites the closed store at `path` (format 9 without a split group, made by this build) as
/// the store of format 8 with the same documents: the same bytes, but the format number.
pub fn rewrite_as_format8(path: &Path) {
    assert_eq!(
        super::raw::split_groups(path),
        0,
        "format 8 has no split group"
    );
    let db = DB::open_cf(&Options::default(), path, ALL_FAMILIES).expect("raw open");
    let meta = db.cf_handle(META_FAMILY).expect("family");
    db.put_cf(meta, b"format_version", 8u32.to_be_bytes())
        .expect("write");
    db.flush_wal(true).expect("flush");
}
