//! Clusters of near-duplicates: the connected components of the pairs (union-find over the
//! ids that appear in a pair), with one representative kept per cluster.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use crate::codec::Document;
use crate::error::{Error, Result};
use crate::storage::Docs;

/// Which document of a cluster is kept; every other member goes on the drop list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Representative {
    /// The lowest id (the default; needs no document metadata).
    #[default]
    LowestId,
    /// The longest text (`Document::text_len`; unknown counts as 0), ties to the lowest id.
    Longest,
    /// The first stored (`Document::added`), ties to the lowest id.
    FirstLoaded,
}

impl Representative {
    /// The names [`FromStr`] accepts, as the CLI spells them.
    pub const NAMES: [&'static str; 3] = ["lowest-id", "longest", "first-loaded"];
}

impl fmt::Display for Representative {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Representative::LowestId => "lowest-id",
            Representative::Longest => "longest",
            Representative::FirstLoaded => "first-loaded",
        })
    }
}

impl FromStr for Representative {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "lowest-id" => Ok(Representative::LowestId),
            "longest" => Ok(Representative::Longest),
            "first-loaded" => Ok(Representative::FirstLoaded),
            _ => Err(Error::InvalidArgument(format!(
                "unknown representative `{s}`: expected one of {}",
                Representative::NAMES.join(", ")
            ))),
        }
    }
}

/// Union-find over document ids, fed pair by pair; [`ClusterBuilder::finish`] gives the
/// [`Clusters`]. Holds one entry per id that appears in a pair, never the pairs themselves.
///
/// ```
/// use simhash_store::dedup::ClusterBuilder;
/// let mut b = ClusterBuilder::new();
/// b.add_pair(30, 10);
/// b.add_pair(10, 20);
/// b.add_pair(7, 8);
/// let clusters = b.finish();
/// let ids: Vec<(u64, Vec<u64>)> = clusters.iter().map(|c| (c.id, c.members.clone())).collect();
/// assert_eq!(ids, [(7, vec![7, 8]), (10, vec![10, 20, 30])]);
/// assert_eq!(clusters.drop_ids(), [8, 20, 30]);
/// ```
#[derive(Debug, Default, Clone)]
pub struct ClusterBuilder {
    index: HashMap<u64, usize>,
    ids: Vec<u64>,
    parent: Vec<usize>,
    size: Vec<usize>,
}

impl ClusterBuilder {
    /// An empty builder.
    pub fn new() -> ClusterBuilder {
        ClusterBuilder::default()
    }

    fn slot(&mut self, id: u64) -> usize {
        let next = self.ids.len();
        let slot = *self.index.entry(id).or_insert(next);
        if slot == next {
            self.ids.push(id);
            self.parent.push(slot);
            self.size.push(1);
        }
        slot
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            // Path halving.
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    /// Records that `a` and `b` are near-duplicates (in the same cluster).
    pub fn add_pair(&mut self, a: u64, b: u64) {
        let (x, y) = (self.slot(a), self.slot(b));
        let (mut x, mut y) = (self.find(x), self.find(y));
        if x == y {
            return;
        }
        if self.size[x] < self.size[y] {
            std::mem::swap(&mut x, &mut y);
        }
        self.parent[y] = x;
        self.size[x] += self.size[y];
    }

    /// The clusters: every id given in a pair, grouped by connected component, each cluster
    /// with its lowest id as id and as representative.
    pub fn finish(mut self) -> Clusters {
        let n = self.ids.len();
        let roots: Vec<usize> = (0..n).map(|x| self.find(x)).collect();
        let mut order: Vec<(usize, u64)> = roots
            .iter()
            .zip(&self.ids)
            .map(|(&r, &id)| (r, id))
            .collect();
        order.sort_unstable();
        let mut clusters: Vec<Cluster> = order
            .chunk_by(|x, y| x.0 == y.0)
            .map(|run| {
                let members: Vec<u64> = run.iter().map(|&(_, id)| id).collect();
                let id = members.first().copied().unwrap_or_default();
                Cluster {
                    id,
                    representative: id,
                    members,
                }
            })
            .collect();
        clusters.sort_unstable_by_key(|c| c.id);
        let mut member_index: Vec<(u64, usize)> = clusters
            .iter()
            .enumerate()
            .flat_map(|(c, cluster)| cluster.members.iter().map(move |&id| (id, c)))
            .collect();
        member_index.sort_unstable();
        Clusters {
            clusters,
            member_index,
            keys: HashMap::new(),
        }
    }
}

/// One cluster of near-duplicates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// The cluster's id: its lowest member id (stable whichever representative is chosen).
    pub id: u64,
    /// The member kept.
    pub representative: u64,
    /// All members, sorted, at least two.
    pub members: Vec<u64>,
}

/// The clusters of near-duplicates of a store, from [`crate::dedup::PairScan::clusters`] or
/// [`ClusterBuilder::finish`]. Documents without a near-duplicate are in no cluster.
#[derive(Debug, Clone, Default)]
pub struct Clusters {
    /// Sorted by id.
    clusters: Vec<Cluster>,
    /// (member id, position in `clusters`), sorted.
    member_index: Vec<(u64, usize)>,
    /// External keys of members, once loaded by `choose_representatives`.
    keys: HashMap<u64, String>,
}

/// Ids looked up per RocksDB `multi_get`.
const LOOKUP_BATCH: usize = 10_000;

impl Clusters {
    /// The number of clusters.
    pub fn len(&self) -> usize {
        self.clusters.len()
    }

    /// Whether there is no cluster (no pair of near-duplicates).
    pub fn is_empty(&self) -> bool {
        self.clusters.is_empty()
    }

    /// The clusters, sorted by id.
    pub fn iter(&self) -> std::slice::Iter<'_, Cluster> {
        self.clusters.iter()
    }

    /// The number of documents in some cluster.
    pub fn documents(&self) -> usize {
        self.member_index.len()
    }

    /// The cluster holding document `id`, if it has a near-duplicate.
    pub fn cluster_of(&self, id: u64) -> Option<&Cluster> {
        let at = self
            .member_index
            .binary_search_by_key(&id, |&(m, _)| m)
            .ok()?;
        self.member_index
            .get(at)
            .and_then(|&(_, c)| self.clusters.get(c))
    }

    /// Every member that is not its cluster's representative, sorted: the documents to drop.
    pub fn drop_ids(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .clusters
            .iter()
            .flat_map(|c| {
                c.members
                    .iter()
                    .copied()
                    .filter(move |&m| m != c.representative)
            })
            .collect();
        ids.sort_unstable();
        ids
    }

    /// The external key of member `id`, once [`Clusters::choose_representatives`] has read
    /// the documents.
    pub fn key(&self, id: u64) -> Option<&str> {
        self.keys.get(&id).map(String::as_str)
    }

    /// [`Clusters::choose_representatives`] over the store's documents `stored`.
    pub(crate) fn choose_representatives_in(
        &mut self,
        stored: &Docs<'_>,
        rule: Representative,
    ) -> Result<()> {
        let mut docs: HashMap<u64, Document> = HashMap::with_capacity(self.member_index.len());
        let mut ids = Vec::with_capacity(LOOKUP_BATCH);
        for batch in self.member_index.chunks(LOOKUP_BATCH) {
            ids.clear();
            ids.extend(batch.iter().map(|&(id, _)| id));
            for (&id, doc) in ids.iter().zip(stored.multi_get(&ids, "read")?) {
                if let Some(doc) = doc {
                    docs.insert(id, doc);
                }
            }
        }
        for cluster in &mut self.clusters {
            let best = match rule {
                Representative::LowestId => cluster.members.first().copied(),
                Representative::Longest => cluster.members.iter().copied().max_by_key(|id| {
                    (
                        docs.get(id).and_then(|d| d.text_len).unwrap_or(0),
                        std::cmp::Reverse(*id),
                    )
                }),
                Representative::FirstLoaded => cluster
                    .members
                    .iter()
                    .copied()
                    .min_by_key(|id| (docs.get(id).map_or(u64::MAX, |d| d.added), *id)),
            };
            cluster.representative = best.unwrap_or(cluster.id);
        }
        self.keys = docs
            .into_iter()
            .filter_map(|(id, d)| Some((id, d.key?)))
            .collect();
        Ok(())
    }

    /// `(size, number of clusters of that size)`, by size.
    pub fn size_distribution(&self) -> Vec<(usize, u64)> {
        let mut sizes: Vec<usize> = self.clusters.iter().map(|c| c.members.len()).collect();
        sizes.sort_unstable();
        sizes
            .chunk_by(|a, b| a == b)
            .map(|run| (run[0], run.len() as u64))
            .collect()
    }
}

impl<'a> IntoIterator for &'a Clusters {
    type Item = &'a Cluster;
    type IntoIter = std::slice::Iter<'a, Cluster>;

    fn into_iter(self) -> Self::IntoIter {
        self.clusters.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_and_lookup() {
        let mut b = ClusterBuilder::new();
        for (x, y) in [(5, 9), (1, 2), (9, 100), (2, 3), (100, 5)] {
            b.add_pair(x, y);
        }
        let c = b.finish();
        assert_eq!(c.len(), 2);
        assert_eq!(c.documents(), 6);
        assert_eq!(c.cluster_of(100).map(|c| c.id), Some(5));
        assert_eq!(
            c.cluster_of(3).map(|c| c.members.clone()),
            Some(vec![1, 2, 3])
        );
        assert_eq!(c.cluster_of(4), None);
        assert_eq!(c.drop_ids(), [2, 3, 9, 100]);
        assert_eq!(c.size_distribution(), [(3, 2)]);
    }

    #[test]
    fn representative_names_round_trip() {
        for name in Representative::NAMES {
            assert_eq!(name.parse::<Representative>().unwrap().to_string(), name);
        }
        assert!(matches!(
            "biggest".parse::<Representative>(),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn empty_builder_gives_no_cluster() {
        let c = ClusterBuilder::new().finish();
        assert!(c.is_empty());
        assert!(c.drop_ids().is_empty());
    }
}
