//! The pigeonhole rule, on which every exact answer rests: queries (`src/query.rs`,
//! `src/postings/probe.rs`), the pair scan (`src/dedup/pairs.rs`), the pair kernel
//! (`src/dedup/kernel.rs`) and the Spark planner (through [`PairKernel`](crate::dedup::PairKernel))
//! all call this module.
//!
//! A 64-bit fingerprint is four 16-bit blocks, one block family each ([`BLOCKS`] families of
//! [`BLOCK_VALUES`] groups, [`GROUPS`] in all). If two fingerprints differ in at most `k`
//! bits, then in at least one family their blocks differ in at most [`radius`]`(k) = k / 4`
//! bits (four blocks of more than `k / 4` differing bits each would make more than `k`). So:
//! - a query of `q` at distance `k` reads, in each family `i`, the groups whose value is
//!   within the radius of `q`'s block `i`: `block ^ m` for every mask `m` of [`masks`]
//!   (one group when `k <= 3`), and finds every document within `k`;
//! - the pair scan compares each group with itself and with its neighbours `v ^ m` for the
//!   non-zero masks ([`neighbour_masks`]), and finds every pair within `k`;
//! - a document or pair found in several families is *reported* by one only: the first
//!   family whose blocks are within the radius ([`reporting_family`], [`reports`]). So it is
//!   reported exactly once, with no set of the pairs seen so far.

use std::sync::LazyLock;

pub use crate::fingerprint::BLOCKS;

/// Bits per block.
pub const BLOCK_BITS: u32 = 16;
/// Values of one block: groups per family.
pub const BLOCK_VALUES: usize = 1 << BLOCK_BITS;
/// Groups over all families: `BLOCKS * BLOCK_VALUES`; group `family * BLOCK_VALUES + value`.
pub const GROUPS: usize = BLOCKS * BLOCK_VALUES;

/// `k / 4`: two fingerprints within `k` bits have, in at least one family, blocks within this
/// many bits.
pub const fn radius(k: u32) -> u32 {
    k / BLOCKS as u32
}

/// For each radius r in 0..=16, the 16-bit masks with at most r bits set, ascending.
static MASKS: LazyLock<Vec<Vec<u16>>> = LazyLock::new(|| {
    (0..=BLOCK_BITS)
        .map(|r| (0..=u16::MAX).filter(|m| m.count_ones() <= r).collect())
        .collect()
});

/// The 16-bit masks of at most `radius` bits, ascending: `0` first, then the
/// [`neighbour_masks`]. A query reads group `block ^ m` for each.
pub fn masks(radius: u32) -> &'static [u16] {
    &MASKS[radius.min(BLOCK_BITS) as usize]
}

/// The block values within `radius` bits of `block`, ascending: the groups a query whose block
/// in a family is `block` reads there (`block ^ m` for each of the [`masks`]).
pub fn values_within(block: u16, radius: u32) -> Vec<u16> {
    let mut values: Vec<u16> = masks(radius).iter().map(|m| block ^ m).collect();
    values.sort_unstable();
    values
}

/// The non-zero 16-bit masks of at most `radius` bits, ascending (empty for radius 0): the
/// pair scan compares group `v` with group `v ^ m` for each.
pub fn neighbour_masks(radius: u32) -> &'static [u16] {
    &masks(radius)[1..]
}

/// Block `i` (0 the most significant) of `x`.
#[inline]
fn block(x: u64, i: usize) -> u16 {
    (x >> (BLOCK_BITS as usize * (BLOCKS - 1 - i))) as u16
}

/// The family that reports the pair `x`, `y` at `radius`: the first whose blocks differ in at
/// most `radius` bits; `None` if there is none (the pair is then more than `4 * radius + 3`
/// bits apart).
#[inline]
pub fn reporting_family(x: u64, y: u64, radius: u32) -> Option<usize> {
    let z = x ^ y;
    (0..BLOCKS).find(|&i| block(z, i).count_ones() <= radius)
}

/// Whether family `family`, whose blocks of `x` and `y` are known to be within `radius`,
/// reports the pair: no earlier family has its blocks within `radius`. Equal to
/// `reporting_family(x, y, radius) == Some(family)` in that case, and cheaper.
#[inline]
pub fn reports(family: usize, x: u64, y: u64, radius: u32) -> bool {
    let z = x ^ y;
    (0..family).all(|j| block(z, j).count_ones() > radius)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn masks_count_binomial_sums() {
        assert_eq!(masks(0), [0]);
        assert_eq!(masks(1).len(), 17);
        assert_eq!(masks(2).len(), 137);
        assert_eq!(masks(16).len(), 65536);
        assert!(neighbour_masks(0).is_empty());
        assert_eq!(neighbour_masks(1).len(), 16);
        assert!(masks(3).windows(2).all(|w| w[0] < w[1]));
        assert_eq!(GROUPS, 4 * 65536);
    }

    /// `x` with `d` bits flipped, at positions drawn from `seed`.
    fn flip(x: u64, d: u32, mut seed: u64) -> u64 {
        let mut flips = 0u64;
        while flips.count_ones() < d {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            flips |= 1 << (seed >> 58);
        }
        x ^ flips
    }

    /// Every family that would find the pair `x`, `y` by probing: its blocks within `radius`.
    fn finders(x: u64, y: u64, radius: u32) -> Vec<usize> {
        (0..BLOCKS)
            .filter(|&i| masks(radius).contains(&(block(x, i) ^ block(y, i))))
            .collect()
    }

    proptest! {
        /// Every pair within `k` is found by at least one family and reported by exactly one.
        #[test]
        fn every_pair_within_k_is_reported_exactly_once(
            x: u64, d in 0u32..=64, seed: u64, k in 0u32..=64,
        ) {
            let y = flip(x, d, seed);
            let r = radius(k);
            let found = finders(x, y, r);
            let reporting: Vec<usize> =
                found.iter().copied().filter(|&i| reports(i, x, y, r)).collect();
            if (x ^ y).count_ones() <= k {
                prop_assert!(!found.is_empty(), "{x:016x} {y:016x} k={k}: not found");
                prop_assert_eq!(reporting.len(), 1);
                prop_assert_eq!(Some(reporting[0]), reporting_family(x, y, r));
                prop_assert_eq!(reporting_family(y, x, r), reporting_family(x, y, r));
            }
            prop_assert!(reporting.len() <= 1);
        }
    }
}
