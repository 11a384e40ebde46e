//! All pairs and clusters of a whole store, next to one `query` per document on the same
//! store in the same run.
//!
//! Data sets (N documents each):
//! - `random`: random fingerprints, 1% of them planted near-duplicates (a copy of an earlier
//!   document with 0..=3 bits flipped);
//! - `skewed`: the same, but 5% of documents share one value of block 0 (templated pages), so
//!   one group of family `block0` holds N/20 documents.
//!
//! ```text
//! cargo bench --bench dedup -- --n 1000000 --runs 3
//! cargo bench --bench dedup -- --n 1000000 --runs 3 --sets random --threads 1
//! cargo bench --bench dedup -- --n 10000000 --runs 3 --sample 100000 --dir /tmp/dedup-10m
//! ```
//!
//! Options: `--n N` (default 1,000,000), `--k K` (3), `--runs R` (3; the median is reported),
//! `--sample S` (documents queried for the per-document baseline, default min(N, 200,000);
//! when S < N the baseline is extrapolated to N, and said so), `--sets random,skewed`,
//! `--dir DIR` (keep the stores in DIR/<set>-<N> and reuse them in later runs), `--cache BYTES`
//! (the store's block cache, default 1 GiB: at 10M, queries with the default 256 MiB miss the
//! cache and are ten times slower, which would flatter the scan; the scan itself reads with
//! `fill_cache(false)`), `--threads T` (rayon's pool of T threads pinned to cores 0..T-1,
//! default all cores; the table adds documents/s per thread).
//!
//! Stores are filled with the bulk loader (`Store::bulk_loader`) and compacted.
//!
//! `--verified` measures verified dedup instead (`Store::verified_pairs`): a store that keeps
//! sketches, with a random sketch per document and, for each planted near-duplicate, its
//! original's sketch with a random share of the codes changed; on it, in the same run, the
//! plain scan at `--k` (the plain dedup), the plain scan at the verified k (the candidates)
//! and the verified scan, each the median of `--runs`. With synthetic data this measures
//! cost, not quality. `--verified-k K` and `--min-similarity T` (default: the library's).
//!
//! ```text
//! cargo bench --bench dedup -- --n 10000000 --runs 3 --sets random --verified --dir /tmp/dedup-10m
//! ```

use std::path::PathBuf;
use std::time::Instant;

use simhash_store::sketch::{SketchKind, SKETCH_BYTES};
use simhash_store::verified::Verification;
use simhash_store::{Durability, Entry, Fingerprint, SimhashConfig, Sketch, Store};

#[path = "support/cores.rs"]
mod cores;
#[path = "support/rng.rs"]
mod rng;
use rng::SplitMix;

struct Opts {
    n: usize,
    k: u32,
    runs: usize,
    sample: usize,
    sets: Vec<String>,
    dir: Option<PathBuf>,
    cache: usize,
    verified: bool,
    verification: Verification,
    threads: usize,
}

fn parse_args() -> Opts {
    let mut opts = Opts {
        n: 1_000_000,
        k: 3,
        runs: 3,
        sample: 0,
        sets: vec!["random".into(), "skewed".into()],
        dir: None,
        cache: 1 << 30,
        verified: false,
        verification: Verification::default(),
        threads: 0,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--n" => opts.n = value().replace('_', "").parse().expect("--n N"),
            "--k" => opts.k = value().parse().expect("--k K"),
            "--runs" => opts.runs = value().parse().expect("--runs R"),
            "--sample" => opts.sample = value().replace('_', "").parse().expect("--sample S"),
            "--sets" => opts.sets = value().split(',').map(str::to_owned).collect(),
            "--dir" => opts.dir = Some(PathBuf::from(value())),
            "--cache" => opts.cache = value().replace('_', "").parse().expect("--cache BYTES"),
            "--verified" => opts.verified = true,
            "--threads" => opts.threads = value().parse().expect("--threads T"),
            "--verified-k" => opts.verification.k = value().parse().expect("--verified-k K"),
            "--min-similarity" => {
                opts.verification.min_similarity = value().parse().expect("--min-similarity T")
            }
            // Flags cargo passes to every bench target.
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    if opts.sample == 0 {
        opts.sample = opts.n.min(200_000);
    }
    opts
}

/// Fingerprints of the data set: 1% planted near-duplicates; for `skewed`, 5% share block 0.
fn fingerprints(set: &str, n: usize) -> Vec<u64> {
    planted(set, n).0
}

/// [`fingerprints`], and for each document the index of the one it is a planted copy of.
fn planted(set: &str, n: usize) -> (Vec<u64>, Vec<Option<usize>>) {
    let mut rng = SplitMix(42);
    let mut fps: Vec<u64> = Vec::with_capacity(n);
    let mut bases = Vec::with_capacity(n);
    for i in 0..n {
        let mut fp = if i > 0 && rng.below(100) == 0 {
            let b = rng.below(i as u64) as usize;
            bases.push(Some(b));
            let base = fps[b];
            (0..rng.below(4)).fold(base, |f, _| f ^ (1u64 << rng.below(64)))
        } else {
            bases.push(None);
            rng.next()
        };
        if set == "skewed" && rng.below(20) == 0 {
            fp = (fp & 0x0000_ffff_ffff_ffff) | (0x5a5au64 << 48);
        }
        fps.push(fp);
    }
    (fps, bases)
}

fn load(path: &std::path::Path, fps: &[u64], cache: usize) -> Store {
    let store = Store::builder()
        .durability(Durability::NoWal)
        .block_cache_size(cache)
        .open(path)
        .expect("open the store");
    if store.len() == fps.len() as u64 {
        return store;
    }
    let start = Instant::now();
    let mut loader = store.bulk_loader().expect("bulk loader");
    for (id, &fp) in fps.iter().enumerate() {
        loader.add(id as u64, Fingerprint(fp)).expect("add");
    }
    loader.finish().expect("finish the load");
    let loaded = start.elapsed().as_secs_f64();
    store.compact().expect("compact");
    eprintln!(
        "  bulk-loaded {} documents in {loaded:.1} s, compacted in {:.1} s",
        fps.len(),
        start.elapsed().as_secs_f64() - loaded
    );
    store
}

/// Random sketches, and for each planted near-duplicate its original's sketch with a random
/// number (up to half) of the codes changed.
fn sketches(bases: &[Option<usize>]) -> Vec<Sketch> {
    let mut rng = SplitMix(7);
    let mut out: Vec<Sketch> = Vec::with_capacity(bases.len());
    for base in bases {
        let mut bytes = [0u8; SKETCH_BYTES];
        match base {
            Some(j) => {
                bytes = *out[*j].as_bytes();
                for _ in 0..rng.below(SKETCH_BYTES as u64 / 2) {
                    bytes[rng.below(SKETCH_BYTES as u64) as usize] = rng.next() as u8;
                }
            }
            None => {
                for chunk in bytes.chunks_mut(8) {
                    chunk.copy_from_slice(&rng.next().to_le_bytes()[..chunk.len()]);
                }
            }
        }
        out.push(Sketch::from_bytes(bytes));
    }
    out
}

fn load_sketched(
    path: &std::path::Path,
    fps: &[u64],
    bases: &[Option<usize>],
    cache: usize,
) -> Store {
    let store = Store::builder()
        .durability(Durability::NoWal)
        .block_cache_size(cache)
        .simhash_config(SimhashConfig::default().with_sketch(SketchKind::MinHash))
        .open(path)
        .expect("open the store");
    if store.len() == fps.len() as u64 {
        return store;
    }
    let start = Instant::now();
    let sketches = sketches(bases);
    let mut loader = store.bulk_loader().expect("bulk loader");
    for (id, (&fp, sketch)) in fps.iter().zip(&sketches).enumerate() {
        loader
            .add_entry(&Entry::new(id as u64, Fingerprint(fp)).with_sketch(*sketch))
            .expect("add");
    }
    loader.finish().expect("finish the load");
    let loaded = start.elapsed().as_secs_f64();
    store.compact().expect("compact");
    eprintln!(
        "  bulk-loaded {} documents with sketches in {loaded:.1} s, compacted in {:.1} s",
        fps.len(),
        start.elapsed().as_secs_f64() - loaded
    );
    store
}

/// Plain dedup at `--k`, the candidates' scan and the verified scan on a store with sketches.
fn verified(opts: &Opts) {
    let v = opts.verification;
    println!(
        "verified dedup: N = {}, plain k = {}, verified k = {}, min similarity {}, {} runs (median)",
        opts.n, opts.k, v.k, v.min_similarity, opts.runs
    );
    println!("| set | N | plain k={} (s) | pairs | plain k={} (s) | pairs | verified (s) | verified pairs | verified / plain k={} | verified / plain k={} |", opts.k, v.k, opts.k, v.k);
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for set in &opts.sets {
        let tmp;
        let path = match &opts.dir {
            Some(dir) => dir.join(format!("{set}-{}-sketched", opts.n)),
            None => {
                tmp = tempfile::tempdir().expect("tempdir");
                tmp.path().to_path_buf()
            }
        };
        eprintln!("{set}: preparing {}", path.display());
        let (fps, bases) = planted(set, opts.n);
        let store = load_sketched(&path, &fps, &bases, opts.cache);
        let (mut plain, mut wide, mut checked) = (Vec::new(), Vec::new(), Vec::new());
        let mut counts = (0, 0, 0);
        // Interleaved, so that load from elsewhere on the machine falls on all three alike.
        for run in 0..opts.runs {
            let start = Instant::now();
            let (_, stats) = store.pairs(opts.k).clusters().expect("scan");
            plain.push(start.elapsed().as_secs_f64());
            counts.0 = stats.pairs;
            let start = Instant::now();
            let (_, stats) = store.pairs(v.k).clusters().expect("scan");
            wide.push(start.elapsed().as_secs_f64());
            counts.1 = stats.pairs;
            let start = Instant::now();
            let (_, stats) = store.verified_pairs(v).clusters().expect("verified scan");
            checked.push(start.elapsed().as_secs_f64());
            counts.2 = stats.verified.pairs;
            eprintln!(
                "  run {run}: plain {:.2} s, candidates {:.2} s, verified {:.2} s",
                plain[run], wide[run], checked[run]
            );
        }
        let (plain, wide, checked) = (median(plain), median(wide), median(checked));
        println!(
            "| {set} | {} | {plain:.2} | {} | {wide:.2} | {} | {checked:.2} | {} | {:.2}x | {:.2}x |",
            opts.n,
            counts.0,
            counts.1,
            counts.2,
            checked / plain,
            checked / wide
        );
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let opts = parse_args();
    let cores = cores::use_threads(opts.threads);
    if opts.verified {
        verified(&opts);
        return;
    }
    println!(
        "dedup benchmark: N = {}, k = {}, {} runs (median), {} threads, baseline sample {}, block cache {} MiB",
        opts.n,
        opts.k,
        opts.runs,
        cores,
        opts.sample,
        opts.cache >> 20
    );
    println!("| set | N | all pairs + clusters (s) | pairs | clusters | largest | one query per document (s) | ratio | documents/s per thread (pairs) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for set in &opts.sets {
        let tmp;
        let path = match &opts.dir {
            Some(dir) => dir.join(format!("{set}-{}", opts.n)),
            None => {
                tmp = tempfile::tempdir().expect("tempdir");
                tmp.path().to_path_buf()
            }
        };
        eprintln!("{set}: preparing {}", path.display());
        let fps = fingerprints(set, opts.n);
        let store = load(&path, &fps, opts.cache);

        let mut times = Vec::new();
        let mut found = None;
        for run in 0..opts.runs {
            let start = Instant::now();
            let (clusters, stats) = store.pairs(opts.k).clusters().expect("scan");
            let secs = start.elapsed().as_secs_f64();
            eprintln!(
                "  run {run}: {secs:.2} s, {} pairs, {} clusters",
                stats.pairs,
                clusters.len()
            );
            times.push(secs);
            let largest = clusters.iter().map(|c| c.members.len()).max().unwrap_or(0);
            found = Some((stats.pairs, clusters.len(), largest));
        }
        let dedup = median(times);
        let (pairs, clusters, largest) = found.unwrap_or_default();

        // The baseline: one query per document (on all cores, as `query_batch` does), each
        // pair seen from both ends; on a sample of evenly spaced documents, extrapolated to N.
        let step = (opts.n / opts.sample.max(1)).max(1);
        let sample: Vec<Fingerprint> = fps
            .iter()
            .step_by(step)
            .map(|&fp| Fingerprint(fp))
            .collect();
        let mut times = Vec::new();
        for run in 0..opts.runs {
            let start = Instant::now();
            let answers = store.query_batch(&sample, opts.k).expect("queries");
            let secs = start.elapsed().as_secs_f64() * opts.n as f64 / sample.len() as f64;
            let matched: usize = answers.iter().map(|a| a.len() - 1).sum();
            eprintln!("  baseline run {run}: {secs:.2} s for N (sample {}: {matched} matches besides itself)", sample.len());
            times.push(secs);
        }
        let baseline = median(times);
        let extrapolated = if sample.len() < opts.n {
            " (extrapolated)"
        } else {
            ""
        };
        println!(
            "| {set} | {} | {dedup:.2} | {pairs} | {clusters} | {largest} | {baseline:.1}{extrapolated} | {:.1}x | {:.0} |",
            opts.n,
            baseline / dedup,
            opts.n as f64 / dedup / cores as f64
        );
    }
}
