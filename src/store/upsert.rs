//! The upsert planner: what storing a sequence of adds does to the store. One plan serves
//! [`Store::insert_batch`] (written as one atomic write batch, `write.rs`) and the bulk loader
//! (written as the SST files of a run, `src/bulk/sst.rs`).
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
//! [`plan`] runs in three phases, each with its own result type: [`resolve`] works out 1 and
//! 2 from the adds alone ([`Resolved`]); [`look_up`] reads what they meet in the store, 3 and
//! 4 ([`Met`]); [`emit`] turns that into the writes ([`UpsertPlan`]).
//!
//! Block entries, documents and keys that the plan puts are never ones it deletes, so the
//! order in which a writer applies its puts and deletes does not matter.

use rayon::prelude::*;

use super::Store;
use crate::codec::{self, Document};
use crate::error::{Error, Result};
use crate::keys::{self, DOCS_FAMILY, KEYS_FAMILY, MAX_EXTERNAL_KEY_LEN};

/// Ids or keys read from the store per multi-get.
const LOOKUP_BATCH: usize = 4096;
/// From this many surviving adds on, the planner reads the range of stored ids first and
/// skips the lookups of ids outside it (an append of new ids reads nothing).
const RANGE_CHECK_MIN: usize = LOOKUP_BATCH;

/// Checks an external key: 1..=[`MAX_EXTERNAL_KEY_LEN`] bytes.
pub(crate) fn check_key(id: u64, key: &str) -> Result<()> {
    if key.is_empty() || key.len() > MAX_EXTERNAL_KEY_LEN {
        return Err(Error::InvalidArgument(format!(
            "document {id}: an external key must have 1..={MAX_EXTERNAL_KEY_LEN} bytes, this one has {}",
            key.len()
        )));
    }
    Ok(())
}

/// A sequence of adds, in add order: the sequence number of an add is its index. Keys have
/// passed [`check_key`].
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

impl Stored for Store {
    fn count(&self) -> u64 {
        self.len()
    }

    fn id_range(&self) -> Result<Option<(u64, u64)>> {
        let mut it = self.db.raw_iterator_cf(self.cf(DOCS_FAMILY)?);
        it.seek_to_first();
        let first = it.key().and_then(keys::decode_doc_key);
        it.seek_to_last();
        let last = it.key().and_then(keys::decode_doc_key);
        it.status()
            .map_err(|e| self.rocks_err("read the id range", Some(DOCS_FAMILY), e))?;
        Ok(first.zip(last))
    }

    fn documents_of(&self, ids: &[u64]) -> Result<Vec<Option<Document>>> {
        let cf = self.cf(DOCS_FAMILY)?;
        let keys: Vec<[u8; keys::DOC_KEY_LEN]> = ids.iter().map(|&id| keys::doc_key(id)).collect();
        let found = self.db.batched_multi_get_cf(cf, &keys, true);
        found
            .into_iter()
            .zip(&keys)
            .map(|(r, key)| match r {
                Ok(Some(v)) => codec::decode_document(&v, key).map(Some),
                Ok(None) => Ok(None),
                Err(e) => Err(self.rocks_err("read documents", Some(DOCS_FAMILY), e)),
            })
            .collect()
    }

    fn owners_of(&self, keys: &[&[u8]]) -> Result<Vec<Option<u64>>> {
        let cf = self.cf(KEYS_FAMILY)?;
        let found = self.db.batched_multi_get_cf(cf, keys, true);
        found
            .into_iter()
            .zip(keys)
            .map(|(r, key)| match r {
                Ok(Some(v)) => keys::decode_id_value(&v)
                    .map(Some)
                    .ok_or_else(|| Error::Decode {
                        column_family: KEYS_FAMILY,
                        key: keys::hex(key),
                        what: "document id",
                        message: format!("expected 8 bytes, found {}", v.len()),
                    }),
                Ok(None) => Ok(None),
                Err(e) => Err(self.rocks_err("read keys", Some(KEYS_FAMILY), e)),
            })
            .collect()
    }
}

impl Store {
    /// Plans storing `adds`, in order, in this store. The caller holds the write lock until
    /// the plan is written.
    pub(crate) fn plan_upserts<A: Adds + Sync>(&self, adds: &A) -> Result<UpsertPlan> {
        plan(self, adds)
    }
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
fn plan<A: Adds + Sync>(stored: &impl Stored, adds: &A) -> Result<UpsertPlan> {
    let resolved = resolve(adds);
    let met = look_up(stored, adds, resolved)?;
    Ok(emit(adds, met))
}

// Phase 1: the adds among themselves.

/// The adds in id order, to find the adds of one id.
enum IdOrder {
    /// Ids are strictly increasing: add order is id order, one add per id.
    Ascending,
    /// `id << 64 | seq` of every add, sorted.
    Sorted(Vec<u128>),
}

impl IdOrder {
    /// The first add of `id`.
    fn first_add(&self, adds: &impl Adds, id: u64) -> Option<u32> {
        match self {
            IdOrder::Ascending => {
                let n = adds.len() as u32;
                let (mut lo, mut hi) = (0u32, n);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if adds.id(mid) < id {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                (lo < n && adds.id(lo) == id).then_some(lo)
            }
            IdOrder::Sorted(order) => {
                let at = order.partition_point(|&x| x < u128::from(id) << 64);
                order
                    .get(at)
                    .filter(|&&x| (x >> 64) as u64 == id)
                    .map(|&x| x as u64 as u32)
            }
        }
    }

    /// The next add of `id` after add `seq` (an add of `id`).
    fn next_add(&self, id: u64, seq: u32) -> Option<u32> {
        match self {
            IdOrder::Ascending => None,
            IdOrder::Sorted(order) => {
                let at = order.partition_point(|&x| x <= (u128::from(id) << 64 | u128::from(seq)));
                order
                    .get(at)
                    .filter(|&&x| (x >> 64) as u64 == id)
                    .map(|&x| x as u64 as u32)
            }
        }
    }
}

/// The last add of each id.
struct LastAdds {
    /// Sequence numbers of the last add of each id, in id order.
    seqs: Vec<u32>,
    /// Adds that an add of the same id supersedes.
    superseded: u64,
    /// The adds in id order.
    order: IdOrder,
}

/// The last add of each id. The sorted order is kept only when keys need it.
fn last_add_per_id(adds: &(impl Adds + Sync)) -> LastAdds {
    let n = adds.len();
    if adds.ids_ascending() {
        return LastAdds {
            seqs: (0..n as u32).collect(),
            superseded: 0,
            order: IdOrder::Ascending,
        };
    }
    let mut order: Vec<u128> = (0..n as u32)
        .into_par_iter()
        .map(|seq| (u128::from(adds.id(seq)) << 64) | u128::from(seq))
        .collect();
    order.par_sort_unstable();
    let mut seqs: Vec<u32> = Vec::with_capacity(n);
    for (i, &x) in order.iter().enumerate() {
        let id = (x >> 64) as u64;
        let next_same = order.get(i + 1).is_some_and(|&y| (y >> 64) as u64 == id);
        if !next_same {
            seqs.push(x as u64 as u32);
        }
    }
    let superseded = (n - seqs.len()) as u64;
    // Without keys, nothing asks for the adds of an id.
    let order = if adds.has_keys() {
        IdOrder::Sorted(order)
    } else {
        IdOrder::Ascending
    };
    LastAdds {
        seqs,
        superseded,
        order,
    }
}

/// An external key the adds name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Claim {
    /// The first add naming it.
    first: u32,
    /// The last add naming it.
    last: u32,
    /// The id that owns the key in the end: that of `last` if it is its id's last add.
    owner: Option<u64>,
}

/// Who claims each key of the adds.
#[derive(Debug, Default)]
struct Claims {
    /// Every distinct key, in key order.
    keys: Vec<Claim>,
    /// Ids whose document an add of another id removes by taking its key from them.
    taken_from: Vec<u64>,
}

/// The claims of the keys of the adds; `is_last` holds the last add of each id.
fn claims(adds: &(impl Adds + Sync), order: &IdOrder, is_last: &SeqSet) -> Claims {
    let mut seqs: Vec<u32> = (0..adds.len() as u32)
        .filter(|&s| adds.key(s).is_some())
        .collect();
    let key = |s: u32| adds.key(s).unwrap_or_default();
    seqs.par_sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(a.cmp(&b)));
    let mut out = Claims::default();
    let mut group_first = 0;
    for (i, &s) in seqs.iter().enumerate() {
        let Some(&next) = seqs.get(i + 1).filter(|&&t| key(t) == key(s)) else {
            out.keys.push(Claim {
                first: seqs[group_first],
                last: s,
                owner: is_last.contains(s).then(|| adds.id(s)),
            });
            group_first = i + 1;
            continue;
        };
        // Add `next` names the key of add `s`: it takes it from the document of `s`, and so
        // removes that document, unless it is the same id or that id changed in between.
        let id = adds.id(s);
        if adds.id(next) != id && order.next_add(id, s).is_none_or(|t| t > next) {
            out.taken_from.push(id);
        }
    }
    out
}

/// A set of sequence numbers.
#[derive(Debug)]
pub(crate) struct SeqSet(Vec<u64>);

impl SeqSet {
    fn new(n: usize) -> Self {
        SeqSet(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, s: u32) {
        if let Some(w) = self.0.get_mut(s as usize / 64) {
            *w |= 1 << (s % 64);
        }
    }
    fn remove(&mut self, s: u32) {
        if let Some(w) = self.0.get_mut(s as usize / 64) {
            *w &= !(1 << (s % 64));
        }
    }
    fn contains(&self, s: u32) -> bool {
        self.0
            .get(s as usize / 64)
            .is_some_and(|w| w & (1 << (s % 64)) != 0)
    }
}

/// Phase 1's result: what the adds do among themselves, before the store is read.
struct Resolved {
    /// Sequence numbers of the surviving adds, in id order (ids distinct).
    survivors: Vec<u32>,
    /// Ids whose last add names a key that a later add of another id claims, sorted.
    dropped: Vec<u64>,
    /// The keys the adds name.
    claims: Claims,
    /// Adds that are not stored.
    superseded: u64,
    /// The adds in id order.
    order: IdOrder,
}

impl Resolved {
    /// Where the survivor with `id` is in `survivors`.
    fn survivor_index(&self, adds: &impl Adds, id: u64) -> Option<usize> {
        self.survivors
            .binary_search_by(|&s| adds.id(s).cmp(&id))
            .ok()
    }

    /// Whether the adds store or drop `id`.
    fn names_id(&self, adds: &impl Adds, id: u64) -> bool {
        self.survivor_index(adds, id).is_some() || self.dropped.binary_search(&id).is_ok()
    }

    /// Whether the adds claim `key`.
    fn claims_key(&self, adds: &impl Adds, key: &[u8]) -> bool {
        self.claims
            .keys
            .binary_search_by(|c| adds.key(c.last).unwrap_or_default().cmp(key))
            .is_ok()
    }
}

/// Resolves the adds among themselves: rules 1 and 2.
fn resolve(adds: &(impl Adds + Sync)) -> Resolved {
    let LastAdds {
        seqs: last,
        superseded,
        order,
    } = last_add_per_id(adds);
    if !adds.has_keys() {
        return Resolved {
            survivors: last,
            dropped: Vec::new(),
            claims: Claims::default(),
            superseded,
            order,
        };
    }
    let mut is_last = SeqSet::new(adds.len());
    for &s in &last {
        is_last.insert(s);
    }
    let claims = claims(adds, &order, &is_last);
    let mut claimants = SeqSet::new(adds.len());
    for c in &claims.keys {
        claimants.insert(c.last);
    }
    let (survivors, dropped): (Vec<u32>, Vec<u32>) = last
        .into_iter()
        .partition(|&s| adds.key(s).is_none() || claimants.contains(s));
    // `last` is in id order, so `dropped` is too.
    let dropped: Vec<u64> = dropped.into_iter().map(|s| adds.id(s)).collect();
    Resolved {
        superseded: superseded + dropped.len() as u64,
        survivors,
        dropped,
        claims,
        order,
    }
}

// Phase 2: what the adds meet in the store.

/// A stored document that the adds delete.
struct Removed {
    id: u64,
    fingerprint: u64,
}

/// Phase 2's result: the stored documents and keys the adds meet.
struct Met {
    /// Phase 1's result.
    resolved: Resolved,
    /// Survivors that replace a stored document; the others are new.
    replaced: u64,
    /// The `added` times that survivors keep from the stored documents they replace.
    kept: AddedTimes,
    /// Block entries of replaced documents whose fingerprint changes: (id, fingerprint).
    changed: Vec<(u64, u64)>,
    /// Ids of survivors that an earlier add removed from the store by taking their key:
    /// stored anew.
    renewed: Vec<u64>,
    /// Stored documents the adds delete and do not add again, by id, ids distinct.
    removed: Vec<Removed>,
    /// Each key the adds claim, in key order, with its stored owner.
    claimed: Vec<(Claim, Option<u64>)>,
    /// Keys of replaced or removed documents that still name them and that no add claims,
    /// sorted.
    stale_keys: Vec<String>,
}

/// Reads what the adds meet in the store: rules 3 and 4.
fn look_up(stored: &impl Stored, adds: &impl Adds, resolved: Resolved) -> Result<Met> {
    let range = if stored.count() == 0 {
        None
    } else if resolved.survivors.len() < RANGE_CHECK_MIN {
        Some((0, u64::MAX))
    } else {
        stored.id_range()?
    };
    let Some((lo, hi)) = range else {
        // Nothing stored: nothing to replace, remove or take keys from.
        return Ok(Met {
            claimed: resolved.claims.keys.iter().map(|&c| (c, None)).collect(),
            resolved,
            replaced: 0,
            kept: AddedTimes::AllNew,
            changed: Vec::new(),
            renewed: Vec::new(),
            removed: Vec::new(),
            stale_keys: Vec::new(),
        });
    };

    // Keys of replaced or removed documents, with their ids: deleted if still pointing to
    // their document and not claimed by the adds.
    let mut old_keys: Vec<(String, u64)> = Vec::new();

    // Survivors against the store, in batches of sorted ids.
    let (mut replaced, mut kept, mut changed) = (0, AddedTimes::AllNew, Vec::new());
    for seqs in resolved.survivors.chunks(LOOKUP_BATCH) {
        let ids: Vec<u64> = seqs.iter().map(|&s| adds.id(s)).collect();
        if !ids.iter().any(|id| (lo..=hi).contains(id)) {
            continue;
        }
        for ((&seq, &id), old) in seqs.iter().zip(&ids).zip(stored.documents_of(&ids)?) {
            let Some(old) = old else { continue };
            replaced += 1;
            kept.keep(adds.len(), seq, old.added);
            if old.fingerprint.0 != adds.fingerprint(seq) {
                changed.push((id, old.fingerprint.0));
            }
            if let Some(old_key) = old.key {
                if adds.key(seq) != Some(old_key.as_bytes()) {
                    old_keys.push((old_key, id));
                }
            }
        }
    }

    // Dropped ids: deleted if stored.
    let mut removed = stored_documents(stored, &resolved.dropped, &mut old_keys)?;

    // Claimed keys: their stored owners are removed unless the adds store them again.
    let mut owners = Vec::with_capacity(resolved.claims.keys.len());
    for batch in resolved.claims.keys.chunks(LOOKUP_BATCH) {
        let keys: Vec<&[u8]> = batch
            .iter()
            .map(|c| adds.key(c.last).unwrap_or_default())
            .collect();
        owners.extend(stored.owners_of(&keys)?);
    }
    let mut owners_to_remove: Vec<u64> = owners
        .iter()
        .flatten()
        .copied()
        .filter(|&z| !resolved.names_id(adds, z))
        .collect();
    owners_to_remove.sort_unstable();
    owners_to_remove.dedup();
    removed.extend(stored_documents(stored, &owners_to_remove, &mut old_keys)?);
    // Disjoint: the adds name the dropped ids, not the owners removed.
    removed.sort_unstable_by_key(|r| r.id);

    // The first claim of a key takes it from its stored owner, unless that is the same id
    // or an earlier add of the owner gave up the key.
    let mut renewed = resolved.claims.taken_from.clone();
    for (claim, owner) in resolved.claims.keys.iter().zip(&owners) {
        let Some(z) = *owner else { continue };
        if z != adds.id(claim.first)
            && resolved
                .order
                .first_add(adds, z)
                .is_none_or(|t| t > claim.first)
        {
            renewed.push(z);
        }
    }

    old_keys.retain(|(key, _)| !resolved.claims_key(adds, key.as_bytes()));
    old_keys.sort_unstable();
    old_keys.dedup_by(|a, b| a.0 == b.0);
    let mut stale_keys = Vec::new();
    for batch in old_keys.chunks(LOOKUP_BATCH) {
        let keys: Vec<&[u8]> = batch.iter().map(|(k, _)| k.as_bytes()).collect();
        for ((key, id), owner) in batch.iter().zip(stored.owners_of(&keys)?) {
            if owner == Some(*id) {
                stale_keys.push(key.clone());
            }
        }
    }

    Ok(Met {
        claimed: resolved.claims.keys.iter().copied().zip(owners).collect(),
        resolved,
        replaced,
        kept,
        changed,
        renewed,
        removed,
        stale_keys,
    })
}

/// The stored documents among `ids` (sorted); their keys go to `old_keys`.
fn stored_documents(
    stored: &impl Stored,
    ids: &[u64],
    old_keys: &mut Vec<(String, u64)>,
) -> Result<Vec<Removed>> {
    let mut found = Vec::new();
    for batch in ids.chunks(LOOKUP_BATCH) {
        for (&id, old) in batch.iter().zip(stored.documents_of(batch)?) {
            let Some(old) = old else { continue };
            found.push(Removed {
                id,
                fingerprint: old.fingerprint.0,
            });
            if let Some(key) = old.key {
                old_keys.push((key, id));
            }
        }
    }
    Ok(found)
}

// Phase 3: the writes.

/// The writes that apply what phase 2 found.
fn emit(adds: &impl Adds, met: Met) -> UpsertPlan {
    let Met {
        resolved,
        replaced,
        mut kept,
        mut changed,
        renewed,
        removed,
        claimed,
        stale_keys,
    } = met;

    // A survivor whose stored document an earlier add removed is stored anew.
    for id in renewed {
        if let Some(&seq) = resolved
            .survivor_index(adds, id)
            .and_then(|j| resolved.survivors.get(j))
        {
            kept.renew(seq);
        }
    }
    changed.extend(removed.iter().map(|r| (r.id, r.fingerprint)));

    // A claimed key ends owned by its owner, or is deleted if it had one before.
    let mut key_writes: Vec<KeyWrite> = claimed
        .into_iter()
        .filter_map(|(claim, stored_owner)| {
            let key = KeyName::Add(claim.last);
            match (claim.owner, stored_owner) {
                (Some(id), _) => Some(KeyWrite::Put(key, id)),
                (None, Some(_)) => Some(KeyWrite::Delete(key)),
                (None, None) => None,
            }
        })
        .collect();
    // Claimed keys are in key order; merge in the stale ones.
    if !stale_keys.is_empty() {
        key_writes.extend(
            stale_keys
                .into_iter()
                .map(|k| KeyWrite::Delete(KeyName::Stored(k))),
        );
        key_writes.sort_by(|a, b| a.key().bytes(adds).cmp(b.key().bytes(adds)));
    }

    UpsertPlan {
        added: resolved.survivors.len() as u64 - replaced,
        replaced,
        removed: removed.len() as u64,
        superseded: resolved.superseded,
        survivors: resolved.survivors,
        added_times: kept,
        block_deletes: changed,
        doc_deletes: removed.iter().map(|r| r.id).collect(),
        key_writes,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use proptest::prelude::*;

    use super::*;
    use crate::fingerprint::Fingerprint;

    /// Adds as (id, fingerprint, key).
    struct TestAdds(Vec<(u64, u64, Option<String>)>);

    impl Adds for TestAdds {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn id(&self, seq: u32) -> u64 {
            self.0[seq as usize].0
        }
        fn fingerprint(&self, seq: u32) -> u64 {
            self.0[seq as usize].1
        }
        fn key(&self, seq: u32) -> Option<&[u8]> {
            self.0[seq as usize].2.as_deref().map(str::as_bytes)
        }
        fn ids_ascending(&self) -> bool {
            self.0.windows(2).all(|w| w[0].0 < w[1].0)
        }
        fn has_keys(&self) -> bool {
            self.0.iter().any(|a| a.2.is_some())
        }
    }

    /// A store in memory: documents, keys and block entries (fingerprint, id).
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    struct Model {
        docs: BTreeMap<u64, Document>,
        keys: BTreeMap<String, u64>,
        blocks: BTreeSet<(u64, u64)>,
    }

    impl Stored for Model {
        fn count(&self) -> u64 {
            self.docs.len() as u64
        }
        fn id_range(&self) -> Result<Option<(u64, u64)>> {
            Ok(self
                .docs
                .keys()
                .next()
                .copied()
                .zip(self.docs.keys().last().copied()))
        }
        fn documents_of(&self, ids: &[u64]) -> Result<Vec<Option<Document>>> {
            Ok(ids.iter().map(|id| self.docs.get(id).cloned()).collect())
        }
        fn owners_of(&self, keys: &[&[u8]]) -> Result<Vec<Option<u64>>> {
            Ok(keys
                .iter()
                .map(|k| self.keys.get(std::str::from_utf8(k).unwrap()).copied())
                .collect())
        }
    }

    impl Model {
        /// The reference: one add at a time, in order, each a read-modify-write.
        fn remove(&mut self, id: u64) {
            if let Some(old) = self.docs.remove(&id) {
                self.blocks.remove(&(old.fingerprint.0, id));
                if let Some(key) = old.key {
                    if self.keys.get(&key) == Some(&id) {
                        self.keys.remove(&key);
                    }
                }
            }
        }

        fn insert(&mut self, (id, fp, key): &(u64, u64, Option<String>), now: u64) {
            if let Some(key) = key {
                if let Some(&other) = self.keys.get(key) {
                    if other != *id {
                        self.remove(other);
                    }
                }
            }
            let old = self.docs.get(id).cloned();
            if let Some(old) = &old {
                self.blocks.remove(&(old.fingerprint.0, *id));
                if let Some(old_key) = &old.key {
                    if key.as_ref() != Some(old_key) && self.keys.get(old_key) == Some(id) {
                        self.keys.remove(old_key);
                    }
                }
            }
            self.blocks.insert((*fp, *id));
            if let Some(key) = key {
                self.keys.insert(key.clone(), *id);
            }
            let doc = Document {
                fingerprint: Fingerprint(*fp),
                key: key.clone(),
                text_len: None,
                added: old.map_or(now, |o| o.added),
                sketch: None,
            };
            self.docs.insert(*id, doc);
        }

        /// Applies a plan as the writers do.
        fn apply(&mut self, adds: &TestAdds, plan: &UpsertPlan, now: u64) {
            for &(id, fp) in &plan.block_deletes {
                assert!(
                    self.blocks.remove(&(fp, id)),
                    "deletes a missing block entry"
                );
            }
            for id in &plan.doc_deletes {
                assert!(self.docs.remove(id).is_some(), "deletes a missing document");
            }
            for write in &plan.key_writes {
                let key = String::from_utf8(write.key().bytes(adds).to_vec()).unwrap();
                match write {
                    KeyWrite::Put(_, id) => self.keys.insert(key, *id),
                    KeyWrite::Delete(_) => self.keys.remove(&key),
                };
            }
            for &s in &plan.survivors {
                let (id, fp, key) = &adds.0[s as usize];
                if let Some(old) = self.docs.get(id) {
                    self.blocks.remove(&(old.fingerprint.0, *id));
                }
                self.blocks.insert((*fp, *id));
                let doc = Document {
                    fingerprint: Fingerprint(*fp),
                    key: key.clone(),
                    text_len: None,
                    added: plan.added(s, now),
                    sketch: None,
                };
                self.docs.insert(*id, doc);
            }
        }
    }

    fn adds(v: &[(u64, Option<&str>)]) -> TestAdds {
        TestAdds(
            v.iter()
                .map(|&(id, key)| (id, id * 7, key.map(str::to_owned)))
                .collect(),
        )
    }

    #[test]
    fn last_add_of_each_id_wins() {
        let last = last_add_per_id(&adds(&[(5, None), (3, None), (5, None), (1, None)]));
        assert_eq!(last.seqs, [3, 1, 2]);
        assert_eq!(last.superseded, 1);
    }

    #[test]
    fn ascending_ids_need_no_sort() {
        let last = last_add_per_id(&adds(&[(1, None), (2, None), (9, None)]));
        assert_eq!((last.seqs, last.superseded), (vec![0, 1, 2], 0));
        assert!(matches!(last.order, IdOrder::Ascending));
    }

    #[test]
    fn last_claimant_of_each_key() {
        let a = adds(&[(1, Some("b")), (2, Some("a")), (3, Some("b")), (4, None)]);
        let r = resolve(&a);
        let c = &r.claims;
        let of = |f: fn(&Claim) -> u32| c.keys.iter().map(f).collect::<Vec<_>>();
        assert_eq!(of(|c| c.last), [1, 2]);
        assert_eq!(of(|c| c.first), [1, 0]);
        // Every last claimant is its id's last add, so each key ends owned by it.
        let owners: Vec<_> = c.keys.iter().map(|c| c.owner).collect();
        assert_eq!(owners, [Some(2), Some(3)]);
        // Add 2 (id 3) takes "b" from id 1, which is dropped.
        assert_eq!(c.taken_from, [1]);
        assert_eq!(r.dropped, [1]);
        assert_eq!(r.survivors, [1, 2, 3]);
    }

    #[test]
    fn seq_set() {
        let mut s = SeqSet::new(130);
        s.insert(129);
        s.insert(3);
        assert!(s.contains(129) && s.contains(3) && !s.contains(4));
        s.remove(3);
        assert!(s.contains(129) && !s.contains(3));
    }

    #[test]
    fn a_document_whose_key_is_taken_is_stored_anew() -> Result<()> {
        let mut model = Model::default();
        model.insert(&(1, 10, Some("a".into())), 5);
        // Id 2 takes "a" from stored id 1, which a later add stores again.
        let batch = TestAdds(vec![(2, 20, Some("a".into())), (1, 11, None)]);
        let plan = plan(&model, &batch)?;
        let mut expected = model.clone();
        model.apply(&batch, &plan, 9);
        for add in &batch.0 {
            expected.insert(add, 9);
        }
        assert_eq!(model, expected);
        assert_eq!(model.docs.get(&1).map(|d| d.added), Some(9));
        Ok(())
    }

    /// Adds over few ids, fingerprints and keys, so that they collide often.
    fn arb_adds(n: usize) -> impl Strategy<Value = Vec<(u64, u64, Option<String>)>> {
        proptest::collection::vec(
            (
                0u64..10,
                0u64..4,
                proptest::option::of(0u8..5).prop_map(|k| k.map(|k| format!("k{k}"))),
            ),
            0..n,
        )
    }

    proptest! {
        #[test]
        fn the_plan_equals_applying_adds_one_by_one(
            initial in arb_adds(12),
            batch in arb_adds(24),
            ascending: bool,
        ) {
            let mut model = Model::default();
            for (t, add) in initial.iter().enumerate() {
                model.insert(add, t as u64 + 1);
            }
            let mut batch = batch;
            if ascending {
                batch.sort_by_key(|a| a.0);
                batch.dedup_by_key(|a| a.0);
            }
            let batch = TestAdds(batch);
            let plan = plan(&model, &batch).unwrap();
            let now = 1_000;
            let mut expected = model.clone();
            for add in &batch.0 {
                expected.insert(add, now);
            }
            prop_assert_eq!(plan.count_after(model.count()), expected.count());
            model.apply(&batch, &plan, now);
            prop_assert_eq!(model, expected);
        }
    }
}
