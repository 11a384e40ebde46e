//! A cache of block-family key ranges ("postings") in front of RocksDB, for queries.
//!
//! A `k <= 3` query reads four key ranges, one per block family, of about `len() / 65536`
//! keys each. Through RocksDB's iterator stack every key visited costs about a thousand
//! instructions (docs/design.md), so at a million documents a query spends most of its
//! time stepping iterators. This cache keeps a visited range as a plain array of
//! `(fingerprint, id)` pairs, keyed by (family, 16-bit block value), within a memory budget
//! (S3-FIFO eviction, [`quick_cache`]); a query that finds a range here reads the array
//! instead of RocksDB.
//!
//! # Why a cached range is never stale
//!
//! Each cached range carries the sequence number of the snapshot it was read from (`seq`).
//! For each of the 4 x 65,536 ranges the cache also keeps `written`: the sequence number of
//! the last write that touched it, or [`WRITING`] while a write is in progress. Writers are
//! serialised by the store's write lock and, for every range their batch touches, set
//! `written` to `WRITING` *before* the batch commits and to the store's latest sequence number
//! *after* it. A reader takes its snapshot (sequence `s`) first and reads `written` after. It
//! uses a cached range only if `written <= min(seq, s)`: then every committed write to the
//! range has a sequence number at most `min(seq, s)`, so the range holds the same keys at
//! `seq` and at `s`. A write committed before the reader's snapshot has set `written` to
//! `WRITING` or to its own sequence number (or a later writer's) before committing, so the
//! reader cannot miss it.
//!
//! Bulk ingestion may touch any range, and an ingested file does not always take a new
//! sequence number, so it uses an `epoch` counter instead: odd while an ingestion runs,
//! incremented before and after it. A reader reads the epoch before its snapshot; a range is
//! cached with that epoch only if the epoch was even and has not changed when the read ends,
//! and used only if it carries the reader's epoch and the epoch is still the same after the
//! lookup. So no ingestion happened between the range's read and the reader's snapshot.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use quick_cache::sync::Cache;
use quick_cache::Weighter;

use crate::fingerprint::{Fingerprint, BLOCKS};

/// `written` of a range while a write that touches it is in progress.
const WRITING: u64 = u64::MAX;

/// The keys of one (family, block value) range at one snapshot, in key order.
pub(crate) struct Postings {
    /// Sequence number of the snapshot the range was read from.
    seq: u64,
    /// The bulk-ingestion epoch when it was read.
    epoch: u64,
    /// (fingerprint, id) of every key in the range.
    pub(crate) entries: Box<[(Fingerprint, u64)]>,
}

/// Bytes a cached range holds: its entries plus the cache's and the `Arc`'s bookkeeping.
#[derive(Clone)]
struct ByBytes;

impl Weighter<u32, Arc<Postings>> for ByBytes {
    fn weight(&self, _key: &u32, postings: &Arc<Postings>) -> u64 {
        range_weight(postings.entries.len())
    }
}

fn range_weight(entries: usize) -> u64 {
    (entries * std::mem::size_of::<(Fingerprint, u64)>() + 64) as u64
}

pub(crate) struct PostingsCache {
    ranges: Cache<u32, Arc<Postings>, ByBytes>,
    /// Per range, `BLOCKS * 65536` of them: the last write's sequence number, or `WRITING`.
    written: Box<[AtomicU64]>,
    /// Bulk ingestions started and finished: odd while one runs.
    epoch: AtomicU64,
}

fn slot(family: usize, value: u16) -> u32 {
    ((family as u32) << 16) | u32::from(value)
}

impl PostingsCache {
    /// A cache of at most `bytes` of ranges, or `None` for `bytes == 0`.
    pub(crate) fn new(bytes: usize) -> Option<PostingsCache> {
        if bytes == 0 {
            return None;
        }
        // A range is about 16 bytes per document over 65,536 values; assume small ranges
        // for the item estimate, which only sizes the cache's tables.
        let estimated_items = (bytes / 1024).clamp(1024, BLOCKS * 65536);
        Some(PostingsCache {
            ranges: Cache::with_weighter(estimated_items, bytes as u64, ByBytes),
            written: (0..BLOCKS * 65536).map(|_| AtomicU64::new(0)).collect(),
            epoch: AtomicU64::new(0),
        })
    }

    /// The bulk-ingestion epoch. Read it before taking a snapshot, and pass it with the
    /// snapshot's sequence number to [`PostingsCache::get`] and [`PostingsCache::insert`].
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// The cached range of block `value` in family `family`, if it holds exactly the keys
    /// that a snapshot with sequence number `snapshot_seq`, taken in `epoch`, sees.
    pub(crate) fn get(
        &self,
        family: usize,
        value: u16,
        snapshot_seq: u64,
        epoch: u64,
    ) -> Option<Arc<Postings>> {
        let postings = self.ranges.get(&slot(family, value))?;
        let written = self.written[slot(family, value) as usize].load(Ordering::SeqCst);
        let valid = written <= postings.seq.min(snapshot_seq)
            && postings.epoch == epoch
            && epoch.is_multiple_of(2)
            && self.epoch() == epoch;
        valid.then_some(postings)
    }

    /// Caches the keys of a range as read from a snapshot with sequence number `snapshot_seq`
    /// taken in `epoch`, unless a write has changed the range or the epoch since.
    pub(crate) fn insert(
        &self,
        family: usize,
        value: u16,
        snapshot_seq: u64,
        epoch: u64,
        entries: Vec<(Fingerprint, u64)>,
    ) {
        let written = self.written[slot(family, value) as usize].load(Ordering::SeqCst);
        if written <= snapshot_seq && epoch.is_multiple_of(2) && self.epoch() == epoch {
            let postings = Postings {
                seq: snapshot_seq,
                epoch,
                entries: entries.into_boxed_slice(),
            };
            self.ranges.insert(slot(family, value), Arc::new(postings));
        }
    }

    /// Marks the ranges of `fingerprints` as being written. Call under the write lock, before
    /// the batch commits; then [`PostingsCache::end_write`] with the same fingerprints.
    pub(crate) fn begin_write(&self, fingerprints: &[Fingerprint]) {
        self.mark(fingerprints, WRITING);
    }

    /// Marks the ranges of `fingerprints` as written at `seq` (the store's latest sequence
    /// number after the batch, whether or not it committed).
    pub(crate) fn end_write(&self, fingerprints: &[Fingerprint], seq: u64) {
        self.mark(fingerprints, seq);
    }

    fn mark(&self, fingerprints: &[Fingerprint], value: u64) {
        for fp in fingerprints {
            for (family, block) in fp.blocks().into_iter().enumerate() {
                self.written[slot(family, block) as usize].store(value, Ordering::SeqCst);
            }
        }
    }

    /// Starts a bulk ingestion, which may touch any range (the epoch becomes odd).
    pub(crate) fn begin_ingest(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// Ends a bulk ingestion, whether or not it succeeded (the epoch becomes even).
    pub(crate) fn end_ingest(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// Bytes of ranges held now.
    pub(crate) fn weight(&self) -> u64 {
        self.ranges.weight()
    }

    /// Whether a range of `entries` keys fits without evicting another.
    pub(crate) fn has_room_for(&self, entries: usize) -> bool {
        self.weight() + range_weight(entries) <= self.ranges.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache() -> PostingsCache {
        PostingsCache::new(1 << 20).expect("enabled")
    }

    #[test]
    fn zero_bytes_disables() {
        assert!(PostingsCache::new(0).is_none());
    }

    #[test]
    fn a_range_read_before_a_write_is_not_used_after_it() {
        let c = cache();
        let fp = Fingerprint(0x1234_5678_9abc_def0);
        c.insert(0, 0x1234, 10, 0, vec![(fp, 1)]);
        assert!(c.get(0, 0x1234, 10, 0).is_some());
        assert!(
            c.get(0, 0x1234, 50, 0).is_some(),
            "no write since: still valid later"
        );
        c.begin_write(&[fp]);
        assert!(
            c.get(0, 0x1234, 10, 0).is_none(),
            "in progress: not trusted"
        );
        c.end_write(&[fp], 11);
        assert!(
            c.get(0, 0x1234, 50, 0).is_none(),
            "written at 11, after the range's 10"
        );
    }

    #[test]
    fn a_range_read_after_a_write_is_not_used_by_an_older_snapshot() {
        let c = cache();
        let fp = Fingerprint(0x1234_5678_9abc_def0);
        c.begin_write(&[fp]);
        c.end_write(&[fp], 20);
        c.insert(2, 0x9abc, 25, 0, vec![(fp, 1)]);
        assert!(c.get(2, 0x9abc, 25, 0).is_some());
        assert!(
            c.get(2, 0x9abc, 19, 0).is_none(),
            "the snapshot predates the write"
        );
    }

    #[test]
    fn a_range_read_during_a_write_is_not_cached() {
        let c = cache();
        let fp = Fingerprint(7);
        c.begin_write(&[fp]);
        c.insert(3, 7, 5, 0, vec![]);
        c.end_write(&[fp], 6);
        assert!(c.ranges.get(&slot(3, 7)).is_none());
    }

    #[test]
    fn an_ingestion_invalidates_every_range() {
        let c = cache();
        c.insert(1, 42, 5, 0, vec![(Fingerprint(1), 1)]);
        c.begin_ingest();
        assert!(c.get(1, 42, 5, 0).is_none(), "during the ingestion");
        assert!(c.get(1, 42, 5, c.epoch()).is_none(), "an odd epoch");
        c.insert(1, 43, 5, c.epoch(), vec![]);
        assert!(
            c.ranges.get(&slot(1, 43)).is_none(),
            "not cached while ingesting"
        );
        c.end_ingest();
        assert!(
            c.get(1, 42, 30, c.epoch()).is_none(),
            "read before the ingestion"
        );
        c.insert(1, 42, 30, c.epoch(), vec![]);
        assert!(c.get(1, 42, 30, c.epoch()).is_some(), "read after it");
        assert!(c.get(1, 42, 30, 0).is_none(), "a reader of the old epoch");
    }

    #[test]
    fn other_ranges_stay_valid() {
        let c = cache();
        c.insert(0, 1, 5, 0, vec![]);
        c.begin_write(&[Fingerprint(0x0002_0000_0000_0000)]);
        assert!(c.get(0, 1, 5, 0).is_some());
    }
}
