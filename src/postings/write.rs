//! What writes put in the block families, in the packed layout with ids apart (format 8,
//! the only one this build writes): a single write's deltas, and the chunks of a group that
//! a bulk run, its merge and a fold write ([`GroupWriter`]).

use crate::storage::{Batch as WriteBatch, ReadOptions};

use super::chunk::{self, MAX_ENTRIES};
use super::{in_key_order, Db, Packed};
use crate::codec::{self, Delta};
use crate::error::Result;
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::keys::{self, BLOCK_FAMILIES};

/// Whether the four block families of `db` hold no key at all (not even a removal).
pub(crate) fn block_families_empty(db: Db<'_>) -> Result<bool> {
    for (i, &family) in BLOCK_FAMILIES.iter().enumerate() {
        let options = in_key_order(ReadOptions::default());
        let mut it = db.rocks().raw_iterator_cf_opt(db.family(i)?, options);
        it.seek_to_first();
        if it.valid() {
            return Ok(false);
        }
        it.status().map_err(|e| db.error("scan", Some(family), e))?;
    }
    Ok(true)
}

impl Packed {
    /// Adds document `id` with fingerprint `fp` to the four block families in `batch`.
    pub(crate) fn put(
        &self,
        db: Db<'_>,
        batch: &mut WriteBatch,
        fp: Fingerprint,
        id: u64,
    ) -> Result<()> {
        for i in 0..BLOCKS {
            batch.put_cf(
                db.family(i)?,
                keys::delta_key(i, fp, id),
                codec::encode_delta(Delta::Added),
            );
        }
        Ok(())
    }

    /// Removes document `id` with fingerprint `fp` from the four block families in `batch`.
    /// The removal hides the entry in every chunk written so far (the caller holds the write
    /// lock, so no bulk run writes a segment meanwhile).
    pub(crate) fn delete(
        &self,
        db: Db<'_>,
        batch: &mut WriteBatch,
        fp: Fingerprint,
        id: u64,
    ) -> Result<()> {
        let watermark = self.next_segment();
        for i in 0..BLOCKS {
            batch.put_cf(
                db.family(i)?,
                keys::delta_key(i, fp, id),
                codec::encode_delta(Delta::Removed { watermark }),
            );
        }
        Ok(())
    }
}

/// Writes groups as chunks with their ids apart, keeping its buffers from group to group.
#[derive(Default)]
pub(crate) struct GroupWriter {
    chunk: Vec<u8>,
    /// The ids of the group's chunks, one after another, ...
    ids: Vec<u8>,
    /// ... each ending here.
    ids_ends: Vec<usize>,
}

impl GroupWriter {
    /// Writes `entries` (sorted by (remainder, id)) of block value `value` as chunks of
    /// segment `segment`, numbered from 0, through `put(key, value)` in key order: the chunks,
    /// then their ids. The last chunk is final if `last_is_final` (nothing of the group can
    /// sort after it, `chunk`).
    pub(crate) fn write<E>(
        &mut self,
        value: u16,
        segment: u32,
        entries: &[(u64, u64)],
        last_is_final: bool,
        mut put: impl FnMut(&[u8], &[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        self.ids.clear();
        self.ids_ends.clear();
        let last = entries.len().div_ceil(MAX_ENTRIES).saturating_sub(1);
        for (c, part) in entries.chunks(MAX_ENTRIES).enumerate() {
            self.chunk.clear();
            chunk::encode_apart(
                part,
                last_is_final && c == last,
                &mut self.chunk,
                &mut self.ids,
            );
            self.ids_ends.push(self.ids.len());
            // 2^32 chunks of 4,096 entries would be 2^44 documents in one group: out of reach.
            put(&keys::chunk_key(value, segment, c as u32), &self.chunk)?;
        }
        let mut start = 0;
        for (c, &end) in self.ids_ends.iter().enumerate() {
            put(
                &keys::ids_key(value, segment, c as u32),
                &self.ids[start..end],
            )?;
            start = end;
        }
        Ok(())
    }
}
