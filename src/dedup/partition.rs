//! The all-pairs scan split into independent tasks, for an engine that shuffles rows between
//! machines (the Spark and Ray jobs of the Python package): which rows each document becomes
//! ([`PartitionPlan::explode`]) and the pairs of the rows of one task ([`TaskPairs`]). The
//! union of every task's pairs is exactly [`Store::pairs`]: each pair within `k` once.
//!
//! ## Groups and tasks
//! A *group* is one block family and one 16-bit block value (`family * 65536 + value`,
//! [`GROUPS`] of them). Two documents within `k` have, in some family, blocks within
//! `r = k / 4` bits; the first such family reports the pair ([`PairKernel`]). So each group
//! is compared with itself and, for `k >= 4`, with its *guests*: the documents of the lower
//! groups of its family within `r` bits. A group becomes tasks in one of three ways, chosen
//! from the number of documents per group ([`PartitionPlan::new`]):
//!
//! - **whole**: one task holds the group and its guests;
//! - **chunked**: the group's documents are spread over `h` chunks and its guests over `g`
//!   chunks of about `chunk_size` documents; every pair of home chunks and every (guest
//!   chunk, home chunk) is a task. A document is copied `h + g` times (a guest `h` times):
//!   cheap for a group of a few chunks, quadratic for a huge one;
//! - **split on sub-blocks**: the 48 bits outside the group's block are cut into `k + 1`
//!   sub-blocks; two documents of the group (or a guest and a member) differ in at most `k`
//!   of those bits, so they are equal on at least one sub-block (pigeonhole). Each document
//!   is sent to one task per sub-block, keyed by its value there, and a pair is reported in
//!   the task of the *first* sub-block on which it is equal. A document is copied `k + 1`
//!   times whatever the group's size; this is chosen whenever it makes fewer rows than
//!   chunking (a block value shared by a large share of the corpus), and only for
//!   `k + 1 <= 12` (narrower sub-blocks are too often equal by chance).
//!
//! ## The task key
//! A row's task is one `i64`: `(group << 40) | (kind << 38) | low`, where `low` is
//!
//! | kind | task | `low` | compared |
//! |---|---|---|---|
//! | 0 whole | the group (side B) and its guests (side A) | 0 | B with itself, A with B |
//! | 1 home | home chunks `x <= y`: `x` side A, `y` side B (`x == y`: all side B) | `x << 19 \| y` | `x == y`: B with itself; else A with B |
//! | 2 guest | guest chunk `x` (side A), home chunk `y` (side B) | `x << 19 \| y` | A with B |
//! | 3 sub-block | sub-block `t`, bucket `u` of its value: members B, guests A | `t << 34 \| u` | B with itself, A with B, first equal sub-block only |
//!
//! The side byte: bit 0 is the side ([`SIDE_B`]), bit 1 marks an old document ([`OLD`],
//! `dedup_against`: pairs of two old documents are never compared).

use std::collections::HashMap;
use std::ops::ControlFlow;

use crate::dedup::{Pair, PairKernel};
use crate::fingerprint::BLOCKS;
use crate::pigeonhole::{self, radius, sub_block_masks, BLOCK_VALUES};
use crate::{Error, Result};

#[cfg(doc)]
use crate::store::Store;

/// Block values per family.
const VALUES: usize = BLOCK_VALUES;
/// Groups: (block family, block value), index `family * 65536 + value`.
pub use crate::pigeonhole::GROUPS;
/// Chunk numbers fit in 19 bits of the task key.
const MAX_CHUNKS: u64 = 1 << 19;
const CHUNK_MASK: i64 = (MAX_CHUNKS as i64) - 1;
/// Sub-block buckets fit in 34 bits of the task key.
const BUCKET_MASK: u64 = (1 << 34) - 1;
/// Sub-block splitting is used up to `k + 1 = 12` sub-blocks (4 bits each).
const MAX_SUB_BLOCKS: u32 = 12;

/// Bit 0 of a row's side byte: side B (members of the task's group) rather than side A.
pub const SIDE_B: u8 = 1;
/// Bit 1 of a row's side byte: an old document (`dedup_against`).
pub const OLD: u8 = 2;

/// One task of the plan: see the module documentation for what each compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Task {
    Whole { group: usize },
    Home { group: usize, x: u64, y: u64 },
    Guest { group: usize, x: u64, y: u64 },
    SubBlock { group: usize, t: u32, bucket: u64 },
}

impl Task {
    fn key(self) -> i64 {
        let (group, kind, low) = match self {
            Task::Whole { group } => (group, 0, 0),
            Task::Home { group, x, y } => (group, 1, (x << 19) | y),
            Task::Guest { group, x, y } => (group, 2, (x << 19) | y),
            Task::SubBlock { group, t, bucket } => (group, 3, (u64::from(t) << 34) | bucket),
        };
        ((group as i64) << 40) | (kind << 38) | (low as i64)
    }

    fn from_key(key: i64) -> Result<Task> {
        let group = (key >> 40) as usize;
        if key < 0 || group >= GROUPS {
            return Err(Error::InvalidArgument(format!(
                "task key {key} names no block group"
            )));
        }
        let (x, y) = (((key >> 19) & CHUNK_MASK) as u64, (key & CHUNK_MASK) as u64);
        Ok(match (key >> 38) & 3 {
            0 => Task::Whole { group },
            1 => Task::Home { group, x, y },
            2 => Task::Guest { group, x, y },
            _ => Task::SubBlock {
                group,
                t: ((key >> 34) & 0xf) as u32,
                bucket: key as u64 & BUCKET_MASK,
            },
        })
    }

    fn group(self) -> usize {
        match self {
            Task::Whole { group }
            | Task::Home { group, .. }
            | Task::Guest { group, .. }
            | Task::SubBlock { group, .. } => group,
        }
    }
}

/// How the documents of one group (and its guests) are split into tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// No documents of its own: no tasks, and no guests are sent to it.
    Empty,
    Whole,
    Chunked {
        home: u64,
        guest: u64,
    },
    SubBlocks,
}

/// Which way a large group is split (tests force each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SplitRule {
    /// Sub-blocks when they make fewer rows than chunks.
    Cheaper,
    #[cfg(test)]
    NeverSubBlocks,
    #[cfg(test)]
    AlwaysSubBlocks,
}

/// For `dedup_against`: which groups need old documents.
#[derive(Debug, Clone)]
struct OldNeeded {
    /// An old document of group `w` is needed at home when `w` has new documents or new
    /// guests.
    home: Vec<bool>,
    /// An old document sent as a guest to `w` is needed when `w` has new documents.
    guest: Vec<bool>,
}

/// The block value of `fp` in `family`, as an index.
fn block(fp: u64, family: usize) -> usize {
    usize::from(pigeonhole::block(fp, family))
}

/// The sub-block on which a pair is reported: the first on which the two are equal.
fn first_equal_sub_block(masks: &[u64], x: u64, y: u64) -> Option<usize> {
    let z = x ^ y;
    masks.iter().position(|m| z & m == 0)
}

/// A well-mixed hash (splitmix64's finaliser), for spreading documents over chunks and
/// sub-block values over buckets.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn check_k(k: u32) -> Result<()> {
    if k > crate::MAX_DISTANCE {
        return Err(Error::InvalidArgument(format!(
            "k must be in 0..={}, got {k}",
            crate::MAX_DISTANCE
        )));
    }
    Ok(())
}

fn check_table(table: &[u64], what: &str) -> Result<()> {
    if table.len() != GROUPS {
        return Err(Error::InvalidArgument(format!(
            "{what} must have {GROUPS} entries (4 block families x 65536 values), got {}",
            table.len()
        )));
    }
    Ok(())
}

/// Adds the documents of `fingerprints` to `counts`, the number of documents per group
/// ([`GROUPS`] entries, index `family * 65536 + block value`): the input of
/// [`PartitionPlan::new`].
///
/// # Errors
/// [`Error::InvalidArgument`] when `counts` does not have [`GROUPS`] entries.
pub fn add_group_counts(counts: &mut [u64], fingerprints: &[u64]) -> Result<()> {
    check_table(counts, "counts")?;
    for &fp in fingerprints {
        for family in 0..BLOCKS {
            counts[family * VALUES + block(fp, family)] += 1;
        }
    }
    Ok(())
}

/// For each group, the documents of the lower groups of its family within `radius(k)` bits
/// (its guests), counting only groups with documents of their own when `only_nonempty`.
fn guest_counts(counts: &[u64], masks: &[u16], only_nonempty: bool) -> Vec<u64> {
    let mut guests = vec![0u64; GROUPS];
    if masks.is_empty() {
        return guests;
    }
    for family in 0..BLOCKS {
        let base = family * VALUES;
        for v in 0..VALUES {
            let c = counts[base + v];
            if c == 0 {
                continue;
            }
            for &m in masks {
                let w = v ^ m as usize;
                if w > v && (!only_nonempty || counts[base + w] > 0) {
                    guests[base + w] += c;
                }
            }
        }
    }
    guests
}

/// Rows of exploded documents: `(task, side, fingerprint, id)`, column by column.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TaskRows {
    /// The task key (see the module documentation).
    pub task: Vec<i64>,
    /// [`SIDE_B`] and [`OLD`] bits.
    pub side: Vec<u8>,
    /// The document's fingerprint.
    pub fingerprint: Vec<u64>,
    /// The document's id.
    pub id: Vec<u64>,
}

impl TaskRows {
    fn push(&mut self, task: Task, side: u8, fp: u64, id: u64) {
        self.task.push(task.key());
        self.side.push(side);
        self.fingerprint.push(fp);
        self.id.push(id);
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.task.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.task.is_empty()
    }
}

/// Which tasks each document takes part in, made from the number of documents per group.
///
/// ```
/// use std::collections::BTreeMap;
/// use simhash_store::dedup::partition::{add_group_counts, PartitionPlan, TaskPairs, TaskRows, GROUPS};
///
/// let docs = [(1u64, 0x0123_4567_89ab_cdefu64), (2, 0x0123_4567_89ab_cdee), (3, 42)];
/// let fps: Vec<u64> = docs.iter().map(|d| d.1).collect();
/// let mut counts = vec![0u64; GROUPS];
/// add_group_counts(&mut counts, &fps)?;
/// let plan = PartitionPlan::new(&counts, 3, 20_000)?;
/// let mut rows = TaskRows::default();
/// for &(id, fp) in &docs {
///     plan.explode(id, fp, false, &mut rows)?;
/// }
/// // The engine shuffles the rows by task; here, one map.
/// let mut tasks: BTreeMap<i64, Vec<(u8, u64, u64)>> = BTreeMap::new();
/// for i in 0..rows.len() {
///     tasks.entry(rows.task[i]).or_default().push((rows.side[i], rows.fingerprint[i], rows.id[i]));
/// }
/// let runner = TaskPairs::new(3)?;
/// let mut pairs = Vec::new();
/// for (task, rows) in &tasks {
///     let (side, fp, id): (Vec<u8>, Vec<u64>, Vec<u64>) = rows.iter().fold(
///         (vec![], vec![], vec![]),
///         |(mut s, mut f, mut d), r| { s.push(r.0); f.push(r.1); d.push(r.2); (s, f, d) },
///     );
///     runner.run(*task, &side, &fp, &id, &mut |p| pairs.push(p))?;
/// }
/// assert_eq!(pairs, [simhash_store::Pair { a: 1, b: 2, distance: 1 }]);
/// # Ok::<_, simhash_store::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct PartitionPlan {
    k: u32,
    layouts: Vec<Layout>,
    masks: &'static [u16],
    sub_masks: [Vec<u64>; BLOCKS],
    old: Option<OldNeeded>,
}

impl PartitionPlan {
    /// The plan for documents whose number per group is `counts` ([`GROUPS`] entries, as
    /// [`add_group_counts`] makes them), for distance `k`, with chunks of about `chunk_size`
    /// documents.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `k` is over 64, `chunk_size` is 0 or `counts` does not
    /// have [`GROUPS`] entries.
    pub fn new(counts: &[u64], k: u32, chunk_size: u64) -> Result<PartitionPlan> {
        PartitionPlan::with_rule(counts, k, chunk_size, SplitRule::Cheaper)
    }

    /// The plan for `dedup_against`: `counts` counts all documents, old and new, and
    /// `new_counts` the new ones only. Old documents are sent only where they can meet a new
    /// one.
    ///
    /// # Errors
    /// As [`PartitionPlan::new`], and when `new_counts` does not have [`GROUPS`] entries.
    pub fn against(
        counts: &[u64],
        new_counts: &[u64],
        k: u32,
        chunk_size: u64,
    ) -> Result<PartitionPlan> {
        let mut plan = PartitionPlan::new(counts, k, chunk_size)?;
        check_table(new_counts, "new_counts")?;
        // Guests of every group, empty or not: new documents reach old ones there too.
        let new_guests = guest_counts(new_counts, plan.masks, false);
        plan.old = Some(OldNeeded {
            home: (0..GROUPS)
                .map(|g| new_counts[g] > 0 || new_guests[g] > 0)
                .collect(),
            guest: new_counts.iter().map(|&c| c > 0).collect(),
        });
        Ok(plan)
    }

    fn with_rule(
        counts: &[u64],
        k: u32,
        chunk_size: u64,
        rule: SplitRule,
    ) -> Result<PartitionPlan> {
        check_k(k)?;
        check_table(counts, "counts")?;
        if chunk_size == 0 {
            return Err(Error::InvalidArgument(
                "chunk_size must be at least 1".into(),
            ));
        }
        let masks = pigeonhole::neighbour_masks(radius(k));
        let guests = guest_counts(counts, masks, true);
        let can_split = k < MAX_SUB_BLOCKS;
        let chunks = |c: u64| c.div_ceil(chunk_size).min(MAX_CHUNKS - 1);
        let layouts = counts
            .iter()
            .zip(&guests)
            .map(|(&c, &gc)| {
                if c == 0 {
                    return Layout::Empty;
                }
                let (home, guest) = (chunks(c), chunks(gc));
                if home == 1 && guest <= 1 {
                    return Layout::Whole;
                }
                let chunked_rows = c * (home + guest) + gc * home;
                let split_rows = (c + gc) * u64::from(k + 1);
                let split = can_split
                    && match rule {
                        SplitRule::Cheaper => split_rows < chunked_rows,
                        #[cfg(test)]
                        SplitRule::NeverSubBlocks => false,
                        #[cfg(test)]
                        SplitRule::AlwaysSubBlocks => true,
                    };
                if split {
                    Layout::SubBlocks
                } else {
                    Layout::Chunked { home, guest }
                }
            })
            .collect();
        Ok(PartitionPlan {
            k,
            layouts,
            masks,
            sub_masks: std::array::from_fn(|f| sub_block_masks(k, f)),
            old: None,
        })
    }

    /// The distance planned for.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Groups split into chunks and groups split on sub-blocks.
    pub fn split_groups(&self) -> (usize, usize) {
        let chunked = self
            .layouts
            .iter()
            .filter(|l| matches!(l, Layout::Chunked { .. }))
            .count();
        let sub = self
            .layouts
            .iter()
            .filter(|l| matches!(l, Layout::SubBlocks))
            .count();
        (chunked, sub)
    }

    /// Appends the rows of document `id` with fingerprint `fp` to `rows`: per block family,
    /// one row per task of its group it takes part in, and for `k >= 4` its copies sent as a
    /// guest to the non-empty higher groups within `k / 4` bits. `old` marks an old document
    /// of a plan made by [`PartitionPlan::against`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the plan counts no document in one of the document's
    /// groups (the plan was made for other documents), or `old` is set on a plan not made by
    /// [`PartitionPlan::against`].
    pub fn explode(&self, id: u64, fp: u64, old: bool, rows: &mut TaskRows) -> Result<()> {
        let old_needed = match (&self.old, old) {
            (_, false) => None,
            (Some(needed), true) => Some(needed),
            (None, true) => {
                return Err(Error::InvalidArgument(
                    "an old document needs a plan made by PartitionPlan::against".into(),
                ))
            }
        };
        let flag = if old { OLD } else { 0 };
        for family in 0..BLOCKS {
            let v = block(fp, family);
            let g = family * VALUES + v;
            if old_needed.is_none_or(|n| n.home[g]) {
                self.explode_home(g, family, id, fp, flag, rows)?;
            }
            for &m in self.masks {
                let w = v ^ m as usize;
                if w <= v {
                    continue;
                }
                let gw = family * VALUES + w;
                if old_needed.is_none_or(|n| n.guest[gw]) {
                    self.explode_guest(gw, family, id, fp, flag, rows);
                }
            }
        }
        Ok(())
    }

    fn explode_home(
        &self,
        g: usize,
        family: usize,
        id: u64,
        fp: u64,
        flag: u8,
        rows: &mut TaskRows,
    ) -> Result<()> {
        match self.layouts[g] {
            Layout::Empty => {
                return Err(Error::InvalidArgument(format!(
                    "document {id} is in block group {g}, which the partition plan counts as \
                     empty: make the plan from the counts of the same documents"
                )))
            }
            Layout::Whole => rows.push(Task::Whole { group: g }, SIDE_B | flag, fp, id),
            Layout::Chunked { home, guest } => {
                let j = mix(id ^ ((g as u64) << 32)) % home;
                for l in 0..home {
                    let side = if j < l { 0 } else { SIDE_B };
                    let (x, y) = (j.min(l), j.max(l));
                    rows.push(Task::Home { group: g, x, y }, side | flag, fp, id);
                }
                for x in 0..guest {
                    rows.push(Task::Guest { group: g, x, y: j }, SIDE_B | flag, fp, id);
                }
            }
            Layout::SubBlocks => self.explode_sub_blocks(g, family, SIDE_B | flag, fp, id, rows),
        }
        Ok(())
    }

    fn explode_guest(
        &self,
        gw: usize,
        family: usize,
        id: u64,
        fp: u64,
        flag: u8,
        rows: &mut TaskRows,
    ) {
        match self.layouts[gw] {
            Layout::Empty => {}
            Layout::Whole => rows.push(Task::Whole { group: gw }, flag, fp, id),
            Layout::Chunked { home, guest } => {
                let x = mix(id ^ ((gw as u64) << 32) ^ 0x5bd1_e995) % guest.max(1);
                for y in 0..home {
                    rows.push(Task::Guest { group: gw, x, y }, flag, fp, id);
                }
            }
            Layout::SubBlocks => self.explode_sub_blocks(gw, family, flag, fp, id, rows),
        }
    }

    fn explode_sub_blocks(
        &self,
        group: usize,
        family: usize,
        side: u8,
        fp: u64,
        id: u64,
        rows: &mut TaskRows,
    ) {
        for (t, &m) in self.sub_masks[family].iter().enumerate() {
            let bucket = mix(fp & m) & BUCKET_MASK;
            let t = t as u32;
            rows.push(Task::SubBlock { group, t, bucket }, side, fp, id);
        }
    }
}

/// What [`TaskPairs::run`] compared in one task.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TaskWork {
    /// Pairs of documents looked at.
    pub comparisons: u64,
}

/// The pairs of the rows of one task: the crate's [`PairKernel`] (the code of
/// [`Store::pairs`]) over the task's sides, each pair reported by exactly one task of a
/// [`PartitionPlan`] for the same `k`.
#[derive(Debug, Clone)]
pub struct TaskPairs {
    kernels: Vec<PairKernel>,
    sub_masks: [Vec<u64>; BLOCKS],
}

impl TaskPairs {
    /// The runner for distance `k`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `k` is over 64.
    pub fn new(k: u32) -> Result<TaskPairs> {
        check_k(k)?;
        Ok(TaskPairs {
            kernels: (0..BLOCKS)
                .map(|f| PairKernel::new(k, f))
                .collect::<Result<_>>()?,
            sub_masks: std::array::from_fn(|f| sub_block_masks(k, f)),
        })
    }

    /// Calls `emit` with every pair that task `task` reports, from its rows (`side`,
    /// `fingerprint`, `id`, the same length, in any order).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a task key no plan makes, columns of different lengths,
    /// or one id given to two documents within `k` of each other.
    pub fn run(
        &self,
        task: i64,
        side: &[u8],
        fingerprint: &[u64],
        id: &[u64],
        emit: &mut impl FnMut(Pair),
    ) -> Result<TaskWork> {
        if side.len() != fingerprint.len() || side.len() != id.len() {
            return Err(Error::InvalidArgument(format!(
                "a task's columns differ in length: {} sides, {} fingerprints, {} ids",
                side.len(),
                fingerprint.len(),
                id.len()
            )));
        }
        let task = Task::from_key(task)?;
        let family = task.group() / VALUES;
        let kernel = &self.kernels[family];
        let (mut a_new, mut a_old, mut b_new, mut b_old) = (vec![], vec![], vec![], vec![]);
        for ((&s, &fp), &id) in side.iter().zip(fingerprint).zip(id) {
            let doc = (fp, id);
            match (s & SIDE_B != 0, s & OLD != 0) {
                (false, false) => a_new.push(doc),
                (false, true) => a_old.push(doc),
                (true, false) => b_new.push(doc),
                (true, true) => b_old.push(doc),
            }
        }
        // In a sub-block task, a pair is reported only if this is its first equal sub-block.
        let sub_block = match task {
            Task::SubBlock { t, .. } => {
                let fps: HashMap<u64, u64> = id
                    .iter()
                    .copied()
                    .zip(fingerprint.iter().copied())
                    .collect();
                Some((t as usize, fps))
            }
            _ => None,
        };
        let masks = &self.sub_masks[family];
        let mut duplicate = None;
        let mut sink = |p: Pair| {
            if p.a == p.b {
                duplicate = Some(p.a);
                return ControlFlow::Break(());
            }
            if let Some((t, fps)) = &sub_block {
                let (x, y) = (fps.get(&p.a), fps.get(&p.b));
                let first = x
                    .zip(y)
                    .and_then(|(&x, &y)| first_equal_sub_block(masks, x, y));
                if first != Some(*t) {
                    return ControlFlow::Continue(());
                }
            }
            emit(p);
            ControlFlow::Continue(())
        };
        let with_self = match task {
            Task::Whole { .. } | Task::SubBlock { .. } => true,
            Task::Home { x, y, .. } => x == y,
            Task::Guest { .. } => false,
        };
        let (an, ao, bn, bo) = (
            a_new.len() as u64,
            a_old.len() as u64,
            b_new.len() as u64,
            b_old.len() as u64,
        );
        // Pairs of two old documents are never compared.
        let mut comparisons = (an + ao) * bn + an * bo;
        let _ = (|| {
            if with_self {
                comparisons += bn * bn.saturating_sub(1) / 2 + bn * bo;
                kernel.self_pairs(&b_new, &mut sink)?;
                kernel.cross_pairs(&b_new, &b_old, &mut sink)?;
            }
            kernel.cross_pairs(&a_new, &b_new, &mut sink)?;
            kernel.cross_pairs(&a_new, &b_old, &mut sink)?;
            kernel.cross_pairs(&a_old, &b_new, &mut sink)
        })();
        if let Some(id) = duplicate {
            return Err(Error::InvalidArgument(format!(
                "id {id} is given to more than one document: ids must be unique"
            )));
        }
        Ok(TaskWork { comparisons })
    }

    /// Runs every task of rows sorted by task (the rows of one partition of the shuffle, or a
    /// part of it), calling `emit` with their pairs and `done` with each task's work. Unless
    /// `last`, the final task's rows may continue in the next part, so it is left: returns
    /// the number of rows consumed.
    ///
    /// # Errors
    /// As [`TaskPairs::run`], and when the rows are not sorted by task.
    pub fn run_sorted(
        &self,
        rows: RowsRef<'_>,
        last: bool,
        emit: &mut impl FnMut(Pair),
        done: &mut impl FnMut(TaskWork),
    ) -> Result<usize> {
        let RowsRef {
            task,
            side,
            fingerprint,
            id,
        } = rows;
        let n = task.len();
        if side.len() != n || fingerprint.len() != n || id.len() != n {
            return Err(Error::InvalidArgument(format!(
                "the row columns differ in length: {n} tasks, {} sides, {} fingerprints, {} ids",
                side.len(),
                fingerprint.len(),
                id.len()
            )));
        }
        let mut start = 0;
        while start < n {
            let t = task[start];
            let end = start + task[start..].iter().take_while(|&&x| x == t).count();
            if end < n && task[end] < t {
                return Err(Error::InvalidArgument(format!(
                    "rows are not sorted by task (row {end} after row {})",
                    end - 1
                )));
            }
            if end == n && !last {
                break;
            }
            let r = start..end;
            let work = self.run(t, &side[r.clone()], &fingerprint[r.clone()], &id[r], emit)?;
            done(work);
            start = end;
        }
        Ok(start)
    }
}

/// Borrowed row columns, for [`TaskPairs::run_sorted`].
#[derive(Debug, Clone, Copy)]
pub struct RowsRef<'a> {
    /// Task keys, ascending.
    pub task: &'a [i64],
    /// [`SIDE_B`] and [`OLD`] bits.
    pub side: &'a [u8],
    /// Fingerprints.
    pub fingerprint: &'a [u64],
    /// Ids.
    pub id: &'a [u64],
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pigeonhole::block_mask;
    use proptest::prelude::*;

    fn brute(docs: &[(u64, u64, bool)], k: u32) -> Vec<Pair> {
        let mut pairs = Vec::new();
        for (i, &(x, fx, ox)) in docs.iter().enumerate() {
            for &(y, fy, oy) in &docs[i + 1..] {
                let d = (fx ^ fy).count_ones();
                if d <= k && !(ox && oy) {
                    pairs.push(Pair::new(x, y, d));
                }
            }
        }
        pairs.sort_unstable();
        pairs
    }

    fn counts_of(docs: &[(u64, u64, bool)], only_new: bool) -> Vec<u64> {
        let fps: Vec<u64> = docs
            .iter()
            .filter(|d| !(only_new && d.2))
            .map(|d| d.1)
            .collect();
        let mut counts = vec![0; GROUPS];
        add_group_counts(&mut counts, &fps).unwrap();
        counts
    }

    /// Every task's pairs, by exploding all documents and grouping the rows by task (in
    /// shuffled order, as an engine would hand them over).
    fn all_task_pairs(plan: &PartitionPlan, docs: &[(u64, u64, bool)]) -> (Vec<Pair>, usize) {
        let mut rows = TaskRows::default();
        for &(id, fp, old) in docs {
            plan.explode(id, fp, old, &mut rows).unwrap();
        }
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&i| (rows.task[i], mix(i as u64)));
        let col = |f: &dyn Fn(usize) -> u64| order.iter().map(|&i| f(i)).collect::<Vec<u64>>();
        let task: Vec<i64> = order.iter().map(|&i| rows.task[i]).collect();
        let side: Vec<u8> = order.iter().map(|&i| rows.side[i]).collect();
        let fingerprint = col(&|i| rows.fingerprint[i]);
        let id = col(&|i| rows.id[i]);
        let runner = TaskPairs::new(plan.k).unwrap();
        let mut pairs = Vec::new();
        // In two parts, the first not last: the straddling task waits for the rest.
        let cut = task.len() / 2;
        let part = |r: std::ops::Range<usize>| RowsRef {
            task: &task[r.clone()],
            side: &side[r.clone()],
            fingerprint: &fingerprint[r.clone()],
            id: &id[r],
        };
        let consumed = runner
            .run_sorted(part(0..cut), false, &mut |p| pairs.push(p), &mut |_| {})
            .unwrap();
        runner
            .run_sorted(
                part(consumed..task.len()),
                true,
                &mut |p| pairs.push(p),
                &mut |_| {},
            )
            .unwrap();
        pairs.sort_unstable();
        (pairs, rows.len())
    }

    /// `fp` with `d` distinct bits flipped, drawn from `r`.
    fn flip(fp: u64, d: u32, r: &mut impl FnMut() -> u64) -> u64 {
        let (mut fp, mut left, mut used) = (fp, d, 0u64);
        while left > 0 {
            let b = r() % 64;
            if used & (1 << b) == 0 {
                used |= 1 << b;
                fp ^= 1 << b;
                left -= 1;
            }
        }
        fp
    }

    /// Random fingerprints with planted near-duplicates at every distance 0..=max_d, and
    /// `hot` documents sharing block `family`'s value (some near each other).
    fn skewed(
        seed: u64,
        n: usize,
        hot: usize,
        max_d: u32,
        old_share: u64,
    ) -> Vec<(u64, u64, bool)> {
        let mut s = seed;
        let mut next = move || {
            s = s.wrapping_add(1);
            mix(s)
        };
        let mut fps: Vec<u64> = Vec::with_capacity(n + hot);
        for i in 0..n {
            let fp = if i >= 2 && i % 2 == 0 {
                let src = fps[(next() % i as u64) as usize];
                flip(src, (i as u32 / 2) % (max_d + 2), &mut next)
            } else {
                next()
            };
            fps.push(fp);
        }
        let family = (next() % 4) as usize;
        let centre = next();
        for i in 0..hot {
            let fp = if i % 2 == 0 {
                flip(centre, i as u32 % (max_d + 2), &mut next)
            } else {
                next()
            };
            fps.push((centre & block_mask(family)) | (fp & !block_mask(family)));
        }
        fps.into_iter()
            .enumerate()
            .map(|(i, fp)| {
                (
                    mix(i as u64 ^ seed) >> 8,
                    fp,
                    old_share > 0 && next() % 100 < old_share,
                )
            })
            .collect()
    }

    #[test]
    fn task_keys_round_trip() {
        let tasks = [
            Task::Whole { group: 0 },
            Task::Whole { group: GROUPS - 1 },
            Task::Home {
                group: 7,
                x: 3,
                y: MAX_CHUNKS - 1,
            },
            Task::Guest {
                group: GROUPS - 1,
                x: MAX_CHUNKS - 1,
                y: 0,
            },
            Task::SubBlock {
                group: 65536 * 3 + 5,
                t: 11,
                bucket: BUCKET_MASK,
            },
        ];
        for task in tasks {
            assert_eq!(Task::from_key(task.key()).unwrap(), task);
        }
        assert!(Task::from_key(-1).is_err());
    }

    #[test]
    fn sub_blocks_partition_the_other_48_bits() {
        for k in 0..MAX_SUB_BLOCKS {
            for family in 0..BLOCKS {
                let masks = sub_block_masks(k, family);
                assert_eq!(masks.len(), k as usize + 1);
                let union = masks.iter().fold(0u64, |u, &m| {
                    assert_eq!(u & m, 0, "sub-blocks overlap");
                    assert_ne!(m, 0, "an empty sub-block");
                    u | m
                });
                assert_eq!(union, !block_mask(family));
            }
        }
    }

    #[test]
    fn five_percent_in_one_block_value_costs_few_extra_rows() {
        // 5% of the documents share a block value: 100M at scale, 400k here with groups of
        // about the same share of the chunk size.
        let n = 400_000u64;
        let chunk = 20_000 * n / 100_000_000 + 1;
        let rows_of = |hot: u64, k: u32| {
            let fps: Vec<u64> = (0..n)
                .map(|i| {
                    let fp = mix(i);
                    if i < hot {
                        (fp & !block_mask(0)) | (0xbeef << 48)
                    } else {
                        fp
                    }
                })
                .collect();
            let mut counts = vec![0; GROUPS];
            add_group_counts(&mut counts, &fps).unwrap();
            let plan = PartitionPlan::new(&counts, k, chunk).unwrap();
            let mut rows = TaskRows::default();
            for (i, &fp) in fps.iter().enumerate() {
                plan.explode(i as u64, fp, false, &mut rows).unwrap();
            }
            rows.len() as f64
        };
        for k in [3, 6] {
            let (even, skewed) = (rows_of(0, k), rows_of(n / 20, k));
            assert!(skewed <= 1.5 * even, "k={k}: {skewed} rows against {even}");
        }
    }

    #[test]
    fn a_plan_for_other_documents_is_an_error() {
        let counts = vec![0; GROUPS];
        let plan = PartitionPlan::new(&counts, 3, 10).unwrap();
        let mut rows = TaskRows::default();
        assert!(matches!(
            plan.explode(1, 2, false, &mut rows),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            plan.explode(1, 2, true, &mut rows),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            PartitionPlan::new(&counts[1..], 3, 10),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            PartitionPlan::new(&counts, 65, 10),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn unsorted_rows_and_repeated_ids_are_errors() {
        let runner = TaskPairs::new(3).unwrap();
        let rows = RowsRef {
            task: &[5, 3],
            side: &[1, 1],
            fingerprint: &[0, 0],
            id: &[1, 2],
        };
        assert!(matches!(
            runner.run_sorted(rows, true, &mut |_| {}, &mut |_| {}),
            Err(Error::InvalidArgument(_))
        ));
        let got = runner.run(0, &[1, 1], &[7, 7], &[4, 4], &mut |_| {});
        assert!(matches!(got, Err(Error::InvalidArgument(_))));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

        /// Whole, chunked and sub-block groups: every pair within k exactly once, as brute
        /// force finds them, for k in 0..=8 (and 12, beyond the sub-block limit).
        #[test]
        fn union_of_tasks_equals_brute_force(seed: u64, n in 0usize..300, hot in 0usize..120, chunk in 1u64..40, old_share in prop::sample::select(vec![0u64, 30])) {
            let docs = skewed(seed, n, hot, 8, old_share);
            let counts = counts_of(&docs, false);
            for k in (0..=8).chain([12]) {
                let want = brute(&docs, k);
                for rule in [SplitRule::Cheaper, SplitRule::NeverSubBlocks, SplitRule::AlwaysSubBlocks] {
                    let mut plan = PartitionPlan::with_rule(&counts, k, chunk, rule).unwrap();
                    if old_share > 0 {
                        let against = PartitionPlan::against(&counts, &counts_of(&docs, true), k, chunk).unwrap();
                        plan.old = against.old;
                    }
                    let (got, _) = all_task_pairs(&plan, &docs);
                    prop_assert_eq!(&got, &want, "k={} rule={:?} chunk={}", k, rule, chunk);
                }
            }
        }
    }
}
