//! The upsert planner against a sequential model of the same adds.

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
