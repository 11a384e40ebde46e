//! Query latency at 1M random fingerprints, k = 3 and k = 6, next to brute force over the same
//! fingerprints in the same run: an in-memory popcount scan of a `Vec<u64>` and the store's own
//! full scan (`Strategy::FullScan`). `store` is the default store with its query cache
//! preloaded (`Store::preload_query_cache`); `store_nocache` is a read-only handle on the same
//! files with the query cache off, so every range is read through RocksDB's iterators.
//!
//! `cargo bench --bench query` (set `SIMHASH_BENCH_N` for another size).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use simhash_store::{Fingerprint, Store, Strategy};

struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

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

    report_cpu_time("store", &store, &fps, &queries);
    report_cpu_time("store_nocache", &nocache, &fps, &queries);

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

criterion_group!(benches, bench);
criterion_main!(benches);
