//! A cache of block-family key ranges ("postings") in front of RocksDB, for queries.
//!
//! A `k <= 3` query reads four key ranges, one per block family, of about `len() / 65536`
//! keys each. Through RocksDB's iterator stack every key visited costs about a thousand
//! instructions (callgrind, `examples/query_profile.rs`), so at a million documents a query spends most of its
//! time stepping iterators. This cache keeps a visited range as a plain array of
//! `(fingerprint, id)` pairs, keyed by (family, 16-bit block value), within a memory budget
//! (S3-FIFO eviction, [`quick_cache`]); a query that finds a range here reads the array
//! instead of RocksDB.
//!
//! # Why a cached range is never stale
//!
//! The cache serves stores of formats 1 to 6 (the entries layout), which this build opens
//! read-only: no write of this process changes their block families, and a read-only open
//! sees the store as it was when opened. The one exception is the ingestion of an
//! interrupted bulk load, which a writable open finishes before it returns; it uses an
//! `epoch` counter, odd while an ingestion runs, incremented before and after it. A reader
//! reads the epoch before its snapshot; a range is cached with that epoch only if the epoch
//! was even and has not changed when the read ends, and used only if it carries the reader's
//! epoch and the epoch is still the same after the lookup.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use quick_cache::sync::Cache;
use quick_cache::Weighter;

use crate::fingerprint::{Fingerprint, BLOCKS};

/// The keys of one (family, block value) range, in key order.
pub(crate) struct Postings {
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
            epoch: AtomicU64::new(0),
        })
    }

    /// The bulk-ingestion epoch. Read it before taking a snapshot, and pass it to
    /// [`PostingsCache::get`] and [`PostingsCache::insert`].
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// The cached range of block `value` in family `family`, if it holds exactly the keys
    /// that a snapshot taken in `epoch` sees.
    pub(crate) fn get(&self, family: usize, value: u16, epoch: u64) -> Option<Arc<Postings>> {
        let postings = self.ranges.get(&slot(family, value))?;
        let valid = postings.epoch == epoch && epoch.is_multiple_of(2) && self.epoch() == epoch;
        valid.then_some(postings)
    }

    /// Caches the keys of a range as read from a snapshot taken in `epoch`, unless the epoch
    /// changed since.
    pub(crate) fn insert(
        &self,
        family: usize,
        value: u16,
        epoch: u64,
        entries: Vec<(Fingerprint, u64)>,
    ) {
        if epoch.is_multiple_of(2) && self.epoch() == epoch {
            let postings = Postings {
                epoch,
                entries: entries.into_boxed_slice(),
            };
            self.ranges.insert(slot(family, value), Arc::new(postings));
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
    fn a_cached_range_is_used_in_its_epoch() {
        let c = cache();
        let fp = Fingerprint(0x1234_5678_9abc_def0);
        c.insert(0, 0x1234, 0, vec![(fp, 1)]);
        let got = c.get(0, 0x1234, 0).expect("cached");
        assert_eq!(got.entries[..], [(fp, 1)]);
        assert!(c.get(0, 0x1235, 0).is_none(), "another range");
        assert!(c.get(1, 0x1234, 0).is_none(), "another family");
    }

    #[test]
    fn an_ingestion_invalidates_every_range() {
        let c = cache();
        c.insert(1, 42, 0, vec![(Fingerprint(1), 1)]);
        c.begin_ingest();
        assert!(c.get(1, 42, 0).is_none(), "during the ingestion");
        assert!(c.get(1, 42, c.epoch()).is_none(), "an odd epoch");
        c.insert(1, 43, c.epoch(), vec![]);
        assert!(
            c.ranges.get(&slot(1, 43)).is_none(),
            "not cached while ingesting"
        );
        c.end_ingest();
        assert!(
            c.get(1, 42, c.epoch()).is_none(),
            "read before the ingestion"
        );
        c.insert(1, 42, c.epoch(), vec![]);
        assert!(c.get(1, 42, c.epoch()).is_some(), "read after it");
        assert!(c.get(1, 42, 0).is_none(), "a reader of the old epoch");
    }
}
