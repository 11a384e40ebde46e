//! The parts a bulk load of many batches appends to groups, merged like a binary counter,
//! so that a load rewrites each entry about log2(batches) / 2 times instead of once per
//! batch after it.
//!
//! A [`PgLoader`](super::PgLoader)'s batch `b` (from 1) puts the block entries of documents
//! new to the index in tier `t = trailing_ones(b - 1)` of its groups: it takes out the
//! group's parts of tiers `0..=t` of this load, merges them with the new entries, and
//! writes the result as tier `t`. After batch `b`, a group holds a part for each 1-bit of
//! `b` (at 100 batches, 3), beside the parts 0, 1, ... that a fold or a one-batch load
//! writes; a query reads them all. The parts of a load are numbered below zero:
//! `-(1 + (tag << 22 | tier << 17 | chunk))`, `tag` drawn at random per load. Two loads
//! that draw the same tag at once only merge each other's parts, which loses nothing.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use deadpool_postgres::Transaction;
use rayon::prelude::*;

use super::groups::{copy_chunks, encode_chunks, rows_of, GroupsRead};
use super::{col, pg_error};
use crate::error::{Error, Result};

/// Bits of a part number for the chunk within a tier, for the tier, for the load's tag.
const CHUNK_BITS: u32 = 17;
const TIER_BITS: u32 = 5;
const TAG_BITS: u32 = 8;

/// Where a load's batch writes: the load's tag and the batch's tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tier {
    tag: u32,
    tier: u32,
}

/// A bulk load's tag and batch count: the tier of each batch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tiers {
    tag: u32,
    batches: u64,
}

impl Tiers {
    /// A new load's tiers, under a tag drawn at random.
    pub(crate) fn new() -> Tiers {
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        Tiers {
            tag: (random % (1 << TAG_BITS)) as u32,
            batches: 0,
        }
    }

    /// The tier of the next batch. Call [`Tiers::committed`] once it is committed.
    pub(crate) fn next(&self) -> Tier {
        Tier {
            tag: self.tag,
            // Past 2^32 batches the top tier takes every merge, which stays correct.
            tier: self.batches.trailing_ones().min((1 << TIER_BITS) - 1),
        }
    }

    /// Moves past a committed batch.
    pub(crate) fn committed(&mut self) {
        self.batches += 1;
    }
}

impl Tier {
    /// The number of chunk `chunk` of this tier; `None` past the chunks a tier can hold
    /// (2^17, over 500 million entries in one group).
    fn part(self, chunk: usize) -> Option<i32> {
        let chunk = u32::try_from(chunk).ok().filter(|&c| c < 1 << CHUNK_BITS)?;
        let n = self.tag << (TIER_BITS + CHUNK_BITS) | self.tier << CHUNK_BITS | chunk;
        Some(-1 - n as i32)
    }

    /// The part numbers of tiers `0..=tier` of the load, as `(low, high)`.
    fn merged(self) -> (i32, i32) {
        let first = Tier { tier: 0, ..self };
        let low = -1
            - (self.tag << (TIER_BITS + CHUNK_BITS)
                | self.tier << CHUNK_BITS
                | ((1 << CHUNK_BITS) - 1)) as i32;
        (low, first.part(0).unwrap_or(-1))
    }
}

/// Merges `rows` (sorted by group, remainder and id; every one a live entry of a document
/// new to the index) into tier `tier` of `groups` (their groups, sorted and distinct, none
/// with delta rows): takes out the load's parts of tiers `0..=tier` of those groups, merges
/// them with the rows and writes the result as tier `tier`. The caller holds the writer
/// lock.
pub(crate) async fn append(
    client: &Transaction<'_>,
    groups: &[i32],
    rows: &[(i32, u64, u64, bool)],
    tier: Tier,
) -> Result<()> {
    if groups.is_empty() {
        return Ok(());
    }
    let (low, high) = tier.merged();
    let taken = client
        .query(
            "DELETE FROM simhash_groups WHERE grp = ANY($1) AND part BETWEEN $2 AND $3
             RETURNING grp, chunk",
            &[&groups, &low, &high],
        )
        .await
        .map_err(pg_error("merge a load's parts"))?;
    let mut chunks: HashMap<i32, Vec<Vec<u8>>> = HashMap::new();
    for row in taken {
        chunks.entry(col(&row, 0)?).or_default().push(col(&row, 1)?);
    }
    let read = GroupsRead::from_chunks(chunks);
    let packed: Vec<(i32, Vec<Vec<u8>>)> = groups
        .par_iter()
        .map(|&grp| {
            let mut entries = read.entries(grp)?;
            entries.extend(rows_of(rows, grp).iter().map(|&(_, r, id, _)| (r, id)));
            // Two sorted runs: a stable sort merges them.
            entries.sort();
            Ok((grp, encode_chunks(&entries)))
        })
        .collect::<Result<_>>()?;
    if let Some((grp, _)) = packed
        .iter()
        .find(|(_, chunks)| tier.part(chunks.len().saturating_sub(1)).is_none())
    {
        return Err(Error::InvalidArgument(format!(
            "group {grp} would hold more than {} chunks of one load: load in larger batches",
            1u64 << CHUNK_BITS
        )));
    }
    copy_chunks(client, &packed, |chunk| {
        tier.part(chunk).unwrap_or(i32::MIN)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_count_like_a_binary_counter() {
        let mut tiers = Tiers { tag: 5, batches: 0 };
        let mut seen = Vec::new();
        for _ in 0..8 {
            seen.push(tiers.next().tier);
            tiers.committed();
        }
        assert_eq!(seen, [0, 1, 0, 2, 0, 1, 0, 3]);
    }

    #[test]
    fn parts_are_negative_and_a_tier_range_holds_the_lower_tiers() {
        for tag in [0, 1, (1 << TAG_BITS) - 1] {
            for t in [0, 1, 7, (1 << TIER_BITS) - 1] {
                let tier = Tier { tag, tier: t };
                let (low, high) = tier.merged();
                assert!(low <= high && high < 0);
                for below in 0..=t {
                    let lower = Tier { tag, tier: below };
                    for chunk in [0, 1, (1 << CHUNK_BITS) - 1] {
                        let part = lower.part(chunk).unwrap();
                        assert!((low..=high).contains(&part), "{tag} {t} {below} {chunk}");
                    }
                }
                if t + 1 < 1 << TIER_BITS {
                    let above = Tier { tag, tier: t + 1 }.part(0).unwrap();
                    assert!(!(low..=high).contains(&above));
                }
                let other = Tier {
                    tag: tag ^ 1,
                    tier: t,
                }
                .part(0)
                .unwrap();
                assert!(!(low..=high).contains(&other));
                assert_eq!(tier.part(1 << CHUNK_BITS), None);
            }
        }
    }
}
