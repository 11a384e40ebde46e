//! A bulk load gives the same store as `insert_batch` of the same documents: the same
//! documents, queries equal to brute force, `verify()` clean, the right count. With a tiny
//! memory budget the load is split into many runs.

mod common;

use common::{brute_force, planted, Rng};
use simhash_store::{BulkOptions, Entry, Fingerprint, Result, Store};

/// (id, fingerprint, key, text length) of every document.
type Docs = Vec<(u64, Fingerprint, Option<String>, Option<u64>)>;

fn documents(store: &Store) -> Result<Docs> {
    store
        .documents()?
        .map(|d| d.map(|(id, d)| (id, d.fingerprint, d.key, d.text_len)))
        .collect()
}

fn check(budget: usize, expected_runs: impl Fn(u32) -> bool) -> Result<()> {
    let mut rng = Rng::new(7);
    let (mut docs, queries) = planted(&mut rng, 3000, 40, 5);
    // Ids out of order, so the loader has to sort them.
    rng.shuffle(&mut docs);

    let a_dir = tempfile::tempdir().expect("tempdir");
    let a = Store::open(a_dir.path())?;
    a.insert_batch(docs.iter().map(|&(id, fp)| {
        let e = Entry::new(id, Fingerprint(fp));
        if id % 3 == 0 {
            e.with_key(format!("https://example.com/{id}"))
        } else {
            e
        }
    }))?;

    let b_dir = tempfile::tempdir().expect("tempdir");
    let b = Store::open(b_dir.path())?;
    let mut loader = b.bulk_loader_with(BulkOptions::new().memory_budget(budget))?;
    for &(id, fp) in &docs {
        if id % 3 == 0 {
            loader.add_with_key(id, Fingerprint(fp), &format!("https://example.com/{id}"))?;
        } else {
            loader.add(id, Fingerprint(fp))?;
        }
    }
    let summary = loader.finish()?;
    assert_eq!(summary.added, docs.len() as u64, "{summary}");
    assert_eq!(
        (summary.replaced, summary.removed, summary.superseded),
        (0, 0, 0),
        "{summary}"
    );
    assert!(expected_runs(summary.runs), "{summary}");

    assert_eq!(b.len(), docs.len() as u64);
    assert_eq!(documents(&b)?, documents(&a)?);
    let report = b.verify()?;
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.documents, docs.len() as u64);
    for &q in &queries {
        for k in [0, 3, 6] {
            let got: Vec<(u32, u64, u64)> = b
                .query(Fingerprint(q), k)?
                .iter()
                .map(|m| (m.distance, m.id, m.fingerprint.0))
                .collect();
            assert_eq!(got, brute_force(&docs, q, k), "query {q:016x} k={k}");
        }
    }
    // And after reopening.
    drop(b);
    let b = Store::open(b_dir.path())?;
    assert_eq!(b.len(), docs.len() as u64);
    assert!(b.verify()?.is_clean());
    Ok(())
}

#[test]
fn one_run() -> Result<()> {
    check(1 << 30, |runs| runs == 1)
}

#[test]
fn many_runs_with_a_tiny_budget() -> Result<()> {
    // About 56 bytes per add: 16 KiB holds ~300 adds, so ~12 runs.
    check(16 << 10, |runs| runs >= 8)
}
