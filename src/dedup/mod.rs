//! Deduplicating a whole store: every pair of documents within distance `k`
//! ([`Store::pairs`]), their connected components ([`ClusterBuilder`], [`Clusters`]) with one
//! representative kept per cluster, the numbers of a run ([`DedupSummary`]), and the online
//! form, check-then-insert ([`Store::insert_if_new`], [`Store::insert_batch_if_new`], and
//! [`StagedBatch`] for upserts and checks decided one by one and committed together).
//! Writing the results to files is the command line's (`simhash-store dedup`).
//!
//! ## All pairs
//! Each block family is already sorted by its block value, so one sequential pass per family
//! groups the documents by block value and compares the fingerprints within each group. For
//! `k <= 3` two near-duplicates share at least one block exactly, and the pair is reported by
//! the *first* family in which they do: no global set of seen pairs is needed. For larger `k`
//! the scan generalises the query's multi-index probing: with `r = k / 4`, a pair has at least
//! one block within `r` bits, and family *i* compares each group `v` with itself and with
//! every group `w > v` within `r` bits of `v` (a seek per neighbour); the first family whose
//! blocks are within `r` reports the pair.
//!
//! A group is read whole (16 bytes per document; a worker holds one group and, for `k >= 4`,
//! its neighbour groups) and compared in chunks ([`PairScan::chunk_size`]): each chunk with
//! itself and with the rest of the group, chunk by chunk. Two large chunks are not compared
//! all-against-all: the 48
//! bits outside the shared block are split into `k + 1` sub-blocks, a pair within `k` bits
//! shares one of them exactly (pigeonhole again), and the chunks are joined on each sub-block.

mod clusters;
mod kernel;
mod pairs;
pub mod partition;
mod summary;

pub use clusters::{Cluster, ClusterBuilder, Clusters, Representative};
pub use kernel::PairKernel;
pub(crate) use pairs::ScanSource;
pub use pairs::{PairScan, ScanProgress, ScanStats};
pub use summary::DedupSummary;
// Check-then-insert is a write of the store's (src/store/write/staged.rs), named here too
// through the crate root's re-export: an alias, not a use of the store by this module.
#[cfg(doc)]
use crate::Store;
pub use crate::{InsertOutcome, KeyHolder, StagedBatch};

/// Two documents within the scanned distance of each other: `a < b`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Pair {
    /// The smaller document id.
    pub a: u64,
    /// The larger document id.
    pub b: u64,
    /// Hamming distance between their fingerprints.
    pub distance: u32,
}

impl Pair {
    /// The pair of `x` and `y` (in either order) at `distance`.
    #[inline]
    pub fn new(x: u64, y: u64, distance: u32) -> Pair {
        if x <= y {
            Pair {
                a: x,
                b: y,
                distance,
            }
        } else {
            Pair {
                a: y,
                b: x,
                distance,
            }
        }
    }
}
