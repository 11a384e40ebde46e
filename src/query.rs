//! Exact Hamming-distance queries over the four block families.
//!
//! By the pigeonhole rule (`src/pigeonhole.rs`) the query reads, in each block family *i*,
//! the groups within that family's radius of the query's block *i* (one group when `k <= 3`;
//! multi-index hashing, Norouzi, Punjani and Fleet 2012, with the general rule's unequal
//! radii, Qin et al. 2018). Each candidate holds its whole
//! fingerprint, so its exact distance is checked without another read, and a document is
//! reported by one family only. When the probes would cost more than reading everything
//! (large `k` on a small store), the query scans family `block0` in full instead.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::pigeonhole::{self, query_radii};
use crate::postings::{malformed_error, GroupScan, SplitCopies};
use crate::store::Store;
use crate::store::View;

/// One stored document within the queried distance.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Match {
    /// The document id.
    pub id: u64,
    /// Its fingerprint.
    pub fingerprint: Fingerprint,
    /// Hamming distance to the query.
    pub distance: u32,
    /// Its external key, if it has one.
    pub key: Option<String>,
}

/// The largest meaningful distance.
pub const MAX_DISTANCE: u32 = 64;

/// How [`Store::query_with`] answers a query. Every strategy gives the same, exact answer;
/// they differ only in cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Strategy {
    /// Choose by a cost model from `k` and the number of documents (what [`Store::query`] does).
    #[default]
    Auto,
    /// Always probe the block families (multi-index hashing), whatever `k`.
    Probe,
    /// Always read every key of family `block0`: the brute-force reference.
    FullScan,
}

/// How a query is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Probe, in each family `i`, every block value within `radii[i]` bits of the query's
    /// ([`pigeonhole::query_radii`]).
    Probe { radii: [Option<u32>; BLOCKS] },
    /// Read all of family `block0`.
    FullScan,
}

/// Relative costs, in units of one key visited during a scan.
const SEEK_COST: f64 = 20.0;
const PROBE_KEY_COST: f64 = 1.0;

/// Chooses the cheaper plan for distance `k` over `n` documents.
pub(crate) fn plan(k: u32, n: u64) -> Plan {
    if k >= MAX_DISTANCE {
        return Plan::FullScan;
    }
    let radii = query_radii(k);
    let probes: usize = radii
        .iter()
        .flatten()
        .map(|&r| pigeonhole::masks(r).len())
        .sum();
    let per_prefix = n as f64 / 65536.0;
    let probe_cost = probes as f64 * (SEEK_COST + per_prefix.max(1.0) * PROBE_KEY_COST);
    if k <= 3 || probe_cost < n as f64 {
        Plan::Probe { radii }
    } else {
        Plan::FullScan
    }
}

impl Store {
    /// Every stored document within Hamming distance `k` of `fp`, sorted by distance then id,
    /// each document once. Exact for every `k`: equal to comparing `fp` with every stored
    /// fingerprint. Reads one consistent snapshot, so a concurrent write is seen whole or not
    /// at all.
    ///
    /// `k = 3` scans four key ranges of about `len() / 65536` keys each, smaller `k` fewer
    /// (one at `k = 0`). Larger `k` also probes neighbouring block values (20 ranges in all
    /// at `k = 4`, 52 at `k = 6`, 68 at `k = 7`), or reads everything when that is cheaper.
    ///
    /// ```
    /// use simhash_store::{Fingerprint, Store};
    /// let dir = tempfile::tempdir()?;
    /// let store = Store::open(dir.path())?;
    /// store.insert(1, Fingerprint(0b1111))?;
    /// store.insert(2, Fingerprint(0b0111))?;
    /// store.insert(3, Fingerprint(u64::MAX))?;
    /// let found = store.query(Fingerprint(0b1111), 3)?;
    /// assert_eq!(found.iter().map(|m| (m.id, m.distance)).collect::<Vec<_>>(), [(1, 0), (2, 1)]);
    /// # Ok::<_, simhash_store::Error>(())
    /// ```
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`] for a damaged entry.
    pub fn query(&self, fp: Fingerprint, k: u32) -> Result<Vec<Match>> {
        self.query_with(fp, k, Strategy::Auto)
    }

    /// [`Store::query`] with a chosen [`Strategy`], for benchmarks and tests: the answer is
    /// the same for every strategy.
    ///
    /// # Errors
    /// As [`Store::query`].
    pub fn query_with(&self, fp: Fingerprint, k: u32, strategy: Strategy) -> Result<Vec<Match>> {
        // The query cache's epoch is read before the snapshot is taken (src/postings/cache.rs).
        let epoch = self.postings().cache().map_or(0, |c| c.epoch());
        let snapshot = self.view();
        let found = self.candidates(&snapshot, epoch, fp, k, strategy)?;
        self.with_keys(&snapshot, found)
    }

    /// Fingerprints `text` with [`Store::simhasher`] and queries it.
    ///
    /// # Errors
    /// [`Error::NoFeatures`] for a text with nothing to fingerprint; as [`Store::query`].
    pub fn query_text(&self, text: &str, k: u32) -> Result<Vec<Match>> {
        self.query(self.simhasher().fingerprint(text)?, k)
    }

    /// Answers many queries on all cores (rayon's global pool); results in input order.
    ///
    /// # Errors
    /// The first error of any query.
    pub fn query_batch(&self, fps: &[Fingerprint], k: u32) -> Result<Vec<Vec<Match>>> {
        fps.par_iter().map(|fp| self.query(*fp, k)).collect()
    }

    /// Reads the block families into the query cache ([`crate::StoreBuilder::query_cache_size`])
    /// until it is full or holds every key range, so that queries are fast from the start
    /// instead of after they have touched each range once. Returns the number of ranges
    /// cached (at most 4 x 65,536). About one second per million documents; queries and
    /// writes may run meanwhile.
    ///
    /// Only stores of formats 1 to 6 have a query cache: a store of the packed layout (every
    /// new store) reads its packed chunks faster than the cache would, and this returns 0.
    ///
    /// ```
    /// use simhash_store::{Fingerprint, Store};
    /// let dir = tempfile::tempdir()?;
    /// let store = Store::open(dir.path())?;
    /// store.insert(1, Fingerprint(0xdead_beef))?;
    /// assert_eq!(store.preload_query_cache()?, 0);
    /// assert_eq!(store.query(Fingerprint(0xdead_beef), 3)?.len(), 1);
    /// # Ok::<_, simhash_store::Error>(())
    /// ```
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`] for a damaged entry.
    pub fn preload_query_cache(&self) -> Result<u64> {
        self.postings()
            .preload_cache(self.blocks_db(), &self.view())
    }

    /// (id, fingerprint, distance) of every document within `k` of `fp` in `snapshot` (taken
    /// in query-cache epoch `epoch`), sorted by distance then id, without external keys.
    pub(crate) fn candidates(
        &self,
        snapshot: &View<'_>,
        epoch: u64,
        fp: Fingerprint,
        k: u32,
        strategy: Strategy,
    ) -> Result<Vec<(u64, Fingerprint, u32)>> {
        let k = k.min(MAX_DISTANCE);
        let mut found = Vec::new();
        let plan = match strategy {
            Strategy::Auto => plan(k, self.len()),
            Strategy::Probe => Plan::Probe {
                radii: query_radii(k),
            },
            Strategy::FullScan => Plan::FullScan,
        };
        match plan {
            Plan::FullScan => self.full_scan(snapshot, fp, k, &mut found)?,
            Plan::Probe { radii } => self.postings().probe(
                self.blocks_db(),
                snapshot,
                epoch,
                fp,
                k,
                &radii,
                self.reads(),
                &mut found,
            )?,
        }
        found.sort_unstable_by_key(|&(id, _, d)| (d, id));
        // A document added again by a single write after a bulk run stored it is in a chunk
        // and a delta of the same group.
        found.dedup_by_key(|&mut (id, _, _)| id);
        Ok(found)
    }

    fn full_scan(
        &self,
        snapshot: &View<'_>,
        q: Fingerprint,
        k: u32,
        found: &mut Vec<(u64, Fingerprint, u32)>,
    ) -> Result<()> {
        self.postings().for_each_group(
            GroupScan::all(self.blocks_db(), snapshot, 0),
            SplitCopies::Trusted,
            &mut malformed_error,
            |_, group| {
                for &(fp, id) in group {
                    let d = fp.distance(q);
                    if d <= k {
                        found.push((id, fp, d));
                    }
                }
                Ok::<(), Error>(())
            },
        )
    }

    /// Looks up the external keys of `found` in the same snapshot (none in a store without
    /// keys: [`Store::may_have_keys`]).
    fn with_keys(
        &self,
        snapshot: &View<'_>,
        found: Vec<(u64, Fingerprint, u32)>,
    ) -> Result<Vec<Match>> {
        let docs = self.db().docs()?;
        let keys_present = self.may_have_keys();
        found
            .into_iter()
            .map(|(id, fingerprint, distance)| {
                // One point read per match: a query has few, and RocksDB's MultiGet costs more
                // than single reads below a few dozen keys.
                let key = if keys_present {
                    docs.get(snapshot, id)?.and_then(|doc| doc.key)
                } else {
                    None
                };
                Ok(Match {
                    id,
                    fingerprint,
                    distance,
                    key,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans() {
        assert_eq!(
            plan(3, 10),
            Plan::Probe {
                radii: [Some(0); 4]
            }
        );
        assert_eq!(
            plan(3, 1 << 40),
            Plan::Probe {
                radii: [Some(0); 4]
            }
        );
        assert_eq!(
            plan(0, 10),
            Plan::Probe {
                radii: [Some(0), None, None, None]
            }
        );
        assert_eq!(
            plan(6, 1_000_000),
            Plan::Probe {
                radii: [Some(1), Some(1), Some(1), Some(0)]
            }
        );
        assert_eq!(plan(6, 100), Plan::FullScan);
        assert_eq!(plan(64, 1_000_000), Plan::FullScan);
        assert_eq!(plan(40, 1 << 30), Plan::FullScan);
    }
}
