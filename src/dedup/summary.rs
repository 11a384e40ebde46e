//! The numbers of a deduplication run: counts, the distance histogram and the cluster-size
//! distribution, which people look at to choose `k`.

use serde::Serialize;

use crate::dedup::clusters::Clusters;
use crate::dedup::pairs::ScanStats;

/// How many of the largest cluster sizes a summary lists.
const LARGEST: usize = 10;

/// What a deduplication found: counts, pairs per distance, cluster sizes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DedupSummary {
    /// The distance scanned for.
    pub k: u32,
    /// Documents in the store.
    pub documents: u64,
    /// Pairs within `k`.
    pub pairs: u64,
    /// `pairs_per_distance[d]`: pairs at distance `d`, for `d` in `0..=k`.
    pub pairs_per_distance: Vec<u64>,
    /// Clusters (of two or more documents).
    pub clusters: usize,
    /// Documents in some cluster.
    pub clustered_documents: usize,
    /// Documents to drop (clustered documents that are not their cluster's representative).
    pub dropped: usize,
    /// The sizes of the largest clusters, largest first (at most 10).
    pub largest_clusters: Vec<usize>,
    /// `(size, number of clusters of that size)`, by size.
    pub cluster_sizes: Vec<(usize, u64)>,
}

impl DedupSummary {
    /// The summary of a scan over a store of `documents` documents and its clusters.
    pub fn new(documents: u64, stats: &ScanStats, clusters: &Clusters) -> DedupSummary {
        let mut largest: Vec<usize> = clusters.iter().map(|c| c.members.len()).collect();
        largest.sort_unstable_by(|a, b| b.cmp(a));
        largest.truncate(LARGEST);
        DedupSummary {
            k: stats.k,
            documents,
            pairs: stats.pairs,
            pairs_per_distance: stats.per_distance.clone(),
            clusters: clusters.len(),
            clustered_documents: clusters.documents(),
            dropped: clusters.documents() - clusters.len(),
            largest_clusters: largest,
            cluster_sizes: clusters.size_distribution(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dedup::ClusterBuilder;

    fn summary() -> DedupSummary {
        let mut b = ClusterBuilder::new();
        for (x, y) in [(1, 2), (2, 3), (10, 11)] {
            b.add_pair(x, y);
        }
        let stats = ScanStats {
            k: 3,
            pairs: 3,
            per_distance: vec![1, 0, 2, 0],
            keys_scanned: 400,
        };
        DedupSummary::new(100, &stats, &b.finish())
    }

    #[test]
    fn counts() {
        let s = summary();
        assert_eq!((s.clusters, s.clustered_documents, s.dropped), (2, 5, 3));
        assert_eq!(s.largest_clusters, [3, 2]);
        assert_eq!(s.cluster_sizes, [(2, 1), (3, 1)]);
    }
}
