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
//! Block entries, documents and keys that the plan puts are never ones it deletes, so the
//! order in which a writer applies its puts and deletes does not matter.

use std::collections::HashSet;

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

/// Where a `keys`-family operation's key bytes are.
#[derive(Debug, Clone, Copy)]
pub(crate) enum KeyRef {
    /// The key of add number `seq`.
    Add(u32),
    /// `UpsertPlan::old_keys[i]`: a key of a stored document.
    Old(u32),
}

/// What storing a sequence of adds does to the store.
#[derive(Debug, Default)]
pub(crate) struct UpsertPlan {
    /// Sequence numbers of the surviving adds, in id order (ids distinct).
    pub(crate) survivors: Vec<u32>,
    /// `added` of each survivor that keeps the time of the stored document it replaces, by
    /// sequence number (0 = stored anew); empty when none does.
    pub(crate) old_added: Vec<u64>,
    /// (id, fingerprint) block entries to delete, in no order.
    pub(crate) block_deletes: Vec<(u64, u64)>,
    /// Document ids to delete, sorted.
    pub(crate) doc_deletes: Vec<u64>,
    /// `keys` operations (`Some(id)` = put, `None` = delete), sorted by key, keys distinct.
    pub(crate) key_ops: Vec<(KeyRef, Option<u64>)>,
    /// Keys of stored documents referenced by [`KeyRef::Old`].
    pub(crate) old_keys: Vec<String>,
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
        self.old_added
            .get(seq as usize)
            .copied()
            .filter(|&a| a != 0)
            .unwrap_or(now)
    }

    /// The bytes of a `keys` operation's key.
    pub(crate) fn key_bytes<'a, A: Adds>(&'a self, adds: &'a A, k: KeyRef) -> &'a [u8] {
        match k {
            KeyRef::Add(seq) => {
                if (seq as usize) < adds.len() {
                    adds.key(seq).unwrap_or_default()
                } else {
                    &[]
                }
            }
            KeyRef::Old(i) => self
                .old_keys
                .get(i as usize)
                .map_or(&[][..], |s| s.as_bytes()),
        }
    }
}

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

/// Sequence numbers of the last add of each id, in id order; the number superseded; and
/// the adds in id order when keys need it (`None` otherwise).
fn last_add_per_id(adds: &(impl Adds + Sync)) -> (Vec<u32>, u64, Option<IdOrder>) {
    let n = adds.len();
    if adds.ids_ascending() {
        return ((0..n as u32).collect(), 0, Some(IdOrder::Ascending));
    }
    let mut order: Vec<u128> = (0..n as u32)
        .into_par_iter()
        .map(|seq| (u128::from(adds.id(seq)) << 64) | u128::from(seq))
        .collect();
    order.par_sort_unstable();
    let mut last: Vec<u32> = Vec::with_capacity(n);
    for (i, &x) in order.iter().enumerate() {
        let id = (x >> 64) as u64;
        let next_same = order.get(i + 1).is_some_and(|&y| (y >> 64) as u64 == id);
        if !next_same {
            last.push(x as u64 as u32);
        }
    }
    let superseded = (n - last.len()) as u64;
    let order = adds.has_keys().then_some(IdOrder::Sorted(order));
    (last, superseded, order)
}

/// Who claims each key of the adds.
#[derive(Default)]
struct Claims {
    /// For every distinct key, in key order: the seq of its last claimant.
    last: Vec<u32>,
    /// Aligned with `last`: the seq of its first claimant.
    first: Vec<u32>,
    /// Ids whose document an add of another id removes by taking its key from them.
    taken_from: Vec<u64>,
}

fn claims(adds: &(impl Adds + Sync), order: &IdOrder) -> Claims {
    if !adds.has_keys() {
        return Claims::default();
    }
    let mut seqs: Vec<u32> = (0..adds.len() as u32)
        .filter(|&s| adds.key(s).is_some())
        .collect();
    let key = |s: u32| adds.key(s).unwrap_or_default();
    seqs.par_sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(a.cmp(&b)));
    let mut out = Claims::default();
    let mut group_first = 0;
    for (i, &s) in seqs.iter().enumerate() {
        let Some(&next) = seqs.get(i + 1).filter(|&&t| key(t) == key(s)) else {
            out.first.push(seqs[group_first]);
            out.last.push(s);
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
struct SeqSet(Vec<u64>);

impl SeqSet {
    fn new(n: usize) -> Self {
        SeqSet(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, s: u32) {
        if let Some(w) = self.0.get_mut(s as usize / 64) {
            *w |= 1 << (s % 64);
        }
    }
    fn contains(&self, s: u32) -> bool {
        self.0
            .get(s as usize / 64)
            .is_some_and(|w| w & (1 << (s % 64)) != 0)
    }
}

impl Store {
    /// Plans storing `adds`, in order, in this store. The caller holds the write lock until
    /// the plan is written.
    pub(crate) fn plan_upserts<A: Adds + Sync>(&self, adds: &A) -> Result<UpsertPlan> {
        plan(self, adds)
    }
}

/// Plans storing `adds`, in order, in `stored`.
fn plan<A: Adds + Sync>(stored: &impl Stored, adds: &A) -> Result<UpsertPlan> {
    let (last, superseded_by_id, order) = last_add_per_id(adds);
    // Only read for adds with keys, and then `last_add_per_id` kept it.
    let order = order.unwrap_or(IdOrder::Ascending);
    let Claims {
        last: claimants,
        first: first_claims,
        mut taken_from,
    } = claims(adds, &order);
    let mut is_last = SeqSet::new(adds.len());
    let mut claims = SeqSet::new(adds.len());
    if !claimants.is_empty() {
        for &s in &last {
            is_last.insert(s);
        }
        for &s in &claimants {
            claims.insert(s);
        }
    }
    let mut net = UpsertPlan {
        superseded: superseded_by_id,
        ..Default::default()
    };
    // Survivors, and ids dropped because a later add of another id claimed their key.
    let mut dropped: Vec<u64> = Vec::new();
    net.survivors = if claimants.is_empty() {
        last
    } else {
        let mut survivors = Vec::with_capacity(last.len());
        for s in last {
            if adds.key(s).is_none() || claims.contains(s) {
                survivors.push(s);
            } else {
                dropped.push(adds.id(s));
                net.superseded += 1;
            }
        }
        survivors
    };
    let survivor_ids = |j: usize| adds.id(net.survivors[j]);

    let claimed_key = |i: usize| adds.key(claimants[i]).unwrap_or_default();
    let is_claimed = |key: &[u8]| {
        claimants
            .binary_search_by(|&s| adds.key(s).unwrap_or_default().cmp(key))
            .is_ok()
    };

    let range = if stored.count() == 0 {
        None
    } else if net.survivors.len() < RANGE_CHECK_MIN {
        Some((0, u64::MAX))
    } else {
        stored.id_range()?
    };
    let Some((lo, hi)) = range else {
        // Nothing stored: every survivor is new, every key is a put of its survivor.
        net.added = net.survivors.len() as u64;
        net.key_ops = claimants
            .iter()
            .filter(|&&s| is_last.contains(s))
            .map(|&s| (KeyRef::Add(s), Some(adds.id(s))))
            .collect();
        return Ok(net);
    };

    // Old keys of replaced or dropped documents: deleted unless the adds claim them or they
    // no longer point to the document.
    let mut old_key_candidates: Vec<(String, u64)> = Vec::new();
    let mut removed_ids: HashSet<u64> = HashSet::new();

    // Survivors against the store, in batches of sorted ids.
    let mut j = 0;
    while j < net.survivors.len() {
        let end = (j + LOOKUP_BATCH).min(net.survivors.len());
        let ids: Vec<u64> = (j..end).map(survivor_ids).collect();
        let maybe = ids.iter().any(|&id| (lo..=hi).contains(&id));
        let olds = if maybe {
            stored.documents_of(&ids)?
        } else {
            vec![None; ids.len()]
        };
        for (off, old) in olds.into_iter().enumerate() {
            let s = net.survivors[j + off];
            let Some(old) = old else {
                net.added += 1;
                continue;
            };
            net.replaced += 1;
            if net.old_added.is_empty() {
                net.old_added = vec![0; adds.len()];
            }
            if let Some(a) = net.old_added.get_mut(s as usize) {
                *a = old.added;
            }
            if old.fingerprint.0 != adds.fingerprint(s) {
                net.block_deletes.push((adds.id(s), old.fingerprint.0));
            }
            if let Some(old_key) = old.key {
                if adds.key(s) != Some(old_key.as_bytes()) {
                    old_key_candidates.push((old_key, adds.id(s)));
                }
            }
        }
        j = end;
    }

    // Dropped ids: deleted if stored.
    dropped.sort_unstable();
    for chunk in dropped.chunks(LOOKUP_BATCH) {
        for (&id, old) in chunk.iter().zip(stored.documents_of(chunk)?) {
            if let Some(old) = old {
                net.block_deletes.push((id, old.fingerprint.0));
                net.doc_deletes.push(id);
                removed_ids.insert(id);
                if let Some(old_key) = old.key {
                    old_key_candidates.push((old_key, id));
                }
            }
        }
    }

    // Claimed keys: their stored owners are removed unless the adds store them again.
    let survivor_index = |id: u64| {
        net.survivors
            .binary_search_by(|&s| adds.id(s).cmp(&id))
            .ok()
    };
    let in_adds = |id: u64| survivor_index(id).is_some() || dropped.binary_search(&id).is_ok();
    let mut i = 0;
    let mut owners_to_remove: Vec<u64> = Vec::new();
    while i < claimants.len() {
        let end = (i + LOOKUP_BATCH).min(claimants.len());
        let batch: Vec<&[u8]> = (i..end).map(claimed_key).collect();
        let owners = stored.owners_of(&batch)?;
        for (off, owner) in owners.into_iter().enumerate() {
            let s = claimants[i + off];
            let final_owner = is_last.contains(s).then(|| adds.id(s));
            if final_owner.is_some() || owner.is_some() {
                net.key_ops.push((KeyRef::Add(s), final_owner));
            }
            if let Some(z) = owner {
                if !in_adds(z) && !removed_ids.contains(&z) {
                    owners_to_remove.push(z);
                }
                // The first claim takes the key from its stored owner, unless that is the
                // same id or an earlier add of the owner gave up the key.
                let first = first_claims.get(i + off).copied().unwrap_or(s);
                if z != adds.id(first) && order.first_add(adds, z).is_none_or(|t| t > first) {
                    taken_from.push(z);
                }
            }
        }
        i = end;
    }
    owners_to_remove.sort_unstable();
    owners_to_remove.dedup();
    for chunk in owners_to_remove.chunks(LOOKUP_BATCH) {
        for (&id, old) in chunk.iter().zip(stored.documents_of(chunk)?) {
            if let Some(old) = old {
                net.block_deletes.push((id, old.fingerprint.0));
                net.doc_deletes.push(id);
                removed_ids.insert(id);
                if let Some(old_key) = old.key {
                    old_key_candidates.push((old_key, id));
                }
            }
        }
    }
    net.removed = removed_ids.len() as u64;
    net.doc_deletes.sort_unstable();

    // A survivor whose stored document an earlier add removed is stored anew.
    if !net.old_added.is_empty() {
        for id in taken_from {
            if let Some(j) = survivor_index(id) {
                if let Some(a) = net.old_added.get_mut(net.survivors[j] as usize) {
                    *a = 0;
                }
            }
        }
    }

    // Old keys: delete those still pointing to their document and not claimed by the adds.
    old_key_candidates.retain(|(k, _)| !is_claimed(k.as_bytes()));
    old_key_candidates.sort_unstable();
    old_key_candidates.dedup_by(|a, b| a.0 == b.0);
    for chunk in old_key_candidates.chunks(LOOKUP_BATCH) {
        let batch: Vec<&[u8]> = chunk.iter().map(|(k, _)| k.as_bytes()).collect();
        for ((k, id), owner) in chunk.iter().zip(stored.owners_of(&batch)?) {
            if owner == Some(*id) {
                net.key_ops
                    .push((KeyRef::Old(net.old_keys.len() as u32), None));
                net.old_keys.push(k.clone());
            }
        }
    }
    // Claimed keys are already in key order; merge in the old ones.
    if !net.old_keys.is_empty() {
        let mut ops = std::mem::take(&mut net.key_ops);
        ops.sort_by(|a, b| net.key_bytes(adds, a.0).cmp(net.key_bytes(adds, b.0)));
        net.key_ops = ops;
    }
    Ok(net)
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
            for &(k, owner) in &plan.key_ops {
                let key = String::from_utf8(plan.key_bytes(adds, k).to_vec()).unwrap();
                match owner {
                    Some(id) => self.keys.insert(key, id),
                    None => self.keys.remove(&key),
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
        let (last, superseded, _) =
            last_add_per_id(&adds(&[(5, None), (3, None), (5, None), (1, None)]));
        assert_eq!(last, [3, 1, 2]);
        assert_eq!(superseded, 1);
    }

    #[test]
    fn ascending_ids_need_no_sort() {
        let (last, superseded, order) = last_add_per_id(&adds(&[(1, None), (2, None), (9, None)]));
        assert_eq!((last, superseded), (vec![0, 1, 2], 0));
        assert!(matches!(order, Some(IdOrder::Ascending)));
    }

    #[test]
    fn last_claimant_of_each_key() {
        let a = adds(&[(1, Some("b")), (2, Some("a")), (3, Some("b")), (4, None)]);
        let (_, _, order) = last_add_per_id(&a);
        let c = claims(&a, &order.unwrap_or(IdOrder::Ascending));
        assert_eq!(c.last, [1, 2]);
        assert_eq!(c.first, [1, 0]);
        // Add 2 (id 3) takes "b" from id 1.
        assert_eq!(c.taken_from, [1]);
    }

    #[test]
    fn seq_set() {
        let mut s = SeqSet::new(130);
        s.insert(129);
        s.insert(3);
        assert!(s.contains(129) && s.contains(3) && !s.contains(4));
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
