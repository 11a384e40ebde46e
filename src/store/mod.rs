//! The [`Store`]: the struct, its accessors and the plumbing every part of it uses.
//!
//! Where each `impl Store` block is (all in this directory; the public methods whose work
//! belongs to another concept are one-line delegations to it):
//! - here: the accessors, `flush`, `compact`, disk and cache usage, and the crate-internal
//!   plumbing (the database, the block families' handle, the write lock).
//! - `open.rs`: opening (`open`, `builder`), the format version and fingerprint settings
//!   recorded in `meta`; `options.rs`: [`StoreBuilder`] and [`Durability`].
//! - `backup.rs`: [`Store::backup`], a consistent copy of an open store.
//! - `read.rs`: documents by id, by external key, in id order (through the storage layer's
//!   typed reads of `docs` and `keys`).
//! - `write/`: inserts (upserts) and removals, planned and applied by the rules both
//!   backends share (`src/upsert/`: [`Entry`](crate::Entry), the planner, the one apply, the
//!   id assigner), the store being the planner's `Stored`; `write/staged.rs`:
//!   [`StagedBatch`] and check-then-insert ([`Store::insert_if_new`] and its variants).
//! - `bulk_loader/`: [`BulkLoader`] ([`Store::bulk_loader`]): runs filled and written by
//!   `src/bulk/`, planned and ingested here; `ingestion.rs`: the write lock, journal and
//!   merge a bulk load works under.
//! - `upgrade.rs`: [`Store::upgrade`], a copy of an old store into a new one through the bulk
//!   loader (public as `simhash_store::upgrade`).
//! - `sketches.rs`: whether the store keeps sketches, and the checks of sketches given to it.
//! - Delegations to the work modules below the store, each over a narrow type this
//!   directory lends them: `query.rs`, [`Store::query`] and its variants (`src/query.rs`,
//!   over [`crate::query::Source`]); `dedup.rs`, [`Store::pairs`] and
//!   [`Clusters::choose_representatives`](crate::Clusters::choose_representatives)
//!   (`src/dedup/`, over a `ScanSource` and the documents); `verified.rs`,
//!   [`Store::query_verified`] and [`Store::verified_pairs`] (`src/verified/`); `verify.rs`,
//!   [`Store::verify`] (`src/integrity.rs`) and the damage report, which opens the store for
//!   salvage.
//! - [`View`] (`src/storage/view.rs`): the consistent read view that queries, `verify` and
//!   the pair scan read, from [`Store::view`].

mod backup;
mod bulk_loader;
mod dedup;
mod ingestion;
mod open;
mod options;
mod query;
mod read;
mod sketches;
pub(crate) mod upgrade;
mod verified;
mod verify;
pub(crate) mod write;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use parking_lot::MutexGuard;

use crate::error::{Error, Result};
use crate::keys::BLOCK_FAMILIES;
use crate::postings::Postings;
use crate::simhash::Simhasher;
use crate::storage::{Database, Persist};
use crate::upsert::plan::{KeyWrite, UpsertPlan};

pub use crate::format::Format;
pub(crate) use crate::storage::View;
pub use backup::Backup;
pub use bulk_loader::BulkLoader;
pub(crate) use ingestion::Ingestion;
pub use open::{FORMAT_VERSION, MIN_FORMAT_VERSION};
use options::Clock;
pub use options::{Durability, StoreBuilder};
pub(crate) use verify::damage_report;
pub use write::staged::{InsertOutcome, KeyHolder, StagedBatch};

/// A persistent near-duplicate index: documents (a `u64` id, a
/// [`Fingerprint`](crate::Fingerprint), an optional external key) in RocksDB, indexed by the
/// four 16-bit blocks of the fingerprint.
///
/// `Store` is `Send + Sync`: share it in an `Arc` and query from many threads while others
/// write. Writes are serialised internally; each is atomic across all column families.
pub struct Store {
    /// The RocksDB instance, its directory, and whether it is read-only.
    db: Database,
    simhasher: Simhasher,
    durability: Durability,
    /// Held by every write so that read-modify-write upserts and the document count stay
    /// consistent. Readers never take it.
    write_lock: parking_lot::Mutex<()>,
    /// The thread of a bulk load that holds `write_lock` across its runs, if any
    /// ([`Store::hold_writes`]): a write from that thread meanwhile is refused, since it
    /// would wait for itself.
    write_lock_holder: Mutex<Option<std::thread::ThreadId>>,
    /// The number of documents; persisted in `meta/doc_count` by every write batch.
    doc_count: AtomicU64,
    /// Whether a document may have an external key: false while `keys` is empty, so that a
    /// query of a store without keys never reads `docs` (see [`Store::may_have_keys`]).
    keys_present: AtomicBool,
    /// The on-disk format recorded in the store.
    format: Format,
    /// The block families: their layout and its state.
    postings: Postings,
    /// Whether queries read their groups concurrently.
    concurrent_reads: ConcurrentReads,
    /// Whether queries put the block families' data blocks in the block cache.
    cache_fill: CacheFill,
    /// Where `added` times come from.
    clock: Clock,
}

/// Whether queries read their groups concurrently
/// ([`StoreBuilder::concurrent_reads`]), and whether the caller chose it (otherwise the store
/// chooses at open and again after each bulk load: on when its files do not fit in memory).
pub(crate) struct ConcurrentReads {
    on: AtomicBool,
    chosen: bool,
}

impl ConcurrentReads {
    /// The caller's choice, or the store's from `fits` (whether its files fit in memory).
    pub(crate) fn new(chosen: Option<bool>, fits: impl FnOnce() -> bool) -> ConcurrentReads {
        ConcurrentReads {
            on: AtomicBool::new(chosen.unwrap_or_else(|| !fits())),
            chosen: chosen.is_some(),
        }
    }

    fn get(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Chooses again from `fits`, unless the caller chose.
    fn choose(&self, fits: impl FnOnce() -> bool) {
        if !self.chosen {
            self.on.store(!fits(), Ordering::Relaxed);
        }
    }
}

/// Whether queries put the block families' data blocks into the block cache
/// ([`crate::postings::Reads::fill_cache`]): always with mapped reads, else while those
/// families' files fit in it. Chosen at open and again after each bulk load.
pub(crate) struct CacheFill {
    on: AtomicBool,
    /// The block cache's size in bytes.
    capacity: u64,
    /// Whether the store reads its files through memory maps. A mapped block goes into the
    /// cache without a read, and a cached one is not checksummed again: filling it is worth
    /// it even when few blocks stay (at 100M fresh k = 3 queries take 4% longer without).
    mapped: bool,
}

impl CacheFill {
    fn new(capacity: usize, mapped: bool) -> CacheFill {
        CacheFill {
            on: AtomicBool::new(true),
            capacity: capacity as u64,
            mapped,
        }
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path())
            .field("format", &self.format)
            .field("documents", &self.len())
            .field("durability", &self.durability)
            .field("read_only", &self.is_read_only())
            .finish()
    }
}

impl Store {
    /// The directory of the store.
    pub fn path(&self) -> &Path {
        self.db.path()
    }

    /// Whether the store was opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.db.is_read_only()
    }

    /// The fingerprinter configured as recorded in the store: use it for every text that goes
    /// into or is queried against this store.
    pub fn simhasher(&self) -> &Simhasher {
        &self.simhasher
    }

    /// The on-disk format of the store: [`Format::CURRENT`] for a store this build created,
    /// older for a store an older build created, which opens read-only (see the guide's
    /// "Upgrading a store").
    pub fn format(&self) -> Format {
        self.format
    }

    /// The on-disk format version of the store: [`Store::format`] as its number
    /// ([`FORMAT_VERSION`] for a store this build created).
    pub fn format_version(&self) -> u32 {
        self.format.version()
    }

    /// The durability of writes, as opened.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// The number of documents.
    pub fn len(&self) -> u64 {
        self.doc_count.load(Ordering::SeqCst)
    }

    /// Whether a document of this store may have an external key: false while no key was
    /// ever stored (`keys` was empty at open and no write since stored one). Then a query
    /// answers without reading `docs`, whose only part of the answer is the key. A writer
    /// calls [`Store::note_keys`] before its write becomes visible, so a reader that sees the
    /// write sees the flag.
    pub(crate) fn may_have_keys(&self) -> bool {
        self.keys_present.load(Ordering::SeqCst)
    }

    /// Records that a write about to be made stores a key, if `plan` has one.
    pub(crate) fn note_keys(&self, plan: &UpsertPlan) {
        if plan
            .key_writes
            .iter()
            .any(|w| matches!(w, KeyWrite::Put(..)))
        {
            self.keys_present.store(true, Ordering::SeqCst);
        }
    }

    /// Whether the store holds no document.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes all memtables to SST files (and so makes [`Durability::NoWal`] writes durable).
    ///
    /// # Errors
    /// RocksDB I/O errors.
    pub fn flush(&self) -> Result<()> {
        if self.is_read_only() {
            return Ok(());
        }
        self.db.flush_all()
    }

    /// Compacts the store fully: smaller on disk, faster to scan and query. In a store of
    /// format 8 or 9 it first folds every group's single writes and bulk runs into one set of
    /// packed chunks (writers wait at most for 1,024 block values at a time; readers never
    /// wait), then compacts every column family. Takes a while on a large store.
    ///
    /// # Errors
    /// RocksDB I/O errors, [`Error::Decode`] for a damaged chunk, or [`Error::ReadOnly`].
    pub fn compact(&self) -> Result<()> {
        self.check_writable()?;
        self.fold_groups()?;
        self.db.compact_all()
    }

    /// Bytes the query cache holds now ([`StoreBuilder::query_cache_size`]).
    pub fn query_cache_usage(&self) -> u64 {
        self.postings.cache().map_or(0, |c| c.weight())
    }

    /// Bytes on disk per column family (live SST files), by family name: `block0`..`block3`,
    /// `docs`, `keys`, `meta`, in that order.
    ///
    /// # Errors
    /// RocksDB errors.
    pub fn disk_usage(&self) -> Result<Vec<(&'static str, u64)>> {
        self.db.live_file_bytes()
    }

    // ---- crate-internal plumbing ----

    /// The store's database (the storage layer).
    pub(crate) fn db(&self) -> &Database {
        &self.db
    }

    /// A consistent view of the store as it is now.
    pub(crate) fn view(&self) -> View<'_> {
        self.db.view()
    }

    /// The block families' layout and state.
    pub(crate) fn postings(&self) -> &Postings {
        &self.postings
    }

    /// How queries read the block families.
    pub(crate) fn reads(&self) -> crate::postings::Reads {
        let concurrent = self.concurrent_reads.get();
        crate::postings::Reads {
            concurrent,
            whole_groups: concurrent && !self.cache_fill.mapped,
            fill_cache: self.cache_fill.on.load(Ordering::Relaxed),
        }
    }

    /// Chooses again how queries read the block families, from the store's size now: whether
    /// concurrently (unless the caller chose, [`StoreBuilder::concurrent_reads`]) and whether
    /// into the block cache. Called after a bulk load, which can take a store from fitting in
    /// memory to several times it.
    pub(crate) fn choose_reads(&self) {
        self.concurrent_reads
            .choose(|| open::files_fit_in_memory(self.path()));
        self.choose_cache_fill();
    }

    /// Chooses whether queries put data blocks into the block cache ([`CacheFill`]).
    fn choose_cache_fill(&self) {
        if self.cache_fill.mapped {
            return;
        }
        // If the files cannot be listed, keep the last choice: either answers the same.
        if let Ok(usage) = self.disk_usage() {
            let blocks: u64 = usage
                .iter()
                .filter(|(family, _)| BLOCK_FAMILIES.contains(family))
                .map(|(_, bytes)| bytes)
                .sum();
            self.cache_fill
                .on
                .store(blocks <= self.cache_fill.capacity, Ordering::Relaxed);
        }
    }

    /// The database handle that [`Postings`] reads and writes through.
    pub(crate) fn blocks_db(&self) -> crate::postings::Db<'_> {
        crate::postings::Db::new(&self.db)
    }

    /// Folds every group of the block families that has deltas or chunks of more than one
    /// segment (see `src/postings/fold.rs`), and returns how many it folded: none in a
    /// read-only store or one of an older format.
    pub(crate) fn fold_groups(&self) -> Result<u64> {
        match self.packed().ok().filter(|_| !self.is_read_only()) {
            Some(packed) => {
                packed.fold_groups(self.blocks_db(), self.persist(), || self.lock_writes())
            }
            None => Ok(0),
        }
    }

    /// The value of `key` in `family`.
    pub(crate) fn get_raw(&self, family: &'static str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.db.get(family, key)
    }

    /// Fails unless the store takes writes: opened read-only ([`Error::ReadOnly`]), or of an
    /// older format ([`Error::LegacyFormat`]).
    pub(crate) fn check_writable(&self) -> Result<()> {
        if self.is_read_only() {
            return Err(Error::ReadOnly {
                path: self.path().to_path_buf(),
            });
        }
        self.packed().map(|_| ())
    }

    /// The packed layout's state: a writable store's block families, or
    /// [`Error::LegacyFormat`] for a store of an older format (format 7's chunks are packed
    /// too, with their ids inline, which this build reads but does not write).
    pub(crate) fn packed(&self) -> Result<&crate::postings::Packed> {
        self.postings
            .packed()
            .filter(|_| self.format.is_writable())
            .ok_or_else(|| Error::LegacyFormat {
                path: self.path().to_path_buf(),
                found: self.format.version(),
                current: Format::CURRENT.version(),
            })
    }

    /// How a committed write batch is made durable: the store's [`Durability`].
    pub(crate) fn persist(&self) -> Persist {
        match self.durability {
            Durability::Sync => Persist::Synced,
            Durability::Buffered => Persist::Logged,
            Durability::NoWal => Persist::Unlogged,
        }
    }

    /// Takes the write lock. A writer that panicked while holding it leaves the store
    /// consistent (each RocksDB write is atomic), so the lock does not stay poisoned.
    ///
    /// # Errors
    /// [`Error::BulkLoadInProgress`] on the thread of a bulk load that holds the lock across
    /// its runs ([`Store::hold_writes`]): waiting would never end.
    pub(crate) fn lock_writes(&self) -> Result<MutexGuard<'_, ()>> {
        let holder = *self
            .write_lock_holder
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if holder == Some(std::thread::current().id()) {
            return Err(Error::BulkLoadInProgress);
        }
        Ok(self.write_lock.lock())
    }

    /// Takes the write lock for a bulk load that holds it across its runs, marking this
    /// thread as its holder until the returned guard is dropped.
    pub(crate) fn hold_writes(&self) -> Result<HeldWrites<'_>> {
        let guard = self.lock_writes()?;
        *self
            .write_lock_holder
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(std::thread::current().id());
        Ok(HeldWrites {
            store: self,
            _guard: guard,
        })
    }

    /// The `added` time of a document stored now: microseconds since the Unix epoch, from
    /// the store's clock ([`StoreBuilder::clock`]).
    pub(crate) fn now_micros(&self) -> u64 {
        self.clock.now_micros()
    }
}

/// The write lock held by a bulk load across its runs ([`Store::hold_writes`]).
pub(crate) struct HeldWrites<'a> {
    store: &'a Store,
    _guard: MutexGuard<'a, ()>,
}

impl Drop for HeldWrites<'_> {
    fn drop(&mut self) {
        // Before the guard (a field) is dropped: the lock is free once no thread holds it.
        *self
            .store
            .write_lock_holder
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn store_is_send_and_sync() {
        assert_send_sync::<Store>();
    }

    /// A new store reads one family after another; a bulk load chooses again from the
    /// store's size (a small one still fits in memory), unless the caller chose.
    #[test]
    fn a_bulk_load_chooses_concurrent_reads_unless_the_caller_did() -> Result<()> {
        for chosen in [None, Some(true), Some(false)] {
            let dir = tempfile::tempdir().expect("tempdir");
            let mut builder = Store::builder();
            if let Some(on) = chosen {
                builder = builder.concurrent_reads(on);
            }
            let store = builder.open(dir.path())?;
            assert_eq!(store.reads().concurrent, chosen.unwrap_or(false));
            if chosen.is_none() {
                // As if the store had been larger than memory when opened.
                store.concurrent_reads.on.store(true, Ordering::Relaxed);
            }
            let mut loader = store.bulk_loader()?;
            for id in 0..1_000u64 {
                loader.add(
                    id,
                    crate::Fingerprint(id.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                )?;
            }
            loader.finish()?;
            assert_eq!(
                store.reads().concurrent,
                chosen.unwrap_or(false),
                "{chosen:?}"
            );
        }
        Ok(())
    }

    /// With positioned reads, queries fill the block cache with data blocks only while the
    /// block families fit in it, chosen at open and after a bulk load; with mapped reads
    /// always. Answers are the same either way.
    #[test]
    fn queries_fill_the_block_cache_only_while_the_block_families_fit() -> Result<()> {
        let fingerprint = |id: u64| crate::Fingerprint(id.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let n = 20_000u64;
        let mut answers = Vec::new();
        for (cache, fits) in [(64 << 20, true), (64 << 10, false)] {
            let dir = tempfile::tempdir().expect("tempdir");
            let store = Store::builder().block_cache_size(cache).open(dir.path())?;
            assert!(store.reads().fill_cache, "an empty store fits any cache");
            let mut loader = store.bulk_loader()?;
            for id in 0..n {
                loader.add(id, fingerprint(id))?;
            }
            loader.finish()?;
            assert_eq!(
                store.reads().fill_cache,
                fits,
                "after the load, cache {cache}"
            );
            let mut these = Vec::new();
            for id in (0..n).step_by(97) {
                // A fingerprint 2 bits from a stored one.
                let q = crate::Fingerprint(fingerprint(id).0 ^ 0b101);
                let mut found: Vec<u64> = store.query(q, 3)?.iter().map(|m| m.id).collect();
                found.sort_unstable();
                let brute: Vec<u64> = (0..n)
                    .filter(|&other| (fingerprint(other).0 ^ q.0).count_ones() <= 3)
                    .collect();
                assert_eq!(found, brute, "cache {cache}, near {id}");
                these.push(found);
            }
            answers.push(these);
            drop(store);
            for mapped in [false, true] {
                let store = Store::builder()
                    .block_cache_size(cache)
                    .mmap_reads(mapped)
                    .open(dir.path())?;
                assert_eq!(
                    store.reads().fill_cache,
                    fits || mapped,
                    "after reopening, cache {cache}, mapped {mapped}"
                );
            }
        }
        assert_eq!(answers[0], answers[1]);
        Ok(())
    }
}
