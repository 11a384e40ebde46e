//! Posting lists: for each block family *i* and 16-bit value *v*, the documents whose block *i*
//! is *v* (a *group*), with the other 48 bits of their fingerprints and their ids. A query
//! reads the groups of its own block values; the pair scan reads them all.
//!
//! Two layouts, chosen by the store's format ([`Format::layout`](crate::store::Format)), held
//! with their state by [`Postings`]:
//! - **Entries** (formats 1-6): one 16-byte key per document and family, empty value. Reading
//!   a group steps a RocksDB iterator once per document, about a thousand instructions each.
//! - **Packed** (formats 7 to 9; 9 is the one written): a group is a few *chunks*, each one
//!   value of up to 4,096 sorted, bit-packed entries ([`chunk`]) that a query scans in place, plus *deltas*: one key per
//!   single write not yet folded into chunks (the entries layout's key with a kind byte, whose
//!   value says added or removed). Chunks carry the *segment* they were written in: each bulk
//!   run writes a new segment (so loading into a full store rewrites nothing), and a removal
//!   delta hides its entry from the chunks of older segments only. A group reads as (entries of
//!   its chunks not hidden by a removal) ∪ (added deltas). [`Store::fold_groups`] merges a
//!   group's chunks and deltas into fresh chunks, atomically, when deltas pile up and on
//!   [`Store::compact`](crate::Store::compact).
//!
//! This module is a layer of its own: it reads and writes through a [`Db`] handle (the
//! storage layer's database), never through the `Store`; it reads with the storage layer's
//! cursors and point reads (`src/storage/cursor.rs`). Where things are: key and value bytes
//! in `src/keys.rs` and `src/codec.rs` (byte tables at their tops); chunks in [`chunk`]; a
//! query's probe in `probe.rs`; whole-group reads in `groups.rs`; single writes in
//! `write.rs`; folding in `fold.rs`; the families' RocksDB options in
//! `src/storage/families.rs`. Which family reports a pair is `src/pigeonhole.rs`; which format uses
//! which layout is `src/format.rs`.
//!
//! The query cache ([`cache`]) holds decoded groups of the entries layout. The packed layout
//! does without one: a cache cannot help a query of a fingerprint never asked before, and
//! the packed layout answers those faster than the entries layout does with its cache
//! (`docs/design.md`, "Packed posting blocks").

mod cache;
pub(crate) mod chunk;
mod fold;
mod groups;
mod probe;
pub(crate) mod run_chunks;
pub(crate) mod spool;
mod write;

use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::Result;
use crate::storage::{journal, BatchSink, Cursor, Database, FamilyRef, Journal, Reading, View};

pub(crate) use crate::format::Layout;
pub(crate) use cache::PostingsCache;
pub(crate) use fold::FoldCounters;
pub(crate) use groups::{malformed_error, GroupScan, Posting, SplitCopies};
pub(crate) use probe::{Probe, Reads};
pub(crate) use write::{block_families_empty, GroupWriter, SPLIT_GROUPS_ABOVE};

/// The database that postings code reads and writes through (the storage layer's).
#[derive(Clone, Copy)]
pub(crate) struct Db<'a> {
    database: &'a Database,
}

impl<'a> Db<'a> {
    pub(crate) fn new(database: &'a Database) -> Db<'a> {
        Db { database }
    }

    /// An empty write batch of the database.
    pub(crate) fn sink(self) -> BatchSink<'a> {
        BatchSink::new(self.database)
    }

    /// Block family `i`, for reads.
    #[inline]
    pub(crate) fn block(self, i: usize) -> Result<FamilyRef<'a>> {
        self.database.block_handle(i)
    }

    /// A cursor over block family `i` as it is now (the writer's, under its write lock).
    pub(crate) fn cursor(self, i: usize, reading: Reading) -> Result<Cursor<'a>> {
        Ok(self.database.cursor(self.block(i)?, reading))
    }

    /// The database as it is now (the writer's, under its write lock).
    pub(crate) fn latest(self) -> View<'a> {
        self.database.latest()
    }

    /// The number of keys in the memtables of block family `i` (the active one and those
    /// waiting to be flushed); unknown counts as many.
    pub(crate) fn memtable_entries(self, i: usize) -> Result<u64> {
        Ok(self
            .database
            .memtable_entries(self.block(i)?)?
            .unwrap_or(u64::MAX))
    }
}

/// The first segment number of bulk runs; segment 0 holds folded chunks (`fold.rs`).
pub(crate) const FIRST_SEGMENT: u32 = 1;

/// A store's block families: their layout and the state only that layout needs. The
/// layout's branches are this module's; the rest of the crate asks it.
pub(crate) enum Postings {
    /// One key per document and family (formats 1 to 6), read only, with the query cache of
    /// decoded groups (`None` when turned off).
    Entries { cache: Option<PostingsCache> },
    /// Packed chunks and deltas (formats 7 to 9; 7 and 8 read only).
    Packed(Packed),
}

/// The state of the packed layout.
pub(crate) struct Packed {
    /// The segment the next bulk run writes its chunks in (`meta/next_segment`). Changed
    /// only under the write lock.
    next_segment: AtomicU32,
    /// Deltas per group since it was last folded.
    fold_counters: FoldCounters,
    /// Groups of more entries than this are written split ([`GroupWriter`]).
    split_above: usize,
}

impl Postings {
    /// The block families of a store of `layout`: `next_segment` as recorded in `meta`
    /// (packed layout; `None` for a new store), a query cache of `cache_bytes` (entries
    /// layout), groups of more than `split_above` entries written split (packed layout,
    /// [`GroupWriter`]).
    pub(crate) fn new(
        layout: Layout,
        next_segment: Option<u32>,
        cache_bytes: usize,
        split_above: usize,
    ) -> Postings {
        match layout {
            Layout::Entries => Postings::Entries {
                cache: PostingsCache::new(cache_bytes),
            },
            Layout::Packed => Postings::Packed(Packed {
                next_segment: AtomicU32::new(next_segment.unwrap_or(FIRST_SEGMENT)),
                fold_counters: FoldCounters::new(),
                split_above,
            }),
        }
    }

    /// The layout.
    pub(crate) fn layout(&self) -> Layout {
        match self {
            Postings::Entries { .. } => Layout::Entries,
            Postings::Packed(_) => Layout::Packed,
        }
    }

    /// The query cache (entries layout, when turned on).
    pub(crate) fn cache(&self) -> Option<&PostingsCache> {
        match self {
            Postings::Entries { cache } => cache.as_ref(),
            Postings::Packed(_) => None,
        }
    }

    /// The packed layout's state, `None` in the entries layout.
    pub(crate) fn packed(&self) -> Option<&Packed> {
        match self {
            Postings::Entries { .. } => None,
            Postings::Packed(packed) => Some(packed),
        }
    }

    /// Records `journal` before its files are ingested ([`journal::begin`]), with the
    /// segment the next run writes in; the caller holds the store's write lock until the
    /// journal is committed.
    pub(crate) fn begin_ingestion(
        &self,
        db: &Database,
        journal: &Journal,
        next_segment: u32,
    ) -> Result<()> {
        journal::begin(db, journal, next_segment)?;
        if let Some(packed) = self.packed() {
            packed.set_next_segment(next_segment);
        }
        Ok(())
    }

    /// Ingests the journal's files ([`journal::ingest`]). The files may touch any block
    /// range: no cached group is trusted across the ingestion.
    pub(crate) fn ingest(&self, db: &Database, journal: &Journal) -> Result<()> {
        if let Some(cache) = self.cache() {
            cache.begin_ingest();
        }
        let ingested = journal::ingest(db, journal);
        if let Some(cache) = self.cache() {
            cache.end_ingest();
        }
        ingested
    }
}

impl Packed {
    /// The segment the next bulk run writes its chunks in.
    pub(crate) fn next_segment(&self) -> u32 {
        self.next_segment.load(Ordering::SeqCst)
    }

    /// Sets the segment the next bulk run writes in (under the write lock, once recorded).
    pub(crate) fn set_next_segment(&self, segment: u32) {
        self.next_segment.store(segment, Ordering::SeqCst);
    }

    /// The fold counters.
    pub(crate) fn fold_counters(&self) -> &FoldCounters {
        &self.fold_counters
    }

    /// A writer of groups that splits those of more entries than the store's threshold.
    pub(crate) fn group_writer(&self) -> GroupWriter {
        GroupWriter::new(self.split_above)
    }

    /// Entries of one group above which it is written split.
    pub(crate) fn split_above(&self) -> usize {
        self.split_above
    }
}
