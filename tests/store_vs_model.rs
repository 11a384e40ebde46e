//! The store against a `BTreeMap` model: random sequences of inserts (with and without keys,
//! new and existing ids, colliding keys), removals by id and by key, batches, and queries. After
//! every step the store answers like the model; at the end `verify()` is clean and a reopened
//! store still agrees.

mod common;

use std::collections::BTreeMap;

use proptest::prelude::*;
use simhash_store::{Entry, Fingerprint, Result, Store};

#[derive(Debug, Clone)]
enum Op {
    Insert { id: u64, fp: u64, key: Option<u8> },
    Batch(Vec<(u64, u64, Option<u8>)>),
    Remove(u64),
    RemoveKey(u8),
    Query { fp: u64, k: u32 },
}

/// Few ids, few keys and fingerprints near a few centres, so operations collide often.
fn op() -> impl Strategy<Value = Op> {
    let id = 0u64..12;
    let key = proptest::option::of(0u8..6);
    let fp = (0usize..3, proptest::collection::vec(0u32..64, 0..5)).prop_map(|(c, bits)| {
        let centres = [0u64, 0xdead_beef_0bad_f00d, 0x0123_4567_89ab_cdef];
        bits.iter().fold(centres[c], |acc, b| acc ^ (1 << b))
    });
    prop_oneof![
        4 => (id.clone(), fp.clone(), key.clone()).prop_map(|(id, fp, key)| Op::Insert { id, fp, key }),
        1 => proptest::collection::vec((id.clone(), fp.clone(), key), 0..5).prop_map(Op::Batch),
        2 => id.prop_map(Op::Remove),
        1 => (0u8..6).prop_map(Op::RemoveKey),
        3 => (fp, 0u32..9).prop_map(|(fp, k)| Op::Query { fp, k }),
    ]
}

#[derive(Default)]
struct Model {
    docs: BTreeMap<u64, (u64, Option<String>)>,
}

impl Model {
    fn insert(&mut self, id: u64, fp: u64, key: Option<String>) {
        if let Some(k) = &key {
            // A key names one document: its previous holder is replaced.
            let holder = self
                .docs
                .iter()
                .find(|(_, (_, dk))| dk.as_ref() == Some(k))
                .map(|(&i, _)| i);
            if let Some(other) = holder.filter(|&o| o != id) {
                self.docs.remove(&other);
            }
        }
        self.docs.insert(id, (fp, key));
    }

    fn remove_key(&mut self, key: &str) -> Option<u64> {
        let id = self
            .docs
            .iter()
            .find(|(_, (_, k))| k.as_deref() == Some(key))
            .map(|(&i, _)| i)?;
        self.docs.remove(&id);
        Some(id)
    }

    fn query(&self, q: u64, k: u32) -> Vec<(u32, u64, Option<String>)> {
        let mut v: Vec<_> = self
            .docs
            .iter()
            .map(|(&id, (fp, key))| ((fp ^ q).count_ones(), id, key.clone()))
            .filter(|&(d, _, _)| d <= k)
            .collect();
        v.sort();
        v
    }
}

fn key_name(k: u8) -> String {
    format!("https://site.example/{k}")
}

fn entry(id: u64, fp: u64, key: Option<u8>) -> Entry {
    let mut e = Entry::new(id, Fingerprint(fp));
    e.key = key.map(key_name);
    e
}

/// Runs `ops` on a new store, then checks it reopened, as written (format 8) or rewritten in
/// format 7 (chunks with their ids inline) or 6 (the entries layout), which this build reads
/// only.
fn run(ops: &[Op], format: u32) -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut model = Model::default();
    {
        let store = Store::open(dir.path())?;
        for op in ops {
            match op {
                Op::Insert { id, fp, key } => {
                    store.insert_entry(entry(*id, *fp, *key))?;
                    model.insert(*id, *fp, key.map(key_name));
                }
                Op::Batch(items) => {
                    store.insert_batch(items.iter().map(|&(id, fp, key)| entry(id, fp, key)))?;
                    for &(id, fp, key) in items {
                        model.insert(id, fp, key.map(key_name));
                    }
                }
                Op::Remove(id) => assert_eq!(store.remove(*id)?, model.docs.remove(id).is_some()),
                Op::RemoveKey(k) => assert_eq!(
                    store.remove_key(&key_name(*k))?,
                    model.remove_key(&key_name(*k))
                ),
                Op::Query { fp, k } => {
                    let got: Vec<_> = store
                        .query(Fingerprint(*fp), *k)?
                        .into_iter()
                        .map(|m| (m.distance, m.id, m.key))
                        .collect();
                    assert_eq!(got, model.query(*fp, *k), "after {op:?}");
                }
            }
            assert_eq!(store.len(), model.docs.len() as u64, "after {op:?}");
        }
        let report = store.verify()?;
        assert!(report.is_clean(), "{report}");
    }
    common::legacy::rewrite_as(dir.path(), format);
    let store = Store::open(dir.path())?;
    assert_eq!(store.format_version(), format);
    let report = store.verify()?;
    assert!(report.is_clean(), "{report}");
    for (&fp, k) in model
        .docs
        .values()
        .map(|(fp, _)| fp)
        .zip([0, 3, 5, 8].iter().cycle())
    {
        let got: Vec<_> = store
            .query(Fingerprint(fp), *k)?
            .into_iter()
            .map(|m| (m.distance, m.id, m.key))
            .collect();
        assert_eq!(got, model.query(fp, *k), "reopened, query {fp:016x} k={k}");
    }
    for (&id, (fp, key)) in &model.docs {
        let doc = store.document(id)?.expect("document survives reopen");
        assert_eq!((doc.fingerprint.0, &doc.key), (*fp, key));
        if let Some(k) = key {
            assert_eq!(store.id_for_key(k)?, Some(id));
        }
    }
    assert_eq!(store.len(), model.docs.len() as u64);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn store_behaves_like_the_model(ops in proptest::collection::vec(op(), 1..60), format in 6u32..=9) {
        run(&ops, format).unwrap();
    }
}
