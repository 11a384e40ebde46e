//! The all-pairs scan: every pair of stored documents within distance `k`, each once, from one
//! sequential pass over each block family (see the module documentation of `dedup`).
//!
//! Work is split into ranges of block values per family and run on rayon's pool; pairs travel
//! in batches through a bounded channel to the caller's thread, where the callback runs. So
//! memory is bounded by the largest group (and its neighbours), the number of threads and the
//! channel, however many pairs.

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};

use rayon::prelude::*;

use crate::dedup::clusters::{ClusterBuilder, Clusters};
use crate::dedup::kernel::{Doc, Kernel};
use crate::dedup::Pair;
use crate::error::{Error, Result};
use crate::fingerprint::BLOCKS;
use crate::pigeonhole;
use crate::postings::{malformed_error, Db, GroupScan, Posting, Postings, SplitCopies};
use crate::storage::{Database, Reading, View};

/// Default number of documents held in memory per chunk of a group.
const DEFAULT_CHUNK: usize = 1 << 16;
/// Largest accepted chunk (chunk positions are `u32`).
const MAX_CHUNK: usize = 1 << 26;
/// Ranges of block values per family, units of parallel work: at most this many ...
const MAX_RANGES_PER_FAMILY: u32 = 256;
/// ... and one per this many documents (a scan of a range has a fixed cost: with keys in the
/// memtables, a seek per block value, `postings::groups::for_each_key`).
const DOCUMENTS_PER_RANGE: u64 = 1 << 16;
/// Pairs per message to the caller's thread.
const BATCH: usize = 4096;
/// Messages in flight before workers wait for the caller.
const CHANNEL_CAPACITY: usize = 64;
/// Keys scanned between progress messages.
const PROGRESS_EVERY: u64 = 1 << 16;

/// How far a [`PairScan`] has got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanProgress {
    /// Keys read so far by the sequential passes over the four block families.
    pub scanned: u64,
    /// Keys the passes will read: four per document (the count when the scan started).
    pub total: u64,
}

/// What a finished [`PairScan`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanStats {
    /// The distance scanned for.
    pub k: u32,
    /// Pairs reported.
    pub pairs: u64,
    /// `per_distance[d]`: pairs at distance `d`, for `d` in `0..=k`.
    pub per_distance: Vec<u64>,
    /// Keys read by the sequential passes (four per document).
    pub keys_scanned: u64,
}

impl ScanStats {
    fn new(k: u32) -> ScanStats {
        ScanStats {
            k,
            pairs: 0,
            per_distance: vec![0; k as usize + 1],
            keys_scanned: 0,
        }
    }

    fn record(&mut self, pair: Pair) {
        self.pairs += 1;
        if let Some(n) = self.per_distance.get_mut(pair.distance as usize) {
            *n += 1;
        }
    }
}

/// What a pair scan reads, lent by the store ([`Store::pairs`](crate::Store::pairs)): its
/// database and block families, and its document count (read when the scan runs).
pub(crate) struct ScanSource<'a> {
    /// The store's directory, for messages.
    pub(crate) path: &'a Path,
    pub(crate) db: &'a Database,
    pub(crate) postings: &'a Postings,
    /// The number of documents, as the store counts them.
    pub(crate) documents: &'a AtomicU64,
}

/// A scan for every pair of stored documents within Hamming distance `k`: made by
/// [`Store::pairs`](crate::Store::pairs), run by [`PairScan::for_each`], [`PairScan::collect`]
/// or [`PairScan::clusters`].
pub struct PairScan<'a> {
    source: ScanSource<'a>,
    k: u32,
    chunk: usize,
    progress: Option<Box<dyn FnMut(ScanProgress) + 'a>>,
    stop: Option<&'a AtomicBool>,
}

impl std::fmt::Debug for PairScan<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PairScan")
            .field("store", &self.source.path)
            .field("k", &self.k)
            .field("chunk", &self.chunk)
            .finish()
    }
}

/// A unit of parallel work: block values `lo..hi` of family `family`.
#[derive(Debug, Clone, Copy)]
struct Task {
    family: usize,
    lo: u32,
    hi: u32,
}

enum Msg {
    Pairs(Vec<Pair>),
    Scanned(u64),
}

/// Why a worker stopped early.
enum Stop {
    Failed(Error),
    /// The caller stopped receiving (its callback failed).
    Cancelled,
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Failed(e)
    }
}

/// What every worker shares.
struct Ctx<'s> {
    db: &'s Database,
    postings: &'s Postings,
    snapshot: View<'s>,
    kernels: Vec<Kernel>,
    /// Non-zero block masks of at most `radius` bits (empty for `k <= 3`).
    neighbours: Vec<u16>,
    chunk: usize,
    cancel: AtomicBool,
}

/// A worker's outbox.
struct Sink<'c> {
    tx: SyncSender<Msg>,
    out: Vec<Pair>,
    scanned: u64,
    cancel: &'c AtomicBool,
    /// The caller's flag ([`PairScan::stop_when`]).
    stop: Option<&'c AtomicBool>,
    stopped: bool,
}

impl Sink<'_> {
    fn emit(&mut self, pair: Pair) -> ControlFlow<()> {
        self.out.push(pair);
        if self.out.len() >= BATCH {
            self.send_pairs();
        }
        if self.stopped {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }

    fn send_pairs(&mut self) {
        if !self.out.is_empty() {
            let batch = std::mem::replace(&mut self.out, Vec::with_capacity(BATCH));
            if self.tx.send(Msg::Pairs(batch)).is_err() {
                self.stopped = true;
            }
        }
    }

    fn scanned(&mut self, n: usize) {
        self.scanned += n as u64;
        if self.scanned >= PROGRESS_EVERY {
            self.send_progress();
        }
    }

    fn send_progress(&mut self) {
        if self.scanned > 0
            && self
                .tx
                .send(Msg::Scanned(std::mem::take(&mut self.scanned)))
                .is_err()
        {
            self.stopped = true;
        }
    }

    /// Sends everything pending; `Err(Cancelled)` once the caller has gone.
    fn flush(&mut self) -> std::result::Result<(), Stop> {
        self.send_pairs();
        self.send_progress();
        self.check()
    }

    fn check(&self) -> std::result::Result<(), Stop> {
        if self.stopped
            || self.cancel.load(Ordering::Relaxed)
            || self.stop.is_some_and(|s| s.load(Ordering::Relaxed))
        {
            Err(Stop::Cancelled)
        } else {
            Ok(())
        }
    }
}

impl Ctx<'_> {
    /// Compares every document of the groups of `task` with the others of its group and of
    /// the neighbouring groups (block values within the scan's radius, larger than its own),
    /// `self.chunk` documents against `self.chunk` at a time.
    fn scan(&self, task: Task, sink: &mut Sink<'_>) -> std::result::Result<(), Stop> {
        let family = task.family;
        let kernel = &self.kernels[family];
        // One pass over everything: do not evict the cache that queries rely on.
        let reading = Reading::new().fill_cache(false).readahead(1 << 20);
        let (mut docs, mut neighbour, mut other): (Vec<Doc>, Vec<Posting>, Vec<Doc>) =
            (Vec::new(), Vec::new(), Vec::new());
        let as_docs = |group: &[Posting], out: &mut Vec<Doc>| {
            out.clear();
            out.extend(group.iter().map(|&(fp, id)| (fp.0, id)));
        };
        let (postings, db) = (self.postings, Db::new(self.db));
        let scan = GroupScan {
            db,
            view: &self.snapshot,
            family,
            values: task.lo..task.hi,
            reading,
        };
        postings.for_each_group(
            scan,
            SplitCopies::Trusted,
            &mut malformed_error,
            |value, group| -> std::result::Result<(), Stop> {
                as_docs(group, &mut docs);
                let mut neighbours = Vec::new();
                for &m in &self.neighbours {
                    let w = value ^ m;
                    if w > value {
                        postings.read_group(db, &self.snapshot, family, w, &mut neighbour)?;
                        if !neighbour.is_empty() {
                            as_docs(&neighbour, &mut other);
                            neighbours.push(std::mem::take(&mut other));
                        }
                    }
                }
                for (c, a) in docs.chunks(self.chunk).enumerate() {
                    sink.scanned(a.len());
                    if kernel.self_pairs(a, &mut |p| sink.emit(p)).is_break() {
                        return Err(Stop::Cancelled);
                    }
                    let rest = docs.get((c + 1) * self.chunk..).unwrap_or_default();
                    for b in rest
                        .chunks(self.chunk)
                        .chain(neighbours.iter().flat_map(|n| n.chunks(self.chunk)))
                    {
                        if kernel.cross_pairs(a, b, &mut |p| sink.emit(p)).is_break() {
                            return Err(Stop::Cancelled);
                        }
                        sink.check()?;
                    }
                    sink.check()?;
                }
                Ok(())
            },
        )?;
        sink.flush()
    }
}

impl<'a> PairScan<'a> {
    /// A scan of `source` for the pairs within `k`, with the default chunk size.
    pub(crate) fn new(source: ScanSource<'a>, k: u32) -> PairScan<'a> {
        PairScan {
            source,
            k,
            chunk: DEFAULT_CHUNK,
            progress: None,
            stop: None,
        }
    }

    /// Documents compared at a time per chunk of a group (default 65,536, at most 2^26). A
    /// group larger than this is compared chunk against chunk (with the sub-block join when
    /// the chunks are large); the group itself is held in memory whole.
    ///
    /// # Errors
    /// None here; a chunk size of 0 or above 2^26 makes the scan fail with
    /// [`Error::InvalidArgument`].
    pub fn chunk_size(mut self, docs: usize) -> Self {
        self.chunk = docs;
        self
    }

    /// Calls `f` as the scan advances, on the calling thread.
    pub fn on_progress(mut self, f: impl FnMut(ScanProgress) + 'a) -> Self {
        self.progress = Some(Box::new(f));
        self
    }

    /// Stops the scan with [`Error::Cancelled`] soon after `flag` becomes `true`: the
    /// workers read it between groups of documents, as they read their own stop signal. For callers that cancel
    /// from another thread: a Ctrl-C handler, a deadline, a user interface.
    ///
    /// ```
    /// use std::sync::atomic::AtomicBool;
    /// use simhash_store::{Error, Fingerprint, Store};
    /// let dir = tempfile::tempdir()?;
    /// let store = Store::open(dir.path())?;
    /// store.insert(1, Fingerprint(7))?;
    /// let stop = AtomicBool::new(true);
    /// assert!(matches!(store.pairs(3).stop_when(&stop).collect(), Err(Error::Cancelled)));
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// ```
    pub fn stop_when(mut self, flag: &'a AtomicBool) -> Self {
        self.stop = Some(flag);
        self
    }

    /// Runs the scan on all cores (rayon's global pool) and calls `f` with every pair within
    /// `k`, each once, in no particular order. `f` runs on the calling thread. All four
    /// families are read from one snapshot, so concurrent writes are not seen. If `f` fails,
    /// the scan stops and returns its error.
    ///
    /// # Errors
    /// The first error of `f`; RocksDB read errors and [`Error::Decode`] for a damaged key
    /// (converted into `E`); [`Error::InvalidArgument`] for a chunk size out of range.
    pub fn for_each<E, F>(mut self, mut f: F) -> std::result::Result<ScanStats, E>
    where
        E: From<Error>,
        F: FnMut(Pair) -> std::result::Result<(), E>,
    {
        if self.chunk == 0 || self.chunk > MAX_CHUNK {
            return Err(Error::InvalidArgument(format!(
                "chunk size must be in 1..={MAX_CHUNK} documents, not {}",
                self.chunk
            ))
            .into());
        }
        let k = crate::distance::clamped(self.k);
        let radius = pigeonhole::radius(k);
        let source = &self.source;
        let documents = source.documents.load(Ordering::SeqCst);
        let ctx = Ctx {
            db: source.db,
            postings: source.postings,
            snapshot: source.db.view(),
            kernels: (0..BLOCKS).map(|i| Kernel::new(k, i)).collect(),
            neighbours: pigeonhole::neighbour_masks(radius).to_vec(),
            chunk: self.chunk,
            cancel: AtomicBool::new(false),
        };
        let ranges = (documents / DOCUMENTS_PER_RANGE)
            .clamp(1, u64::from(MAX_RANGES_PER_FAMILY))
            .next_power_of_two() as u32;
        let step = 65536 / ranges;
        let tasks: Vec<Task> = (0..BLOCKS)
            .flat_map(|family| {
                (0..ranges).map(move |r| Task {
                    family,
                    lo: r * step,
                    hi: (r + 1) * step,
                })
            })
            .collect();
        let total = documents.saturating_mul(BLOCKS as u64);
        let mut stats = ScanStats::new(k);
        let mut failure: Option<E> = None;
        let (tx, rx) = sync_channel::<Msg>(CHANNEL_CAPACITY);
        let progress = &mut self.progress;
        let stop = self.stop;
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return Err(Error::Cancelled.into());
        }
        let worker = std::thread::scope(|s| {
            let (ctx, tasks) = (&ctx, &tasks);
            let handle = s.spawn(move || {
                tasks.par_iter().try_for_each_with(tx, |tx, &task| {
                    let mut sink = Sink {
                        tx: tx.clone(),
                        out: Vec::with_capacity(BATCH),
                        scanned: 0,
                        cancel: &ctx.cancel,
                        stop,
                        stopped: false,
                    };
                    ctx.scan(task, &mut sink)
                })
            });
            'receive: while let Ok(msg) = rx.recv() {
                match msg {
                    Msg::Scanned(n) => {
                        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                            failure = Some(Error::Cancelled.into());
                            break 'receive;
                        }
                        stats.keys_scanned += n;
                        if let Some(p) = progress.as_mut() {
                            p(ScanProgress {
                                scanned: stats.keys_scanned,
                                total: total.max(stats.keys_scanned),
                            });
                        }
                    }
                    Msg::Pairs(batch) => {
                        for pair in batch {
                            stats.record(pair);
                            if let Err(e) = f(pair) {
                                failure = Some(e);
                                break 'receive;
                            }
                        }
                    }
                }
            }
            ctx.cancel.store(true, Ordering::Relaxed);
            drop(rx);
            handle.join()
        });
        if let Some(e) = failure {
            return Err(e);
        }
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return Err(Error::Cancelled.into());
        }
        match worker {
            Ok(Ok(())) => Ok(stats),
            Ok(Err(Stop::Failed(e))) => Err(e.into()),
            // Only the caller cancels, and then `failure` is set.
            Ok(Err(Stop::Cancelled)) => Ok(stats),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Every pair within `k`, sorted by `(a, b)`.
    ///
    /// # Errors
    /// As [`PairScan::for_each`].
    pub fn collect(self) -> Result<Vec<Pair>> {
        let mut pairs = Vec::new();
        self.for_each(|p| {
            pairs.push(p);
            Ok::<_, Error>(())
        })?;
        pairs.sort_unstable();
        Ok(pairs)
    }

    /// The clusters of near-duplicates: connected components of the pairs, each with its
    /// lowest id as representative (see [`Clusters::choose_representatives`] for others).
    /// Holds only the documents that have a near-duplicate, not the pairs.
    ///
    /// # Errors
    /// As [`PairScan::for_each`].
    pub fn clusters(self) -> Result<(Clusters, ScanStats)> {
        let mut builder = ClusterBuilder::new();
        let stats = self.for_each(|p| {
            builder.add_pair(p.a, p.b);
            Ok::<_, Error>(())
        })?;
        Ok((builder.finish(), stats))
    }
}
