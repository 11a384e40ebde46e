//! Bulk load and query at scale.
//!
//! `cargo bench --bench scale -- --n 10000000 --faiss` loads N random fingerprints (1%
//! planted near-duplicates of earlier ones) with the bulk loader into an empty store and
//! reports: the load rate (fingerprints/s, wall time including ingestion and a final flush),
//! peak resident memory of the load, bytes on disk per fingerprint per column family, and
//! query latency at k = 3 and k = 6, one query at a time on one thread:
//!
//! - fresh: fingerprints never asked before, after the store is reopened (empty block and
//!   query caches; the store's files in the OS page cache, read once before the first run)
//!   and `--warmup` queries of other fingerprints; p50 and p99 over `--queries` queries;
//! - repeated: the same queries asked a second time.
//!
//! Half the queries are 0..=3 bits from a stored fingerprint, half random; no fingerprint is
//! in two sets. Each of `--runs` runs has its own sets for each k; the table gives the median
//! over runs of each statistic. With `--faiss` the same fingerprints and query sets go to
//! `benches/faiss_scale.py` (FAISS `IndexBinaryMultiHash(64, 4, 16)` in memory, run with
//! `$PYTHON`, else `.venv/bin/python`, else `python3`), which also checks that its answers to
//! the first `--check` queries of run 0 are the store's; the table puts both side by side.
//! `--faiss-queries M` has FAISS warm up with and measure only the first M queries of each
//! set (at 100M a k = 6 query takes it tens of milliseconds).
//!
//! `cargo bench --bench scale -- --text 20000` instead compares loading Chinese texts with
//! `add_text` against jieba-rs `cut` alone (HMM on, as the default simhasher) on all cores,
//! over the same generated texts (sentences of `/work/shared/corpus`, or built-in ones,
//! shuffled into documents of about 1.5 KB).
//!
//! Options: `--n N` (default 1,000,000), `--queries Q` (measured queries per run and k,
//! 10,000; 0 skips the queries), `--warmup W` (20,000), `--runs R` (3), `--faiss`, `--check
//! C` (200), `--faiss-queries M` (all), `--budget BYTES` (the loader's memory budget, default the
//! library's default: a third of the memory available), `--cache BYTES` (the store's block cache, default the library's default, 256 MiB), `--query-cache BYTES`
//! (the store's query cache, default 256 MiB as in the library), `--split-groups-above N`
//! (`StoreBuilder::split_groups_above`: groups of more entries are written split; default the
//! library's, 65,536; `0` for never, to measure what splitting gives), `--pread` (read as a
//! store larger than the memory is read: `pread` of whole groups on the I/O threads, not memory
//! maps, `StoreBuilder::concurrent_reads`), `--preload` (fill the query
//! cache with `Store::preload_query_cache` after each reopening, before the warm-up), `--dir
//! PATH` (where to create the store; default a temporary directory under the current one),
//! `--keep` (leave that directory, with the FAISS input files, in place), `--compact` (also
//! measure after a full compaction, with other query sets), `--text DOCS`, `--corpus DIR`,
//! `--after-load Q` (queries asked right after the load, without
//! reopening the store or reading its files, per k; 10,000; the p50 of each fifth of them,
//! in the order asked, shows whether the latency settles; also their percentiles, with and
//! without a match, and how many read nothing from the disk), `--verify` (time
//! `Store::verify`), `--pairs` (time all pairs at k = 3, and their peak memory), `--threads T`
//! (rayon's pool of T threads pinned to cores 0..T-1, default all cores: the load and pairs
//! then run on T cores, and the load line gives fingerprints/s per thread; the phase lines
//! give each phase's seconds, busy cores and bytes written).
//!
//! `--workload uniform|real|templated|crowded:<share>` (default `uniform`) chooses the
//! distribution of the loaded fingerprints and of the queries' random half
//! (`benches/support/workload.rs`): `real` has the bit frequencies and shared block values of
//! real texts' fingerprints, and 1% exact duplicates besides the planted near-duplicates. The
//! load reports the loaded set's shared-block factor per block and how many entries a query
//! drawn like it scans, against uniform fingerprints. With `crowded:<share>` the table also
//! gives the queries that land on the crowded block value apart.
//!
//! Fingerprints are computed from their index, not held: `--n 1000000000` needs no memory for
//! them (`benches/scale-1b.sh` runs it, with its disk and time needs).
//!
//! Each run's line also gives the load average (`/proc/loadavg`, 1 minute) when it ended:
//! above 2 on this 2-core machine other processes take turns with the queries, and a query
//! that loses its core for a scheduler slice takes milliseconds, which shows in p99.

#[path = "support/faiss.rs"]
mod faiss;

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use simhash_store::{BulkOptions, Fingerprint, Store};

#[path = "support/cores.rs"]
mod cores;
#[path = "support/rng.rs"]
mod rng;
use rng::SplitMix;
#[path = "support/workload.rs"]
mod workload;
use workload::Workload;
#[path = "support/process.rs"]
mod process;
use process::*;
#[path = "support/scale_phases.rs"]
mod scale_phases;
use scale_phases::*;
#[path = "support/scale_report.rs"]
mod scale_report;
use scale_report::*;
#[path = "support/text_load.rs"]
mod text_load;
use text_load::text;

struct Args {
    n: usize,
    queries: usize,
    budget: Option<usize>,
    cache: Option<usize>,
    query_cache: usize,
    preload: bool,
    dir: Option<PathBuf>,
    compact: bool,
    text: Option<usize>,
    corpus: PathBuf,
    warmup: usize,
    runs: usize,
    faiss: bool,
    check: usize,
    faiss_queries: usize,
    keep: bool,
    after_load: usize,
    verify: bool,
    pairs: bool,
    threads: usize,
    workload: Workload,
    split_groups_above: Option<usize>,
    pread: bool,
}

fn parse_args() -> Args {
    let mut args = Args {
        n: 1_000_000,
        queries: 10_000,
        budget: None,
        cache: None,
        query_cache: 256 << 20,
        preload: false,
        dir: None,
        compact: false,
        text: None,
        corpus: PathBuf::from("/work/shared/corpus"),
        warmup: 20_000,
        runs: 3,
        faiss: false,
        check: 200,
        faiss_queries: 0,
        keep: false,
        after_load: 10_000,
        verify: false,
        pairs: false,
        threads: 0,
        workload: Workload::Uniform,
        split_groups_above: None,
        pread: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().unwrap_or_else(|| panic!("{name} needs a value"));
        let num = |s: String| {
            s.replace('_', "")
                .parse::<usize>()
                .unwrap_or_else(|_| panic!("not a number: {s}"))
        };
        match a.as_str() {
            "--n" => args.n = num(value("--n")),
            "--queries" => args.queries = num(value("--queries")),
            "--budget" => args.budget = Some(num(value("--budget"))),
            "--cache" => args.cache = Some(num(value("--cache"))),
            "--query-cache" => args.query_cache = num(value("--query-cache")),
            "--preload" => args.preload = true,
            "--dir" => args.dir = Some(PathBuf::from(value("--dir"))),
            "--compact" => args.compact = true,
            "--text" => args.text = Some(num(value("--text"))),
            "--corpus" => args.corpus = PathBuf::from(value("--corpus")),
            "--warmup" => args.warmup = num(value("--warmup")),
            "--runs" => args.runs = num(value("--runs")).max(1),
            "--faiss" => args.faiss = true,
            "--check" => args.check = num(value("--check")),
            "--faiss-queries" => args.faiss_queries = num(value("--faiss-queries")),
            "--keep" => args.keep = true,
            "--after-load" => args.after_load = num(value("--after-load")),
            "--verify" => args.verify = true,
            "--pairs" => args.pairs = true,
            "--threads" => args.threads = num(value("--threads")),
            "--pread" => args.pread = true,
            "--split-groups-above" => {
                args.split_groups_above = match num(value("--split-groups-above")) {
                    0 => Some(usize::MAX),
                    n => Some(n),
                }
            }
            "--workload" => {
                args.workload =
                    Workload::parse(&value("--workload")).unwrap_or_else(|e| panic!("{e}"))
            }
            "--bench" => {} // cargo bench passes it
            other => panic!("unknown argument {other}; see the top of benches/scale.rs"),
        }
    }
    args
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// What one pass over a query set measured.
struct Pass {
    /// Latencies, sorted.
    lat: Vec<Duration>,
    matches: u64,
    /// The ids of the first `keep` answers, ascending (taken outside the timing).
    answers: Vec<Vec<u64>>,
    /// Latencies of the queries in the workload's crowded group, sorted.
    crowded: Vec<Duration>,
}

/// Asks `queries` one at a time at distance `k`.
fn run_queries(
    store: &Store,
    queries: &[Fingerprint],
    k: u32,
    keep: usize,
    workload: &Workload,
) -> Pass {
    let mut lat = Vec::with_capacity(queries.len());
    let mut crowded = Vec::new();
    let mut found = 0;
    let mut answers = Vec::new();
    for (i, &q) in queries.iter().enumerate() {
        let t = Instant::now();
        let m = store.query(q, k).expect("query");
        let took = t.elapsed();
        lat.push(took);
        if workload.in_crowded_group(q.0) {
            crowded.push(took);
        }
        found += m.len() as u64;
        if i < keep {
            let mut ids: Vec<u64> = m.iter().map(|m| m.id).collect();
            ids.sort_unstable();
            answers.push(ids);
        }
    }
    lat.sort_unstable();
    crowded.sort_unstable();
    Pass {
        lat,
        matches: found,
        answers,
        crowded,
    }
}

fn scale(args: &Args) {
    let n = args.n;
    println!(
        "# scale: N = {n}, workload {}, format {}, {} runs x {} warm-up + {} measured queries per k, budget {} MiB, block cache {} MiB, query cache {} MiB{}, {} threads, groups split above {}",
        args.workload,
        simhash_store::upgrade::FORMAT_VERSION,
        args.runs,
        args.warmup,
        args.queries,
        args.budget.map_or_else(|| "default".to_string(), |b| (b >> 20).to_string()),
        args.cache.map_or_else(|| "default".to_string(), |c| (c >> 20).to_string()),
        args.query_cache >> 20,
        if args.preload { " (preloaded)" } else { "" },
        rayon::current_num_threads(),
        match args.split_groups_above {
            None => "65536 (default)".to_string(),
            Some(usize::MAX) => "never".to_string(),
            Some(n) => n.to_string(),
        }
    );
    let open = |path: &std::path::Path| {
        let mut builder = Store::builder().query_cache_size(args.query_cache);
        if let Some(entries) = args.split_groups_above {
            builder = builder.split_groups_above(entries);
        }
        if args.pread {
            builder = builder.mmap_reads(false).concurrent_reads(true);
        }
        match args.cache {
            Some(bytes) => builder.block_cache_size(bytes),
            None => builder,
        }
        .open(path)
        .expect("open")
    };
    let mut rng = SplitMix(0x5eed);
    let fps = Fps {
        n,
        workload: &args.workload,
    };
    describe_workload(&fps);
    let root = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&root).expect("create --dir");
    let tmp = tempfile::Builder::new()
        .prefix("scale-bench-")
        .tempdir_in(&root)
        .expect("tempdir");
    let path = tmp.path().join("store");

    let rss_before = rss();
    reset_peak_rss();
    let cpu0 = cpu_time();
    let written0 = written_bytes();
    let t = Instant::now();
    let store = open(&path);
    // Phase changes, to split the load's time.
    let phases = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(
        simhash_store::bulk::BulkPhase,
        Duration,
        Duration,
        u64,
    )>::new()));
    let seen = phases.clone();
    let opts = BulkOptions::new();
    let opts = match args.budget {
        Some(bytes) => opts.memory_budget(bytes),
        None => opts,
    };
    println!("loader options: {opts:?}");
    let opts = opts.progress(move |p| {
        let mut v = seen.lock().expect("lock");
        if v.last().is_none_or(|(phase, ..)| *phase != p.phase) {
            v.push((p.phase, p.elapsed, cpu_time(), written_bytes()));
        }
    });
    let mut loader = store.bulk_loader_with(opts).expect("loader");
    for id in 0..n {
        loader
            .add(id as u64, Fingerprint(fps.get(id)))
            .expect("add");
    }
    let t_added = t.elapsed();
    let summary = loader.finish().expect("finish");
    store.flush().expect("flush");
    let load = t.elapsed();
    let cpu = cpu_time() - cpu0;
    let peak = peak_rss();
    println!();
    println!("load: {summary}");
    let phases = phases.lock().expect("lock").clone();
    let mut line = String::from("phases (loader time):");
    for w in phases.windows(2) {
        line.push_str(&format!(
            " {:?} {:.2} s,",
            w[0].0,
            (w[1].1 - w[0].1).as_secs_f64()
        ));
    }
    // Per phase: busy cores (CPU time / wall time) and bytes the process wrote to storage.
    let mut busy = String::from("phases (busy cores, MB written):");
    for w in phases.windows(2) {
        let wall = (w[1].1 - w[0].1).as_secs_f64().max(1e-9);
        busy.push_str(&format!(
            " {:?} {:.2} cores {:.0} MB,",
            w[0].0,
            (w[1].2.saturating_sub(w[0].2)).as_secs_f64() / wall,
            w[1].3.saturating_sub(w[0].3) as f64 / 1e6
        ));
    }
    println!("{busy}");
    println!(
        "{line} flush {:.2} s",
        (load - t_added - summary.elapsed.saturating_sub(t_added))
            .as_secs_f64()
            .max(0.0)
    );
    println!(
        "load CPU time {:.2} s ({:.2} cores busy on average): {:.2} M fps per CPU-second, {:.2} M fps/s if both cores were free and fully used",
        cpu.as_secs_f64(),
        cpu.as_secs_f64() / load.as_secs_f64(),
        n as f64 / cpu.as_secs_f64() / 1e6,
        2.0 * n as f64 / cpu.as_secs_f64() / 1e6
    );
    println!(
        "| load | {:.2} s | {:.2} M fps/s | adds {:.2} s | peak RSS {:.0} MiB (before the load {:.0} MiB, no fingerprint vector: generated on the fly) |",
        load.as_secs_f64(),
        n as f64 / load.as_secs_f64() / 1e6,
        t_added.as_secs_f64(),
        mib(peak),
        mib(rss_before),
    );
    let stored: u64 = store
        .disk_usage()
        .expect("disk usage")
        .iter()
        .map(|(_, b)| b)
        .sum();
    let written = written_bytes().saturating_sub(written0);
    println!(
        "load on {} threads: {:.2} M fps/s per thread; {:.0} MB written for {:.0} MB stored ({:.2} bytes written per byte stored)",
        rayon::current_num_threads(),
        n as f64 / load.as_secs_f64() / 1e6 / rayon::current_num_threads() as f64,
        written as f64 / 1e6,
        stored as f64 / 1e6,
        written as f64 / stored.max(1) as f64
    );
    assert_eq!(store.len(), n as u64);

    let disk = |store: &Store, label: &str| {
        let usage = store.disk_usage().expect("disk usage");
        let total: u64 = usage.iter().map(|(_, b)| b).sum();
        println!();
        println!(
            "disk ({label}): {:.1} bytes/fp, {:.0} MiB",
            total as f64 / n as f64,
            mib(total)
        );
        println!("| family | MiB | bytes/fp |");
        println!("|---|---|---|");
        for (family, bytes) in usage {
            println!(
                "| {family} | {:.1} | {:.2} |",
                mib(bytes),
                bytes as f64 / n as f64
            );
        }
    };
    disk(&store, "after the load");
    if let Some(resident) = page_cache_resident(&path) {
        println!(
            "in the OS page cache right after the load: {:.0} of {:.0} MiB",
            mib(resident),
            mib(dir_size(&path))
        );
    }

    if args.after_load > 0 {
        // Right after the load, without reopening or reading the files (and before `verify`
        // and the pair scan read them): what a user who queries at once gets.
        for k in KS {
            let set = query_set(&mut rng, &fps, &mut HashSet::new(), args.after_load);
            // In five slices, in the order asked: how the latency settles.
            let (mut lat, mut matches, mut fifths) = (Vec::new(), 0, Vec::new());
            // Queries with a match read one more thing (the ids of the chunk that holds it).
            let (mut with_match, mut without) = (Vec::new(), Vec::new());
            // Queries that read nothing from the disk (`/proc/self/io`; none where it is not).
            let mut from_memory = Vec::new();
            for slice in set.chunks(set.len().div_ceil(5).max(1)) {
                let mut l = Vec::with_capacity(slice.len());
                for &q in slice {
                    let read_before = disk_bytes_read();
                    let t = Instant::now();
                    let found = store.query(q, k).expect("query").len() as u64;
                    let took = t.elapsed();
                    l.push(took);
                    matches += found;
                    if found > 0 {
                        with_match.push(took)
                    } else {
                        without.push(took)
                    }
                    if read_before.is_some() && disk_bytes_read() == read_before {
                        from_memory.push(took);
                    }
                }
                l.sort_unstable();
                fifths.push(format!("{:.0}", us(percentile(&l, 0.5))));
                lat.extend(l);
            }
            lat.sort_unstable();
            with_match.sort_unstable();
            without.sort_unstable();
            from_memory.sort_unstable();
            println!(
                "  right after the load, k={k}: {} of {} read nothing from the disk, p50 {:.0} µs",
                from_memory.len(),
                lat.len(),
                us(percentile(&from_memory, 0.5)),
            );
            println!(
                "  right after the load, k={k}: p10 p25 p50 p75 p90 {} µs",
                [0.1, 0.25, 0.5, 0.75, 0.9]
                    .map(|p| format!("{:.0}", us(percentile(&lat, p))))
                    .join(" ")
            );
            println!(
                "  right after the load, k={k}: with a match ({}) p50 / p99 {:.0} / {:.0} µs, without ({}) {:.0} / {:.0} µs",
                with_match.len(),
                us(percentile(&with_match, 0.5)),
                us(percentile(&with_match, 0.99)),
                without.len(),
                us(percentile(&without, 0.5)),
                us(percentile(&without, 0.99)),
            );
            println!(
                "  right after the load, k={k}: p50 of each fifth of the queries, in order: {} µs",
                fifths.join(" ")
            );
            println!(
                "| right after the load, k={k} | fresh p50 {:.1} µs | p99 {:.1} µs | first 1,000 p99 n/a | {matches} matches | load average {:.1} |",
                us(percentile(&lat, 0.5)),
                us(percentile(&lat, 0.99)),
                load_average()
            );
        }
    }
    if args.verify {
        let t = Instant::now();
        let report = store.verify().expect("verify");
        println!(
            "| verify | {:.1} s | clean: {} | load average {:.1} |",
            t.elapsed().as_secs_f64(),
            report.is_clean(),
            load_average()
        );
        assert!(report.is_clean(), "{report}");
    }
    if args.pairs {
        reset_peak_rss();
        let t = Instant::now();
        let stats = store
            .pairs(3)
            .for_each(|_| Ok::<(), simhash_store::Error>(()))
            .expect("pairs");
        println!(
            "| all pairs k=3 | {:.1} s | {} pairs | peak RSS {:.0} MiB | load average {:.1} |",
            t.elapsed().as_secs_f64(),
            stats.pairs,
            mib(peak_rss()),
            load_average()
        );
    }
    if args.queries == 0 {
        if args.keep {
            println!("kept {}", tmp.keep().display());
        }
        return;
    }
    // One phase per run and k (and as many again after `--compact`), each with its own
    // warm-up and measured sets: no fingerprint is asked twice across sets.
    let phase_count = args.runs * KS.len() * if args.compact { 2 } else { 1 };
    let mut asked = HashSet::new();
    let mut phases: Vec<Phase> = (0..phase_count)
        .map(|i| Phase {
            run: (i / KS.len()) % args.runs,
            k: KS[i % KS.len()],
            warmup: query_set(&mut rng, &fps, &mut asked, args.warmup),
            measured: query_set(&mut rng, &fps, &mut asked, args.queries),
        })
        .collect();
    drop(asked);
    let after_compact = if args.compact {
        phases.split_off(args.runs * KS.len())
    } else {
        Vec::new()
    };
    if args.faiss {
        let dir = tmp.path();
        let written = faiss::write_u64s(&dir.join("data.u64"), (0..n).map(|i| fps.get(i)))
            .and_then(|()| {
                faiss::write_u64s(
                    &dir.join("warmup.u64"),
                    phases.iter().flat_map(|p| p.warmup.iter().map(|f| f.0)),
                )
            })
            .and_then(|()| {
                faiss::write_u64s(
                    &dir.join("queries.u64"),
                    phases.iter().flat_map(|p| p.measured.iter().map(|f| f.0)),
                )
            });
        written.expect("write the FAISS input files");
    }
    drop(store);
    let ours = measure(args, &open, &path, &phases, "after the load");
    if args.faiss {
        write_answers(&tmp.path().join("answers.txt"), &ours).expect("write answers.txt");
    }
    let theirs = if args.faiss {
        faiss::run_script(tmp.path(), args.runs, &KS, args.faiss_queries)
    } else {
        None
    };
    print_comparison(args, &ours, theirs.as_ref());

    if args.compact {
        let store = open(&path);
        let t = Instant::now();
        store.compact().expect("compact");
        println!();
        println!("compact: {:.2} s", t.elapsed().as_secs_f64());
        disk(&store, "after compact");
        drop(store);
        let ours = measure(args, &open, &path, &after_compact, "after compact");
        print_comparison(args, &ours, None);
    }
    if args.keep {
        let kept = tmp.keep();
        println!();
        println!("kept {}", kept.display());
    }
}

/// The loaded fingerprints, computed from their index rather than held (8 GB at 1B): drawn
/// from the workload, with 1% planted near-duplicates (every 100th is 1..=3 bits from an
/// earlier one) and, except for `uniform`, 1% exact duplicates.
struct Fps<'a> {
    n: usize,
    workload: &'a Workload,
}

impl Fps<'_> {
    fn random(&self, i: usize) -> u64 {
        let mut rng = SplitMix(0x5eed ^ (i as u64).wrapping_mul(0xd134_2543_de82_ef95));
        self.workload.draw(&mut rng)
    }

    fn get(&self, i: usize) -> u64 {
        let mut rng = SplitMix(!(i as u64));
        if let Some(earlier) = self.workload.exact_duplicate(i as u64, &mut rng) {
            return self.get(earlier as usize);
        }
        if i % 100 != 99 {
            return self.random(i);
        }
        let mut base = rng.below(i as u64) as usize;
        if base % 100 == 99 {
            base -= 1;
        }
        let d = 1 + rng.below(3) as u32;
        rng.flip(self.random(base), d)
    }
}

/// Prints how the loaded set spreads over block values: the shared-block factor per block
/// and the entries a query drawn like it scans, against uniform fingerprints.
fn describe_workload(fps: &Fps) {
    let t = Instant::now();
    let groups = simhash_store::groups::BlockGroups::from_fingerprints(
        (0..fps.n).map(|i| Fingerprint(fps.get(i))),
    );
    let factors: Vec<String> = (0..simhash_store::BLOCKS)
        .map(|b| format!("{:.1}", groups.shared_block_factor(b)))
        .collect();
    let largest: Vec<String> = (0..simhash_store::BLOCKS)
        .map(|b| format!("{:.3}%", 100.0 * groups.largest_share(b)))
        .collect();
    println!(
        "workload {}: shared-block factor {} (blocks 0..3), largest group {}, a query drawn like it scans {:.1} entries, uniform {:.1}: {:.2}x ({:.1} s to count)",
        fps.workload,
        factors.join(" / "),
        largest.join(" / "),
        groups.expected_scan_per_query(),
        groups.uniform_scan_per_query(),
        groups.expected_scan_per_query() / groups.uniform_scan_per_query().max(f64::MIN_POSITIVE),
        t.elapsed().as_secs_f64()
    );
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn main() {
    let args = parse_args();
    cores::use_threads(args.threads);
    match args.text {
        Some(docs) => text(&args, docs),
        None => scale(&args),
    }
}
