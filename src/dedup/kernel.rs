//! Comparing the fingerprints of one chunk of documents with itself or with another chunk:
//! the inner loop of the all-pairs scan.
//!
//! Small chunks are compared all against all with a popcount loop. Large ones are joined:
//! the 48 bits outside the family's block are split into `k + 1` sub-blocks, and since two
//! fingerprints within `k` bits differ in at most `k` of those 48 bits, at least one sub-block
//! is equal (pigeonhole). Both chunks are sorted by each sub-block in turn and only equal runs
//! are compared; a pair is reported from the first sub-block on which it is equal, so once.
//! The join turns the `n^2` comparisons of a huge group (templated pages sharing a block) into
//! about `(k + 1) n log n` plus the pairs that really are close.

use std::ops::ControlFlow;

use crate::dedup::Pair;
use crate::fingerprint::BLOCKS;
use crate::pigeonhole;

/// A document in a chunk: (fingerprint, id).
pub(crate) type Doc = (u64, u64);

/// Below this many comparisons the all-against-all loop beats sorting for the join.
pub(crate) const JOIN_MIN_COMPARISONS: usize = 1 << 16;

/// The join is used up to `k + 1 = 12` sub-blocks (4 bits each); beyond that an equal
/// sub-block is too likely by chance for it to pay off.
const MAX_SUB_BLOCKS: u32 = 12;

/// What to compare in block family `family` for distance `k`.
#[derive(Debug, Clone)]
pub(crate) struct Kernel {
    k: u32,
    /// A pair is reported by the first family whose blocks are within `radius` bits.
    radius: u32,
    family: usize,
    /// Masks of the sub-blocks of the 48 bits outside block `family`; empty: never join.
    sub_masks: Vec<u64>,
    /// Comparisons from which the join is used instead of the nested loop.
    join_min: usize,
}

impl Kernel {
    /// The kernel of family `family` (0..4) for distance `k` (0..=64).
    pub(crate) fn new(k: u32, family: usize) -> Kernel {
        Kernel::with_join_min(k, family, JOIN_MIN_COMPARISONS)
    }

    pub(crate) fn with_join_min(k: u32, family: usize, join_min: usize) -> Kernel {
        let sub_masks = if k < MAX_SUB_BLOCKS {
            pigeonhole::sub_block_masks(k, family)
        } else {
            Vec::new()
        };
        Kernel {
            k,
            radius: pigeonhole::radius(k),
            family,
            sub_masks,
            join_min,
        }
    }

    /// Whether this family reports the pair `x`, `y` (already known to be within `k`, and
    /// equal in this family's block): the pigeonhole rule.
    #[inline]
    fn reports(&self, x: u64, y: u64) -> bool {
        pigeonhole::reports(self.family, x, y, self.radius)
    }

    #[inline]
    fn check<F: FnMut(Pair) -> ControlFlow<()>>(
        &self,
        x: Doc,
        y: Doc,
        emit: &mut F,
    ) -> ControlFlow<()> {
        let d = (x.0 ^ y.0).count_ones();
        if d <= self.k && self.reports(x.0, y.0) {
            emit(Pair::new(x.1, y.1, d))?;
        }
        ControlFlow::Continue(())
    }

    /// Whether the pair is equal on a sub-block before `t` (so the join reports it there).
    #[inline]
    fn seen_before(&self, x: u64, y: u64, t: usize) -> bool {
        let z = x ^ y;
        self.sub_masks[..t].iter().any(|m| z & m == 0)
    }

    fn use_join(&self, comparisons: usize) -> bool {
        !self.sub_masks.is_empty() && comparisons >= self.join_min
    }

    /// Every reported pair within `a`. Stops when `emit` breaks.
    pub(crate) fn self_pairs<F: FnMut(Pair) -> ControlFlow<()>>(
        &self,
        a: &[Doc],
        emit: &mut F,
    ) -> ControlFlow<()> {
        if self.use_join(a.len().saturating_mul(a.len()) / 2) {
            return self.self_join(a, emit);
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU has the `popcnt` instruction, checked just above.
            return unsafe { self.nested_self_popcnt(a, emit) };
        }
        self.nested_self(a, emit)
    }

    /// The all-against-all loop within one chunk: the hot loop of the whole scan.
    #[inline(always)]
    fn nested_self<F: FnMut(Pair) -> ControlFlow<()>>(
        &self,
        a: &[Doc],
        emit: &mut F,
    ) -> ControlFlow<()> {
        for (p, &x) in a.iter().enumerate() {
            for &y in &a[p + 1..] {
                if (x.0 ^ y.0).count_ones() <= self.k {
                    self.check(x, y, emit)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// [`Kernel::nested_self`] compiled with the `popcnt` instruction (the default x86-64
    /// target lacks it, and `count_ones` then costs a dozen instructions).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn nested_self_popcnt<F: FnMut(Pair) -> ControlFlow<()>>(
        &self,
        a: &[Doc],
        emit: &mut F,
    ) -> ControlFlow<()> {
        self.nested_self(a, emit)
    }

    #[inline(always)]
    fn nested_cross<F: FnMut(Pair) -> ControlFlow<()>>(
        &self,
        a: &[Doc],
        b: &[Doc],
        emit: &mut F,
    ) -> ControlFlow<()> {
        for &x in a {
            for &y in b {
                if (x.0 ^ y.0).count_ones() <= self.k {
                    self.check(x, y, emit)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// [`Kernel::nested_cross`] compiled with the `popcnt` instruction.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn nested_cross_popcnt<F: FnMut(Pair) -> ControlFlow<()>>(
        &self,
        a: &[Doc],
        b: &[Doc],
        emit: &mut F,
    ) -> ControlFlow<()> {
        self.nested_cross(a, b, emit)
    }

    /// Every reported pair with one document in `a` and the other in `b`.
    pub(crate) fn cross_pairs<F: FnMut(Pair) -> ControlFlow<()>>(
        &self,
        a: &[Doc],
        b: &[Doc],
        emit: &mut F,
    ) -> ControlFlow<()> {
        if self.use_join(a.len().saturating_mul(b.len())) {
            return self.cross_join(a, b, emit);
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU has the `popcnt` instruction, checked just above.
            return unsafe { self.nested_cross_popcnt(a, b, emit) };
        }
        self.nested_cross(a, b, emit)
    }

    fn keyed(docs: &[Doc], mask: u64, out: &mut Vec<(u64, u32)>) {
        out.clear();
        out.extend(docs.iter().enumerate().map(|(p, d)| (d.0 & mask, p as u32)));
        out.sort_unstable();
    }

    fn self_join<F: FnMut(Pair) -> ControlFlow<()>>(
        &self,
        a: &[Doc],
        emit: &mut F,
    ) -> ControlFlow<()> {
        let mut keyed = Vec::with_capacity(a.len());
        for (t, &mask) in self.sub_masks.iter().enumerate() {
            Kernel::keyed(a, mask, &mut keyed);
            for run in keyed.chunk_by(|x, y| x.0 == y.0) {
                for (s, &(_, p)) in run.iter().enumerate() {
                    let x = a[p as usize];
                    for &(_, q) in &run[s + 1..] {
                        let y = a[q as usize];
                        if !self.seen_before(x.0, y.0, t) {
                            self.check(x, y, emit)?;
                        }
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn cross_join<F: FnMut(Pair) -> ControlFlow<()>>(
        &self,
        a: &[Doc],
        b: &[Doc],
        emit: &mut F,
    ) -> ControlFlow<()> {
        let mut ka = Vec::with_capacity(a.len());
        let mut kb = Vec::with_capacity(b.len());
        for (t, &mask) in self.sub_masks.iter().enumerate() {
            Kernel::keyed(a, mask, &mut ka);
            Kernel::keyed(b, mask, &mut kb);
            let mut runs_b = kb.chunk_by(|x, y| x.0 == y.0).peekable();
            for run_a in ka.chunk_by(|x, y| x.0 == y.0) {
                let key = run_a[0].0;
                while runs_b.next_if(|r| r[0].0 < key).is_some() {}
                let Some(run_b) = runs_b.peek() else { break };
                if run_b[0].0 != key {
                    continue;
                }
                for &(_, p) in run_a {
                    let x = a[p as usize];
                    for &(_, q) in run_b.iter() {
                        let y = b[q as usize];
                        if !self.seen_before(x.0, y.0, t) {
                            self.check(x, y, emit)?;
                        }
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// The pair kernel of [`Store::pairs`](crate::Store::pairs) for one block family and one
/// distance `k`: the code the single-machine scan runs on each group of documents, public so
/// that a distributed job (the Python package's `simhash_store.spark`) finds exactly the same
/// pairs, each once.
///
/// A document is `(fingerprint, id)`. The scan works per block family `i` (0..4, block 0 the
/// high 16 bits). With `r = k / 4` (the [radius](PairKernel::radius)), two fingerprints within
/// `k` bits have at least one block within `r` bits of each other (pigeonhole), and the pair
/// is reported by the *first* family whose blocks are within `r`. So a caller that, for every
/// family `i`:
///
/// - groups the documents by the value `v` of block `i`,
/// - calls [`PairKernel::self_pairs`] on each group (or, for a group split into chunks, on
///   each chunk and [`PairKernel::cross_pairs`] on each pair of chunks), and
/// - for `k >= 4`, calls [`PairKernel::cross_pairs`] on group `v` and each group `w > v` with
///   `v ^ w` one of the [`neighbour_masks`](PairKernel::neighbour_masks),
///
/// gets every pair within `k` exactly once over the four families: what [`crate::Store::pairs`]
/// reports for the same documents. Documents must have distinct ids.
///
/// ```
/// use std::ops::ControlFlow;
/// use simhash_store::{pigeonhole, Pair, BLOCKS};
/// use simhash_store::dedup::PairKernel;
///
/// // Equal in blocks 0 and 1, one bit apart in block 3, ids 1 and 2; a third far away.
/// let docs = [(0x1111_2222_3333_4444u64, 1u64), (0x1111_2222_3333_4445, 2), (!0, 3)];
/// let mut found = Vec::new();
/// for family in 0..BLOCKS {
///     let kernel = PairKernel::new(3, family)?;
///     // One group per value of block `family`; here only documents 1 and 2 share one.
///     let group: Vec<(u64, u64)> = docs.iter().copied()
///         .filter(|&(fp, _)| pigeonhole::block(fp, family) == pigeonhole::block(docs[0].0, family))
///         .collect();
///     let _ = kernel.self_pairs(&group, &mut |p| {
///         found.push((family, p));
///         ControlFlow::Continue(())
///     });
/// }
/// // Reported once, by family 0 (the first whose blocks are equal).
/// assert_eq!(found, [(0, Pair { a: 1, b: 2, distance: 1 })]);
/// # Ok::<_, simhash_store::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct PairKernel(Kernel);

impl PairKernel {
    /// The kernel of block family `family` (0..4) for distance `k` (0..=64).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `k` is over 64 or
    /// `family` is not a block family.
    pub fn new(k: u32, family: usize) -> crate::Result<PairKernel> {
        crate::distance::checked(k)?;
        if family >= BLOCKS {
            return Err(crate::Error::InvalidArgument(format!(
                "block family must be in 0..{BLOCKS}, got {family}"
            )));
        }
        Ok(PairKernel(Kernel::new(k, family)))
    }

    /// The distance scanned for.
    pub fn k(&self) -> u32 {
        self.0.k
    }

    /// The block family (0..4) this kernel compares in.
    pub fn family(&self) -> usize {
        self.0.family
    }

    /// `k / 4`: a pair is reported by the first family whose blocks are within this many bits.
    pub fn radius(&self) -> u32 {
        self.0.radius
    }

    /// The non-zero 16-bit masks of at most [`radius`](PairKernel::radius) bits, ascending:
    /// group `v` is compared with group `v ^ m` for each mask `m` where `v ^ m > v`. Empty for
    /// `k <= 3`.
    pub fn neighbour_masks(&self) -> Vec<u16> {
        pigeonhole::neighbour_masks(self.0.radius).to_vec()
    }

    /// Calls `emit` with every pair within `docs` (documents of one group: block
    /// [`family`](PairKernel::family) equal) that this family reports. Stops when `emit`
    /// breaks, and returns what it returned.
    pub fn self_pairs<F: FnMut(Pair) -> ControlFlow<()>>(
        &self,
        docs: &[(u64, u64)],
        emit: &mut F,
    ) -> ControlFlow<()> {
        self.0.self_pairs(docs, emit)
    }

    /// Calls `emit` with every pair of one document of `a` and one of `b` that this family
    /// reports: `a` and `b` are two chunks of one group, or groups `v` and `w` whose block
    /// values differ by a [neighbour mask](PairKernel::neighbour_masks). Stops when `emit`
    /// breaks, and returns what it returned.
    pub fn cross_pairs<F: FnMut(Pair) -> ControlFlow<()>>(
        &self,
        a: &[(u64, u64)],
        b: &[(u64, u64)],
        emit: &mut F,
    ) -> ControlFlow<()> {
        self.0.cross_pairs(a, b, emit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pigeonhole::block_mask;

    fn rng(seed: &mut u64) -> u64 {
        *seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Documents sharing block `family` (like one group), many of them close to each other.
    fn group(seed: u64, n: usize, family: usize) -> Vec<Doc> {
        let mut s = seed;
        let shared = rng(&mut s) & block_mask(family);
        let mut docs: Vec<Doc> = Vec::new();
        for id in 0..n as u64 {
            let fp = if id % 3 == 0 || docs.is_empty() {
                rng(&mut s)
            } else {
                let base = docs[(rng(&mut s) % docs.len() as u64) as usize].0;
                (0..rng(&mut s) % 9).fold(base, |f, _| f ^ (1u64 << (rng(&mut s) % 64)))
            };
            docs.push(((fp & !block_mask(family)) | shared, id * 7 + 1));
        }
        docs
    }

    fn reference(kernel: &Kernel, a: &[Doc], b: Option<&[Doc]>) -> Vec<Pair> {
        let mut out = Vec::new();
        let mut push = |p| {
            out.push(p);
            ControlFlow::Continue(())
        };
        // The nested loop, whatever the sizes.
        let nested = Kernel {
            join_min: usize::MAX,
            ..kernel.clone()
        };
        let _ = match b {
            None => nested.self_pairs(a, &mut push),
            Some(b) => nested.cross_pairs(a, b, &mut push),
        };
        out.sort_unstable();
        out
    }

    #[test]
    fn sub_blocks_partition_the_other_48_bits() {
        for k in 0..=11 {
            for family in 0..BLOCKS {
                let kernel = Kernel::new(k, family);
                assert_eq!(kernel.sub_masks.len(), k as usize + 1);
                let union = kernel.sub_masks.iter().fold(0u64, |u, m| {
                    assert_eq!(u & m, 0, "sub-blocks overlap");
                    u | m
                });
                assert_eq!(union, !block_mask(family));
            }
        }
        assert!(Kernel::new(12, 0).sub_masks.is_empty());
    }

    #[test]
    fn join_equals_nested_loop() {
        for k in [0, 1, 3, 4, 7, 8, 11] {
            // Pairs found over all families (each family only reports some of them).
            let mut found = 0;
            for family in 0..BLOCKS {
                let a = group(k as u64 * 10 + family as u64, 400, family);
                let b = group(k as u64 * 10 + family as u64 + 100, 300, family);
                let mut cross: Vec<Doc> = b.iter().map(|&(fp, id)| (fp, id + 1_000_000)).collect();
                cross.extend(a.iter().take(50).map(|&(fp, id)| (fp ^ 1, id + 2_000_000)));
                let kernel = Kernel::with_join_min(k, family, 0);
                for other in [None, Some(cross.as_slice())] {
                    let mut got = Vec::new();
                    let mut push = |p| {
                        got.push(p);
                        ControlFlow::Continue(())
                    };
                    let _ = match other {
                        None => kernel.self_pairs(&a, &mut push),
                        Some(b) => kernel.cross_pairs(&a, b, &mut push),
                    };
                    got.sort_unstable();
                    let want = reference(&kernel, &a, other);
                    found += want.len();
                    assert_eq!(got, want, "k={k} family={family} cross={}", other.is_some());
                }
            }
            assert!(
                found >= 20,
                "k={k}: only {found} pairs, the test data has too few"
            );
        }
    }

    #[test]
    fn later_families_skip_pairs_an_earlier_one_reports() {
        // Equal in blocks 0 and 1: family 0 reports, family 1 does not.
        let x = 0x1111_2222_3333_4444u64;
        let y = x ^ 0b11;
        let docs = [(x, 1), (y, 2)];
        let mut found = Vec::new();
        for family in 0..BLOCKS {
            let _ = Kernel::new(3, family).self_pairs(&docs, &mut |p| {
                found.push((family, p));
                ControlFlow::Continue(())
            });
        }
        assert_eq!(
            found,
            [(
                0,
                Pair {
                    a: 1,
                    b: 2,
                    distance: 2
                }
            )]
        );
    }

    /// The grouping [`PairKernel`]'s documentation describes, over the four families, finds
    /// every pair within `k` once: a brute-force scan's answer.
    #[test]
    fn public_kernel_over_groups_equals_brute_force() {
        let mut s = 42u64;
        let mut docs: Vec<Doc> = Vec::new();
        for id in 0..600u64 {
            let fp = if id % 2 == 0 || docs.is_empty() {
                // Few block values, so that groups and neighbouring groups are populated.
                rng(&mut s) & 0x00ff_00ff_00ff_00ff
            } else {
                let base = docs[(rng(&mut s) % docs.len() as u64) as usize].0;
                (0..rng(&mut s) % 10).fold(base, |f, _| f ^ (1u64 << (rng(&mut s) % 64)))
            };
            docs.push((fp, id));
        }
        for k in [0, 2, 3, 4, 6, 9] {
            let mut want: Vec<Pair> = Vec::new();
            for (p, &x) in docs.iter().enumerate() {
                for &y in &docs[p + 1..] {
                    let d = (x.0 ^ y.0).count_ones();
                    if d <= k {
                        want.push(Pair::new(x.1, y.1, d));
                    }
                }
            }
            want.sort_unstable();
            let mut got: Vec<Pair> = Vec::new();
            for family in 0..BLOCKS {
                let kernel = PairKernel::new(k, family).unwrap();
                let mut groups: std::collections::BTreeMap<u16, Vec<Doc>> = Default::default();
                for &d in &docs {
                    let v = pigeonhole::block(d.0, family);
                    groups.entry(v).or_default().push(d);
                }
                let mut emit = |p| {
                    got.push(p);
                    ControlFlow::Continue(())
                };
                for (&v, group) in &groups {
                    let _ = kernel.self_pairs(group, &mut emit);
                    for m in kernel.neighbour_masks() {
                        let w = v ^ m;
                        if let (true, Some(other)) = (w > v, groups.get(&w)) {
                            let _ = kernel.cross_pairs(group, other, &mut emit);
                        }
                    }
                }
            }
            got.sort_unstable();
            assert_eq!(got, want, "k={k}");
            assert!(want.len() >= 20, "k={k}: only {} pairs", want.len());
        }
        assert!(PairKernel::new(65, 0).is_err());
        assert!(PairKernel::new(3, 4).is_err());
    }

    #[test]
    fn emit_can_stop_the_scan() {
        let docs: Vec<Doc> = (0..10).map(|id| (0, id)).collect();
        let mut n = 0;
        let flow = Kernel::new(0, 0).self_pairs(&docs, &mut |_| {
            n += 1;
            if n == 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        assert_eq!((flow, n), (ControlFlow::Break(()), 3));
    }
}
