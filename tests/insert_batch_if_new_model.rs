//! `Store::insert_batch_if_new` (and a `StagedBatch` mixing upserts and check-then-inserts)
//! against the same entries written one at a time (`Store::insert_if_new`,
//! `Store::insert_entry`) and against a reference model (`common/id_model.rs`, with a brute
//! force check): random entries over few ids, few keys and fingerprints planted at distances
//! 0..=k+1 of a few centres, on a store that already holds some of them. The outcomes (with
//! their matches) and the final stores (ids, keys, fingerprints) are the same.

mod common;

use proptest::prelude::*;
use simhash_store::{Entry, Fingerprint, InsertOutcome, Match, Store};

use common::id_model::{Doc, Model};

const CENTRES: [u64; 3] = [0, 0xdead_beef_0bad_f00d, 0x0123_4567_89ab_cdef];

/// An entry: id, key, fingerprint.
type Add = (u64, Option<u8>, u64);

/// A fingerprint `bits` flipped away from one of the centres (a flip twice cancels).
fn planted(centre: usize, bits: &[u32]) -> u64 {
    bits.iter()
        .fold(CENTRES[centre % CENTRES.len()], |fp, b| fp ^ (1 << b))
}

/// Few ids and keys, so that ids repeat and keys clash; fingerprints within `max_bits` of a
/// centre.
fn an_add(max_bits: usize) -> impl Strategy<Value = Add> {
    (
        0u64..10,
        proptest::option::of(0u8..5),
        0usize..3,
        proptest::collection::vec(0u32..64, 0..=max_bits),
    )
        .prop_map(|(id, key, centre, bits)| (id, key, planted(centre, &bits)))
}

fn entry(&(id, key, fp): &Add) -> Entry {
    let e = Entry::new(id, Fingerprint(fp));
    match key {
        Some(k) => e.with_key(format!("https://example.com/{k}")),
        None => e,
    }
}

fn model_doc(e: &Entry) -> Doc {
    Doc {
        key: e.key.clone(),
        fingerprint: e.fingerprint.0,
    }
}

/// A store holding `initial`, and the model of it.
fn store_with(initial: &[Add]) -> (tempfile::TempDir, Store, Model) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    store
        .insert_batch(initial.iter().map(entry))
        .expect("insert the initial documents");
    let mut model = Model::default();
    let adds: Vec<(u64, Doc)> = initial
        .iter()
        .map(|a| (a.0, model_doc(&entry(a))))
        .collect();
    model.apply(&adds);
    (dir, store, model)
}

/// What the model answers to a check-then-insert of `e` at `k`: the documents within `k`,
/// without the one `e` would replace (same id or key), sorted by distance, then id; the
/// model stores `e` if there is none.
fn model_insert_if_new(model: &mut Model, e: &Entry, k: u32) -> Vec<(u64, u32)> {
    let mut near: Vec<(u64, u32)> = model
        .docs
        .iter()
        .filter(|(&id, d)| id != e.id && (e.key.is_none() || d.key != e.key))
        .map(|(&id, d)| (id, (d.fingerprint ^ e.fingerprint.0).count_ones()))
        .filter(|&(_, distance)| distance <= k)
        .collect();
    near.sort_by_key(|&(id, distance)| (distance, id));
    if near.is_empty() {
        model.apply(&[(e.id, model_doc(e))]);
    }
    near
}

fn ids_and_distances(outcome: &InsertOutcome) -> Vec<(u64, u32)> {
    outcome
        .matches()
        .iter()
        .map(|m: &Match| (m.id, m.distance))
        .collect()
}

/// The store's documents and keys, as a model.
fn stored(store: &Store) -> Model {
    let model = Model::of_store(store);
    for (key, &id) in &model.keys {
        assert_eq!(store.id_for_key(key).expect("key"), Some(id), "key {key}");
    }
    assert_eq!(store.len(), model.docs.len() as u64, "the document count");
    model
}

fn check_batch(initial: &[Add], adds: &[Add], k: u32) {
    let (_batch_dir, batched, mut model) = store_with(initial);
    let (_one_dir, one_by_one, _) = store_with(initial);
    let entries: Vec<Entry> = adds.iter().map(entry).collect();

    let outcomes = batched
        .insert_batch_if_new(entries.clone(), k)
        .expect("insert_batch_if_new");
    assert_eq!(outcomes.len(), entries.len());
    for (i, (e, outcome)) in entries.iter().zip(&outcomes).enumerate() {
        let alone = one_by_one
            .insert_if_new(e.clone(), k)
            .expect("insert_if_new");
        assert_eq!(outcome, &alone, "entry {i} ({e:?}) at k = {k}");
        let expected = model_insert_if_new(&mut model, e, k);
        assert_eq!(ids_and_distances(outcome), expected, "entry {i} ({e:?})");
    }
    let final_batched = stored(&batched);
    assert_eq!(
        final_batched,
        stored(&one_by_one),
        "batch against one by one"
    );
    assert_eq!(final_batched, model, "batch against the model");
    assert!(batched.verify().expect("verify").is_clean());
}

/// One write of a staged batch: an upsert (`None`) or a check-then-insert at `k`.
type Write = (Add, Option<u32>);

fn check_staged(initial: &[Add], writes: &[Write]) {
    let (_staged_dir, staged, mut model) = store_with(initial);
    let (_one_dir, one_by_one, _) = store_with(initial);

    let mut batch = staged.staged_batch().expect("staged batch");
    for (i, (add, k)) in writes.iter().enumerate() {
        let e = entry(add);
        match *k {
            None => {
                batch.insert(e.clone()).expect("stage an upsert");
                one_by_one.insert_entry(e.clone()).expect("insert_entry");
                model.apply(&[(e.id, model_doc(&e))]);
            }
            Some(k) => {
                let outcome = batch.insert_if_new(e.clone(), k).expect("stage");
                let alone = one_by_one.insert_if_new(e.clone(), k).expect("alone");
                assert_eq!(outcome, alone, "write {i} ({e:?}) at k = {k}");
                let expected = model_insert_if_new(&mut model, &e, k);
                assert_eq!(ids_and_distances(&outcome), expected, "write {i}");
            }
        }
        for key in 0..5u8 {
            let key = format!("https://example.com/{key}");
            let holder = batch.key_holder(&key).expect("key holder");
            assert_eq!(
                holder.map(|h| h.id()),
                one_by_one.id_for_key(&key).expect("id for key"),
                "holder of {key} after write {i}"
            );
        }
    }
    batch.commit().expect("commit");
    let final_staged = stored(&staged);
    assert_eq!(
        final_staged,
        stored(&one_by_one),
        "staged against one by one"
    );
    assert_eq!(final_staged, model, "staged against the model");
    assert!(staged.verify().expect("verify").is_clean());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_batch_decides_as_if_each_entry_were_inserted_alone(
        initial in proptest::collection::vec(an_add(4), 0..8),
        adds in proptest::collection::vec(an_add(5), 0..16),
        k in 0u32..=4,
    ) {
        check_batch(&initial, &adds, k);
    }

    #[test]
    fn a_staged_batch_of_upserts_and_checks_equals_them_one_by_one(
        initial in proptest::collection::vec(an_add(4), 0..8),
        writes in proptest::collection::vec(
            (an_add(5), proptest::option::of(0u32..=4)),
            0..16,
        ),
    ) {
        check_staged(&initial, &writes);
    }
}

/// An entry whose stored near-duplicate an earlier entry of the batch replaced (same id) or
/// removed (took its key) is stored; one near an entry stored earlier in the batch is not,
/// unless it replaces that entry.
#[test]
fn earlier_entries_of_the_batch_count_and_what_they_displace_does_not() {
    let initial = [(1, Some(0), CENTRES[0]), (2, Some(1), CENTRES[1])];
    let adds = [
        (1, None, CENTRES[2]),           // 1 moves away from centre 0
        (3, None, CENTRES[0] ^ 1),       // near what 1 was: stored
        (4, Some(1), 0xffff_0000),       // takes key 1: 2 is removed
        (5, None, CENTRES[1] ^ 3),       // near what 2 was: stored
        (6, None, CENTRES[0] ^ 2),       // near 3, stored just before: not stored
        (3, Some(4), CENTRES[0] ^ 0b11), // near its own earlier version only: stored
    ];
    check_batch(&initial, &adds, 2);
    let (_dir, store, _) = store_with(&initial);
    let outcomes = store
        .insert_batch_if_new(adds.iter().map(entry), 2)
        .expect("insert");
    let inserted: Vec<bool> = outcomes.iter().map(InsertOutcome::is_inserted).collect();
    assert_eq!(inserted, [true, true, true, true, false, true]);
    assert_eq!(ids_and_distances(&outcomes[4]), [(3, 2)]);
}
