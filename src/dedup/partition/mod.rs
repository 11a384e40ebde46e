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
//!
//! The files: this one holds the task key codec (`Task`) and the helpers; `plan.rs` the
//! [`PartitionPlan`] and its [`explode`](PartitionPlan::explode) into [`TaskRows`];
//! `run.rs` the [`TaskPairs`] of one task; `tests.rs` the checks against the store's pairs.

mod plan;
mod run;
#[cfg(test)]
mod tests;

pub use plan::{PartitionPlan, TaskRows};
pub use run::{RowsRef, TaskPairs, TaskWork};

use std::collections::HashMap;
use std::ops::ControlFlow;

use crate::dedup::{Pair, PairKernel};
use crate::fingerprint::BLOCKS;
use crate::pigeonhole::{self, radius, sub_block_masks, BLOCK_VALUES};
use crate::{Error, Result};

#[cfg(doc)]
use crate::Store;

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
