//! Representatives chosen by lowest id, longest text and first loaded. (The pairs, clusters
//! and drop files `simhash-store dedup` writes are tested in `src/cli/dedup/files.rs`.)

use std::sync::atomic::{AtomicU64, Ordering};

use simhash_store::dedup::Representative;
use simhash_store::{Entry, Fingerprint, Result, Store};

/// Cluster A = {5, 7, 9} (9 loaded first, 7 longest), cluster B = {2, 4} (4 has no length),
/// and a lone document 100.
fn store(dir: &std::path::Path) -> Result<Store> {
    // Each write a microsecond after the one before: distinct `added` times.
    let tick = AtomicU64::new(1_000_000);
    let store = Store::builder()
        .clock(move || tick.fetch_add(1, Ordering::Relaxed))
        .open(dir)?;
    let a = 0x1111_2222_3333_4444u64;
    let b = 0x9999_8888_7777_6666u64;
    let docs = [
        Entry::new(9, Fingerprint(a))
            .with_text_len(100)
            .with_key("https://a.example/9"),
        Entry::new(5, Fingerprint(a ^ 0b1))
            .with_text_len(100)
            .with_key("https://a.example/5,\"x\""),
        Entry::new(7, Fingerprint(a ^ 0b11)).with_text_len(900),
        Entry::new(4, Fingerprint(b)),
        Entry::new(2, Fingerprint(b ^ (1 << 40))).with_text_len(10),
        Entry::new(100, Fingerprint(!a)),
    ];
    for entry in docs {
        store.insert_entry(entry)?;
    }
    Ok(store)
}

fn representatives(store: &Store, rule: Representative) -> Result<Vec<(u64, u64)>> {
    let (mut clusters, _) = store.pairs(3).clusters()?;
    clusters.choose_representatives(store, rule)?;
    Ok(clusters.iter().map(|c| (c.id, c.representative)).collect())
}

#[test]
fn each_rule_picks_its_representative() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(dir.path())?;
    assert_eq!(
        representatives(&store, Representative::LowestId)?,
        [(2, 2), (5, 5)]
    );
    assert_eq!(
        representatives(&store, Representative::Longest)?,
        [(2, 2), (5, 7)]
    );
    assert_eq!(
        representatives(&store, Representative::FirstLoaded)?,
        [(2, 4), (5, 9)]
    );
    Ok(())
}
