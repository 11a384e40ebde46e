//! A store's block families read with RocksDB alone, by the bytes `docs/design.md` ("Bytes on
//! disk") lays out: what the tests check of the on-disk layout.

use std::collections::BTreeSet;
use std::path::Path;

use rocksdb::{Options, DB};

use super::families::{ALL_FAMILIES, BLOCK_FAMILIES};

/// The (family, block value) of every split group of the store at `path` (format 9): the key
/// of a copy's chunk (11 bytes, kind `03`).
pub fn split_groups_of(path: &Path) -> BTreeSet<(usize, u16)> {
    let db = DB::open_cf_for_read_only(&Options::default(), path, ALL_FAMILIES, false)
        .expect("raw open");
    let mut split = BTreeSet::new();
    for (i, family) in BLOCK_FAMILIES.iter().enumerate() {
        let cf = db.cf_handle(family).expect("block family");
        for item in db.iterator_cf(cf, rocksdb::IteratorMode::Start) {
            let (key, _) = item.expect("read");
            if key.len() == 11 && key[2] == 0x03 {
                split.insert((i, u16::from_be_bytes([key[0], key[1]])));
            }
        }
    }
    split
}

/// How many groups of the store at `path` are split.
pub fn split_groups(path: &Path) -> usize {
    split_groups_of(path).len()
}

/// Deletes the first chunk (or, with `all`, every chunk) of part `part`'s copy of the first
/// split group of the store at `path` (a damaged store, for `verify`); returns the group's
/// (family, block value).
pub fn delete_part_chunks(path: &Path, part: u8, all: bool) -> (usize, u16) {
    let db = DB::open_cf(&Options::default(), path, ALL_FAMILIES).expect("raw open");
    for (i, family) in BLOCK_FAMILIES.iter().enumerate() {
        let cf = db.cf_handle(family).expect("block family");
        // Kind `03`; the chunk number's top bit set, then the part (2 bits).
        let is_part = |key: &[u8]| key.len() == 11 && key[2] == 0x03 && key[7] >> 5 == 0b100 | part;
        let keys: Vec<Box<[u8]>> = db
            .iterator_cf(cf, rocksdb::IteratorMode::Start)
            .map(|item| item.expect("read").0)
            .filter(|key| is_part(key))
            .collect();
        let Some(first) = keys.first() else { continue };
        let group = [first[0], first[1]];
        for key in keys
            .iter()
            .filter(|k| k[..2] == group)
            .take(if all { usize::MAX } else { 1 })
        {
            db.delete_cf(cf, key).expect("delete");
        }
        db.flush_cf(cf).expect("flush");
        return (i, u16::from_be_bytes(group));
    }
    panic!("no split group");
}
