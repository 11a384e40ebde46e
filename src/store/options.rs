//! How a store is opened: [`StoreBuilder`] and [`Durability`].

use std::path::Path;
use std::sync::Arc;

use super::Store;
use crate::error::Result;
use crate::simhash::SimhashConfig;

/// What a write has reached when it returns, and so what a crash can lose.
///
/// Every write (one document, a batch, a removal) is atomic across all column families in
/// every mode: after a crash a document is in all of them or in none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Durability {
    /// The write-ahead log is written and `fsync`ed before the write returns. Nothing
    /// acknowledged is lost, neither when the process is killed nor on power loss or a kernel
    /// crash. Slowest: one `fsync` per write call (batch writes to amortise it).
    Sync,
    /// The write-ahead log is written to the operating system before the write returns, without
    /// `fsync`. Nothing acknowledged is lost when the process crashes or is killed; on power
    /// loss or a kernel crash the writes of the last few seconds (not yet written back by the
    /// kernel) can be lost. RocksDB's own default.
    #[default]
    Buffered,
    /// No write-ahead log: writes live in memory until RocksDB flushes them to SST files
    /// (when a memtable fills, at [`Store::flush`] and when the store is dropped). A crash loses
    /// every write since the last flush. For bulk jobs that can be rerun.
    NoWal,
}

/// Options for opening a [`Store`]. `Store::open(path)` is `Store::builder().open(path)`.
///
/// ```
/// use simhash_store::{Durability, Store};
/// let dir = tempfile::tempdir()?;
/// let store = Store::builder()
///     .durability(Durability::Sync)
///     .block_cache_size(64 * 1024 * 1024)
///     .open(dir.path())?;
/// assert!(store.is_empty());
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct StoreBuilder {
    pub(crate) durability: Durability,
    pub(crate) block_cache_bytes: usize,
    pub(crate) query_cache_bytes: usize,
    pub(crate) read_only: bool,
    /// A read-only open of a damaged store that opens table files only when read
    /// (`salvage.rs`); implies `read_only`.
    pub(crate) salvage: bool,
    pub(crate) simhash_config: Option<SimhashConfig>,
    pub(crate) concurrent_reads: Option<bool>,
    pub(crate) mmap_reads: Option<bool>,
    pub(crate) clock: Clock,
    pub(crate) split_groups_above: usize,
}

/// Where a store takes the `added` time of a document it stores: microseconds since the Unix
/// epoch, from the system's clock unless [`StoreBuilder::clock`] gives another.
#[derive(Clone, Default)]
pub(crate) struct Clock(Option<Arc<dyn Fn() -> u64 + Send + Sync>>);

impl Clock {
    /// Microseconds since the Unix epoch (0 if the system's clock is before it).
    pub(crate) fn now_micros(&self) -> u64 {
        match &self.0 {
            Some(clock) => clock(),
            None => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_micros() as u64)
                .unwrap_or(0),
        }
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Clock(given)"
        } else {
            "Clock(system)"
        })
    }
}

impl Default for StoreBuilder {
    fn default() -> Self {
        StoreBuilder {
            durability: Durability::default(),
            block_cache_bytes: /* 256 MiB */ 256 * 1024 * 1024,
            query_cache_bytes: /* 256 MiB */ 256 * 1024 * 1024,
            read_only: false,
            salvage: false,
            simhash_config: None,
            concurrent_reads: None,
            mmap_reads: None,
            clock: Clock::default(),
            split_groups_above: crate::postings::SPLIT_GROUPS_ABOVE,
        }
    }
}

impl StoreBuilder {
    /// Default options; see each setter for its default.
    pub fn new() -> Self {
        Self::default()
    }

    /// What a crash can lose. Default: [`Durability::Buffered`].
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// Size in bytes of the block cache shared by all column families.
    /// Default: 256 MiB. Queries are fastest when the four block families fit. With
    /// positioned reads ([`StoreBuilder::mmap_reads`] off) queries put the block families'
    /// data blocks in it only while they fit (chosen at open and after each bulk load): past
    /// that a fresh query's blocks are nearly never cached, and inserting each costs more
    /// than it saves; the OS page cache still holds the files.
    pub fn block_cache_size(mut self, bytes: usize) -> Self {
        self.block_cache_bytes = bytes;
        self
    }

    /// Whether a query reads its groups concurrently, on a small pool of I/O threads (eight,
    /// beside rayon's), instead of one after another. Default: on when the store's files are
    /// larger than half the memory available (a query then waits for the disk once per
    /// group, and four reads in flight take little more than one), off otherwise (in memory,
    /// handing the work to other threads costs more than it saves); chosen as the store is
    /// opened and again when a bulk load finishes. With positioned reads each group is then
    /// read whole in one request, and every group of a query is a task of its own (a k = 6
    /// query reads 52, eight at a time). Answers are the same either way.
    pub fn concurrent_reads(mut self, on: bool) -> Self {
        self.concurrent_reads = Some(on);
        self
    }

    /// Whether the store's files are read through memory maps (`mmap`) instead of positioned
    /// reads (`pread`) into the block cache. Default: on when the store's files take at most
    /// half the memory available as the store is opened; off otherwise, and for a new store.
    ///
    /// From the OS page cache a mapped read copies nothing and allocates nothing: a fresh
    /// k = 3 query of a 100M-document store takes 0.6 times as long. From disk it is the
    /// other way round: each 4 KiB page of a block is a separate disk read (RocksDB advises
    /// random access), and a query of a store twice the size of memory takes 3 to 10 times as
    /// long as with positioned reads (`docs/benchmarks.md`, "Reads from memory and from
    /// disk"). The choice is made when the store is opened, so a store that outgrows memory
    /// while open keeps mapped reads until it is reopened.
    /// A disk error under a mapped read is a `SIGBUS` rather than an error value.
    /// Answers are the same either way.
    pub fn mmap_reads(mut self, on: bool) -> Self {
        self.mmap_reads = Some(on);
        self
    }

    /// Where the store takes the `added` time of each document it stores
    /// ([`Document::added`](crate::Document::added), which the "oldest" representative rule
    /// of clusters reads): a function giving microseconds since the Unix epoch. Default: the
    /// system's clock. Give one to record times of your own (a replay of a crawl in its
    /// original order) or, in tests, times that differ from write to write.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use simhash_store::{Fingerprint, Store};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let tick = AtomicU64::new(1_000);
    /// let store = Store::builder()
    ///     .clock(move || tick.fetch_add(1, Ordering::Relaxed))
    ///     .open(dir.path())?;
    /// store.insert(1, Fingerprint(7))?;
    /// store.insert(2, Fingerprint(8))?;
    /// assert_eq!(store.document(1)?.map(|d| d.added), Some(1_000));
    /// assert_eq!(store.document(2)?.map(|d| d.added), Some(1_001));
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// ```
    pub fn clock(mut self, now_micros: impl Fn() -> u64 + Send + Sync + 'static) -> Self {
        self.clock = Clock(Some(Arc::new(now_micros)));
        self
    }

    /// Entries of one group (the documents sharing one 16-bit block value, written in one
    /// bulk segment or one fold) above which the group is written *split*: four times, once
    /// ordered by each 12-bit part of the other 48 bits, so that a query within 3 bits reads
    /// about 4/4,096 of it instead of all of it (`docs/design.md`, "Split groups"). This
    /// bounds a query's work when templated pages or a share of the store crowd one block
    /// value, at four times that group's bytes on disk. Stores of any threshold read each
    /// other's groups: it is a choice of the writer, not of the format. Default: 65,536
    /// (a uniform group holds 1,526 entries at 100M documents, 15,259 at 1B).
    pub fn split_groups_above(mut self, entries: usize) -> Self {
        self.split_groups_above = entries.max(1);
        self
    }

    /// Size in bytes of the query cache of a store of format 6 or older: block-family key
    /// ranges that queries have read, kept as plain arrays so that the next query of the same
    /// range skips RocksDB's iterators (about 16 bytes per document and range; all four
    /// families of a store of N documents take about `64 * N` bytes). Writes invalidate
    /// exactly the ranges they touch, so answers are always those of the store at the query's
    /// snapshot. `0` turns it off. A store of the packed layout (formats 7 to 9) has no query
    /// cache: it reads its chunks faster than the cache would (`docs/benchmarks.md`).
    /// Default: 256 MiB, enough for every range of a store of about 3.5 million documents.
    pub fn query_cache_size(mut self, bytes: usize) -> Self {
        self.query_cache_bytes = bytes;
        self
    }

    /// Open read-only: no lock is taken, so this works beside a process that has the store
    /// open for writing, even while it writes, flushes and compacts. It sees the store as it
    /// was at one moment of the open: every write batch the writer had committed up to some
    /// point (to its log or its files) and none after it, each whole and in all column
    /// families, with `len()` counting exactly the documents it sees. It does not follow
    /// later writes: open again to see them. Writes fail with [`crate::Error::ReadOnly`].
    ///
    /// It is a RocksDB secondary instance, with its own small files in a temporary
    /// directory. Such an open can skip a write-ahead log that the writer flushes and
    /// deletes during it, and so miss whole batches before newer ones; the open checks the
    /// store's logs and MANIFEST before and after and opens again when that may have
    /// happened (`docs/reliability.md`: no hole in 500 opens beside a writer that flushes
    /// after every batch, where plain secondary opens had 94; one case needing two RocksDB
    /// background jobs to delete logs out of order is not covered). After 20 such attempts
    /// it fails with [`crate::Error::WriterBusy`] rather than return a view that may miss
    /// batches. Default: `false`.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// The fingerprint configuration. For a new store it is recorded and used for good; for an
    /// existing store it must equal the recorded one, or opening fails with
    /// [`crate::Error::ConfigMismatch`]. Default: none, meaning [`SimhashConfig::default`] for a
    /// new store and whatever is recorded for an existing one.
    pub fn simhash_config(mut self, config: SimhashConfig) -> Self {
        self.simhash_config = Some(config);
        self
    }

    /// Opens the store at `path`, creating it if it does not exist (unless read-only).
    ///
    /// # Errors
    /// [`crate::Error::Locked`] when another process has it open for writing,
    /// [`crate::Error::UnsupportedFormat`] for a store of a format this build does not know.
    /// A store of an older format ([`Format`](crate::upgrade::Format)) opens read-only: its writes fail
    /// with [`crate::Error::LegacyFormat`] until `simhash-store upgrade` copies it.
    /// [`crate::Error::ConfigMismatch`] when the configuration differs from the recorded one,
    /// [`crate::Error::NotAStore`] for a directory that holds something else,
    /// [`crate::Error::Corruption`] for damaged files,
    /// [`crate::Error::WriterBusy`] for a read-only open that raced the writer 20 times (see
    /// [`StoreBuilder::read_only`]), [`crate::Error::RocksDb`] for other RocksDB failures.
    pub fn open(self, path: impl AsRef<Path>) -> Result<Store> {
        Store::open_with(self, path.as_ref())
    }
}
