//! The query cache (`StoreBuilder::query_cache_size`) of a store of format 6 (the layout with
//! a query cache) never serves a key range that a write
//! has changed: answers equal brute force after every kind of write, with the cache large,
//! tiny (constant eviction) or off, and under concurrent upserts each query sees the
//! fingerprint a document had when the query started.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use common::{brute_force, Rng};
use simhash_store::{Entry, Fingerprint, Result, Store};

/// The store's answers for `queries` equal brute force over `docs` (id -> fingerprint).
fn check(store: &Store, docs: &std::collections::BTreeMap<u64, u64>, queries: &[u64], k: u32) {
    let all: Vec<(u64, u64)> = docs.iter().map(|(&id, &fp)| (id, fp)).collect();
    for &q in queries {
        let got: Vec<(u32, u64, u64)> = store
            .query(Fingerprint(q), k)
            .expect("query")
            .iter()
            .map(|m| (m.distance, m.id, m.fingerprint.0))
            .collect();
        assert_eq!(got, brute_force(&all, q, k), "query {q:016x} k={k}");
    }
}

/// Random writes of every kind between rounds of the same queries (so that ranges are cached
/// before they change): inserts near the queries, upserts that move documents between
/// ranges, removals by id and key, and batches.
fn writes_between_cached_queries(cache_bytes: usize, seed: u64) -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::builder()
        .create_format(6)
        .query_cache_size(cache_bytes)
        .open(dir.path())?;
    let mut rng = Rng::new(seed);
    let centres: Vec<u64> = (0..8).map(|_| rng.next_u64()).collect();
    let queries: Vec<u64> = centres
        .iter()
        .flat_map(|&c| [c, c ^ 1, c ^ 0x8000_0000_0000_0000])
        .collect();
    let mut docs = std::collections::BTreeMap::new();
    let mut next_id = 0u64;
    for round in 0..40 {
        check(&store, &docs, &queries, 3);
        check(&store, &docs, &queries, 5);
        let centre = centres[rng.below(centres.len() as u64) as usize];
        match round % 5 {
            0 => {
                for _ in 0..5 {
                    let d = rng.below(5) as u32;
                    let fp = rng.flip(centre, d);
                    store.insert(next_id, Fingerprint(fp))?;
                    docs.insert(next_id, fp);
                    next_id += 1;
                }
            }
            1 => {
                // Move existing documents to another centre's neighbourhood.
                let ids: Vec<u64> = docs.keys().copied().take(6).collect();
                for id in ids {
                    let d = rng.below(4) as u32;
                    let fp = rng.flip(centre, d);
                    store.insert(id, Fingerprint(fp))?;
                    docs.insert(id, fp);
                }
            }
            2 => {
                let ids: Vec<u64> = docs.keys().copied().rev().take(3).collect();
                for id in ids {
                    assert!(store.remove(id)?);
                    docs.remove(&id);
                }
                let fp = rng.flip(centre, 2);
                let key = format!("page-{round}");
                store.insert_entry(Entry::new(next_id, Fingerprint(fp)).with_key(&key))?;
                // The key moves to a new document: the old holder is replaced.
                store.insert_entry(Entry::new(next_id + 1, Fingerprint(fp ^ 4)).with_key(&key))?;
                docs.remove(&next_id);
                docs.insert(next_id + 1, fp ^ 4);
                next_id += 2;
            }
            3 => {
                let batch: Vec<Entry> = (0..10)
                    .map(|j| {
                        let d = rng.below(6) as u32;
                        let fp = rng.flip(centre, d);
                        docs.insert(next_id + j, fp);
                        Entry::new(next_id + j, Fingerprint(fp))
                    })
                    .collect();
                store.insert_batch(batch)?;
                next_id += 10;
            }
            _ => {
                // The bulk loader writes format 7 only: a batch with an upsert instead.
                let mut batch = Vec::new();
                for j in 0..10 {
                    let d = rng.below(4) as u32;
                    let fp = rng.flip(centre, d);
                    batch.push(Entry::new(next_id + j, Fingerprint(fp)));
                    docs.insert(next_id + j, fp);
                }
                // An upsert moves an existing document.
                if let Some(&id) = docs.keys().next() {
                    let fp = rng.flip(centre, 1);
                    batch.push(Entry::new(id, Fingerprint(fp)));
                    docs.insert(id, fp);
                }
                store.insert_batch(batch)?;
                next_id += 10;
            }
        }
    }
    check(&store, &docs, &queries, 3);
    assert!(store.verify()?.is_clean());
    Ok(())
}

#[test]
fn answers_equal_brute_force_with_a_large_cache() -> Result<()> {
    writes_between_cached_queries(64 << 20, 1)
}

#[test]
fn answers_equal_brute_force_with_a_tiny_cache() -> Result<()> {
    // Room for a handful of ranges: constant eviction and reinsertion.
    writes_between_cached_queries(2048, 2)
}

#[test]
fn answers_equal_brute_force_without_a_cache() -> Result<()> {
    writes_between_cached_queries(0, 3)
}

#[test]
fn preload_caches_every_range_and_answers_stay_exact() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::builder().create_format(6).open(dir.path())?;
    let mut rng = Rng::new(9);
    let mut docs = std::collections::BTreeMap::new();
    for id in 0..500u64 {
        let fp = rng.next_u64();
        store.insert(id, Fingerprint(fp))?;
        docs.insert(id, fp);
    }
    // 500 random fingerprints: nearly 2,000 distinct (family, block) ranges.
    let ranges = store.preload_query_cache()?;
    let distinct: std::collections::BTreeSet<(usize, u64)> = docs
        .values()
        .flat_map(|&fp| (0..4).map(move |i| (i, (fp >> (48 - 16 * i)) & 0xffff)))
        .collect();
    assert_eq!(ranges, distinct.len() as u64);
    assert!(store.query_cache_usage() > 0);
    let queries: Vec<u64> = docs.values().take(50).map(|&fp| fp ^ 3).collect();
    check(&store, &docs, &queries, 3);
    // A write after the preload is seen.
    store.insert(1000, Fingerprint(queries[0]))?;
    docs.insert(1000, queries[0]);
    check(&store, &docs, &queries, 3);

    let off = tempfile::tempdir().expect("tempdir");
    let store = Store::builder()
        .create_format(6)
        .query_cache_size(0)
        .open(off.path())?;
    store.insert(1, Fingerprint(1))?;
    assert_eq!(store.preload_query_cache()?, 0);
    assert_eq!(store.query_cache_usage(), 0);
    Ok(())
}

/// A writer moves 32 documents between fingerprints; it publishes a document's
/// fingerprint after the write returns, bracketed by a version counter (odd while writing).
/// Readers query a document's published fingerprint at distance 0: if the version did not
/// change around the query, the answer must hold that document, with that fingerprint. A
/// cached range from before the move would miss it.
#[test]
fn concurrent_upserts_are_seen_by_every_later_query() -> Result<()> {
    const DOCS: usize = 32;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(Store::builder().create_format(6).open(dir.path())?);
    let published: Arc<Vec<AtomicU64>> = Arc::new((0..DOCS).map(|_| AtomicU64::new(0)).collect());
    let versions: Arc<Vec<AtomicU64>> = Arc::new((0..DOCS).map(|_| AtomicU64::new(0)).collect());
    let mut rng = Rng::new(11);
    // Documents move among a few fingerprints per document (`pool[j] ^ id`) that share
    // their first three blocks, so the ranges a move lands in have been queried and cached.
    let pool: Vec<u64> = (0..6).map(|_| rng.next_u64()).collect();
    let pick = |rng: &mut Rng, id: usize| pool[rng.below(pool.len() as u64) as usize] ^ id as u64;
    for (id, slot) in published.iter().enumerate() {
        let fp = pick(&mut rng, id);
        store.insert(id as u64, Fingerprint(fp))?;
        slot.store(fp, Ordering::SeqCst);
    }
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|r| {
            let (store, published, versions, done) = (
                Arc::clone(&store),
                Arc::clone(&published),
                Arc::clone(&versions),
                Arc::clone(&done),
            );
            std::thread::spawn(move || -> Result<u64> {
                let mut rng = Rng::new(100 + r);
                let mut checked = 0;
                while !done.load(Ordering::SeqCst) {
                    let id = rng.below(DOCS as u64) as usize;
                    let before = versions[id].load(Ordering::SeqCst);
                    let fp = published[id].load(Ordering::SeqCst);
                    let found = store.query(Fingerprint(fp), 0)?;
                    if before % 2 == 0 && versions[id].load(Ordering::SeqCst) == before {
                        assert!(
                            found.iter().any(|m| m.id == id as u64),
                            "document {id} with fingerprint {fp:016x} not found"
                        );
                        checked += 1;
                    }
                }
                Ok(checked)
            })
        })
        .collect();
    for _ in 0..3000 {
        let id = rng.below(DOCS as u64) as usize;
        let fp = pick(&mut rng, id);
        versions[id].fetch_add(1, Ordering::SeqCst);
        store.insert(id as u64, Fingerprint(fp))?;
        published[id].store(fp, Ordering::SeqCst);
        versions[id].fetch_add(1, Ordering::SeqCst);
    }
    done.store(true, Ordering::SeqCst);
    let mut checked = 0;
    for reader in readers {
        checked += reader.join().expect("reader panicked")?;
    }
    assert!(checked > 0, "no query ran undisturbed");
    let docs: std::collections::BTreeMap<u64, u64> = published
        .iter()
        .enumerate()
        .map(|(id, fp)| (id as u64, fp.load(Ordering::SeqCst)))
        .collect();
    let queries: Vec<u64> = docs.values().copied().collect();
    check(&store, &docs, &queries, 3);
    Ok(())
}
