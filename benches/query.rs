//! Query latency at 1M random fingerprints, k = 3 and k = 6, next to brute force over the same
//! fingerprints in the same run: an in-memory popcount scan of a `Vec<u64>` and the store's own
//! full scan (`Strategy::FullScan`). `store` is the default store with its query cache
//! preloaded (`Store::preload_query_cache`); `store_nocache` is a read-only handle on the same
//! files with the query cache off, so every range is read through RocksDB's iterators.
//!
//! `verified_store` is a second store of the same fingerprints that keeps sketches (random
//! ones, a planted query's sketch its base's with a few codes changed), opened and preloaded
//! the same way: `plain` is its k = 3 query and `verified` its `query_verified` with the
//! default `Verification`. Before criterion starts, the thread CPU time of the plain and the
//! verified query at k = 3, 6 and the default verified k, median of 5 rounds, is printed with
//! the ratios.
//!
//! `cargo bench --bench query` (set `SIMHASH_BENCH_N` for another size).
//! `cargo bench --bench query -- verified` runs only the verified comparison's criterion part.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use simhash_store::sketch::{SketchKind, SKETCH_BYTES};
use simhash_store::verified::Verification;
use simhash_store::{Entry, Fingerprint, SimhashConfig, Sketch, Store, Strategy};

#[path = "support/rng.rs"]
mod rng;
use rng::SplitMix;

fn bench(c: &mut Criterion) {
    let n: usize = std::env::var("SIMHASH_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let mut rng = SplitMix(42);
    let fps: Vec<u64> = (0..n).map(|_| rng.next()).collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::builder()
        .durability(simhash_store::Durability::NoWal)
        .open(dir.path())
        .expect("open");
    let mut loader = store.bulk_loader().expect("bulk loader");
    for (id, &fp) in fps.iter().enumerate() {
        loader.add(id as u64, Fingerprint(fp)).expect("add");
    }
    loader.finish().expect("finish");
    store.flush().expect("flush");
    store.compact().expect("compact");
    // Closed and reopened (twice, read-only, as a query server would): a read-only open beside
    // a writer that is still deleting compacted files can fail.
    drop(store);
    let open = |query_cache: usize| {
        Store::builder()
            .read_only(true)
            .query_cache_size(query_cache)
            .open(dir.path())
            .expect("open read-only")
    };
    let store = open(256 << 20);
    store.preload_query_cache().expect("preload");
    let nocache = open(0);

    // Half the queries are planted near-duplicates (2 bits from a stored one), half random.
    let queries: Vec<Fingerprint> = (0..1024)
        .map(|i| {
            if i % 2 == 0 {
                let base = fps[(rng.next() % n as u64) as usize];
                Fingerprint(base ^ (1 << (rng.next() % 64)) ^ (1 << (rng.next() % 64)))
            } else {
                Fingerprint(rng.next())
            }
        })
        .collect();

    // The same fingerprints in a store that keeps sketches.
    let sketch_of = |rng: &mut SplitMix| {
        let mut bytes = [0u8; SKETCH_BYTES];
        for chunk in bytes.chunks_mut(8) {
            chunk.copy_from_slice(&rng.next().to_le_bytes()[..chunk.len()]);
        }
        Sketch::from_bytes(bytes)
    };
    let sketches: Vec<Sketch> = (0..n).map(|_| sketch_of(&mut rng)).collect();
    let sketched_dir = tempfile::tempdir().expect("tempdir");
    {
        let sketched = Store::builder()
            .durability(simhash_store::Durability::NoWal)
            .simhash_config(SimhashConfig::default().with_sketch(SketchKind::MinHash))
            .open(sketched_dir.path())
            .expect("open");
        let mut loader = sketched.bulk_loader().expect("bulk loader");
        for (id, (&fp, sketch)) in fps.iter().zip(&sketches).enumerate() {
            loader
                .add_entry(&Entry::new(id as u64, Fingerprint(fp)).with_sketch(*sketch))
                .expect("add");
        }
        loader.finish().expect("finish");
        sketched.flush().expect("flush");
        sketched.compact().expect("compact");
    }
    let sketched = Store::builder()
        .read_only(true)
        .open(sketched_dir.path())
        .expect("open read-only");
    sketched.preload_query_cache().expect("preload");
    // Each query's sketch: for a planted query, its nearest stored document's with 8 of the
    // 64 codes changed; else random.
    let query_sketches: Vec<Sketch> = queries
        .iter()
        .map(|q| {
            let near = sketched.query(*q, 3).expect("query");
            match near.first() {
                Some(m) => {
                    let mut bytes = *sketches[m.id as usize].as_bytes();
                    for i in 0..8 {
                        bytes[(rng.next() % SKETCH_BYTES as u64) as usize] ^= 1 << (i % 8);
                    }
                    Sketch::from_bytes(bytes)
                }
                None => sketch_of(&mut rng),
            }
        })
        .collect();

    report_cpu_time("store", &store, &fps, &queries);
    report_cpu_time("store_nocache", &nocache, &fps, &queries);
    report_verified_cpu_time(&sketched, &queries, &query_sketches);

    let verification = Verification::default();
    let mut group = c.benchmark_group(format!("verified_{n}"));
    let mut qi = 0usize;
    group.bench_function(BenchmarkId::new("plain", 3), |b| {
        b.iter(|| {
            qi = (qi + 1) % queries.len();
            black_box(sketched.query(queries[qi], 3).expect("query"))
        })
    });
    let mut qi = 0usize;
    group.bench_function(BenchmarkId::new("verified", verification.k), |b| {
        b.iter(|| {
            qi = (qi + 1) % queries.len();
            black_box(
                sketched
                    .query_verified(queries[qi], &query_sketches[qi], verification)
                    .expect("query"),
            )
        })
    });
    group.finish();

    let mut group = c.benchmark_group(format!("query_{n}"));
    for k in [3u32, 6] {
        let mut qi = 0usize;
        group.bench_function(BenchmarkId::new("store", k), |b| {
            b.iter(|| {
                qi = (qi + 1) % queries.len();
                black_box(store.query(queries[qi], k).expect("query"))
            })
        });
        let mut qi = 0usize;
        group.bench_function(BenchmarkId::new("store_nocache", k), |b| {
            b.iter(|| {
                qi = (qi + 1) % queries.len();
                black_box(nocache.query(queries[qi], k).expect("query"))
            })
        });
        let mut qi = 0usize;
        group.bench_function(BenchmarkId::new("memory_brute_force", k), |b| {
            b.iter(|| {
                qi = (qi + 1) % queries.len();
                let q = queries[qi].0;
                black_box(fps.iter().filter(|&&fp| (fp ^ q).count_ones() <= k).count())
            })
        });
    }
    group.sample_size(10);
    let mut qi = 0usize;
    group.bench_function(BenchmarkId::new("store_full_scan", 3), |b| {
        b.iter(|| {
            qi = (qi + 1) % queries.len();
            black_box(
                store
                    .query_with(queries[qi], 3, Strategy::FullScan)
                    .expect("query"),
            )
        })
    });
    group.finish();
}

/// CPU time this thread has run, from the kernel's scheduler statistics (ns). Less sensitive
/// than wall time to other processes on a shared machine.
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// Mean thread CPU time per query over all queries, for the store (k = 3, 6) and for the
/// in-memory brute force, printed before criterion's wall-clock measurements.
fn report_cpu_time(name: &str, store: &Store, fps: &[u64], queries: &[Fingerprint]) {
    let per_query = |rounds: usize, f: &mut dyn FnMut(Fingerprint)| -> Option<f64> {
        let start = thread_cpu_ns()?;
        for _ in 0..rounds {
            for &q in queries {
                f(q);
            }
        }
        Some((thread_cpu_ns()? - start) as f64 / (rounds * queries.len()) as f64 / 1000.0)
    };
    for k in [3u32, 6] {
        let store_us = per_query(20, &mut |q| {
            black_box(store.query(q, k).expect("query"));
        });
        let brute_us = per_query(2, &mut |q| {
            black_box(
                fps.iter()
                    .filter(|&&fp| (fp ^ q.0).count_ones() <= k)
                    .count(),
            );
        });
        if let (Some(s), Some(b)) = (store_us, brute_us) {
            println!("cpu time per query, n={}, k={k}: {name} {s:.2} us, in-memory brute force {b:.1} us, ratio {:.0}x", fps.len(), b / s);
        }
    }
}

/// Thread CPU time per query of the plain and the verified query (default similarity) on the
/// store that keeps sketches, for k = 3, 6 and the default verified k, over all queries,
/// median of 5 rounds each (plain and verified interleaved), with their ratios to the plain
/// k = 3 query.
fn report_verified_cpu_time(store: &Store, queries: &[Fingerprint], sketches: &[Sketch]) {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut plain_k3 = None;
    for k in [3, 6, Verification::default().k] {
        let verification = Verification {
            k,
            ..Verification::default()
        };
        let (mut plain, mut verified) = (Vec::new(), Vec::new());
        let mut found = (0, 0);
        for _ in 0..5 {
            let (Some(start), mut n) = (thread_cpu_ns(), 0) else {
                return;
            };
            for &q in queries {
                n += black_box(store.query(q, k).expect("query")).len();
            }
            let (Some(mid), mut v) = (thread_cpu_ns(), 0) else {
                return;
            };
            for (&q, sketch) in queries.iter().zip(sketches) {
                v += black_box(
                    store
                        .query_verified(q, sketch, verification)
                        .expect("query"),
                )
                .len();
            }
            let Some(end) = thread_cpu_ns() else { return };
            plain.push((mid - start) as f64 / queries.len() as f64 / 1000.0);
            verified.push((end - mid) as f64 / queries.len() as f64 / 1000.0);
            found = (n, v);
        }
        let (p, v) = (median(plain), median(verified));
        let base = *plain_k3.get_or_insert(p);
        println!(
            "cpu time per query, n={}, k={k}, median of 5 rounds: plain {p:.2} us ({} matches), verified (similarity >= {}) {v:.2} us ({} matches); verified / plain at k={k} {:.2}x, verified / plain k=3 {:.2}x",
            store.len(),
            found.0,
            verification.min_similarity,
            found.1,
            v / p,
            v / base
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
