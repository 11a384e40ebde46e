//! Reading whole groups, in either layout: for `verify`, the pair scan, full scans and folding.

use std::ops::Range;

use super::chunk::{Chunk, Ids};
use super::{Db, Layout, Postings};
use crate::codec::{self, Delta};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::keys::{self, PackedKey, BLOCK_FAMILIES};
use crate::pigeonhole;
use crate::storage::{Reading, View};

/// One document of a group: its fingerprint and id.
pub(crate) type Posting = (Fingerprint, u64);

/// A group being read: what its keys said so far.
#[derive(Default)]
pub(crate) struct GroupParts {
    /// Entries layout: the entries, in key order.
    entries: Vec<Posting>,
    /// Packed layout: (remainder, id, segment) of every chunk entry.
    chunked: Vec<(u64, u64, u32)>,
    /// Packed layout: (remainder, id, delta), in key order.
    deltas: Vec<(u64, u64, Delta)>,
    /// Packed layout, ids apart: the group's chunks waiting for their ids, as (segment,
    /// number, end of its bytes in `apart_bytes`), in key order, ...
    apart: Vec<(u32, u32, usize)>,
    /// ... their bytes, one after another, ...
    apart_bytes: Vec<u8>,
    /// ... and how many of them have had their ids (which come in the chunks' order).
    apart_done: usize,
    /// Packed layout: scratch for [`GroupParts::finish`].
    merged: Vec<(u64, u64)>,
    /// Whether the copies of a split group's parts are checked against each other (`verify`)
    /// rather than skipped, ...
    check_parts: bool,
    /// ... as (segment, part, entries, sum of entry checksums), in key order.
    part_sums: Vec<(u32, usize, u64, u64)>,
}

impl GroupParts {
    fn clear(&mut self) {
        self.entries.clear();
        self.chunked.clear();
        self.deltas.clear();
        self.apart.clear();
        self.apart_bytes.clear();
        self.apart_done = 0;
        self.part_sums.clear();
    }

    /// Counts `(remainder, id)` of part `part`'s copy of segment `segment`.
    fn add_to_part(&mut self, segment: u32, part: usize, remainder: u64, id: u64) {
        if self
            .part_sums
            .last()
            .is_none_or(|s| (s.0, s.1) != (segment, part))
        {
            self.part_sums.push((segment, part, 0, 0));
        }
        if let Some(s) = self.part_sums.last_mut() {
            s.2 += 1;
            s.3 = s.3.wrapping_add(entry_checksum(remainder, id));
        }
    }

    /// The first copy of a split group's part (of value `value`) that does not hold the
    /// entries of part 0's copy, as the key where it starts and a message.
    fn unequal_part(&self, value: u16) -> Option<([u8; keys::CHUNK_KEY_LEN], String)> {
        let copy = |segment: u32, part: usize| {
            self.part_sums
                .iter()
                .find(|s| (s.0, s.1) == (segment, part))
                .map_or((0, 0), |s| (s.2, s.3))
        };
        // Every copy of every segment that has one, a missing copy holding nothing.
        let segments = self.part_sums.iter().map(|s| s.0);
        let copies = segments.flat_map(|segment| (1..pigeonhole::PARTS).map(move |j| (segment, j)));
        copies.into_iter().find_map(|(segment, part)| {
            let (n, sum) = copy(segment, part);
            let (n0, sum0) = copy(segment, 0);
            ((n, sum) != (n0, sum0)).then(|| {
                (
                    keys::part_start(value, segment, part, 0),
                    format!(
                        "part {part} of a split group (segment {segment}) holds {n} entries \
                         other than the {n0} of part 0"
                    ),
                )
            })
        })
    }

    /// The key of the first chunk of the group of value `value` still without its ids.
    fn missing_ids(&self, value: u16) -> Option<[u8; keys::CHUNK_KEY_LEN]> {
        let &(segment, number, _) = self.apart.get(self.apart_done)?;
        Some(keys::chunk_key(value, segment, number))
    }

    /// The group of block value `value` of family `i`: sorted by (remainder, id), each
    /// document once. Clears the parts.
    fn finish(&mut self, i: usize, value: u16, out: &mut Vec<Posting>) {
        out.clear();
        if self.chunked.is_empty() && self.deltas.is_empty() {
            std::mem::swap(out, &mut self.entries);
            return;
        }
        let deltas = &self.deltas;
        let hidden = |rem: u64, id: u64, segment: u32| {
            deltas
                .binary_search_by(|d| (d.0, d.1).cmp(&(rem, id)))
                .ok()
                .is_some_and(|at| {
                    matches!(deltas[at].2, Delta::Removed { watermark } if segment < watermark)
                })
        };
        self.merged.clear();
        self.merged.extend(
            self.chunked
                .iter()
                .filter(|&&(rem, id, segment)| deltas.is_empty() || !hidden(rem, id, segment))
                .map(|&(rem, id, _)| (rem, id)),
        );
        self.merged.extend(
            deltas
                .iter()
                .filter(|d| d.2 == Delta::Added)
                .map(|&(rem, id, _)| (rem, id)),
        );
        self.merged.sort_unstable();
        self.merged.dedup();
        out.extend(
            self.merged
                .iter()
                .map(|&(rem, id)| (keys::join(i, value, rem), id)),
        );
        self.clear();
    }
}

/// What a whole-group read does with the copies of a split group's parts (`write.rs`): it
/// reads the group from part 0's copy alone.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum SplitCopies {
    /// Leaves the other copies unread.
    Trusted,
    /// Checks that each copy holds part 0's entries, each under its part value: for `verify`.
    Checked,
}

/// Reports a malformed key of family `family`: `Err` stops the read.
pub(crate) type Malformed<'m> = dyn FnMut(&'static str, &[u8], String) -> Result<()> + 'm;

/// The error for a malformed block-family key or value.
pub(crate) fn malformed_error(family: &'static str, key: &[u8], message: String) -> Result<()> {
    Err(Error::Decode {
        column_family: family,
        key: keys::hex(key),
        what: "block family entry",
        message,
    })
}

/// What a read of whole groups reads: the groups of block family `family` whose values are
/// in `values`, from `view` of `db`, read as `reading` says.
pub(crate) struct GroupScan<'v, 'db> {
    pub(crate) db: Db<'db>,
    pub(crate) view: &'v View<'db>,
    pub(crate) family: usize,
    pub(crate) values: Range<u32>,
    pub(crate) reading: Reading,
}

impl<'v, 'db> GroupScan<'v, 'db> {
    /// Every group of family `family` of `view` of `db`, read with RocksDB's defaults.
    pub(crate) fn all(db: Db<'db>, view: &'v View<'db>, family: usize) -> Self {
        GroupScan {
            db,
            view,
            family,
            values: 0..1 << 16,
            reading: Reading::new(),
        }
    }
}

impl Postings {
    /// Calls `each(value, group)` for every non-empty group that `scan` reads, in value
    /// order. Each group is sorted (by the other 48 bits, then id) and holds each document
    /// once. A malformed key or value goes to `malformed`, which may skip it (`Ok`) or stop
    /// the read; so does, with [`SplitCopies::Checked`], a copy of a split group's parts that
    /// differs from part 0's.
    pub(crate) fn for_each_group<E: From<Error>>(
        &self,
        scan: GroupScan<'_, '_>,
        copies: SplitCopies,
        malformed: &mut Malformed<'_>,
        each: impl FnMut(u16, &[Posting]) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        for_each_group(
            self.layout(),
            scan,
            copies == SplitCopies::Checked,
            malformed,
            each,
        )
    }

    /// Whether group `value` of family `i` of `view` holds a segment written split (format 9,
    /// `write.rs`): one seek, to where its copies would begin.
    pub(crate) fn is_split(
        &self,
        db: Db<'_>,
        view: &View<'_>,
        i: usize,
        value: u16,
    ) -> Result<bool> {
        if self.packed().is_none() {
            return Ok(false);
        }
        let mut it = view.cursor(db.block(i)?, Reading::new());
        it.seek(keys::parts_prefix(value));
        let split = it
            .key()
            .is_some_and(|key| key.starts_with(&keys::parts_prefix(value)));
        it.status()?;
        Ok(split)
    }

    /// Reads group `value` of family `i` from `view` of `db` into `out` (see
    /// [`Postings::for_each_group`]); a malformed entry is an error.
    pub(crate) fn read_group(
        &self,
        db: Db<'_>,
        view: &View<'_>,
        i: usize,
        value: u16,
        out: &mut Vec<Posting>,
    ) -> Result<()> {
        read_group(db, self.layout(), view, i, value, out)
    }
}

/// [`Postings::for_each_group`] in `layout`; with `check_parts`, each copy of a split
/// group's parts is checked against part 0's (each entry under its part value, the same
/// entries).
fn for_each_group<E: From<Error>>(
    layout: Layout,
    scan: GroupScan<'_, '_>,
    check_parts: bool,
    malformed: &mut Malformed<'_>,
    mut each: impl FnMut(u16, &[Posting]) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let i = scan.family;
    let family = BLOCK_FAMILIES[i];
    let mut parts = GroupParts {
        check_parts,
        ..GroupParts::default()
    };
    let mut group = Vec::new();
    let mut current: Option<u16> = None;
    for_each_key(scan, |key, value| {
        let Some(v) = key.get(0..2).map(|b| u16::from_be_bytes([b[0], b[1]])) else {
            return malformed(family, key, format!("a {}-byte key", key.len())).map_err(E::from);
        };
        if current != Some(v) {
            if let Some(done) = current {
                if let Some(key) = parts.missing_ids(done) {
                    malformed(family, &key, "the ids of a chunk are missing".into())
                        .map_err(E::from)?;
                }
                if let Some((key, message)) = parts.unequal_part(done) {
                    malformed(family, &key, message).map_err(E::from)?;
                }
                parts.finish(i, done, &mut group);
                if !group.is_empty() {
                    each(done, &group)?;
                }
            }
            current = Some(v);
        }
        read_key(layout, i, key, value, &mut parts, malformed).map_err(E::from)
    })?;
    if let Some(done) = current {
        if let Some(key) = parts.missing_ids(done) {
            malformed(family, &key, "the ids of a chunk are missing".into()).map_err(E::from)?;
        }
        if let Some((key, message)) = parts.unequal_part(done) {
            malformed(family, &key, message).map_err(E::from)?;
        }
        parts.finish(i, done, &mut group);
        if !group.is_empty() {
            each(done, &group)?;
        }
    }
    Ok(())
}

/// Calls `each(key, value)` for every key of the groups that `scan` reads, in key order.
///
/// A block family's memtables keep their keys hashed by block value
/// (`src/storage/families.rs`), and an iterator reads a memtable only in the block value of
/// its last seek unless it is made in key order ([`Reading::in_key_order`]), which copies the
/// memtables into one sorted list. So a scan
/// of one block value seeks it; a scan of many either seeks each value or reads in key
/// order, whichever costs less for the keys the memtables hold. (A key too short to hold a
/// block value is seen only in key order.)
pub(crate) fn for_each_key<E: From<Error>>(
    scan: GroupScan<'_, '_>,
    mut each: impl FnMut(&[u8], &[u8]) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let GroupScan {
        db,
        view,
        family: i,
        values,
        reading,
    } = scan;
    let values = values.start.min(1 << 16)..values.end.min(1 << 16);
    if values.is_empty() {
        return Ok(());
    }
    let seek_each = values.len() == 1 || {
        let copied = db.memtable_entries(i)?;
        copied.saturating_mul(SEEKS_PER_COPIED_KEY) + SEEKS_PER_COPY > values.len() as u64
    };
    if seek_each {
        let mut it = view.cursor(db.block(i)?, reading);
        for v in values {
            let prefix = keys::block_prefix(v as u16);
            it.seek(keys::group_start(v as u16));
            while let (Some(key), Some(value)) = (it.key(), it.value()) {
                if !key.starts_with(&prefix) {
                    break;
                }
                each(key, value)?;
                it.next();
            }
            it.status()?;
        }
        return Ok(());
    }
    let mut reading = reading.in_key_order();
    if let Ok(hi) = u16::try_from(values.end) {
        reading = reading.upper_bound(keys::block_prefix(hi).to_vec());
    }
    let mut it = view.cursor(db.block(i)?, reading);
    it.seek(keys::group_start(values.start as u16));
    while let (Some(key), Some(value)) = (it.key(), it.value()) {
        each(key, value)?;
        it.next();
    }
    Ok(it.status()?)
}

/// What an iterator in key order costs to make, in seeks of one block value (0.5 µs each):
/// a pass over the memtables' 65,536 hash buckets, 0.25 ms, ...
const SEEKS_PER_COPY: u64 = 512;
/// ... and the insertion of each of their keys into a sorted list, 0.3 to 0.6 µs. (Full
/// scans of a store of 1,000 documents with 0 to 100,000 keys in the memtables.)
const SEEKS_PER_COPIED_KEY: u64 = 1;

/// [`Postings::read_group`] in `layout`.
pub(crate) fn read_group(
    db: Db<'_>,
    layout: Layout,
    view: &View<'_>,
    i: usize,
    value: u16,
    out: &mut Vec<Posting>,
) -> Result<()> {
    out.clear();
    let values = u32::from(value)..u32::from(value) + 1;
    let scan = GroupScan {
        db,
        view,
        family: i,
        values,
        reading: Reading::new(),
    };
    for_each_group(layout, scan, false, &mut malformed_error, |_, group| {
        out.extend_from_slice(group);
        Ok::<(), Error>(())
    })
}

/// Adds one key of family `i` (and its value) in `layout` to `parts`.
fn read_key(
    layout: Layout,
    i: usize,
    key: &[u8],
    value: &[u8],
    parts: &mut GroupParts,
    malformed: &mut Malformed<'_>,
) -> Result<()> {
    let family = BLOCK_FAMILIES[i];
    match layout {
        Layout::Entries => match keys::decode_block_key(i, key) {
            Some(entry) => parts.entries.push(entry),
            None => malformed(family, key, "not a 16-byte block key".into())?,
        },
        Layout::Packed => match keys::decode_packed_key(i, key) {
            Some(PackedKey::Chunk {
                segment, number, ..
            }) => match Chunk::parse(value) {
                Ok(chunk) => match chunk.ids() {
                    Some(ids) => {
                        chunk.for_each(&ids, |rem, id| parts.chunked.push((rem, id, segment)))
                    }
                    None => {
                        parts.apart_bytes.extend_from_slice(value);
                        parts.apart.push((segment, number, parts.apart_bytes.len()));
                    }
                },
                Err(message) => malformed(family, key, format!("chunk: {message}"))?,
            },
            // A split group's copy of part 0 holds each entry once; the other copies are
            // skipped (`verify` checks them).
            Some(PackedKey::SplitMark { .. }) => {}
            Some(PackedKey::Part { part, .. }) if part != 0 && !parts.check_parts => {}
            Some(PackedKey::Part {
                segment, part, sub, ..
            }) => match Chunk::parse(value).map(|c| (c, c.ids())) {
                Ok((chunk, Some(ids))) => {
                    let mut misplaced = 0usize;
                    chunk.for_each(&ids, |rem, id| {
                        if part == 0 {
                            parts.chunked.push((rem, id, segment));
                        }
                        if parts.check_parts {
                            parts.add_to_part(segment, part, rem, id);
                            misplaced += usize::from(pigeonhole::part(rem, part) != sub);
                        }
                    });
                    if misplaced > 0 {
                        malformed(
                            family,
                            key,
                            format!("{misplaced} entries of other part values than {sub}"),
                        )?;
                    }
                }
                Ok((_, None)) => malformed(family, key, "a part chunk without ids".into())?,
                Err(message) => malformed(family, key, format!("chunk: {message}"))?,
            },
            Some(PackedKey::Ids {
                segment, number, ..
            }) => {
                let at = parts.apart_done;
                match parts.apart.get(at) {
                    Some(&(s, n, end)) if (s, n) == (segment, number) => {
                        parts.apart_done += 1;
                        let start = at.checked_sub(1).map_or(0, |p| parts.apart[p].2);
                        let bytes = &parts.apart_bytes[start..end];
                        // Parsed when it was read.
                        if let Ok(chunk) = Chunk::parse(bytes) {
                            match Ids::parse(value, chunk.ids_layout()) {
                                Ok(ids) => chunk.for_each(&ids, |rem, id| {
                                    parts.chunked.push((rem, id, segment))
                                }),
                                Err(message) => malformed(family, key, format!("ids: {message}"))?,
                            }
                        }
                    }
                    _ => malformed(family, key, "ids without their chunk".into())?,
                }
            }
            Some(PackedKey::Delta { fingerprint, id }) => match codec::decode_delta(value) {
                Some(delta) => {
                    let (_, rem) = keys::split(i, fingerprint);
                    parts.deltas.push((rem, id, delta));
                }
                None => malformed(family, key, format!("a {}-byte delta", value.len()))?,
            },
            None => malformed(family, key, "not a key of the packed layout".into())?,
        },
    }
    Ok(())
}

/// A 64-bit checksum of one entry `(remainder, id)` (xxh3), summed over a copy of a part.
fn entry_checksum(remainder: u64, id: u64) -> u64 {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&remainder.to_le_bytes());
    bytes[8..].copy_from_slice(&id.to_le_bytes());
    xxhash_rust::xxh3::xxh3_64(&bytes)
}
