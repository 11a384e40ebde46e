//! Check-then-insert is atomic: several threads insert near-duplicates of each other at the
//! same time, and exactly one document of each group gets in; the others get it back as the
//! match that kept them out.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Barrier};

use common::Rng;
use simhash_store::{Entry, Fingerprint, InsertOutcome, Result, Store};

const THREADS: usize = 6;
const GROUPS: usize = 40;

#[test]
fn one_of_each_group_gets_in() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(Store::open(dir.path())?);
    // Group g: THREADS fingerprints one bit each from the group's random centre, so two bits
    // from each other, and far from every other group.
    let mut rng = Rng::new(5);
    let centres: Vec<u64> = (0..GROUPS).map(|_| rng.next_u64()).collect();
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (store, barrier, centres) =
                (Arc::clone(&store), Arc::clone(&barrier), centres.clone());
            std::thread::spawn(move || -> Result<Vec<(usize, u64, InsertOutcome)>> {
                barrier.wait();
                let mut outcomes = Vec::new();
                for (g, &centre) in centres.iter().enumerate() {
                    let id = (g * THREADS + t) as u64;
                    let fp = Fingerprint(centre ^ (1u64 << (t * 7)));
                    let entry = Entry::new(id, fp).with_key(format!("https://example.com/{g}/{t}"));
                    outcomes.push((g, id, store.insert_if_new(entry, 3)?));
                }
                Ok(outcomes)
            })
        })
        .collect();
    let mut inserted: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
    let mut rejected = Vec::new();
    for h in handles {
        for (g, id, outcome) in h.join().expect("thread panicked")? {
            match outcome {
                InsertOutcome::Inserted => inserted.entry(g).or_default().push(id),
                InsertOutcome::Duplicate(matches) => rejected.push((g, id, matches)),
                other => panic!("unexpected outcome {other:?}"),
            }
        }
    }
    assert_eq!(inserted.len(), GROUPS);
    for (g, ids) in &inserted {
        assert_eq!(ids.len(), 1, "group {g}: {ids:?} all got in");
    }
    assert_eq!(rejected.len(), GROUPS * (THREADS - 1));
    for (g, id, matches) in rejected {
        let winner = inserted[&g][0];
        let ids: Vec<u64> = matches.iter().map(|m| m.id).collect();
        assert_eq!(ids, [winner], "document {id} of group {g}");
        assert_eq!(store.get(id)?, None);
    }
    assert_eq!(store.len(), GROUPS as u64);
    Ok(())
}

/// The document an insert replaces (same id, or same external key) does not keep it out.
#[test]
fn updating_the_same_document_is_not_a_duplicate() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    let fp = Fingerprint(0x0123_4567_89ab_cdef);
    assert!(store
        .insert_if_new(Entry::new(1, fp).with_key("https://a.example/"), 3)?
        .is_inserted());
    // Same id, slightly changed page.
    let changed = Entry::new(1, Fingerprint(fp.0 ^ 1)).with_key("https://a.example/");
    assert!(store.insert_if_new(changed, 3)?.is_inserted());
    assert_eq!(store.get(1)?, Some(Fingerprint(fp.0 ^ 1)));
    // Same key under a new id: replaces document 1.
    assert!(store
        .insert_if_new(Entry::new(2, fp).with_key("https://a.example/"), 3)?
        .is_inserted());
    assert_eq!((store.get(1)?, store.len()), (None, 1));
    // Another page that is a near-duplicate is kept out.
    let outcome = store.insert_if_new(Entry::new(3, fp).with_key("https://b.example/"), 3)?;
    assert_eq!(
        outcome.matches().iter().map(|m| m.id).collect::<Vec<_>>(),
        [2]
    );
    assert!(!outcome.is_inserted());
    Ok(())
}

#[test]
fn read_only_store_refuses() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    drop(Store::open(dir.path())?);
    let store = Store::builder().read_only(true).open(dir.path())?;
    let result = store.insert_if_new((1, Fingerprint(1)), 3);
    assert!(
        matches!(result, Err(simhash_store::Error::ReadOnly { .. })),
        "{result:?}"
    );
    Ok(())
}
