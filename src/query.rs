//! Exact Hamming-distance queries over the four block families.
//!
//! By the pigeonhole rule (`src/pigeonhole.rs`) the query reads, in each block family *i*,
//! the groups within that family's radius of the query's block *i* (one group when `k <= 3`;
//! multi-index hashing, Norouzi, Punjani and Fleet 2012, with the general rule's unequal
//! radii, Qin et al. 2018). Each candidate holds its whole
//! fingerprint, so its exact distance is checked without another read, and a document is
//! reported by one family only. When the probes would cost more than reading everything
//! (large `k` on a small store), the query scans family `block0` in full instead.

use crate::distance::{self, MAX_DISTANCE};
use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::pigeonhole::{self, query_radii};
use crate::postings::{malformed_error, Db, GroupScan, Postings, Probe, Reads, SplitCopies};
use crate::storage::{Database, View};

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

/// How [`Store::query_with`](crate::Store::query_with) answers a query. Every strategy gives the same, exact answer;
/// they differ only in cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Strategy {
    /// Choose by a cost model from `k` and the number of documents (what [`Store::query`](crate::Store::query) does).
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

/// What one query reads, lent by the store ([`Store::query`](crate::Store::query)): its
/// database and block families, one consistent view of them, and what the store knew when
/// the view was taken.
pub(crate) struct Source<'a> {
    pub(crate) db: &'a Database,
    pub(crate) postings: &'a Postings,
    /// The query cache's epoch, read before `view` was taken (`src/postings/cache.rs`).
    pub(crate) epoch: u64,
    pub(crate) view: View<'a>,
    /// The number of documents, which chooses the plan.
    pub(crate) documents: u64,
    /// How the block families are read.
    pub(crate) reads: Reads,
    /// Whether a document may have an external key, read after `view` was taken (so a
    /// write that `view` sees is seen here too); without one, `docs` is not read.
    pub(crate) may_have_keys: bool,
}

impl Source<'_> {
    /// Every document within `k` of `fp`, sorted by distance then id, with external keys.
    pub(crate) fn query(&self, fp: Fingerprint, k: u32, strategy: Strategy) -> Result<Vec<Match>> {
        let found = self.candidates(fp, k, strategy)?;
        self.with_keys(found)
    }

    /// Reads the block families into the query cache (see
    /// [`Store::preload_query_cache`](crate::Store::preload_query_cache)).
    pub(crate) fn preload_cache(&self) -> Result<u64> {
        self.postings.preload_cache(Db::new(self.db), &self.view)
    }

    /// (id, fingerprint, distance) of every document within `k` of `fp`, sorted by distance
    /// then id, without external keys.
    pub(crate) fn candidates(
        &self,
        fp: Fingerprint,
        k: u32,
        strategy: Strategy,
    ) -> Result<Vec<(u64, Fingerprint, u32)>> {
        let k = distance::clamped(k);
        let mut found = Vec::new();
        let plan = match strategy {
            Strategy::Auto => plan(k, self.documents),
            Strategy::Probe => Plan::Probe {
                radii: query_radii(k),
            },
            Strategy::FullScan => Plan::FullScan,
        };
        match plan {
            Plan::FullScan => self.full_scan(fp, k, &mut found)?,
            Plan::Probe { radii } => self.postings.probe(
                Probe {
                    db: Db::new(self.db),
                    view: &self.view,
                    epoch: self.epoch,
                    q: fp,
                    k,
                    radii,
                    reads: self.reads,
                },
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
        q: Fingerprint,
        k: u32,
        found: &mut Vec<(u64, Fingerprint, u32)>,
    ) -> Result<()> {
        self.postings.for_each_group(
            GroupScan::all(Db::new(self.db), &self.view, 0),
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

    /// Looks up the external keys of `found` in the same view (none in a store without
    /// keys: [`Source::may_have_keys`]).
    fn with_keys(&self, found: Vec<(u64, Fingerprint, u32)>) -> Result<Vec<Match>> {
        let docs = self.db.docs()?;
        found
            .into_iter()
            .map(|(id, fingerprint, distance)| {
                // One point read per match: a query has few, and RocksDB's MultiGet costs more
                // than single reads below a few dozen keys.
                let key = if self.may_have_keys {
                    docs.get(&self.view, id)?.and_then(|doc| doc.key)
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
