//! How documents spread over the groups of the block families, and what that costs a query.
//!
//! A query at `k <= 3` reads, in each of the four block families, the group of documents whose
//! 16-bit block equals the query's. With uniformly random fingerprints a group holds about
//! `documents / 65536` of them; real fingerprints have biased bits and templated pages, so
//! some block values are shared by many more documents and a query drawn like the documents
//! lands in large groups more often than a uniform one would.
//!
//! [`BlockGroups`] counts the documents of every group and measures that:
//!
//! - the **shared-block factor** of a block: how much more often two documents share that
//!   block's value than two uniform random fingerprints, `65536 * sum c(c-1) / (n(n-1))` over
//!   the group sizes `c` of `n` documents (1 for uniform fingerprints);
//! - the **expected scan** of a block: the entries a fresh query drawn like the documents
//!   reads in that family, `sum c(c-1) / (n-1)` (a query lands in a group of size `c` with
//!   probability `c / n`; `c - 1` rather than `c` because a fresh query is not one of the
//!   documents): `factor * n / 65536`, against `n / 65536` for uniform fingerprints. A group
//!   written *split* (format 9, [`crate::StoreBuilder::split_groups_above`]) is read by parts
//!   of its other 48 bits: a query scans about `4 / 4096` of it (taking its entries to spread
//!   evenly over each part's 4,096 values), `c * 4 (c-1) / 4096` in the sum.
//!
//! ```
//! use simhash_store::groups::BlockGroups;
//! use simhash_store::Fingerprint;
//! // 1,000 documents sharing block 0 (0xabcd), 1,000 spread over other values.
//! let fps = (0..2_000u64).map(|i| {
//!     let high = if i < 1_000 { 0xabcd } else { i * 31 };
//!     Fingerprint((high << 48) | (i * 0x9e37_79b9) & 0xffff_ffff_ffff)
//! });
//! let groups = BlockGroups::from_fingerprints(fps);
//! assert_eq!(groups.largest(0, 1), vec![(0xabcd, 1_000)]);
//! assert!(groups.shared_block_factor(0) > 10_000.0);
//! ```

use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::store::Store;
use crate::Result;

/// Values of one 16-bit block.
const VALUES: usize = 1 << 16;

/// Groups of more documents than this are looked up by
/// [`BlockGroups::mark_split_groups`]: a group of one chunk (4,096 entries) or less is never
/// worth splitting.
const SPLIT_CANDIDATE: u64 = 4096;

/// Part values of a split group's parts (`pigeonhole::PART_VALUES`), of which a query reads
/// one in each of the four parts.
const SPLIT_SHARE: f64 = 4.0 / 4096.0;

/// The size of every group of every block family.
#[derive(Clone, Debug)]
pub struct BlockGroups {
    documents: u64,
    /// `BLOCKS * VALUES` counts, block by block.
    sizes: Vec<u64>,
    /// Whether each group is written split, as far as [`BlockGroups::mark_split_groups`]
    /// found.
    split: Vec<bool>,
}

impl Default for BlockGroups {
    fn default() -> Self {
        BlockGroups::new()
    }
}

impl BlockGroups {
    /// No documents yet; [`add`](Self::add) counts them.
    pub fn new() -> BlockGroups {
        BlockGroups {
            documents: 0,
            sizes: vec![0; BLOCKS * VALUES],
            split: vec![false; BLOCKS * VALUES],
        }
    }

    /// Counts one more document.
    pub fn add(&mut self, fingerprint: Fingerprint) {
        self.documents += 1;
        for (b, value) in fingerprint.blocks().into_iter().enumerate() {
            self.sizes[b * VALUES + usize::from(value)] += 1;
        }
    }

    /// Counts the groups of `fingerprints` (one per document).
    pub fn from_fingerprints(fingerprints: impl IntoIterator<Item = Fingerprint>) -> BlockGroups {
        let mut groups = BlockGroups::new();
        for fp in fingerprints {
            groups.add(fp);
        }
        groups
    }

    /// Counts the groups of every document of `store` (one pass over its documents, from a
    /// snapshot), and marks those written split ([`mark_split_groups`](Self::mark_split_groups)).
    ///
    /// # Errors
    /// RocksDB fails or a document does not decode.
    pub fn of_store(store: &Store) -> Result<BlockGroups> {
        let mut groups = BlockGroups::new();
        for item in store.documents()? {
            groups.add(item?.1.fingerprint);
        }
        groups.mark_split_groups(store)?;
        Ok(groups)
    }

    /// Marks which of the groups counted, of more than 4,096 documents each, `store` holds
    /// written split (format 9): a few reads each.
    ///
    /// # Errors
    /// RocksDB fails.
    pub fn mark_split_groups(&mut self, store: &Store) -> Result<()> {
        let view = store.view();
        for (at, &c) in self.sizes.iter().enumerate() {
            if c > SPLIT_CANDIDATE {
                let (i, value) = (at / VALUES, (at % VALUES) as u16);
                self.split[at] = store
                    .postings()
                    .is_split(store.blocks_db(), &view, i, value)?;
            }
        }
        Ok(())
    }

    /// How many groups of block `block` are written split, as far as
    /// [`mark_split_groups`](Self::mark_split_groups) found.
    ///
    /// # Panics
    /// If `block >= 4`.
    pub fn split_groups(&self, block: usize) -> u64 {
        assert!(block < BLOCKS, "block index {block} out of range 0..4");
        self.split[block * VALUES..(block + 1) * VALUES]
            .iter()
            .filter(|&&s| s)
            .count() as u64
    }

    /// The share of the documents in the largest group of block `block` (0 with none).
    ///
    /// # Panics
    /// If `block >= 4`.
    pub fn largest_share(&self, block: usize) -> f64 {
        let max = self.sizes(block).iter().copied().max().unwrap_or(0);
        if self.documents == 0 {
            0.0
        } else {
            max as f64 / self.documents as f64
        }
    }

    /// The number of documents counted.
    pub fn documents(&self) -> u64 {
        self.documents
    }

    /// The size of each of the 65536 groups of block `block` (0..4), by value.
    ///
    /// # Panics
    /// If `block >= 4`.
    pub fn sizes(&self, block: usize) -> &[u64] {
        assert!(block < BLOCKS, "block index {block} out of range 0..4");
        &self.sizes[block * VALUES..(block + 1) * VALUES]
    }

    /// The `top` largest groups of block `block`, `(value, size)`, largest first (ties by
    /// value); empty groups are left out.
    ///
    /// # Panics
    /// If `block >= 4`.
    pub fn largest(&self, block: usize, top: usize) -> Vec<(u16, u64)> {
        let mut groups: Vec<(u16, u64)> = self
            .sizes(block)
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .map(|(v, &c)| (v as u16, c))
            .collect();
        groups.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        groups.truncate(top);
        groups
    }

    /// How much more often two documents share block `block`'s value than two uniformly random
    /// fingerprints: `65536 * sum c(c-1) / (n(n-1))`. About 1 for uniform fingerprints; 0 with
    /// fewer than two documents.
    ///
    /// # Panics
    /// If `block >= 4`.
    pub fn shared_block_factor(&self, block: usize) -> f64 {
        let n = self.documents as f64;
        if self.documents < 2 {
            return 0.0;
        }
        VALUES as f64 * self.pairs(block) / (n * (n - 1.0))
    }

    /// Entries of block family `block` that a fresh query drawn like the documents scans, on
    /// average: `sum c(c-1) / (n-1)`, a split group's term `c * 4 (c-1) / 4096`.
    ///
    /// # Panics
    /// If `block >= 4`.
    pub fn expected_scan(&self, block: usize) -> f64 {
        if self.documents < 2 {
            return 0.0;
        }
        let range = block * VALUES..(block + 1) * VALUES;
        let scanned: f64 = self.sizes[range.clone()]
            .iter()
            .zip(&self.split[range])
            .map(|(&c, &split)| {
                let others = c.saturating_sub(1) as f64;
                c as f64 * if split { others * SPLIT_SHARE } else { others }
            })
            .sum();
        scanned / (self.documents as f64 - 1.0)
    }

    /// Entries a `k <= 3` query drawn like the documents scans in the four families together,
    /// on average: the sum of [`expected_scan`](Self::expected_scan).
    pub fn expected_scan_per_query(&self) -> f64 {
        (0..BLOCKS).map(|b| self.expected_scan(b)).sum()
    }

    /// The same for uniformly random fingerprints of as many documents: `4 * n / 65536`.
    pub fn uniform_scan_per_query(&self) -> f64 {
        BLOCKS as f64 * self.documents as f64 / VALUES as f64
    }

    /// `sum c(c-1)` over the groups of block `block`: ordered pairs of documents sharing it.
    fn pairs(&self, block: usize) -> f64 {
        self.sizes(block)
            .iter()
            .map(|&c| c as f64 * c.saturating_sub(1) as f64)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SplitMix64 from `seed`.
    fn random(n: u64, seed: u64) -> Vec<Fingerprint> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                Fingerprint(z ^ (z >> 31))
            })
            .collect()
    }

    #[test]
    fn uniform_fingerprints_have_a_factor_near_one() {
        let groups = BlockGroups::from_fingerprints(random(1_000_000, 7));
        for b in 0..BLOCKS {
            let f = groups.shared_block_factor(b);
            assert!((0.95..=1.05).contains(&f), "block {b}: factor {f}");
        }
        let ratio = groups.expected_scan_per_query() / groups.uniform_scan_per_query();
        assert!((0.95..=1.05).contains(&ratio), "scan ratio {ratio}");
    }

    #[test]
    fn a_planted_crowded_value_is_the_largest_group() {
        // 10% of 200,000 documents share block 1 (0x0bad).
        let fps = random(200_000, 3).into_iter().enumerate().map(|(i, fp)| {
            if i % 10 == 0 {
                Fingerprint((fp.0 & !(0xffff << 32)) | (0x0bad << 32))
            } else {
                fp
            }
        });
        let groups = BlockGroups::from_fingerprints(fps);
        let top = groups.largest(1, 2);
        assert_eq!(top[0].0, 0x0bad);
        assert!(top[0].1 >= 20_000, "{top:?}");
        assert!(top[1].1 < 30, "{top:?}");
        // One pair in 100 shares the value: 65536 / 100 = 655 times uniform.
        let f = groups.shared_block_factor(1);
        assert!((600.0..=720.0).contains(&f), "factor {f}");
        assert!(groups.shared_block_factor(0) < 1.1);
        // A query drawn like the documents lands there one time in ten and scans 20,000.
        let scan = groups.expected_scan(1);
        assert!((1_900.0..=2_100.0).contains(&scan), "scan {scan}");
    }

    #[test]
    fn empty_and_single_stores() {
        let none = BlockGroups::from_fingerprints([]);
        assert_eq!(none.documents(), 0);
        assert_eq!(none.shared_block_factor(0), 0.0);
        assert_eq!(none.expected_scan_per_query(), 0.0);
        assert!(none.largest(3, 5).is_empty());
        let one = BlockGroups::from_fingerprints([Fingerprint(7)]);
        assert_eq!(one.largest(3, 5), vec![(7, 1)]);
        assert_eq!(one.shared_block_factor(3), 0.0);
    }
}
