//! The Rust side of `python/benches/bench_python.py`: the same work the Python package does,
//! timed without Python, so the bench reports the package's throughput as a share of
//! Rust's, measured in alternating rounds of one run.
//!
//! ```text
//! cargo build --release --example python_baseline
//! target/release/examples/python_baseline fingerprint TEXTS.txt
//! target/release/examples/python_baseline query STORE QUERIES.u64 K
//! target/release/examples/python_baseline tiny STORE N
//! target/release/examples/python_baseline bulk STORE FINGERPRINTS.u64
//! ```
//!
//! `TEXTS.txt` holds one JSON string per line (a text); `QUERIES.u64` little-endian `u64`
//! fingerprints. `fingerprint` fingerprints every text on all cores (rayon), as
//! `Simhasher.fingerprint_many` does; `query` answers every query with one
//! `Store::query_batch` (all cores), then once more one `Store::query` call at a time on one
//! thread, without the query cache; `tiny` times `N` queries that find nothing in a store of
//! one document: the cost of a call itself; `bulk` loads the fingerprints (ids 0, 1, ...)
//! into a new store with the default bulk loader, as `Store.bulk_load_fingerprints` does,
//! from the file read into memory first (as the Python side's numpy arrays are), and adds
//! the peak resident memory. Each prints one JSON line of seconds.

use std::io::BufRead;
use std::time::Instant;

use rayon::prelude::*;
use simhash_store::{Fingerprint, Simhasher, Store};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

fn fingerprint(path: &str) -> Result {
    let file = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut texts = Vec::new();
    for line in file.lines() {
        texts.push(serde_json::from_str::<String>(&line?)?);
    }
    let hasher = Simhasher::default();
    // Loads jieba's dictionary before the clock starts (the Python side's is loaded too).
    let _ = hasher.fingerprint("预热 warm-up");
    let start = Instant::now();
    let fps: Vec<u64> = texts
        .par_iter()
        .map(|t| hasher.fingerprint(t).map_or(0, |f| f.0))
        .collect();
    let seconds = start.elapsed().as_secs_f64();
    let checksum = fps.iter().fold(0u64, |a, f| a ^ f);
    println!(
        r#"{{"seconds": {seconds}, "texts": {}, "checksum": {checksum}}}"#,
        texts.len()
    );
    Ok(())
}

fn query(store: &str, queries: &str, k: u32) -> Result {
    let bytes = std::fs::read(queries)?;
    let fps: Vec<Fingerprint> = bytes
        .chunks_exact(8)
        .map(|c| Fingerprint(u64::from_le_bytes(c.try_into().unwrap_or_default())))
        .collect();
    // No query cache: the Python side asks the same queries of its own fresh process, and
    // neither may find them cached by the other.
    let store = Store::builder()
        .read_only(true)
        .query_cache_size(0)
        .open(store)?;
    let (half, rest) = fps.split_at(fps.len() / 2);
    let start = Instant::now();
    let found: usize = store.query_batch(half, k)?.iter().map(Vec::len).sum();
    let batch = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let mut single_found = 0;
    for fp in rest {
        single_found += store.query(*fp, k)?.len();
    }
    let single = start.elapsed().as_secs_f64();
    println!(
        r#"{{"batch_seconds": {batch}, "batch_queries": {}, "batch_found": {found}, "single_seconds": {single}, "single_queries": {}, "single_found": {single_found}}}"#,
        half.len(),
        rest.len()
    );
    Ok(())
}

/// The cost of a call when the query itself costs almost nothing: `n` queries at k = 0 that
/// find nothing in a store of one document.
fn tiny(store: &str, n: u64) -> Result {
    let store = Store::builder()
        .read_only(true)
        .query_cache_size(0)
        .open(store)?;
    let mut found = 0;
    let start = Instant::now();
    for i in 0..n {
        found += store.query(Fingerprint(u64::MAX - i), 0)?.len();
    }
    let seconds = start.elapsed().as_secs_f64();
    println!(
        r#"{{"call_seconds": {}, "found": {found}}}"#,
        seconds / n as f64
    );
    Ok(())
}

/// The process's peak resident memory in bytes (`VmHWM`), 0 where /proc is missing.
fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn bulk(store: &str, fingerprints: &str) -> Result {
    let bytes = std::fs::read(fingerprints)?;
    let fps: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
        .collect();
    drop(bytes);
    let ids: Vec<u64> = (0..fps.len() as u64).collect();
    let store = Store::open(store)?;
    let start = Instant::now();
    let mut loader = store.bulk_loader()?;
    for (&id, &fp) in ids.iter().zip(&fps) {
        loader.add(id, Fingerprint(fp))?;
    }
    let summary = loader.finish()?;
    let seconds = start.elapsed().as_secs_f64();
    println!(
        r#"{{"seconds": {seconds}, "added": {}, "peak_rss": {}}}"#,
        summary.added,
        peak_rss()
    );
    Ok(())
}

fn main() -> Result {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("fingerprint") if args.len() == 3 => fingerprint(&args[2]),
        Some("query") if args.len() == 5 => query(&args[2], &args[3], args[4].parse()?),
        Some("tiny") if args.len() == 4 => tiny(&args[2], args[3].parse()?),
        Some("bulk") if args.len() == 4 => bulk(&args[2], &args[3]),
        _ => Err(
            "usage: python_baseline fingerprint TEXTS.txt | query STORE QUERIES.u64 K | tiny STORE N \
             | bulk STORE FINGERPRINTS.u64"
                .into(),
        ),
    }
}
