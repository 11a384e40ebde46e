//! Query cost in a form a profiler can read: builds (once) a store of N random fingerprints
//! and then answers Q queries, half planted near-duplicates, half random.
//!
//! ```text
//! cargo run --release --example query_profile -- build DIR 1000000
//! cargo run --release --example query_profile -- query DIR 3 20000 [MODE [READS...]]
//! valgrind --tool=callgrind --toggle-collect='*run_queries*' \
//!     target/release/examples/query_profile query DIR 3 2000
//! ```
//!
//! MODE says what the measured queries find in the query cache (`StoreBuilder::query_cache_size`):
//! `preload` (the default) fills it with `Store::preload_query_cache` and warms the block cache
//! with other queries than the measured ones; `repeat` warms both caches with the measured
//! queries themselves; `nocache` turns the query cache off and warms the block cache with the
//! measured queries (RocksDB alone); `new` warms both caches with other queries, so the
//! measured ones miss the query cache and fill it; `fresh` asks 20,000 other queries, then
//! times each measured one and prints the median and the 99th percentile (a store of format 7
//! has no query cache: every mode but `fresh` differs only in what the block cache holds).
//!
//! `QUERY_PROFILE_SEED=N` draws other queries than the default ones (runs one after another on
//! a store, each fresh). Fingerprints are computed from their index, so that a planted query
//! needs no copy of the store's (a billion would take 8 GB).
//!
//! READS, any of `concurrent` or `sequential` (`StoreBuilder::concurrent_reads`) and `mmap`
//! or `pread` (`StoreBuilder::mmap_reads`), sets how the store reads (default: the store's
//! choice).
//!
//! Under callgrind the instruction count of `run_queries` divided by Q is a per-query cost that
//! does not depend on what else the machine is doing (docs/benchmarks.md).

use std::hint::black_box;
use std::time::Instant;

use simhash_store::{Durability, Fingerprint, Store};

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn fingerprints(n: u64) -> Vec<u64> {
    (0..n).map(fingerprint).collect()
}

/// Fingerprint `i` of [`fingerprints`], computed alone (a billion would take 8 GB).
fn fingerprint(i: u64) -> u64 {
    let mut state = 42u64.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    splitmix(&mut state)
}

#[inline(never)]
fn run_queries(store: &Store, queries: &[Fingerprint], k: u32) -> usize {
    queries
        .iter()
        .map(|&q| black_box(store.query(q, k).expect("query")).len())
        .sum()
}

/// Each query timed alone: the median and the 99th percentile, in µs.
fn latencies(store: &Store, queries: &[Fingerprint], k: u32) -> (f64, f64) {
    let mut us: Vec<f64> = queries
        .iter()
        .map(|&q| {
            let start = Instant::now();
            black_box(store.query(q, k).expect("query"));
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    us.sort_by(f64::total_cmp);
    let at = |p: f64| us[((us.len() - 1) as f64 * p) as usize];
    (at(0.5), at(0.99))
}

/// The same queries once, to fill the block cache (not counted: no `run_queries` in the name).
#[inline(never)]
fn warm_up(store: &Store, queries: &[Fingerprint], k: u32) {
    for &q in queries {
        black_box(store.query(q, k).expect("query"));
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: query_profile build DIR N | query DIR K Q [preload|repeat|new|nocache|fresh [concurrent|sequential] [mmap|pread]]";
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["build", dir, n] => {
            let n: u64 = n.parse()?;
            let store = Store::builder().durability(Durability::NoWal).open(dir)?;
            let mut loader = store.bulk_loader()?;
            for (id, fp) in fingerprints(n).into_iter().enumerate() {
                loader.add(id as u64, Fingerprint(fp))?;
            }
            loader.finish()?;
            store.flush()?;
            store.compact()?;
            println!("{} documents in {dir}", store.len());
        }
        ["query", dir, k, q, rest @ ..] => {
            let (k, q): (u32, usize) = (k.parse()?, q.parse()?);
            let mode = rest.first().copied().unwrap_or("preload");
            let mut builder = Store::builder().read_only(true);
            if mode == "nocache" {
                builder = builder.query_cache_size(0);
            }
            for reads in rest.iter().skip(1) {
                builder = match *reads {
                    "concurrent" => builder.concurrent_reads(true),
                    "sequential" => builder.concurrent_reads(false),
                    "mmap" => builder.mmap_reads(true),
                    "pread" => builder.mmap_reads(false),
                    other => return Err(format!("unknown reads {other}; {usage}").into()),
                };
            }
            let store = builder.open(dir)?;
            let n = store.len().max(1);
            // QUERY_PROFILE_SEED: other queries than the default's, for runs one after another
            // that are all fresh.
            let mut rng = std::env::var("QUERY_PROFILE_SEED")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(7);
            let mut queries = |count: usize| -> Vec<Fingerprint> {
                (0..count)
                    .map(|i| {
                        if i % 2 == 0 {
                            let base = fingerprint(splitmix(&mut rng) % n);
                            let flip =
                                (1 << (splitmix(&mut rng) % 64)) | (1 << (splitmix(&mut rng) % 64));
                            Fingerprint(base ^ flip)
                        } else {
                            Fingerprint(splitmix(&mut rng))
                        }
                    })
                    .collect()
            };
            let measured = queries(q);
            match mode {
                "preload" => {
                    let ranges = store.preload_query_cache()?;
                    println!(
                        "preloaded {ranges} ranges, {} MiB",
                        store.query_cache_usage() >> 20
                    );
                    warm_up(&store, &queries(q), k);
                }
                "repeat" | "nocache" => warm_up(&store, &measured, k),
                "new" => warm_up(&store, &queries(q), k),
                "fresh" => {
                    warm_up(&store, &queries(20_000), k);
                    let (p50, p99) = latencies(&store, &measured, k);
                    println!("k={k} fresh: {q} queries after 20,000 others, p50 {p50:.1} us, p99 {p99:.1} us");
                    return Ok(());
                }
                other => return Err(format!("unknown mode {other}; {usage}").into()),
            }
            let start = Instant::now();
            let found = run_queries(&store, &measured, k);
            let us = start.elapsed().as_secs_f64() * 1e6 / q as f64;
            println!(
                "k={k} {mode}: {q} queries, {found} matches, {us:.2} us per query (wall, mean)"
            );
        }
        _ => return Err(usage.into()),
    }
    Ok(())
}
