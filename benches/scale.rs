//! Bulk load and query at scale.
//!
//! `cargo bench --bench scale -- --n 10000000` loads N random fingerprints (1% planted
//! near-duplicates of earlier ones) with the bulk loader into an empty store and reports:
//! the load rate (fingerprints/s, wall time including ingestion and a final flush), peak
//! resident memory of the load, bytes on disk per fingerprint per column family, and query
//! latency for k = 3 and k = 6 (median and p99 over `--queries` queries, half planted near a
//! stored fingerprint, half random) warm and after reopening the store (cold block cache).
//!
//! `cargo bench --bench scale -- --text 20000` instead compares loading Chinese texts with
//! `add_text` against jieba-rs `cut` alone (HMM on, as the default simhasher) on all cores,
//! over the same generated texts (sentences of `/work/shared/corpus`, or built-in ones,
//! shuffled into documents of about 1.5 KB).
//!
//! Options: `--n N` (default 1,000,000), `--queries Q` (10,000), `--budget BYTES` (the
//! loader's memory budget, default 1 GiB), `--cache BYTES` (the store's block cache for the
//! queries, default 1 GiB: the four block families of 10M fingerprints hold about 900 MB
//! uncompressed, so the store's default 256 MiB makes "warm" queries miss), `--query-cache
//! BYTES` (the store's query cache, default 256 MiB as in the library), `--preload` (fill the
//! query cache with `Store::preload_query_cache` before querying), `--dir PATH` (where to
//! create the store; default a
//! temporary directory under the current one), `--compact` (also measure after a full
//! compaction), `--text DOCS`, `--corpus DIR`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use simhash_store::{BulkOptions, Fingerprint, Store};

struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
    /// `fp` with `d` random bits flipped (possibly the same bit twice: at most `d`).
    fn flip(&mut self, fp: u64, d: u32) -> u64 {
        (0..d).fold(fp, |acc, _| acc ^ (1 << self.below(64)))
    }
}

struct Args {
    n: usize,
    queries: usize,
    budget: usize,
    cache: usize,
    query_cache: usize,
    preload: bool,
    dir: Option<PathBuf>,
    compact: bool,
    text: Option<usize>,
    corpus: PathBuf,
}

fn parse_args() -> Args {
    let mut args = Args {
        n: 1_000_000,
        queries: 10_000,
        budget: 1 << 30,
        cache: 1 << 30,
        query_cache: 256 << 20,
        preload: false,
        dir: None,
        compact: false,
        text: None,
        corpus: PathBuf::from("/work/shared/corpus"),
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
            "--budget" => args.budget = num(value("--budget")),
            "--cache" => args.cache = num(value("--cache")),
            "--query-cache" => args.query_cache = num(value("--query-cache")),
            "--preload" => args.preload = true,
            "--dir" => args.dir = Some(PathBuf::from(value("--dir"))),
            "--compact" => args.compact = true,
            "--text" => args.text = Some(num(value("--text"))),
            "--corpus" => args.corpus = PathBuf::from(value("--corpus")),
            "--bench" => {} // cargo bench passes it
            other => panic!("unknown argument {other}; see the top of benches/scale.rs"),
        }
    }
    args
}

/// Peak resident set size of this process in bytes (VmHWM).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Current resident set size in bytes (VmRSS).
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// CPU time (user + system) of this process so far, from /proc/self/stat (clock ticks of
/// 10 ms).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): utime is the 12th, stime the 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let ticks = field(11) + field(12);
    Duration::from_millis(ticks * 10)
}

/// Resets VmHWM to the current RSS (Linux: write 5 to clear_refs).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Latency of each query, in order.
fn run_queries(store: &Store, queries: &[Fingerprint], k: u32) -> (Vec<Duration>, usize) {
    let mut lat = Vec::with_capacity(queries.len());
    let mut found = 0;
    for &q in queries {
        let t = Instant::now();
        let m = store.query(q, k).expect("query");
        lat.push(t.elapsed());
        found += m.len();
    }
    (lat, found)
}

fn report_latency(label: &str, mut lat: Vec<Duration>, found: usize) {
    lat.sort_unstable();
    println!(
        "| {label} | {:.1} | {:.1} | {:.1} | {found} |",
        percentile(&lat, 0.5).as_secs_f64() * 1e6,
        percentile(&lat, 0.99).as_secs_f64() * 1e6,
        lat.iter().sum::<Duration>().as_secs_f64() * 1e6 / lat.len().max(1) as f64,
    );
}

fn scale(args: &Args) {
    let n = args.n;
    println!(
        "# scale: N = {n}, {} queries, budget {} MiB, block cache {} MiB, query cache {} MiB{}, {} threads",
        args.queries,
        args.budget >> 20,
        args.cache >> 20,
        args.query_cache >> 20,
        if args.preload { " (preloaded)" } else { "" },
        rayon::current_num_threads()
    );
    let open = |path: &std::path::Path| {
        Store::builder()
            .block_cache_size(args.cache)
            .query_cache_size(args.query_cache)
            .open(path)
            .expect("open")
    };
    let mut rng = SplitMix(0x5eed);
    let mut fps: Vec<u64> = Vec::with_capacity(n);
    for i in 0..n {
        // 1% planted near-duplicates: 1..=3 bits from an earlier fingerprint.
        if i % 100 == 99 {
            let base = fps[rng.below(i as u64) as usize];
            let d = 1 + rng.below(3) as u32;
            fps.push(rng.flip(base, d));
        } else {
            fps.push(rng.next());
        }
    }
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
    let t = Instant::now();
    let store = open(&path);
    // Phase changes, to split the load's time.
    let phases = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = phases.clone();
    let opts = BulkOptions::new()
        .memory_budget(args.budget)
        .progress(move |p| {
            let mut v = seen.lock().expect("lock");
            if v.last().is_none_or(|(phase, _)| *phase != p.phase) {
                v.push((p.phase, p.elapsed));
            }
        });
    let mut loader = store.bulk_loader_with(opts).expect("loader");
    for (id, &fp) in fps.iter().enumerate() {
        loader.add(id as u64, Fingerprint(fp)).expect("add");
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
        "| load | {:.2} s | {:.2} M fps/s | adds {:.2} s | peak RSS {:.0} MiB (before the load {:.0} MiB, of which the fingerprint vector {:.0} MiB) |",
        load.as_secs_f64(),
        n as f64 / load.as_secs_f64() / 1e6,
        t_added.as_secs_f64(),
        mib(peak),
        mib(rss_before),
        mib((n * 8) as u64),
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

    // Queries: half planted (0..=3 bits from a stored fingerprint), half random. A second
    // set of the same kind measures queries the caches have not seen.
    let mut make_queries = || -> Vec<Fingerprint> {
        (0..args.queries)
            .map(|i| {
                if i % 2 == 0 {
                    let base = fps[rng.below(n as u64) as usize];
                    let d = rng.below(4) as u32;
                    Fingerprint(rng.flip(base, d))
                } else {
                    Fingerprint(rng.next())
                }
            })
            .collect()
    };
    let queries = make_queries();
    let fresh = make_queries();
    drop(fps);

    // "warm": the same queries a second time; "new": other queries after those.
    let measure = |store: &Store, label: &str| {
        if args.preload {
            let t = Instant::now();
            let ranges = store.preload_query_cache().expect("preload");
            println!();
            println!(
                "preload_query_cache: {ranges} ranges, {:.0} MiB, {:.2} s",
                mib(store.query_cache_usage()),
                t.elapsed().as_secs_f64()
            );
        }
        println!();
        println!("queries ({label}), µs:");
        println!("| case | median | p99 | mean | matches |");
        println!("|---|---|---|---|---|");
        for k in [3u32, 6] {
            let _ = run_queries(store, &queries, k); // warm
            let (lat, found) = run_queries(store, &queries, k);
            report_latency(&format!("k={k} warm"), lat, found);
            let (lat, found) = run_queries(store, &fresh, k);
            report_latency(&format!("k={k} new"), lat, found);
        }
    };
    measure(&store, "after the load");
    drop(store);

    // Cold block cache: reopen before each k (the OS page cache stays warm).
    println!();
    println!("queries after reopening (cold block cache), µs:");
    println!("| case | median | p99 | mean | matches |");
    println!("|---|---|---|---|---|");
    for k in [3u32, 6] {
        let store = open(&path);
        let (lat, found) = run_queries(&store, &queries, k);
        report_latency(&format!("k={k} cold"), lat, found);
    }

    if args.compact {
        let store = open(&path);
        let t = Instant::now();
        store.compact().expect("compact");
        println!();
        println!("compact: {:.2} s", t.elapsed().as_secs_f64());
        disk(&store, "after compact");
        measure(&store, "after compact");
    }
}

/// Built-in Chinese sentences, used when the corpus directory is missing.
const FALLBACK: &str = "数据库使用多版本并发控制来保证数据一致性，读不阻塞写。\
    新闻报道称，今年夏天的降雨量比往年明显偏多，多地出现了洪涝灾害。\
    研究人员发现，这种新材料在高温下依然能够保持稳定的结构和性能。\
    市场分析人士认为，消费需求的回暖将带动相关行业的持续增长。\
    学校组织学生参观博物馆，了解古代文明的发展历程和文化传承。";

fn sentences(corpus: &PathBuf) -> Vec<String> {
    let mut text = String::new();
    if let Ok(entries) = std::fs::read_dir(corpus) {
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            if p.extension().is_some_and(|e| e == "txt") {
                text.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    if text.is_empty() {
        text = FALLBACK.to_string();
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if c == '\n' {
            continue;
        }
        cur.push(c);
        if matches!(c, '。' | '！' | '？' | '；') {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

fn text(args: &Args, docs: usize) {
    let sentences = sentences(&args.corpus);
    let mut rng = SplitMix(0x7e47);
    let texts: Vec<String> = (0..docs)
        .map(|_| {
            let mut t = String::new();
            while t.len() < 1500 {
                t.push_str(&sentences[rng.below(sentences.len() as u64) as usize]);
            }
            t
        })
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    println!(
        "# Chinese text: {docs} documents, {:.1} MiB, {} sentences, {} threads",
        mib(bytes as u64),
        sentences.len(),
        rayon::current_num_threads()
    );
    let jieba = jieba_rs::Jieba::new();
    let _ = jieba.cut(&texts[0], true); // load lazily built tables
    let dir = tempfile::Builder::new()
        .prefix("scale-bench-")
        .tempdir_in(".")
        .expect("tempdir");
    let store = Store::open(dir.path().join("store")).expect("open");
    let _ = store.simhasher().fingerprint(&texts[0]); // load the dictionary
    let mut rows = Vec::new();
    for round in 0..3 {
        let t = Instant::now();
        let words: usize = texts.par_iter().map(|s| jieba.cut(s, true).len()).sum();
        let cut = t.elapsed();

        let t = Instant::now();
        let hasher = store.simhasher();
        let ok = texts
            .par_iter()
            .filter(|s| hasher.fingerprint(s).is_ok())
            .count();
        let fingerprint = t.elapsed();
        assert_eq!(ok, docs);

        let t = Instant::now();
        let mut loader = store.bulk_loader().expect("loader");
        for (i, s) in texts.iter().enumerate() {
            loader
                .add_text((round * docs + i) as u64, None, s)
                .expect("add_text");
        }
        let summary = loader.finish().expect("finish");
        let load = t.elapsed();
        assert_eq!(summary.added as usize, docs);
        let mbs = |d: Duration| mib(bytes as u64) / d.as_secs_f64();
        println!(
            "round {round}: jieba cut {:.2} MiB/s ({words} words), Simhasher::fingerprint alone {:.2} MiB/s, add_text+finish {:.2} MiB/s ({:.0} docs/s): {:.0}% of cut, {:.0}% of fingerprint",
            mbs(cut),
            mbs(fingerprint),
            mbs(load),
            docs as f64 / load.as_secs_f64(),
            100.0 * cut.as_secs_f64() / load.as_secs_f64(),
            100.0 * fingerprint.as_secs_f64() / load.as_secs_f64(),
        );
        rows.push((
            cut.as_secs_f64() / load.as_secs_f64(),
            fingerprint.as_secs_f64() / load.as_secs_f64(),
        ));
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (cut_ratio, _) = rows[rows.len() / 2];
    rows.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (_, fp_ratio) = rows[rows.len() / 2];
    println!(
        "median add_text throughput: {:.0}% of jieba cut alone, {:.0}% of Simhasher::fingerprint alone",
        100.0 * cut_ratio,
        100.0 * fp_ratio
    );
}

fn main() {
    let args = parse_args();
    match args.text {
        Some(docs) => text(&args, docs),
        None => scale(&args),
    }
}
