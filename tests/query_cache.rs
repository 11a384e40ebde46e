//! The query cache (`StoreBuilder::query_cache_size`) of a store of format 6, the entries
//! layout, which this build reads only: answers equal brute force with the cache large, tiny
//! (constant eviction) or off, on first and repeated (cached) queries, and after a preload.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{brute_force, Rng};
use simhash_store::{Error, Fingerprint, Result, Store};

/// The store's answers for `queries` equal brute force over `docs` (id -> fingerprint).
fn check(store: &Store, docs: &BTreeMap<u64, u64>, queries: &[u64], k: u32) {
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

/// A store of format 6 at `path` with 600 documents near 8 centres and 200 random ones;
/// returns its documents and queries near the centres.
fn legacy_store(path: &Path, seed: u64) -> Result<(BTreeMap<u64, u64>, Vec<u64>)> {
    let mut rng = Rng::new(seed);
    let centres: Vec<u64> = (0..8).map(|_| rng.next_u64()).collect();
    let mut docs = BTreeMap::new();
    {
        let store = Store::open(path)?;
        for id in 0..800u64 {
            let fp = if id < 600 {
                let d = rng.below(7) as u32;
                rng.flip(centres[id as usize % centres.len()], d)
            } else {
                rng.next_u64()
            };
            store.insert(id, Fingerprint(fp))?;
            docs.insert(id, fp);
        }
    }
    common::legacy::rewrite_as_format6(path);
    let queries = centres
        .iter()
        .flat_map(|&c| [c, c ^ 1, c ^ 0x8000_0000_0000_0000])
        .collect();
    Ok((docs, queries))
}

fn answers_equal_brute_force(cache_bytes: usize, seed: u64) -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let (docs, queries) = legacy_store(dir.path(), seed)?;
    let store = Store::builder()
        .query_cache_size(cache_bytes)
        .open(dir.path())?;
    assert_eq!(store.format_version(), 6);
    // Twice: the second round reads the ranges the first one cached.
    for _ in 0..2 {
        for k in [0, 3, 5, 8] {
            check(&store, &docs, &queries, k);
        }
    }
    assert_eq!(store.query_cache_usage() > 0, cache_bytes > 0);
    Ok(())
}

#[test]
fn answers_equal_brute_force_with_a_large_cache() -> Result<()> {
    answers_equal_brute_force(64 << 20, 1)
}

#[test]
fn answers_equal_brute_force_with_a_tiny_cache() -> Result<()> {
    // Room for a handful of ranges: constant eviction and reinsertion.
    answers_equal_brute_force(2048, 2)
}

#[test]
fn answers_equal_brute_force_without_a_cache() -> Result<()> {
    answers_equal_brute_force(0, 3)
}

#[test]
fn preload_caches_every_range_and_answers_stay_exact() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let (docs, queries) = legacy_store(dir.path(), 9)?;
    let store = Store::open(dir.path())?;
    let ranges = store.preload_query_cache()?;
    let distinct: std::collections::BTreeSet<(usize, u64)> = docs
        .values()
        .flat_map(|&fp| (0..4).map(move |i| (i, (fp >> (48 - 16 * i)) & 0xffff)))
        .collect();
    assert_eq!(ranges, distinct.len() as u64);
    assert!(store.query_cache_usage() > 0);
    check(&store, &docs, &queries, 3);
    // The store is read only: a write is refused and changes nothing.
    let refused = store.insert(1000, Fingerprint(queries[0]));
    assert!(
        matches!(refused, Err(Error::LegacyFormat { found: 6, .. })),
        "{refused:?}"
    );
    check(&store, &docs, &queries, 3);

    drop(store);
    let off = Store::builder().query_cache_size(0).open(dir.path())?;
    assert_eq!(off.preload_query_cache()?, 0);
    assert_eq!(off.query_cache_usage(), 0);
    Ok(())
}

/// A store of the packed layout (format 8) has no query cache: preloading does nothing.
#[test]
fn the_packed_layout_has_no_query_cache() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    store.insert(1, Fingerprint(1))?;
    assert_eq!(store.preload_query_cache()?, 0);
    assert_eq!(store.query(Fingerprint(1), 3)?.len(), 1);
    assert_eq!(store.query_cache_usage(), 0);
    Ok(())
}
