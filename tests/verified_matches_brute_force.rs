//! Verified queries and verified pairs equal a brute-force computation over the same
//! fingerprints *and* sketches: every document within `k` bits whose sketch similarity is at
//! least the threshold, for several `k` and thresholds, on random data with planted
//! near-duplicates whose sketches agree in a random share of their codes, far documents whose
//! sketches agree anyway, and documents stored without a sketch. Stores are written both by
//! write batches and by the bulk loader.

mod common;

use common::Rng;
use proptest::prelude::*;
use simhash_store::sketch::{SketchKind, SKETCH_BYTES};
use simhash_store::verified::{Verification, VerifiedPair};
use simhash_store::{Entry, Fingerprint, Result, SimhashConfig, Sketch, Store, VerifiedMatch};

struct Doc {
    id: u64,
    fp: u64,
    sketch: Option<Sketch>,
}

fn random_sketch(rng: &mut Rng) -> Sketch {
    let mut bytes = [0u8; SKETCH_BYTES];
    for b in &mut bytes {
        *b = rng.next_u64() as u8;
    }
    Sketch::from_bytes(bytes)
}

/// `base` with `changed` random codes (bytes) replaced.
fn edited(rng: &mut Rng, base: &Sketch, changed: usize) -> Sketch {
    let mut bytes = *base.as_bytes();
    let mut positions: Vec<usize> = (0..SKETCH_BYTES).collect();
    rng.shuffle(&mut positions);
    for &p in &positions[..changed] {
        bytes[p] = rng.next_u64() as u8;
    }
    Sketch::from_bytes(bytes)
}

/// Documents around `centres` centres (fingerprints 0..=max_d bits away, sketches with a
/// random number of codes changed), `random` unrelated ones, some far documents with a
/// centre's sketch, a few without sketches; and the queries: each centre with its sketch,
/// and random ones.
fn planted(
    rng: &mut Rng,
    random: usize,
    centres: usize,
    max_d: u32,
) -> (Vec<Doc>, Vec<(u64, Sketch)>) {
    let mut docs = Vec::new();
    let mut queries = Vec::new();
    let push = |docs: &mut Vec<Doc>, fp, sketch| {
        let id = docs.len() as u64 * 3 + 1;
        docs.push(Doc { id, fp, sketch });
    };
    for _ in 0..random {
        let (fp, sketch) = (rng.next_u64(), random_sketch(rng));
        push(&mut docs, fp, Some(sketch));
    }
    for _ in 0..centres {
        let centre = rng.next_u64();
        let sketch = random_sketch(rng);
        queries.push((centre, sketch));
        for d in 0..=max_d {
            for _ in 0..3 {
                let changed = rng.below(SKETCH_BYTES as u64 + 1) as usize;
                let (fp, s) = (rng.flip(centre, d), edited(rng, &sketch, changed));
                push(&mut docs, fp, Some(s));
            }
        }
        // Near by fingerprint, stored without a sketch: never verified.
        let fp = rng.flip(centre, 1);
        push(&mut docs, fp, None);
        // Far by fingerprint, the same sketch: not a candidate.
        let fp = rng.flip(centre, max_d + 8);
        push(&mut docs, fp, Some(sketch));
        // Sharing exactly one block with the centre, so the scanned ranges hold others.
        for i in 0..4 {
            let mask = 0xffffu64 << (48 - 16 * i);
            let fp = (centre & mask) | (rng.next_u64() & !mask);
            let changed = rng.below(16) as usize;
            let s = edited(rng, &sketch, changed);
            push(&mut docs, fp, Some(s));
        }
    }
    for _ in 0..centres {
        queries.push((rng.next_u64(), random_sketch(rng)));
    }
    rng.shuffle(&mut docs);
    (docs, queries)
}

fn entry(doc: &Doc) -> Entry {
    let e = Entry::new(doc.id, Fingerprint(doc.fp));
    match doc.sketch {
        Some(s) => e.with_sketch(s),
        None => e,
    }
}

fn sketch_store(dir: &std::path::Path) -> Result<Store> {
    let config = SimhashConfig::default().with_sketch(SketchKind::MinHash);
    Store::builder().simhash_config(config).open(dir)
}

fn load_batches(store: &Store, docs: &[Doc]) -> Result<()> {
    for chunk in docs.chunks(500) {
        store.insert_batch(chunk.iter().map(entry))?;
    }
    Ok(())
}

fn load_bulk(store: &Store, docs: &[Doc]) -> Result<()> {
    let mut loader = store.bulk_loader()?;
    for doc in docs {
        loader.add_entry(&entry(doc))?;
    }
    loader.finish()?;
    Ok(())
}

/// (distance, id, similarity) of every document within `v.k` of `q` with a sketch at least
/// `v.min_similarity` similar, by distance then id.
fn brute_query(docs: &[Doc], q: u64, sketch: &Sketch, v: Verification) -> Vec<(u32, u64, f64)> {
    let mut want: Vec<(u32, u64, f64)> = docs
        .iter()
        .filter_map(|d| {
            let distance = (d.fp ^ q).count_ones();
            let similarity = d.sketch.as_ref()?.similarity(sketch);
            (distance <= v.k && similarity >= v.min_similarity)
                .then_some((distance, d.id, similarity))
        })
        .collect();
    want.sort_by_key(|&(d, id, _)| (d, id));
    want
}

fn brute_pairs(docs: &[Doc], v: Verification) -> Vec<(u64, u64, u32, f64)> {
    let mut want = Vec::new();
    for (i, x) in docs.iter().enumerate() {
        for y in &docs[i + 1..] {
            let (Some(sx), Some(sy)) = (&x.sketch, &y.sketch) else {
                continue;
            };
            let distance = (x.fp ^ y.fp).count_ones();
            let similarity = sx.similarity(sy);
            if distance <= v.k && similarity >= v.min_similarity {
                want.push((x.id.min(y.id), x.id.max(y.id), distance, similarity));
            }
        }
    }
    want.sort_by_key(|&(a, b, _, _)| (a, b));
    want
}

fn verifications() -> Vec<Verification> {
    let mut all = Vec::new();
    for k in [0, 3, 4, 6, 9] {
        for t in [0.0, 0.3, 0.6, 0.9, 1.0] {
            all.push(Verification::new(k, t).unwrap());
        }
    }
    all.push(Verification::default());
    all
}

fn check(store: &Store, docs: &[Doc], queries: &[(u64, Sketch)]) -> Result<()> {
    for v in verifications() {
        for (q, sketch) in queries {
            let got: Vec<(u32, u64, f64)> = store
                .query_verified(Fingerprint(*q), sketch, v)?
                .into_iter()
                .map(|m: VerifiedMatch| (m.distance, m.id, m.similarity))
                .collect();
            assert_eq!(
                got,
                brute_query(docs, *q, sketch, v),
                "query {q:016x} {v:?}"
            );
        }
        let got: Vec<(u64, u64, u32, f64)> = store
            .verified_pairs(v)
            .collect()?
            .into_iter()
            .map(|p: VerifiedPair| (p.a, p.b, p.distance, p.similarity))
            .collect();
        let want = brute_pairs(docs, v);
        assert_eq!(got.len(), want.len(), "pairs {v:?}");
        assert_eq!(got, want, "pairs {v:?}");
        let (clusters, stats) = store.verified_pairs(v).clusters()?;
        assert_eq!(stats.verified.pairs, want.len() as u64);
        assert!(stats.candidates.pairs >= stats.verified.pairs);
        let clustered: usize = clusters.iter().map(|c| c.members.len()).sum();
        assert!(clustered <= 2 * want.len());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn verified_answers_equal_brute_force(seed: u64, random in 0usize..200, centres in 1usize..5, bulk: bool) {
        let (docs, queries) = planted(&mut Rng::new(seed), random, centres, 9);
        let dir = tempfile::tempdir().unwrap();
        let store = sketch_store(dir.path()).unwrap();
        if bulk {
            load_bulk(&store, &docs).unwrap();
        } else {
            load_batches(&store, &docs).unwrap();
        }
        check(&store, &docs, &queries).unwrap();
    }
}

#[test]
fn sketches_survive_reopening_and_upserts() -> Result<()> {
    let (docs, queries) = planted(&mut Rng::new(7), 100, 3, 7);
    let dir = tempfile::tempdir()?;
    {
        let store = sketch_store(dir.path())?;
        // Everything first with other sketches, then the real ones over them.
        let mut rng = Rng::new(8);
        store.insert_batch(
            docs.iter()
                .map(|d| entry(d).with_sketch(random_sketch(&mut rng))),
        )?;
        load_bulk(&store, &docs[..docs.len() / 2])?;
        load_batches(&store, &docs[docs.len() / 2..])?;
    }
    let store = Store::open(dir.path())?;
    assert!(store.keeps_sketches());
    for d in &docs {
        let stored = store.document(d.id)?.map(|doc| doc.sketch);
        // A document re-added without a sketch keeps none.
        assert_eq!(stored, Some(d.sketch), "document {}", d.id);
    }
    check(&store, &docs, &queries)
}

/// More candidate pairs than the scan buffers and many verification batches: verification
/// runs while the scan's workers wait for the caller to take their pairs.
#[test]
fn many_batches_while_the_scan_waits() -> Result<()> {
    let mut rng = Rng::new(11);
    let base = random_sketch(&mut rng);
    let docs: Vec<Doc> = (0..900u64)
        .map(|id| Doc {
            id,
            fp: 0x0123_4567_89ab_cdef ^ (1 << (id % 3)),
            sketch: Some(if id % 2 == 0 {
                base
            } else {
                random_sketch(&mut rng)
            }),
        })
        .collect();
    let dir = tempfile::tempdir()?;
    let store = sketch_store(dir.path())?;
    load_bulk(&store, &docs)?;
    let v = Verification::new(3, 0.6)?;
    let stats = store
        .verified_pairs(v)
        .for_each(|_| Ok::<_, simhash_store::Error>(()))?;
    assert_eq!(stats.candidates.pairs, 900 * 899 / 2);
    assert_eq!(stats.verified.pairs, brute_pairs(&docs, v).len() as u64);
    assert_eq!(stats.verified.pairs, 450 * 449 / 2);
    Ok(())
}
