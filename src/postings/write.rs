//! What writes put in the block families, in the packed layout with ids apart and crowded
//! groups split (format 9, the only one this build writes): a single write's deltas, and the
//! chunks of a group that a bulk run, its merge and a fold write ([`GroupWriter`]).

use crate::storage::{BatchSink, Reading, Sink};

use super::chunk::{self, MAX_ENTRIES};
use super::{Db, Packed};
use crate::codec::{self, Delta};
use crate::error::Result;
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::keys;
use crate::pigeonhole::{self, PARTS, PART_VALUES};

/// Whether the four block families of `db` hold no key at all (not even a removal).
pub(crate) fn block_families_empty(db: Db<'_>) -> Result<bool> {
    for i in 0..BLOCKS {
        let mut it = db.cursor(i, Reading::new().in_key_order())?;
        it.seek_to_first();
        if it.key().is_some() {
            return Ok(false);
        }
        it.status()?;
    }
    Ok(true)
}

impl Packed {
    /// Adds document `id` with fingerprint `fp` to the four block families in `batch`.
    pub(crate) fn put(&self, batch: &mut BatchSink<'_>, fp: Fingerprint, id: u64) -> Result<()> {
        let value = codec::encode_delta(Delta::Added);
        for i in 0..BLOCKS {
            let Ok(()) = batch
                .block_family(i)?
                .put(&keys::delta_key(i, fp, id), &value);
        }
        Ok(())
    }

    /// Removes document `id` with fingerprint `fp` from the four block families in `batch`.
    /// The removal hides the entry in every chunk written so far (the caller holds the write
    /// lock, so no bulk run writes a segment meanwhile).
    pub(crate) fn delete(&self, batch: &mut BatchSink<'_>, fp: Fingerprint, id: u64) -> Result<()> {
        let value = codec::encode_delta(Delta::Removed {
            watermark: self.next_segment(),
        });
        for i in 0..BLOCKS {
            let Ok(()) = batch
                .block_family(i)?
                .put(&keys::delta_key(i, fp, id), &value);
        }
        Ok(())
    }
}

/// The default of [`crate::StoreBuilder::split_groups_above`]: entries of one group (in one
/// segment) above which it is written split.
pub(crate) const SPLIT_GROUPS_ABOVE: usize = 65_536;

/// Writes groups as chunks with their ids apart, or split (below), keeping its buffers from
/// group to group.
///
/// **Split groups** (format 9). A query scans the whole of each group it reads, so a group far
/// larger than the others (a block value shared by templated pages, or by a share of the store)
/// makes every query landing on it slow: with 5% of 10M documents in one value, a k = 3 query
/// landing there takes 25 times a uniform one's time unsplit, 1.8 times split
/// (`docs/benchmarks.md`, "Split groups"). A group of more than `split_above` entries in one
/// segment is written four times instead, once per 12-bit *part* of its remainders
/// ([`pigeonhole::part`]): a mark among the chunks ([`keys::split_mark_key`]), then the copy of
/// part `j` as chunks keyed by the entries' part `j`, ids inline, after the group's ids
/// ([`keys::part_key`]: a read of the chunks never reads ahead into the copies). Two remainders
/// within 3 bits are equal on one part, so a query with at most 3 bits left for the remainder
/// reads, in each copy, only the chunks of its own part value: about `4 / 4096` of the group;
/// with more bits left, the part values within each part's radius
/// ([`pigeonhole::reporting_part`]: 40 of 16,384 at 6). All-group reads take the copy of part
/// 0, which holds every entry once. The price is four times the group's bytes, so the threshold
/// is far above a uniform group (1,526 entries at 100M documents, 15,259 at 1B); and a group
/// whose entries agree on most parts (a template's pages) is left whole, as reading it by parts
/// would cost more ([`GroupWriter::split_pays`]).
pub(crate) struct GroupWriter {
    chunk: Vec<u8>,
    /// The ids of the group's chunks, one after another, ...
    ids: Vec<u8>,
    /// ... each ending here.
    ids_ends: Vec<usize>,
    /// Groups of more entries than this are written split.
    split_above: usize,
    /// A split group's entries in the order of one part.
    by_part: Vec<(u64, u64)>,
    /// Scratch of the counting sort by part.
    starts: Vec<usize>,
}

impl GroupWriter {
    /// A writer that splits groups of more than `split_above` entries.
    pub(crate) fn new(split_above: usize) -> GroupWriter {
        GroupWriter {
            chunk: Vec::new(),
            ids: Vec::new(),
            ids_ends: Vec::new(),
            split_above: split_above.max(1),
            by_part: Vec::new(),
            starts: Vec::new(),
        }
    }

    /// Writes `entries` (sorted by (remainder, id)) of block value `value` as chunks of
    /// segment `segment`, numbered from 0, through `put(key, value)` in key order: the chunks,
    /// then their ids. The last chunk is final if `last_is_final` (nothing of the group can
    /// sort after it, `chunk`). More entries than the writer's threshold are written split
    /// instead (above).
    pub(crate) fn write<E>(
        &mut self,
        value: u16,
        segment: u32,
        entries: &[(u64, u64)],
        last_is_final: bool,
        mut put: impl FnMut(&[u8], &[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        // A part value's chunks are numbered in 17 bits: a group beyond that stays whole.
        let max_split = keys::MAX_PART_CHUNKS as usize * MAX_ENTRIES;
        if entries.len() > self.split_above
            && entries.len() <= max_split
            && self.split_pays(entries)
        {
            return self.write_split(value, segment, entries, put);
        }
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

    /// Writes `entries` (sorted by (remainder, id)) of block value `value` split: the segment's
    /// mark, then for each part `j` the entries by part `j` (then remainder and id), as chunks
    /// of each part value with their ids inline, in key order.
    fn write_split<E>(
        &mut self,
        value: u16,
        segment: u32,
        entries: &[(u64, u64)],
        mut put: impl FnMut(&[u8], &[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        put(&keys::split_mark_key(value, segment), &[])?;
        for j in 0..PARTS {
            // Part 0 is the remainder's top bits: the entries are in its order already.
            let ordered: &[(u64, u64)] = if j == 0 {
                entries
            } else {
                self.sort_by_part(entries, j);
                &self.by_part
            };
            let mut at = 0;
            while at < ordered.len() {
                let sub = pigeonhole::part(ordered[at].0, j);
                let end = at + ordered[at..].partition_point(|e| pigeonhole::part(e.0, j) == sub);
                for (seq, piece) in ordered[at..end].chunks(MAX_ENTRIES).enumerate() {
                    self.chunk.clear();
                    chunk::encode(piece, false, &mut self.chunk);
                    put(
                        &keys::part_key(value, segment, j, sub, seq as u32),
                        &self.chunk,
                    )?;
                }
                at = end;
            }
        }
        Ok(())
    }

    /// Whether reading `entries` by parts costs a query drawn like them less than a quarter of
    /// scanning them all: `sum over parts j and part values v of c(j, v)^2 / c`, the entries
    /// such a query reads in the four copies, below `c / 4`. Entries spread over the part
    /// values (a block value shared by otherwise unrelated pages) read about `4 c / 4096`;
    /// near-copies of one page (a template's pages, a few bits apart) agree on most parts, and
    /// a query among them would read most of the group four times: those stay whole.
    fn split_pays(&mut self, entries: &[(u64, u64)]) -> bool {
        self.starts.clear();
        self.starts.resize(PARTS * PART_VALUES, 0);
        for e in entries {
            for j in 0..PARTS {
                self.starts[j * PART_VALUES + usize::from(pigeonhole::part(e.0, j))] += 1;
            }
        }
        let read: f64 = self.starts.iter().map(|&c| (c as f64) * (c as f64)).sum();
        let c = entries.len() as f64;
        read / c < c / 4.0
    }

    /// Puts `entries` in `by_part` ordered by part `j`, stably (a counting sort).
    fn sort_by_part(&mut self, entries: &[(u64, u64)], j: usize) {
        self.starts.clear();
        self.starts.resize(PART_VALUES + 1, 0);
        for e in entries {
            self.starts[usize::from(pigeonhole::part(e.0, j)) + 1] += 1;
        }
        for s in 1..=PART_VALUES {
            self.starts[s] += self.starts[s - 1];
        }
        self.by_part.clear();
        self.by_part.resize(entries.len(), (0, 0));
        for &e in entries {
            let slot = &mut self.starts[usize::from(pigeonhole::part(e.0, j))];
            self.by_part[*slot] = e;
            *slot += 1;
        }
    }
}
