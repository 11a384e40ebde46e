//! The store's query equals a brute-force scan over the same fingerprints, for every k in
//! 0..=8 (and a few larger), every strategy, random data with planted near-duplicates at every
//! distance and several ids sharing one fingerprint.

mod common;

use common::{brute_force, planted, Rng};
use proptest::prelude::*;
use simhash_store::{Entry, Fingerprint, Result, Store, Strategy};

fn load(store: &Store, docs: &[(u64, u64)]) -> Result<()> {
    store.insert_batch(docs.iter().map(|&(id, fp)| Entry::new(id, Fingerprint(fp))))
}

/// Bulk-loads `docs` into the empty `store`, then single writes on top: every `remove_every`th
/// document removed and, as deltas beside the chunks, one document a bit away from each of the
/// first `near` queries; `docs` becomes what the store holds.
fn bulk_load_then_write(
    store: &Store,
    docs: &mut Vec<(u64, u64)>,
    queries: &[u64],
    remove_every: usize,
    near: usize,
) -> Result<()> {
    let mut loader = store.bulk_loader()?;
    for &(id, fp) in docs.iter() {
        loader.add(id, Fingerprint(fp))?;
    }
    loader.finish()?;
    let removed: Vec<u64> = docs
        .iter()
        .step_by(remove_every)
        .map(|&(id, _)| id)
        .collect();
    for &id in &removed {
        store.remove(id)?;
    }
    docs.retain(|(id, _)| !removed.contains(id));
    let next = docs.iter().map(|&(id, _)| id).max().unwrap_or(0) + 1;
    let extra: Vec<(u64, u64)> = queries
        .iter()
        .take(near)
        .enumerate()
        .map(|(j, &q)| (next + j as u64, q ^ (1 << (j % 64))))
        .collect();
    load(store, &extra)?;
    docs.extend(extra);
    Ok(())
}

fn check(store: &Store, docs: &[(u64, u64)], queries: &[u64], ks: &[u32]) -> Result<()> {
    for &q in queries {
        for &k in ks {
            let want = brute_force(docs, q, k);
            for strategy in [Strategy::Auto, Strategy::Probe, Strategy::FullScan] {
                let got: Vec<(u32, u64, u64)> = store
                    .query_with(Fingerprint(q), k, strategy)?
                    .into_iter()
                    .map(|m| (m.distance, m.id, m.fingerprint.0))
                    .collect();
                assert_eq!(got, want, "query {q:016x} k={k} {strategy:?}");
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn query_equals_brute_force(seed: u64, random in 0usize..300, centres in 1usize..6, format in 6u32..=9) {
        let (docs, queries) = planted(&mut Rng::new(seed), random, centres, 8);
        let dir = tempfile::tempdir().unwrap();
        // Every layout: packed with ids apart (format 8), with ids inline (format 7, read
        // only) and entries (format 6, read only).
        let store = Store::open(dir.path()).unwrap();
        load(&store, &docs).unwrap();
        let store = in_format(store, dir.path(), format);
        check(&store, &docs, &queries, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 12]).unwrap();
    }
}

/// Enough documents that the cost model picks probing for k in 4..=11, so `Auto` takes the
/// multi-probe path rather than falling back to a full scan.
#[test]
fn probing_path_at_larger_store() -> Result<()> {
    let (docs, queries) = planted(&mut Rng::new(7), 20_000, 8, 12);
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    load(&store, &docs)?;
    check(&store, &docs, &queries, &[0, 3, 4, 7, 8, 11])?;
    Ok(())
}

/// Queries keep matching brute force after removals and fingerprint changes, in both layouts.
#[test]
fn after_updates() -> Result<()> {
    for format in [6, 7, 8, 9] {
        after_updates_in(format)?;
    }
    Ok(())
}

/// `store` (of format 9, at `path`) as is, or closed and rewritten in format 7 (chunks with
/// their ids inline) or 6 (the entries layout), which this build reads only, and opened again.
fn in_format(store: Store, path: &std::path::Path, format: u32) -> Store {
    if format == 9 {
        return store;
    }
    drop(store);
    common::legacy::rewrite_as(path, format);
    let store = Store::open(path).expect("reopen");
    assert_eq!(store.format_version(), format);
    store
}

fn after_updates_in(format: u32) -> Result<()> {
    let mut rng = Rng::new(11);
    let (docs, queries) = planted(&mut rng, 500, 4, 8);
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    load(&store, &docs)?;
    let mut kept = Vec::new();
    for (n, &(id, fp)) in docs.iter().enumerate() {
        if n % 3 == 0 {
            assert!(store.remove(id)?);
        } else if n % 5 == 0 {
            let moved = rng.flip(queries[n % queries.len()], (n % 7) as u32);
            store.insert(id, Fingerprint(moved))?;
            kept.push((id, moved));
        } else {
            kept.push((id, fp));
        }
    }
    assert_eq!(store.len(), kept.len() as u64);
    let store = in_format(store, dir.path(), format);
    check(&store, &kept, &queries, &[0, 2, 3, 5, 8])?;
    let report = store.verify()?;
    assert!(report.is_clean(), "{report}");
    Ok(())
}

/// Every way of reading gives the same answers, with deltas and removals in the groups too:
/// the four block families one after another or concurrently
/// (`StoreBuilder::concurrent_reads`, on by default only for stores larger than memory),
/// through memory maps or positioned reads (`StoreBuilder::mmap_reads`, on by default only
/// for stores that fit in memory).
#[test]
fn every_way_of_reading_equals_brute_force() -> Result<()> {
    for seed in 0..8 {
        let (concurrent, mmap) = (seed % 2 == 0, seed / 2 % 2 == 0);
        let (mut docs, queries) = planted(&mut Rng::new(100 + seed), 3_000, 6, 8);
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::builder()
            .concurrent_reads(concurrent)
            .mmap_reads(mmap)
            .open(dir.path())?;
        bulk_load_then_write(&store, &mut docs, &queries, 7, 20)?;
        check(&store, &docs, &queries, &[0, 1, 2, 3, 4, 6, 8])?;
        // Reopened, the writes are in SST files, read the same way.
        store.flush()?;
        drop(store);
        let store = Store::builder()
            .concurrent_reads(concurrent)
            .mmap_reads(mmap)
            .open(dir.path())?;
        check(&store, &docs, &queries, &[0, 1, 2, 3, 4, 6, 8])?;
    }
    Ok(())
}

/// Groups of several chunks and data blocks, read as a store read from disk reads them (each
/// group in one request, bounded to the group: concurrent and positioned reads), equal brute
/// force: block values crowded onto a few values (0, 1, 0xfffe, 0xffff: the last group of a
/// family has no next prefix to bound it) so that groups hold up to about 9,000 entries,
/// with planted near-duplicates at every distance 0..=7, deltas and removals.
#[test]
fn whole_group_reads_of_large_skewed_groups_equal_brute_force() -> Result<()> {
    const CROWDED: [u64; 4] = [0, 1, 0xfffe, 0xffff];
    let mut rng = Rng::new(2024);
    let skewed = |rng: &mut Rng| -> u64 {
        (0..4).fold(0, |fp, _| {
            let block = if rng.below(4) < 3 {
                CROWDED[rng.below(4) as usize]
            } else {
                rng.below(1 << 16)
            };
            fp << 16 | block
        })
    };
    let mut docs: Vec<(u64, u64)> = (0..40_000).map(|id| (id, skewed(&mut rng))).collect();
    let mut queries = Vec::new();
    for d in 0..=7 {
        for _ in 0..3 {
            let base = docs[rng.below(docs.len() as u64) as usize].1;
            queries.push(rng.flip(base, d));
        }
        queries.push(skewed(&mut rng));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let open = || {
        Store::builder()
            .concurrent_reads(true)
            .mmap_reads(false)
            .open(dir.path())
    };
    let store = open()?;
    bulk_load_then_write(&store, &mut docs, &queries, 11, queries.len())?;
    check(&store, &docs, &queries, &[0, 1, 2, 3, 4, 5, 6, 7])?;
    store.flush()?;
    drop(store);
    let store = open()?;
    check(&store, &docs, &queries, &[0, 3, 6])?;
    Ok(())
}
