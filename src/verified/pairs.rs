//! The whole store's verified pairs: [`Store::verified_pairs`](crate::Store::verified_pairs).
//!
//! The pair scan of [`Store::pairs`](crate::Store::pairs) at the verification's `k` finds the candidates; they are
//! gathered in batches, the sketches of a batch's documents are read with sorted multi-gets
//! of `docs` on one thread per core, and each pair is kept or dropped by its similarity. Memory is the
//! scan's plus one batch.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use crate::dedup::{ClusterBuilder, Clusters, Pair, PairScan, ScanProgress, ScanStats};
use crate::error::{Error, Result};
use crate::sketch::Sketch;
use crate::storage::{Database, Docs};
use crate::verified::Verification;

/// Candidate pairs verified together.
const BATCH: usize = 1 << 14;
/// Documents per multi-get of their sketches.
const LOOKUP_CHUNK: usize = 1024;

/// Two stored documents that are verified near-duplicates of each other: `a < b`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct VerifiedPair {
    /// The smaller document id.
    pub a: u64,
    /// The larger document id.
    pub b: u64,
    /// Hamming distance between their fingerprints.
    pub distance: u32,
    /// The [`Sketch::similarity`] of their sketches.
    pub similarity: f64,
}

impl VerifiedPair {
    /// The pair without its similarity.
    pub fn pair(&self) -> Pair {
        Pair::new(self.a, self.b, self.distance)
    }
}

/// What a finished [`VerifiedPairScan`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedScanStats {
    /// The candidates: the pair scan at the verification's `k`.
    pub candidates: ScanStats,
    /// The pairs kept, per distance (`keys_scanned` as the candidates').
    pub verified: ScanStats,
}

/// A scan for every verified pair of a store: made by
/// [`Store::verified_pairs`](crate::Store::verified_pairs), run by
/// [`VerifiedPairScan::for_each`], [`VerifiedPairScan::collect`] or
/// [`VerifiedPairScan::clusters`].
pub struct VerifiedPairScan<'a> {
    scan: PairScan<'a>,
    /// The store's database, whose `docs` hold the sketches.
    db: &'a Database,
    /// Whether the store keeps sketches: [`Error::NoSketches`] if not, returned when the scan
    /// runs.
    kept: Result<()>,
    verification: Verification,
}

impl std::fmt::Debug for VerifiedPairScan<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifiedPairScan")
            .field("scan", &self.scan)
            .field("verification", &self.verification)
            .finish()
    }
}

impl<'a> VerifiedPairScan<'a> {
    /// The verified pairs of `scan`'s candidates, whose sketches are read from `db`; `kept`
    /// says whether the store keeps sketches.
    pub(crate) fn new(
        scan: PairScan<'a>,
        db: &'a Database,
        kept: Result<()>,
        verification: Verification,
    ) -> VerifiedPairScan<'a> {
        VerifiedPairScan {
            scan,
            db,
            kept,
            verification,
        }
    }

    /// As [`PairScan::chunk_size`].
    pub fn chunk_size(mut self, docs: usize) -> Self {
        self.scan = self.scan.chunk_size(docs);
        self
    }

    /// As [`PairScan::on_progress`] (the progress of the candidates' scan).
    pub fn on_progress(mut self, f: impl FnMut(ScanProgress) + 'a) -> Self {
        self.scan = self.scan.on_progress(f);
        self
    }

    /// As [`PairScan::stop_when`].
    pub fn stop_when(mut self, flag: &'a AtomicBool) -> Self {
        self.scan = self.scan.stop_when(flag);
        self
    }

    /// Runs the scan and calls `f` with every verified pair, each once, in no particular
    /// order, on the calling thread. If `f` fails, the scan stops and returns its error.
    ///
    /// # Errors
    /// [`Error::NoSketches`] if the store keeps no sketches; [`Error::InvalidArgument`] for a
    /// [`Verification`] out of range; as [`PairScan::for_each`] (converted into `E`); the
    /// first error of `f`.
    pub fn for_each<E, F>(self, mut f: F) -> std::result::Result<VerifiedScanStats, E>
    where
        E: From<Error>,
        F: FnMut(VerifiedPair) -> std::result::Result<(), E>,
    {
        let VerifiedPairScan {
            scan,
            db,
            kept,
            verification,
        } = self;
        kept?;
        verification.check()?;
        let k = crate::distance::clamped(verification.k);
        let mut verified = ScanStats {
            k,
            pairs: 0,
            per_distance: vec![0; k as usize + 1],
            keys_scanned: 0,
        };
        let mut pending: Vec<Pair> = Vec::with_capacity(BATCH);
        let mut sketches = Sketches::default();
        let mut verify = |pending: &mut Vec<Pair>, verified: &mut ScanStats| {
            sketches.read(db.docs()?, pending)?;
            for pair in pending.drain(..) {
                let (Some(x), Some(y)) = (sketches.get(pair.a), sketches.get(pair.b)) else {
                    continue;
                };
                let similarity = x.similarity(y);
                if verification.accepts(pair.distance, similarity) {
                    verified.pairs += 1;
                    if let Some(n) = verified.per_distance.get_mut(pair.distance as usize) {
                        *n += 1;
                    }
                    f(VerifiedPair {
                        a: pair.a,
                        b: pair.b,
                        distance: pair.distance,
                        similarity,
                    })?;
                }
            }
            Ok::<_, E>(())
        };
        let candidates = scan.for_each(|pair| {
            pending.push(pair);
            if pending.len() >= BATCH {
                verify(&mut pending, &mut verified)?;
            }
            Ok::<_, E>(())
        })?;
        verify(&mut pending, &mut verified)?;
        verified.keys_scanned = candidates.keys_scanned;
        Ok(VerifiedScanStats {
            candidates,
            verified,
        })
    }

    /// Every verified pair, sorted by `(a, b)`.
    ///
    /// # Errors
    /// As [`VerifiedPairScan::for_each`].
    pub fn collect(self) -> Result<Vec<VerifiedPair>> {
        let mut pairs = Vec::new();
        self.for_each(|p| {
            pairs.push(p);
            Ok::<_, Error>(())
        })?;
        pairs.sort_unstable_by_key(|p| (p.a, p.b));
        Ok(pairs)
    }

    /// The clusters of verified near-duplicates (as [`PairScan::clusters`]).
    ///
    /// # Errors
    /// As [`VerifiedPairScan::for_each`].
    pub fn clusters(self) -> Result<(Clusters, VerifiedScanStats)> {
        let mut builder = ClusterBuilder::new();
        let stats = self.for_each(|p| {
            builder.add_pair(p.a, p.b);
            Ok::<_, Error>(())
        })?;
        Ok((builder.finish(), stats))
    }
}

/// Documents looked up and their sketches.
type Found = Vec<(u64, Option<Sketch>)>;

/// The sketches of one batch's documents (`None`: not stored, or stored without one).
#[derive(Default)]
struct Sketches {
    by_id: HashMap<u64, Option<Sketch>>,
    ids: Vec<u64>,
}

impl Sketches {
    /// Reads the sketches of every document of `pairs`, replacing the previous batch's: the
    /// distinct ids sorted, split into one run per core, each looked up by sorted multi-gets
    /// of [`LOOKUP_CHUNK`] documents on a thread of its own. Not on rayon's pool: this runs
    /// in the scan's callback, while the scan's workers, on that pool, wait for the callback
    /// to take their pairs.
    fn read(&mut self, docs: Docs<'_>, pairs: &[Pair]) -> Result<()> {
        self.by_id.clear();
        self.ids.clear();
        self.ids.extend(pairs.iter().flat_map(|p| [p.a, p.b]));
        self.ids.sort_unstable();
        self.ids.dedup();
        let lookup = |ids: &[u64]| -> Result<Found> {
            let mut found = Vec::with_capacity(ids.len());
            for ids in ids.chunks(LOOKUP_CHUNK) {
                let documents = docs.multi_get(ids, "read")?;
                for (&id, doc) in ids.iter().zip(documents) {
                    found.push((id, doc.and_then(|d| d.sketch)));
                }
            }
            Ok(found)
        };
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        let per_thread = self.ids.len().div_ceil(threads).max(LOOKUP_CHUNK);
        if self.ids.len() <= per_thread {
            self.by_id.extend(lookup(&self.ids)?);
            return Ok(());
        }
        let ids = &self.ids;
        let results: Vec<Result<Found>> = std::thread::scope(|s| {
            let handles: Vec<_> = ids
                .chunks(per_thread)
                .map(|run| s.spawn(move || lookup(run)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
        for found in results {
            self.by_id.extend(found?);
        }
        Ok(())
    }

    fn get(&self, id: u64) -> Option<&Sketch> {
        self.by_id.get(&id).and_then(Option::as_ref)
    }
}
