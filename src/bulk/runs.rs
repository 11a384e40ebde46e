//! A run: the documents gathered in memory up to the budget, and the net effect of applying
//! them to the store ([`plan`]).
//!
//! The net effect is what `insert_batch` of the run's adds, in order, would do, computed with
//! sorts instead of one read-modify-write per document:
//!
//! 1. The last add of each id wins; earlier adds of the id are superseded.
//! 2. For each external key, the last add naming it (over *all* adds, superseded or not)
//!    claims it. An id whose last add names a key that a later add of another id claims is
//!    dropped: in order, that later add would have removed it.
//! 3. Against the store: a surviving document replaces the stored one with its id (its old
//!    block entries and old key are deleted); a dropped id is deleted from the store; a
//!    stored document whose key is claimed by the run, and that the run does not add, is
//!    removed. A key ends owned by its last claimant if that add survives, else it is
//!    deleted.
//!
//! The only thing that can differ from `insert_batch` is `Document::added` of a document that
//! the run both removes (through its key) and adds again: here it keeps its first `added`.

use std::collections::HashSet;

use rayon::prelude::*;

use crate::codec::{self, Document, DocumentRef};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::keys::{self, DOCS_FAMILY, KEYS_FAMILY, MAX_EXTERNAL_KEY_LEN};
use crate::sketch::Sketch;
use crate::store::Store;

/// `text_len` of a document that has none.
const NO_TEXT_LEN: u64 = u64::MAX;
/// Ids read from the store per multi-get.
const LOOKUP_BATCH: usize = 4096;

/// One add. The key is packed as `offset << 16 | length` into the run's key arena; length 0
/// means no key (keys have 1..=4096 bytes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rec {
    pub(crate) id: u64,
    pub(crate) fp: u64,
    text_len: u64,
    key: u64,
}

impl Rec {
    pub(crate) fn text_len(&self) -> Option<u64> {
        (self.text_len != NO_TEXT_LEN).then_some(self.text_len)
    }
}

/// The adds of one run, in add order (the index of an add is its sequence number).
#[derive(Debug, Default)]
pub(crate) struct RunBuffer {
    pub(crate) recs: Vec<Rec>,
    arena: Vec<u8>,
    /// The sketches of the adds, by sequence number: empty while no add has had one.
    sketches: Vec<Option<Sketch>>,
    keyed: usize,
    /// Whether ids so far are strictly increasing (then no id repeats and no sort is needed).
    ascending: bool,
}

/// Memory per add besides its key: the record, and the sort vectors of the write phase.
pub(crate) const BYTES_PER_ADD: usize = std::mem::size_of::<Rec>() + 24;

impl RunBuffer {
    pub(crate) fn new() -> Self {
        RunBuffer {
            ascending: true,
            ..Default::default()
        }
    }

    /// A buffer with room for as many adds as `budget` bytes hold (at most 64 Mi), so that
    /// growing it never doubles past the budget. Only touched pages become resident.
    pub(crate) fn with_budget(budget: usize) -> Self {
        let mut buf = RunBuffer::new();
        buf.recs.reserve((budget / BYTES_PER_ADD).min(1 << 26));
        buf
    }

    pub(crate) fn len(&self) -> usize {
        self.recs.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// Approximate memory held and to be needed to write the run.
    pub(crate) fn bytes(&self) -> usize {
        self.recs.len() * BYTES_PER_ADD
            + self.arena.len()
            + self.sketches.len() * std::mem::size_of::<Option<Sketch>>()
    }

    /// Checks an external key as `insert_entry` does.
    pub(crate) fn check_key(id: u64, key: &str) -> Result<()> {
        if key.is_empty() || key.len() > MAX_EXTERNAL_KEY_LEN {
            return Err(Error::InvalidArgument(format!(
                "document {id}: an external key must have 1..={MAX_EXTERNAL_KEY_LEN} bytes, this one has {}",
                key.len()
            )));
        }
        Ok(())
    }

    /// Adds a document without a sketch; the key must have passed [`RunBuffer::check_key`].
    #[cfg(test)]
    pub(crate) fn push(
        &mut self,
        id: u64,
        fp: Fingerprint,
        key: Option<&str>,
        text_len: Option<u64>,
    ) {
        self.push_sketched(id, fp, key, text_len, None);
    }

    /// Adds a document; the key must have passed [`RunBuffer::check_key`].
    pub(crate) fn push_sketched(
        &mut self,
        id: u64,
        fp: Fingerprint,
        key: Option<&str>,
        text_len: Option<u64>,
        sketch: Option<&Sketch>,
    ) {
        if sketch.is_some() || !self.sketches.is_empty() {
            self.sketches.resize(self.recs.len(), None);
            self.sketches.push(sketch.copied());
        }
        if let Some(last) = self.recs.last() {
            self.ascending &= last.id < id;
        }
        let key = match key {
            Some(k) => {
                let packed = ((self.arena.len() as u64) << 16) | k.len() as u64;
                self.arena.extend_from_slice(k.as_bytes());
                self.keyed += 1;
                packed
            }
            None => 0,
        };
        self.recs.push(Rec {
            id,
            fp: fp.0,
            text_len: text_len.map_or(NO_TEXT_LEN, |l| l.min(NO_TEXT_LEN - 1)),
            key,
        });
    }

    /// The external key of `rec`.
    pub(crate) fn key(&self, rec: &Rec) -> Option<&[u8]> {
        let len = (rec.key & 0xffff) as usize;
        if len == 0 {
            return None;
        }
        let start = (rec.key >> 16) as usize;
        self.arena.get(start..start + len)
    }

    /// The external key of `rec` as text (keys came in as `&str`: always valid UTF-8).
    fn key_str(&self, rec: &Rec) -> Option<&str> {
        self.key(rec).and_then(|k| std::str::from_utf8(k).ok())
    }

    /// The document that surviving add `seq`, `rec`, stores.
    pub(crate) fn document(&self, seq: u32, rec: &Rec, added: u64) -> DocumentRef<'_> {
        DocumentRef {
            fingerprint: Fingerprint(rec.fp),
            key: self.key_str(rec),
            text_len: rec.text_len(),
            added,
            sketch: self.sketches.get(seq as usize).and_then(Option::as_ref),
        }
    }
}

/// Where a `keys`-family operation's key bytes are.
#[derive(Debug, Clone, Copy)]
pub(crate) enum KeyRef {
    /// The key of add number `seq` of the run.
    Add(u32),
    /// `Net::old_keys[i]`: a key of a stored document.
    Old(u32),
}

/// The net effect of a run on the store.
#[derive(Debug, Default)]
pub(crate) struct Net {
    /// Sequence numbers of the surviving adds, in id order (ids distinct).
    pub(crate) survivors: Vec<u32>,
    /// `added` of each survivor that replaces a stored document, by sequence number (0 = a
    /// new document); empty when none does.
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

impl Net {
    /// The document count after the run, from the count before it.
    pub(crate) fn count_after(&self, before: u64) -> u64 {
        (before + self.added).saturating_sub(self.removed)
    }

    /// The bytes of a `keys` operation's key.
    pub(crate) fn key_bytes<'a>(&'a self, buf: &'a RunBuffer, k: KeyRef) -> &'a [u8] {
        match k {
            KeyRef::Add(seq) => buf
                .recs
                .get(seq as usize)
                .and_then(|r| buf.key(r))
                .unwrap_or_default(),
            KeyRef::Old(i) => self
                .old_keys
                .get(i as usize)
                .map_or(&[][..], |s| s.as_bytes()),
        }
    }
}

/// Sequence numbers of the last add of each id, in id order; and the number superseded.
fn last_add_per_id(buf: &RunBuffer) -> (Vec<u32>, u64) {
    let n = buf.recs.len();
    if buf.ascending {
        return ((0..n as u32).collect(), 0);
    }
    let mut order: Vec<u128> = buf
        .recs
        .par_iter()
        .enumerate()
        .map(|(seq, r)| (u128::from(r.id) << 64) | seq as u128)
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
    (last, superseded)
}

/// For every distinct key of the run, in key order: (seq of its last claimant).
fn last_claimants(buf: &RunBuffer) -> Vec<u32> {
    if buf.keyed == 0 {
        return Vec::new();
    }
    let mut seqs: Vec<u32> = (0..buf.recs.len() as u32)
        .filter(|&s| buf.recs[s as usize].key != 0)
        .collect();
    let key = |s: u32| buf.key(&buf.recs[s as usize]).unwrap_or_default();
    seqs.par_sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(a.cmp(&b)));
    let mut out = Vec::new();
    for (i, &s) in seqs.iter().enumerate() {
        let next_same = seqs.get(i + 1).is_some_and(|&t| key(t) == key(s));
        if !next_same {
            out.push(s);
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

/// The smallest and largest stored document ids, if any.
fn stored_id_range(store: &Store) -> Result<Option<(u64, u64)>> {
    let mut it = store.db.raw_iterator_cf(store.cf(DOCS_FAMILY)?);
    it.seek_to_first();
    let first = it.key().and_then(keys::decode_doc_key);
    it.seek_to_last();
    let last = it.key().and_then(keys::decode_doc_key);
    it.status()
        .map_err(|e| store.rocks_err("read the id range", Some(DOCS_FAMILY), e))?;
    Ok(first.zip(last))
}

/// Stored documents of `ids` (sorted), aligned with them.
fn lookup_docs(store: &Store, ids: &[u64]) -> Result<Vec<Option<Document>>> {
    let cf = store.cf(DOCS_FAMILY)?;
    let keys: Vec<[u8; keys::DOC_KEY_LEN]> = ids.iter().map(|&id| keys::doc_key(id)).collect();
    let found = store.db.batched_multi_get_cf(cf, &keys, true);
    found
        .into_iter()
        .zip(&keys)
        .map(|(r, key)| match r {
            Ok(Some(v)) => codec::decode_document(&v, key).map(Some),
            Ok(None) => Ok(None),
            Err(e) => Err(store.rocks_err("read documents", Some(DOCS_FAMILY), e)),
        })
        .collect()
}

/// Stored owners of `keys` (sorted), aligned with them.
fn lookup_keys(store: &Store, keys: &[&[u8]]) -> Result<Vec<Option<u64>>> {
    let cf = store.cf(KEYS_FAMILY)?;
    let found = store.db.batched_multi_get_cf(cf, keys, true);
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
            Err(e) => Err(store.rocks_err("read keys", Some(KEYS_FAMILY), e)),
        })
        .collect()
}

/// Computes the net effect of the run on the store. The caller holds the write lock.
pub(crate) fn plan(store: &Store, buf: &RunBuffer) -> Result<Net> {
    let (last, superseded_by_id) = last_add_per_id(buf);
    let claimants = last_claimants(buf);
    let mut is_last = SeqSet::new(buf.len());
    let mut claims = SeqSet::new(buf.len());
    if !claimants.is_empty() {
        for &s in &last {
            is_last.insert(s);
        }
        for &s in &claimants {
            claims.insert(s);
        }
    }
    let mut net = Net {
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
            let rec = &buf.recs[s as usize];
            if rec.key == 0 || claims.contains(s) {
                survivors.push(s);
            } else {
                dropped.push(rec.id);
                net.superseded += 1;
            }
        }
        survivors
    };
    let survivor_ids = |j: usize| buf.recs[net.survivors[j] as usize].id;

    let claimed_key = |i: usize| {
        buf.key(&buf.recs[claimants[i] as usize])
            .unwrap_or_default()
    };
    let is_claimed = |key: &[u8]| {
        claimants
            .binary_search_by(|&s| buf.key(&buf.recs[s as usize]).unwrap_or_default().cmp(key))
            .is_ok()
    };

    let range = if store.is_empty() {
        None
    } else {
        stored_id_range(store)?
    };
    let Some((lo, hi)) = range else {
        // Nothing stored: every survivor is new, every key is a put of its survivor.
        net.added = net.survivors.len() as u64;
        net.key_ops = claimants
            .iter()
            .filter(|&&s| is_last.contains(s))
            .map(|&s| (KeyRef::Add(s), Some(buf.recs[s as usize].id)))
            .collect();
        return Ok(net);
    };

    // Old keys of replaced or dropped documents: deleted unless the run claims them or they
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
            lookup_docs(store, &ids)?
        } else {
            vec![None; ids.len()]
        };
        for (off, old) in olds.into_iter().enumerate() {
            let jj = j + off;
            let rec = &buf.recs[net.survivors[jj] as usize];
            let Some(old) = old else {
                net.added += 1;
                continue;
            };
            net.replaced += 1;
            if net.old_added.is_empty() {
                net.old_added = vec![0; buf.len()];
            }
            if let Some(a) = net.old_added.get_mut(net.survivors[jj] as usize) {
                *a = old.added;
            }
            if old.fingerprint.0 != rec.fp {
                net.block_deletes.push((rec.id, old.fingerprint.0));
            }
            if let Some(old_key) = old.key {
                if buf.key(rec) != Some(old_key.as_bytes()) {
                    old_key_candidates.push((old_key, rec.id));
                }
            }
        }
        j = end;
    }

    // Dropped ids: deleted if stored.
    dropped.sort_unstable();
    for chunk in dropped.chunks(LOOKUP_BATCH) {
        for (&id, old) in chunk.iter().zip(lookup_docs(store, chunk)?) {
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

    // Claimed keys: their stored owners are removed unless the run adds them again.
    let in_run = |id: u64| {
        net.survivors
            .binary_search_by(|&s| buf.recs[s as usize].id.cmp(&id))
            .is_ok()
            || dropped.binary_search(&id).is_ok()
    };
    let mut i = 0;
    let mut owners_to_remove: Vec<u64> = Vec::new();
    while i < claimants.len() {
        let end = (i + LOOKUP_BATCH).min(claimants.len());
        let batch: Vec<&[u8]> = (i..end).map(claimed_key).collect();
        let owners = lookup_keys(store, &batch)?;
        for (off, owner) in owners.into_iter().enumerate() {
            let s = claimants[i + off];
            let final_owner = is_last.contains(s).then(|| buf.recs[s as usize].id);
            if final_owner.is_some() || owner.is_some() {
                net.key_ops.push((KeyRef::Add(s), final_owner));
            }
            if let Some(z) = owner {
                if !in_run(z) && !removed_ids.contains(&z) {
                    owners_to_remove.push(z);
                }
            }
        }
        i = end;
    }
    owners_to_remove.sort_unstable();
    owners_to_remove.dedup();
    for chunk in owners_to_remove.chunks(LOOKUP_BATCH) {
        for (&id, old) in chunk.iter().zip(lookup_docs(store, chunk)?) {
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

    // Old keys: delete those still pointing to their document and not claimed by the run.
    old_key_candidates.retain(|(k, _)| !is_claimed(k.as_bytes()));
    old_key_candidates.sort_unstable();
    old_key_candidates.dedup_by(|a, b| a.0 == b.0);
    for chunk in old_key_candidates.chunks(LOOKUP_BATCH) {
        let batch: Vec<&[u8]> = chunk.iter().map(|(k, _)| k.as_bytes()).collect();
        for ((k, id), owner) in chunk.iter().zip(lookup_keys(store, &batch)?) {
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
        ops.sort_by(|a, b| net.key_bytes(buf, a.0).cmp(net.key_bytes(buf, b.0)));
        net.key_ops = ops;
    }
    Ok(net)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(adds: &[(u64, Option<&str>)]) -> RunBuffer {
        let mut b = RunBuffer::new();
        for &(id, key) in adds {
            b.push(id, Fingerprint(id * 7), key, None);
        }
        b
    }

    #[test]
    fn last_add_of_each_id_wins() {
        let b = buffer(&[(5, None), (3, None), (5, None), (1, None)]);
        let (last, superseded) = last_add_per_id(&b);
        assert_eq!(last, [3, 1, 2]);
        assert_eq!(superseded, 1);
    }

    #[test]
    fn ascending_ids_need_no_sort() {
        let b = buffer(&[(1, None), (2, None), (9, None)]);
        assert!(b.ascending);
        assert_eq!(last_add_per_id(&b), (vec![0, 1, 2], 0));
    }

    #[test]
    fn last_claimant_of_each_key() {
        let b = buffer(&[(1, Some("b")), (2, Some("a")), (3, Some("b")), (4, None)]);
        assert_eq!(last_claimants(&b), [1, 2]);
    }

    #[test]
    fn keys_unpack() {
        let b = buffer(&[(1, Some("xy")), (2, None), (3, Some("z"))]);
        assert_eq!(b.key(&b.recs[0]), Some(&b"xy"[..]));
        assert_eq!(b.key(&b.recs[1]), None);
        assert_eq!(b.key(&b.recs[2]), Some(&b"z"[..]));
    }

    #[test]
    fn seq_set() {
        let mut s = SeqSet::new(130);
        s.insert(129);
        s.insert(3);
        assert!(s.contains(129) && s.contains(3) && !s.contains(4));
    }
}
