//! `BulkLoader::add_fingerprints` (arrays of ids and fingerprints, copied into the run on all
//! cores) gives the same store, run for run, as `BulkLoader::add` of each document in order:
//! repeated ids, ids in and out of order, adds with keys before and after, budgets from one
//! run to many.

use proptest::prelude::*;
use simhash_store::bulk::BulkSummary;
use simhash_store::{BulkOptions, Fingerprint, Store};

/// (id, fingerprint, key) of every document.
fn documents(store: &Store) -> Vec<(u64, u64, Option<String>)> {
    store
        .documents()
        .expect("documents")
        .map(|d| {
            d.map(|(id, d)| (id, d.fingerprint.0, d.key))
                .expect("document")
        })
        .collect()
}

/// A load: keyed adds, then the arrays in slices of `slice`, then more keyed adds.
fn load(
    ids: &[u64],
    fps: &[u64],
    keyed: &[(u64, u64)],
    budget: usize,
    slice: Option<usize>,
) -> (Vec<(u64, u64, Option<String>)>, BulkSummary) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    let mut loader = store
        .bulk_loader_with(BulkOptions::new().memory_budget(budget))
        .expect("loader");
    let (before, after) = keyed.split_at(keyed.len() / 2);
    for &(id, fp) in before {
        loader
            .add_with_key(id, Fingerprint(fp), &format!("k{}", id % 7))
            .expect("add");
    }
    match slice {
        Some(n) => {
            for (i, f) in ids.chunks(n).zip(fps.chunks(n)) {
                loader.add_fingerprints(i, f).expect("add_fingerprints");
            }
        }
        None => {
            for (&id, &fp) in ids.iter().zip(fps) {
                loader.add(id, Fingerprint(fp)).expect("add");
            }
        }
    }
    for &(id, fp) in after {
        loader
            .add_with_key(id, Fingerprint(fp), &format!("k{}", id % 7))
            .expect("add");
    }
    let summary = loader.finish().expect("finish");
    let report = store.verify().expect("verify");
    assert!(report.is_clean(), "{report}");
    (documents(&store), summary)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn arrays_load_as_adds_one_by_one(
        docs in prop::collection::vec((0u64..400, any::<u64>()), 0..1500),
        keyed in prop::collection::vec((0u64..400, any::<u64>()), 0..40),
        sorted in any::<bool>(),
        budget in prop::sample::select(vec![2_000usize, 20_000, 64 << 20]),
        slice in 1usize..700,
    ) {
        let mut docs = docs;
        if sorted {
            docs.sort_unstable();
            docs.dedup_by_key(|d| d.0);
        }
        let ids: Vec<u64> = docs.iter().map(|d| d.0).collect();
        let fps: Vec<u64> = docs.iter().map(|d| d.1).collect();
        let (want, want_summary) = load(&ids, &fps, &keyed, budget, None);
        let (got, got_summary) = load(&ids, &fps, &keyed, budget, Some(slice));
        prop_assert_eq!(got, want);
        prop_assert_eq!(
            (got_summary.added, got_summary.replaced, got_summary.removed, got_summary.superseded),
            (want_summary.added, want_summary.replaced, want_summary.removed, want_summary.superseded)
        );
    }
}

#[test]
fn arrays_of_different_lengths_add_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    let mut loader = store.bulk_loader().expect("loader");
    let err = loader
        .add_fingerprints(&[1, 2], &[3])
        .expect_err("lengths differ");
    assert!(
        matches!(err, simhash_store::Error::InvalidArgument(_)),
        "{err}"
    );
    loader.add_fingerprints(&[], &[]).expect("empty arrays");
    assert_eq!(loader.finish().expect("finish").added, 0);
    assert_eq!(store.len(), 0);
}
