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
//!
//! A query uses the general form of the rule (Qin et al., "GPH: Similarity Search in Hamming
//! Space", ICDE 2018): the families' radii need not be equal, only add up to `k - 3`. If the
//! blocks of two fingerprints differed by more than `r_i` bits in every family `i`, they
//! would differ in at least `sum(r_i) + 4 = k + 1` bits. So family `i` reads the groups within
//! [`query_radii`]`(k)[i] = (k - i) / 4` bits (none for a negative radius): at `k = 6` radii
//! 1, 1, 1, 0, 52 groups instead of 68; at `k = 4` 20 instead of 68; at `k = 0` family
//! `block0` alone. A document is reported by the first family whose blocks are within that
//! family's radius ([`query_reporting_family`]).

use std::sync::LazyLock;

/// Blocks per fingerprint: block families per store.
pub const BLOCKS: usize = 4;

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

/// The radius of each family for a query at distance `k`, [`None`] for a family the query
/// does not read: `(k - i) / 4` for family `i` when `k >= i`. They add up to `k - 3`
/// (counting `None` as -1), the least the general pigeonhole rule allows, and the larger
/// radii go to the first families.
pub fn query_radii(k: u32) -> [Option<u32>; BLOCKS] {
    std::array::from_fn(|i| k.checked_sub(i as u32).map(|rest| rest / BLOCKS as u32))
}

/// The family that reports a document `x` to a query `y` read with `radii`
/// ([`query_radii`]): the first whose blocks differ in at most its radius; `None` if there is
/// none (then `x` and `y` are more than `k` bits apart).
#[inline]
pub fn query_reporting_family(x: u64, y: u64, radii: &[Option<u32>; BLOCKS]) -> Option<usize> {
    let z = x ^ y;
    (0..BLOCKS).find(|&i| radii[i].is_some_and(|r| block(z, i).count_ones() <= r))
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

/// The position of block `i`'s lowest bit: block 0 is bits 63..48, block 3 bits 15..0.
#[inline]
const fn block_shift(i: usize) -> u32 {
    BLOCK_BITS * (BLOCKS - 1 - i) as u32
}

/// Block `i` (0 the most significant) of `x`: the group `x` is in, in family `i`.
#[inline]
pub const fn block(x: u64, i: usize) -> u16 {
    (x >> block_shift(i)) as u16
}

/// Block value `value` in the place of block `i` within a fingerprint.
#[inline]
pub const fn placed(value: u16, i: usize) -> u64 {
    (value as u64) << block_shift(i)
}

/// The bits of block `i` within a fingerprint.
#[inline]
pub const fn block_mask(i: usize) -> u64 {
    0xffff << block_shift(i)
}

/// Block `i` of `x` and its remainder: the other three blocks in order, as a 48-bit number
/// (what a group stores of each document).
#[inline]
pub const fn split(x: u64, i: usize) -> (u16, u64) {
    let shift = block_shift(i);
    let low = x & ((1 << shift) - 1);
    let high = match x.checked_shr(shift + BLOCK_BITS) {
        Some(high) => high,
        None => 0,
    };
    (block(x, i), (high << shift) | low)
}

/// The fingerprint whose block `i` is `value` and whose remainder ([`split`]) is `remainder`.
#[inline]
pub const fn join(i: usize, value: u16, remainder: u64) -> u64 {
    let shift = block_shift(i);
    let low = remainder & ((1 << shift) - 1);
    let high = match (remainder >> shift).checked_shl(shift + BLOCK_BITS) {
        Some(high) => high,
        None => 0,
    };
    high | placed(value, i) | low
}

/// The `k + 1` sub-blocks of the 48 bits outside block `family`: near-equal runs of those
/// bits, lowest first (sub-blocks past the 48th are empty). Two fingerprints within `k` bits
/// whose blocks `family` are equal or close differ in at most `k` of these bits, so they are
/// equal on at least one sub-block: the pair kernel joins on them, and the Spark and Ray
/// planner splits crowded groups on them.
pub fn sub_block_masks(k: u32, family: usize) -> Vec<u64> {
    let subs = k + 1;
    let outside = !block_mask(family);
    let positions: Vec<u32> = (0..64).filter(|b| outside & (1u64 << b) != 0).collect();
    let (base, extra) = (positions.len() as u32 / subs, positions.len() as u32 % subs);
    let mut masks = Vec::with_capacity(subs as usize);
    let mut at = 0usize;
    for t in 0..subs {
        let width = (base + u32::from(t < extra)) as usize;
        let end = (at + width).min(positions.len());
        masks.push(positions[at..end].iter().fold(0u64, |m, b| m | (1u64 << b)));
        at = end;
    }
    masks
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

/// Parts of a remainder in a split group (`src/postings/write.rs`): its 48 bits as four
/// 12-bit *parts*, the most significant first. The rule of the blocks holds for the parts: two
/// remainders within `d` bits are, in some part `j`, within [`query_radii`]`(d)[j]` bits
/// (equal on one part when `d <= 3`). So a group too large to scan is kept four times, once
/// ordered by each part, and a query with `d` bits left for the remainder reads in copy `j`
/// only the part values within that radius ([`part_values_within`], [`reporting_part`]).
pub const PARTS: usize = 4;
/// Bits per part of a remainder.
pub const PART_BITS: u32 = 12;
/// Values of one part.
pub const PART_VALUES: usize = 1 << PART_BITS;
/// The most part values a read of a split group takes by parts ([`part_values_within`] over
/// the [`query_radii`] of its remainder's budget); beyond (a budget of 12 bits or more) the
/// copy of part 0 is read whole.
pub const MAX_PART_VALUES_READ: usize = 512;

/// Part `j` (0..4, the most significant first) of a 48-bit `remainder`.
#[inline]
pub const fn part(remainder: u64, j: usize) -> u16 {
    ((remainder >> (PART_BITS * (PARTS - 1 - j) as u32)) & (PART_VALUES as u64 - 1)) as u16
}

/// The part values within `radius` bits of `sub` (a 12-bit part value), ascending.
pub fn part_values_within(sub: u16, radius: u32) -> Vec<u16> {
    let mut values: Vec<u16> = masks(radius)
        .iter()
        .take_while(|&&m| usize::from(m) < PART_VALUES)
        .map(|m| sub ^ m)
        .collect();
    values.sort_unstable();
    values
}

/// The part that reports remainder `x` to a query of remainder `y` read with `radii`
/// ([`query_radii`] of the bits left for the remainder, over the four parts as over the four
/// blocks): the first whose values differ in at most its radius; `None` if there is none
/// (then `x` and `y` differ in more than those bits).
#[inline]
pub fn reporting_part(x: u64, y: u64, radii: &[Option<u32>; PARTS]) -> Option<usize> {
    (0..PARTS).find(|&j| radii[j].is_some_and(|r| (part(x, j) ^ part(y, j)).count_ones() <= r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn split_and_join_are_inverse(x in any::<u64>(), i in 0..BLOCKS) {
            let (value, remainder) = split(x, i);
            prop_assert_eq!(value, block(x, i));
            prop_assert!(remainder < 1 << 48);
            prop_assert_eq!(join(i, value, remainder), x);
            // The remainder is the other blocks, most significant first.
            let others: Vec<u16> = (0..BLOCKS).filter(|&j| j != i).map(|j| block(x, j)).collect();
            let want = others.iter().fold(0u64, |r, &b| r << 16 | u64::from(b));
            prop_assert_eq!(remainder, want);
            prop_assert_eq!(u64::from(block(x, i)) << block_shift(i), x & block_mask(i));
        }

        /// Parts cover the remainder, and two remainders within 3 bits are equal on the part
        /// that reports them.
        #[test]
        fn remainders_within_d_bits_have_a_part_within_its_radius(
            x in 0u64..1 << 48,
            d in 0u32..=16,
            seed: u64,
        ) {
            let joined = (0..PARTS).fold(0u64, |r, j| r << PART_BITS | u64::from(part(x, j)));
            prop_assert_eq!(joined, x);
            // `d` distinct bits of the 48 flipped.
            let mut bits: Vec<u32> = (0..48).collect();
            let mut state = seed;
            for i in (1..bits.len()).rev() {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                bits.swap(i, (state >> 33) as usize % (i + 1));
            }
            let y = bits[..d as usize].iter().fold(x, |y, &b| y ^ (1u64 << b));
            let radii = query_radii(d);
            let j = reporting_part(x, y, &radii);
            prop_assert!(j.is_some());
            let j = j.unwrap();
            let r = radii[j].unwrap();
            prop_assert!((part(x, j) ^ part(y, j)).count_ones() <= r);
            prop_assert!(part_values_within(part(y, j), r).binary_search(&part(x, j)).is_ok());
            prop_assert!(part_values_within(part(y, j), r).iter().all(|&v| usize::from(v) < PART_VALUES));
        }

        /// The sub-blocks split the bits outside the block, and two fingerprints within `k`
        /// of those bits are equal on one of them.
        #[test]
        fn fingerprints_within_k_share_a_sub_block(
            x in any::<u64>(), k in 0u32..12, family in 0..BLOCKS, seed in any::<u64>(), d in 0u32..12
        ) {
            let masks = sub_block_masks(k, family);
            prop_assert_eq!(masks.len(), k as usize + 1);
            prop_assert_eq!(masks.iter().fold(0u64, |a, m| a | m), !block_mask(family));
            for (a, m) in masks.iter().enumerate() {
                for n in &masks[a + 1..] {
                    prop_assert_eq!(m & n, 0);
                }
            }
            let y = flip(x, d.min(k), seed) & !block_mask(family) | x & block_mask(family);
            prop_assert!(masks.iter().any(|m| (x ^ y) & m == 0), "{:x} {:x}", x, y);
        }
    }

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

    #[test]
    fn query_radii_add_up_to_k_minus_3() {
        assert_eq!(query_radii(0), [Some(0), None, None, None]);
        assert_eq!(query_radii(2), [Some(0), Some(0), Some(0), None]);
        assert_eq!(query_radii(3), [Some(0); 4]);
        assert_eq!(query_radii(4), [Some(1), Some(0), Some(0), Some(0)]);
        assert_eq!(query_radii(6), [Some(1), Some(1), Some(1), Some(0)]);
        assert_eq!(query_radii(7), [Some(1); 4]);
        for k in 0..=64u32 {
            let sum: i64 = query_radii(k).iter().map(|r| r.map_or(-1, i64::from)).sum();
            assert_eq!(sum, i64::from(k) - 3, "k={k}");
        }
        let groups = |k| -> usize {
            query_radii(k)
                .iter()
                .flatten()
                .map(|&r| masks(r).len())
                .sum()
        };
        assert_eq!(
            (0..=7).map(groups).collect::<Vec<_>>(),
            [1, 2, 3, 4, 20, 36, 52, 68]
        );
    }

    proptest! {
        /// A query finds every document within `k` in exactly one family, at every distance
        /// up to `k` and beyond, with the differing bits spread or crowded into one block.
        #[test]
        fn every_document_within_k_is_reported_once_by_a_query(
            x: u64, d in 0u32..=64, seed: u64, k in 0u32..=64, crowd: bool, b in 0usize..BLOCKS,
        ) {
            let y = if crowd && d <= 16 {
                // All `d` differing bits in block `b`: the skewed case.
                let mask = (1u64 << d).wrapping_sub(1) as u16;
                x ^ (u64::from(mask) << (BLOCK_BITS as usize * (BLOCKS - 1 - b)))
            } else {
                flip(x, d, seed)
            };
            let radii = query_radii(k);
            let found: Vec<usize> = (0..BLOCKS)
                .filter(|&i| {
                    radii[i].is_some_and(|r| masks(r).contains(&(block(x, i) ^ block(y, i))))
                })
                .collect();
            if (x ^ y).count_ones() <= k {
                prop_assert!(!found.is_empty(), "{x:016x} {y:016x} k={k}: not found");
                prop_assert_eq!(query_reporting_family(x, y, &radii), Some(found[0]));
            } else {
                prop_assert_eq!(query_reporting_family(x, y, &radii), found.first().copied());
            }
        }

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
