//! The upsert planner: what storing a sequence of adds does to the store. One plan serves
//! [`Store::insert_batch`](crate::Store::insert_batch) and the bulk loader, on either backend; `../apply.rs` writes it, into one atomic
//! write batch or into the SST files of a run.
//!
//! The plan is what applying the adds one by one, in order, would do, computed with sorts
//! and batched lookups instead of one read-modify-write per add:
//!
//! 1. The last add of each id wins; earlier adds of the id are superseded.
//! 2. For each external key, the last add naming it (over *all* adds, superseded or not)
//!    claims it. An id whose last add names a key that a later add of another id claims is
//!    dropped: in order, that later add would have removed it.
//! 3. Against the store: a surviving document replaces the stored one with its id (its old
//!    block entries and old key are deleted); a dropped id is deleted from the store; a
//!    stored document whose key is claimed by the adds, and that they do not add, is
//!    removed. A key ends owned by its last claimant if that add survives, else it is
//!    deleted.
//! 4. A surviving document keeps the `added` time of the stored one it replaces, unless an
//!    earlier add removed that one by taking its key (then it is stored anew, at `now`).
//!
//! [`plan`] runs in three phases, each in its own file with its own result type:
//! `resolve.rs` works out 1 and 2 from the adds alone ([`Resolved`]); `look_up.rs` reads
//! what they meet in the store, 3 and 4 ([`Met`]); `emit.rs` turns that into the writes
//! ([`UpsertPlan`]). The tests, against a sequential model, are in `tests.rs`. The same rules
//! one add at a time, for a caller that decides each add against the earlier ones before the
//! plan is made, are in `pending.rs` ([`PendingAdds`]).
//!
//! Block entries, documents and keys that the plan puts are never ones it deletes, so the

mod emit;
mod look_up;
mod pending;
mod resolve;
#[cfg(test)]
mod tests;

// The phases' items, for each other and for `plan`.
use emit::*;
use look_up::*;
pub(crate) use pending::PendingAdds;
pub(crate) use resolve::SeqSet;
use resolve::*;

use crate::codec::Document;
use crate::error::Result;

/// Ids or keys read from the store per multi-get.
const LOOKUP_BATCH: usize = 4096;
/// From this many surviving adds on, the planner reads the range of stored ids first and
/// skips the lookups of ids outside it (an append of new ids reads nothing).
const RANGE_CHECK_MIN: usize = LOOKUP_BATCH;

/// A sequence of adds, in add order: the sequence number of an add is its index. Keys have
/// passed [`check_key`](super::check_key).
pub(crate) trait Adds {
    /// The number of adds.
    fn len(&self) -> usize;
    /// The id of add `seq`.
    fn id(&self, seq: u32) -> u64;
    /// The fingerprint of add `seq`.
    fn fingerprint(&self, seq: u32) -> u64;
    /// The external key of add `seq`.
    fn key(&self, seq: u32) -> Option<&[u8]>;
    /// Whether the ids are strictly increasing (then no id repeats and no sort is needed).
    fn ids_ascending(&self) -> bool;
    /// Whether any add has an external key.
    fn has_keys(&self) -> bool;
}

/// What is stored, as the planner reads it: in batches of sorted ids or keys.
pub(crate) trait Stored {
    /// The number of documents.
    fn count(&self) -> u64;
    /// The smallest and largest stored document ids, if any.
    fn id_range(&self) -> Result<Option<(u64, u64)>>;
    /// The stored documents of `ids` (sorted), aligned with them.
    fn documents_of(&self, ids: &[u64]) -> Result<Vec<Option<Document>>>;
    /// The stored owners of `keys` (sorted), aligned with them.
    fn owners_of(&self, keys: &[&[u8]]) -> Result<Vec<Option<u64>>>;
}

/// The key of a `keys`-family write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyName {
    /// The key of add number `seq` (an add that has one).
    Add(u32),
    /// The key of a stored document that the adds remove or give another key.
    Stored(String),
}

impl KeyName {
    /// The key's bytes.
    pub(crate) fn bytes<'a>(&'a self, adds: &'a impl Adds) -> &'a [u8] {
        match self {
            // The planner names only adds that have a key.
            KeyName::Add(seq) => adds.key(*seq).unwrap_or_default(),
            KeyName::Stored(key) => key.as_bytes(),
        }
    }
}

/// A `keys`-family write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyWrite {
    /// The key names document `id`.
    Put(KeyName, u64),
    /// The key names no document.
    Delete(KeyName),
}

impl KeyWrite {
    /// The key written.
    pub(crate) fn key(&self) -> &KeyName {
        match self {
            KeyWrite::Put(key, _) | KeyWrite::Delete(key) => key,
        }
    }
}

/// The `added` time of each surviving add.
#[derive(Debug, Default)]
pub(crate) enum AddedTimes {
    /// No survivor keeps the time of a stored document: each is stored at `now`.
    #[default]
    AllNew,
    /// Survivors in `kept` keep `times[seq]` from the stored document they replace; the
    /// others are stored at `now`.
    Kept {
        /// By sequence number.
        times: Vec<u64>,
        kept: SeqSet,
    },
}

impl AddedTimes {
    /// Survivor `seq`, one of `n` adds, keeps `added`.
    fn keep(&mut self, n: usize, seq: u32, added: u64) {
        if let AddedTimes::AllNew = self {
            *self = AddedTimes::Kept {
                times: vec![0; n],
                kept: SeqSet::new(n),
            };
        }
        if let AddedTimes::Kept { times, kept } = self {
            if let Some(t) = times.get_mut(seq as usize) {
                *t = added;
                kept.insert(seq);
            }
        }
    }

    /// Survivor `seq` is stored anew.
    fn renew(&mut self, seq: u32) {
        if let AddedTimes::Kept { kept, .. } = self {
            kept.remove(seq);
        }
    }

    /// The `added` time survivor `seq` stores.
    fn of(&self, seq: u32, now: u64) -> u64 {
        match self {
            AddedTimes::Kept { times, kept } if kept.contains(seq) => {
                times.get(seq as usize).copied().unwrap_or(now)
            }
            _ => now,
        }
    }
}

/// What storing a sequence of adds does to the store.
#[derive(Debug, Default)]
pub(crate) struct UpsertPlan {
    /// Sequence numbers of the surviving adds, in id order (ids distinct).
    pub(crate) survivors: Vec<u32>,
    /// The `added` time of each survivor.
    pub(crate) added_times: AddedTimes,
    /// (id, fingerprint) block entries to delete, in no order.
    pub(crate) block_deletes: Vec<(u64, u64)>,
    /// Document ids to delete, sorted.
    pub(crate) doc_deletes: Vec<u64>,
    /// `keys` writes, sorted by key, keys distinct.
    pub(crate) key_writes: Vec<KeyWrite>,
    /// Survivors not in the store before.
    pub(crate) added: u64,
    /// Survivors that replace a stored document.
    pub(crate) replaced: u64,
    /// Stored documents deleted and not added again.
    pub(crate) removed: u64,
    /// Adds that are not stored (an add of the same id or key came later).
    pub(crate) superseded: u64,
}

impl UpsertPlan {
    /// The document count after the plan is applied, from the count before it.
    pub(crate) fn count_after(&self, before: u64) -> u64 {
        (before + self.added).saturating_sub(self.removed)
    }

    /// The `added` time of the document that survivor `seq` stores, `now` for a new one.
    pub(crate) fn added(&self, seq: u32, now: u64) -> u64 {
        self.added_times.of(seq, now)
    }
}

/// Plans storing `adds`, in order, in `stored`.
pub(crate) fn plan<A: Adds + Sync>(stored: &impl Stored, adds: &A) -> Result<UpsertPlan> {
    let resolved = resolve(adds);
    let met = look_up(stored, adds, resolved)?;
    Ok(emit(adds, met))
}
