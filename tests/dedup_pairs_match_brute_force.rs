//! All pairs and clusters of a store equal a brute-force O(n^2) computation over the same
//! fingerprints, for every k in 0..=8 (and 12), on random data with planted near-duplicates
//! at every distance, ids sharing one fingerprint, and groups of documents sharing one block;
//! with the default chunk size and with tiny chunks (a group split into many chunks), and on a
//! large shared group that takes the sub-block join.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{brute_pairs, planted, Rng};
use proptest::prelude::*;
use simhash_store::{Entry, Fingerprint, Pair, Result, Store};

fn load(store: &Store, docs: &[(u64, u64)]) -> Result<()> {
    for chunk in docs.chunks(5_000) {
        store.insert_batch(
            chunk
                .iter()
                .map(|&(id, fp)| Entry::new(id, Fingerprint(fp))),
        )?;
    }
    Ok(())
}

/// Connected components of `pairs` by breadth-first search: sorted member lists.
fn brute_clusters(pairs: &[Pair]) -> BTreeSet<Vec<u64>> {
    let mut adjacent: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for p in pairs {
        adjacent.entry(p.a).or_default().push(p.b);
        adjacent.entry(p.b).or_default().push(p.a);
    }
    let mut seen = BTreeSet::new();
    let mut clusters = BTreeSet::new();
    for &start in adjacent.keys() {
        if !seen.insert(start) {
            continue;
        }
        let mut members = vec![start];
        let mut at = 0;
        while let Some(&x) = members.get(at) {
            at += 1;
            for &y in &adjacent[&x] {
                if seen.insert(y) {
                    members.push(y);
                }
            }
        }
        members.sort_unstable();
        clusters.insert(members);
    }
    clusters
}

fn check(store: &Store, docs: &[(u64, u64)], ks: &[u32], chunk: usize) -> Result<()> {
    for &k in ks {
        let want = brute_pairs(docs, k);
        let got = store.pairs(k).chunk_size(chunk).collect()?;
        assert_eq!(
            got.len(),
            want.len(),
            "k={k} chunk={chunk}: number of pairs"
        );
        assert_eq!(got, want, "k={k} chunk={chunk}");

        let (clusters, stats) = store.pairs(k).chunk_size(chunk).clusters()?;
        assert_eq!(stats.pairs, want.len() as u64);
        for d in 0..=k {
            let at_d = want.iter().filter(|p| p.distance == d).count() as u64;
            assert_eq!(stats.per_distance[d as usize], at_d, "k={k} d={d}");
        }
        let got: BTreeSet<Vec<u64>> = clusters.iter().map(|c| c.members.clone()).collect();
        let want = brute_clusters(&want);
        assert_eq!(got, want, "k={k} chunk={chunk}: clusters");
        for c in &clusters {
            assert_eq!(Some(c.id), c.members.first().copied());
            assert_eq!(c.representative, c.id);
        }
        let dropped: usize = want.iter().map(|c| c.len() - 1).sum();
        assert_eq!(clusters.drop_ids().len(), dropped);
    }
    Ok(())
}

/// `planted` data plus `n` documents sharing block `family` with a random centre, some
/// close to it: one crowded group in that family.
fn with_shared_block(
    rng: &mut Rng,
    mut docs: Vec<(u64, u64)>,
    family: u32,
    n: usize,
) -> Vec<(u64, u64)> {
    let centre = rng.next_u64();
    let mask = 0xffffu64 << (48 - 16 * family);
    let first = docs.len() as u64;
    for (id, i) in (first..).zip(0..n) {
        let fp = if i % 2 == 0 {
            rng.flip(centre, (i % 9) as u32)
        } else {
            rng.next_u64()
        };
        docs.push((id, (centre & mask) | (fp & !mask)));
    }
    docs
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn pairs_and_clusters_equal_brute_force(seed: u64, random in 0usize..300, centres in 1usize..6, crowd in 0usize..80, format in 6u32..=9) {
        let mut rng = Rng::new(seed);
        let (docs, _) = planted(&mut rng, random, centres, 8);
        let family = rng.below(4) as u32;
        let docs = with_shared_block(&mut rng, docs, family, crowd);
        let dir = tempfile::tempdir().unwrap();
        // Every layout: packed with ids apart (format 8), with ids inline (format 7, read
        // only) and entries (format 6, read only).
        let mut store = Store::open(dir.path()).unwrap();
        load(&store, &docs).unwrap();
        if format != 8 {
            drop(store);
            common::legacy::rewrite_as(dir.path(), format);
            store = Store::open(dir.path()).unwrap();
            assert_eq!(store.format_version(), format);
        }
        let ks = [0, 1, 2, 3, 4, 5, 6, 7, 8, 12];
        check(&store, &docs, &ks, 1 << 16).unwrap();
        // Chunks of 3 documents: every crowded group is compared chunk against chunk.
        check(&store, &docs, &ks, 3).unwrap();
    }
}

/// A group of 3,000 documents sharing block 1, read in chunks of 500: chunk pairs are large
/// enough (500 x 500 comparisons) to take the sub-block join.
#[test]
fn crowded_group_takes_the_join() -> Result<()> {
    let mut rng = Rng::new(99);
    let (docs, _) = planted(&mut rng, 2_000, 20, 8);
    let docs = with_shared_block(&mut rng, docs, 1, 3_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    load(&store, &docs)?;
    check(&store, &docs, &[0, 3, 5, 8, 11], 500)?;
    check(&store, &docs, &[3], 1 << 16)?;
    Ok(())
}

/// Many documents with one fingerprint: every pair of them is reported once, even when the
/// callback stops the scan early on another run.
#[test]
fn identical_fingerprints_and_early_stop() -> Result<()> {
    let docs: Vec<(u64, u64)> = (0..200u64)
        .map(|id| (id * 3, 0xdead_beef_0000_0001))
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    load(&store, &docs)?;
    check(&store, &docs, &[0, 3], 7)?;

    let mut seen = 0;
    let result = store.pairs(3).for_each(|_| {
        seen += 1;
        if seen == 10 {
            Err(simhash_store::Error::InvalidArgument("stop".into()))
        } else {
            Ok(())
        }
    });
    assert!(
        matches!(result, Err(simhash_store::Error::InvalidArgument(ref m)) if m == "stop"),
        "{result:?}"
    );
    assert_eq!(seen, 10);
    Ok(())
}

#[test]
fn empty_store_and_bad_chunk_size() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    assert!(store.pairs(3).collect()?.is_empty());
    let (clusters, stats) = store.pairs(8).clusters()?;
    assert!(clusters.is_empty());
    assert_eq!(stats.per_distance, vec![0; 9]);
    assert!(matches!(
        store.pairs(3).chunk_size(0).collect(),
        Err(simhash_store::Error::InvalidArgument(_))
    ));
    Ok(())
}
