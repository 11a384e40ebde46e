//! Folding a group's deltas and segments into fresh chunks (packed layout).
//!
//! A fold reads the group as queries see it and, in one atomic batch, deletes every key of the
//! group (chunks, their ids, deltas) and writes the group again as chunks of segment 0, the
//! last one final (`chunk.rs`), with their ids. Segment 0 is never a bulk run's (those start
//! at 1), so any later removal hides its entries, as it must, and later segments sort before
//! it.
//! Folds run under the write lock: no other write changes the group between the read and the
//! batch, and readers see the group before or after the batch, never between.

use std::sync::atomic::{AtomicU16, Ordering};

use crate::storage::{BatchSink, Persist, Reading, Sink};

use super::groups::{self, malformed_error, GroupScan, Posting};
use super::write::GroupWriter;
use super::{Db, Layout, Packed};
use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::keys::{self, PackedKey, BLOCK_FAMILIES};

/// Deltas a group takes before a write folds it. A fold rewrites the group (about 8.5 bytes
/// per document), so this bounds the rewriting to `8.5 · group size / 64` bytes per write
/// and family, and the deltas a query steps through to 64 per group and family.
const FOLD_AFTER: u16 = 64;
/// Block values whose groups are folded under one hold of the write lock by
/// [`Packed::fold_groups`]: writers wait at most this long.
const VALUES_PER_LOCK: u32 = 1024;
/// Bytes of a fold batch at which it is written.
const BATCH_BYTES: usize = 16 << 20;

/// For each group, the deltas written to it since the store opened or the group was folded.
/// Deltas written before the store opened are not counted: the group is folded once it takes
/// [`FOLD_AFTER`] more, or by [`Packed::fold_groups`].
pub(crate) struct FoldCounters {
    counts: Box<[AtomicU16]>,
}

impl FoldCounters {
    pub(crate) fn new() -> FoldCounters {
        FoldCounters {
            counts: (0..BLOCKS << 16).map(|_| AtomicU16::new(0)).collect(),
        }
    }

    fn slot(i: usize, value: u16) -> usize {
        (i << 16) | usize::from(value)
    }

    /// Counts one delta in each group of `fp`; pushes the groups that are due for a fold.
    pub(crate) fn count(&self, fp: Fingerprint, due: &mut Vec<(usize, u16)>) {
        for (i, value) in fp.blocks().into_iter().enumerate() {
            if let Some(c) = self.counts.get(Self::slot(i, value)) {
                if c.fetch_add(1, Ordering::Relaxed) + 1 >= FOLD_AFTER {
                    due.push((i, value));
                }
            }
        }
    }

    fn reset(&self, i: usize, value: u16) {
        if let Some(c) = self.counts.get(Self::slot(i, value)) {
            c.store(0, Ordering::Relaxed);
        }
    }
}

impl Packed {
    /// Folds the groups `due` (family, value), writing with `write`; the caller holds the
    /// write lock.
    pub(crate) fn fold_due(
        &self,
        db: Db<'_>,
        persist: Persist,
        due: &mut Vec<(usize, u16)>,
    ) -> Result<()> {
        due.sort_unstable();
        due.dedup();
        let mut batch = db.sink();
        let mut group = Vec::new();
        let mut writer = self.group_writer();
        for &(i, value) in due.iter() {
            fold_into(db, &mut batch, i, value, &mut group, &mut writer)?;
        }
        write_fold(persist, batch)?;
        for &(i, value) in due.iter() {
            self.fold_counters.reset(i, value);
        }
        due.clear();
        Ok(())
    }

    /// Folds every group that has deltas or chunks of more than one segment, so that each
    /// group is one segment's chunks, and returns how many it folded. Each slice of
    /// [`VALUES_PER_LOCK`] block values is folded under the write lock that `lock` takes:
    /// writers wait for at most one slice at a time; readers never wait.
    ///
    /// # Errors
    /// RocksDB errors; [`Error::Decode`](crate::Error::Decode) for a damaged chunk or
    /// delta; those of `lock`.
    pub(crate) fn fold_groups<G>(
        &self,
        db: Db<'_>,
        persist: Persist,
        mut lock: impl FnMut() -> Result<G>,
    ) -> Result<u64> {
        let mut folded = 0;
        let mut group = Vec::new();
        let mut writer = self.group_writer();
        for i in 0..BLOCKS {
            let mut lo = 0u32;
            while lo < 1 << 16 {
                let hi = (lo + VALUES_PER_LOCK).min(1 << 16);
                let guard = lock()?;
                let due = groups_to_fold(db, i, lo..hi)?;
                let mut batch = db.sink();
                for &value in &due {
                    fold_into(db, &mut batch, i, value, &mut group, &mut writer)?;
                    self.fold_counters.reset(i, value);
                    if batch.size_in_bytes() >= BATCH_BYTES {
                        write_fold(persist, std::mem::replace(&mut batch, db.sink()))?;
                    }
                }
                write_fold(persist, batch)?;
                drop(guard);
                folded += due.len() as u64;
                lo = hi;
            }
        }
        Ok(folded)
    }
}

/// The block values in `values` of family `i` whose groups hold a delta or chunks of two
/// segments.
fn groups_to_fold(db: Db<'_>, i: usize, values: std::ops::Range<u32>) -> Result<Vec<u16>> {
    let family = BLOCK_FAMILIES[i];
    let mut due = Vec::new();
    // (value, segment of its first chunk, whether it is due)
    let mut current: Option<(u16, Option<u32>, bool)> = None;
    let view = db.latest();
    let scan = GroupScan {
        db,
        view: &view,
        family: i,
        values,
        reading: Reading::new().fill_cache(false),
    };
    groups::for_each_key(scan, |key, _| {
        let decoded = keys::decode_packed_key(i, key);
        let value = match decoded {
            Some(
                PackedKey::Chunk { value, .. }
                | PackedKey::SplitMark { value, .. }
                | PackedKey::Part { value, .. }
                | PackedKey::Ids { value, .. },
            ) => value,
            Some(PackedKey::Delta { fingerprint, .. }) => fingerprint.block(i),
            None => {
                malformed_error(family, key, "neither a chunk nor a delta key".into())?;
                0
            }
        };
        if current.is_some_and(|c| c.0 != value) {
            if let Some((v, _, true)) = current {
                due.push(v);
            }
            current = None;
        }
        let (_, first_segment, is_due) = current.get_or_insert((value, None, false));
        match decoded {
            Some(PackedKey::Chunk { segment, .. } | PackedKey::SplitMark { segment, .. }) => {
                match first_segment {
                    None => *first_segment = Some(segment),
                    Some(s) if *s != segment => *is_due = true,
                    Some(_) => {}
                }
            }
            // Ids follow their chunks, the copies of a split segment its mark: those tell.
            Some(PackedKey::Ids { .. } | PackedKey::Part { .. }) => {}
            _ => *is_due = true,
        }
        Ok::<(), Error>(())
    })?;
    if let Some((v, _, true)) = current {
        due.push(v);
    }
    Ok(due)
}

/// Adds to `batch` the fold of group `value` of family `i`: deletes of all its keys, puts
/// of its chunks in segment 0, through `writer` (which splits a large group). `group` is
/// scratch.
fn fold_into(
    db: Db<'_>,
    batch: &mut BatchSink<'_>,
    i: usize,
    value: u16,
    group: &mut Vec<Posting>,
    writer: &mut GroupWriter,
) -> Result<()> {
    let view = db.latest();
    groups::read_group(db, Layout::Packed, &view, i, value, group)?;
    let prefix = keys::block_prefix(value);
    let mut family = batch.block_family(i)?;
    let mut it = db.cursor(i, Reading::new())?;
    it.seek(keys::group_start(value));
    while let Some(key) = it.key() {
        if !key.starts_with(&prefix) {
            break;
        }
        let Ok(()) = family.delete(key);
        it.next();
    }
    it.status()?;
    let entries: Vec<(u64, u64)> = group
        .iter()
        .map(|&(fp, id)| (keys::split(i, fp).1, id))
        .collect();
    // The fold rewrites the whole group: its last chunk is final.
    writer.write(value, 0, &entries, true, |key, bytes| {
        let Ok(()) = family.put(key, bytes);
        Ok::<(), Error>(())
    })
}

/// Writes a fold's `batch`.
fn write_fold(persist: Persist, batch: BatchSink<'_>) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    batch.commit(persist, "fold a group")
}
