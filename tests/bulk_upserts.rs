//! Upserts: loading into a store that holds documents replaces ids and external keys rather
//! than doubling them, across loads and within one load (the last add wins), exactly as
//! `insert_batch` of the same adds in the same order would.

mod common;

use common::Rng;
use proptest::prelude::*;
use simhash_store::{BulkOptions, Entry, Fingerprint, Result, Store};

type Docs = Vec<(u64, Fingerprint, Option<String>)>;

fn documents(store: &Store) -> Result<Docs> {
    store
        .documents()?
        .map(|d| d.map(|(id, d)| (id, d.fingerprint, d.key)))
        .collect()
}

fn clean(store: &Store) -> Result<()> {
    let report = store.verify()?;
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.documents, store.len());
    Ok(())
}

#[test]
fn ids_and_keys_are_replaced_across_loads() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    store.insert_entry(Entry::new(1, Fingerprint(0x1111)).with_key("a"))?;
    store.insert_entry(Entry::new(2, Fingerprint(0x2222)).with_key("b"))?;
    store.insert(3, Fingerprint(0x3333))?;

    let mut loader = store.bulk_loader()?;
    loader.add(1, Fingerprint(0xaaaa_0000_0000_1111))?; // replaces 1, drops its key "a"
    loader.add_with_key(4, Fingerprint(0x4444), "b")?; // takes "b": document 2 is removed
    loader.add_with_key(5, Fingerprint(0x5555), "a")?; // "a" is free again
    loader.add(3, Fingerprint(0x3333))?; // same fingerprint: nothing changes but text_len
    let s = loader.finish()?;
    assert_eq!(
        (s.added, s.replaced, s.removed, s.superseded),
        (2, 2, 1, 0),
        "{s}"
    );

    assert_eq!(
        documents(&store)?,
        vec![
            (1, Fingerprint(0xaaaa_0000_0000_1111), None),
            (3, Fingerprint(0x3333), None),
            (4, Fingerprint(0x4444), Some("b".into())),
            (5, Fingerprint(0x5555), Some("a".into())),
        ]
    );
    assert_eq!(store.id_for_key("a")?, Some(5));
    assert_eq!(store.id_for_key("b")?, Some(4));
    assert!(store.query(Fingerprint(0x1111), 0)?.is_empty());
    assert!(store.query(Fingerprint(0x2222), 0)?.is_empty());
    assert_eq!(store.len(), 4);
    clean(&store)?;

    // The same load again changes nothing.
    let mut loader = store.bulk_loader()?;
    loader.add(1, Fingerprint(0xaaaa_0000_0000_1111))?;
    loader.add_with_key(4, Fingerprint(0x4444), "b")?;
    let s = loader.finish()?;
    assert_eq!((s.added, s.replaced, s.removed), (0, 2, 0), "{s}");
    assert_eq!(store.len(), 4);
    clean(&store)
}

#[test]
fn within_one_load_the_last_add_wins() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    let mut loader = store.bulk_loader()?;
    loader.add(7, Fingerprint(1))?;
    loader.add_with_key(8, Fingerprint(2), "k")?;
    loader.add(7, Fingerprint(3))?;
    loader.add_with_key(9, Fingerprint(4), "k")?; // takes "k" from 8, which is dropped
    let s = loader.finish()?;
    assert_eq!((s.added, s.superseded), (2, 2), "{s}");
    assert_eq!(
        documents(&store)?,
        vec![
            (7, Fingerprint(3), None),
            (9, Fingerprint(4), Some("k".into()))
        ]
    );
    clean(&store)
}

/// One add: (id, fingerprint, key).
type Add = (u64, u64, Option<String>);

fn apply_insert_batch(initial: &[Add], adds: &[Add]) -> Result<Docs> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    store.insert_batch(initial.iter().map(entry))?;
    store.insert_batch(adds.iter().map(entry))?;
    clean(&store)?;
    documents(&store)
}

fn apply_bulk(initial: &[Add], adds: &[Add], budget: usize) -> Result<Docs> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    store.insert_batch(initial.iter().map(entry))?;
    let mut loader = store.bulk_loader_with(BulkOptions::new().memory_budget(budget))?;
    for (id, fp, key) in adds {
        match key {
            Some(k) => loader.add_with_key(*id, Fingerprint(*fp), k)?,
            None => loader.add(*id, Fingerprint(*fp))?,
        }
    }
    loader.finish()?;
    clean(&store)?;
    let docs = documents(&store)?;
    assert_eq!(store.len(), docs.len() as u64);
    Ok(docs)
}

fn entry(a: &Add) -> Entry {
    let e = Entry::new(a.0, Fingerprint(a.1));
    match &a.2 {
        Some(k) => e.with_key(k.clone()),
        None => e,
    }
}

/// Adds over few ids, few fingerprints and few keys, so that they collide often.
fn adds(rng: &mut Rng, n: usize) -> Vec<Add> {
    (0..n)
        .map(|_| {
            let id = rng.below(12);
            let fp = rng.below(6) * 0x0101_0101_0101_0101;
            let key = (rng.below(3) != 0).then(|| format!("k{}", rng.below(6)));
            (id, fp, key)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn bulk_equals_insert_batch(seed: u64, initial_n in 0usize..12, n in 1usize..30, tiny_budget: bool) {
        let mut rng = Rng::new(seed);
        let initial = adds(&mut rng, initial_n);
        let load = adds(&mut rng, n);
        // A tiny budget makes every add its own run.
        let budget = if tiny_budget { 1 } else { 1 << 20 };
        let expected = apply_insert_batch(&initial, &load).unwrap();
        let got = apply_bulk(&initial, &load, budget).unwrap();
        prop_assert_eq!(got, expected);
    }
}
