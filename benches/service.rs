//! `simhash-store serve` under load, beside the same work done in-process, in one run.
//!
//! `cargo bench --features server --bench service -- --n 10000000 --threads 1` bulk-loads N
//! random fingerprints (ids 0..N) into a new store, then for each of `--runs` runs measures,
//! in-process on the `Store` with `--threads` T threads: single k = 3 queries (one thread
//! each), `query_batch` of 1,000 (rayon's pool of T threads: what the Python `query_many`
//! does), and single-document inserts from 16 threads; then starts the real server
//! (`simhash-store serve --threads T`, this build, `--durability buffered`) on 127.0.0.1 and
//! measures over HTTP with a load generator in this process (tokio, keep-alive connections,
//! each sending its next request as soon as the last is answered): single queries on
//! `--conns` connections (queries/s, p50, p99), batches of 1,000 on `--batch-conns`
//! connections (fingerprints/s, and each batch's p50 and p99: whether concurrent batches
//! share the cores fairly), the same batches as a binary body (`application/octet-stream`),
//! and one-document inserts on 16 connections (documents/s, grouped into commits by the
//! server's writer). The table gives the median over runs of each number, per core, and the
//! ratio of HTTP to in-process measured in the same run, also per CPU-second (the server's
//! CPU time from /proc, this process's for the in-process work), which holds on a machine
//! shared with other work where wall-clock rates do not. Half the queried fingerprints are
//! 0..=3 bits from a stored one, half fresh draws of the workload.
//!
//! With T below the cores available, the server and the in-process work run on cores
//! 0..T-1 (`taskset`) and the load generator on the others, so the server's T cores are its
//! own; with T = all cores (the default) the load generator shares them, and the HTTP rates
//! are a lower bound.
//!
//! Options: `--n N` (default 10,000,000), `--runs R` (3), `--seconds S` (per measurement,
//! 5), `--threads T` (all cores), `--conns C` (64), `--batch-conns B` (16), `--dir PATH`
//! (where to create the store; default a temporary directory under the current one),
//! `--store PATH` (use the store at PATH, loading it first when it does not exist, and keep
//! it), `--workload uniform|real|templated|crowded:<share>` (the distribution of the stored
//! and queried fingerprints, `benches/support/workload.rs`; default uniform; all but uniform
//! make 1% of the stored ones exact copies of earlier ones). `SIMHASH_STORE_BIN=PATH` runs that server command instead of the one built with the
//! bench; `SIMHASH_STORE_BASELINE_BIN=PATH` also measures that server (JSON only, without
//! `--threads`, pinned the same way) in each run, for a before/after in the same run.

#[path = "support/cores.rs"]
mod cores;
#[path = "support/http_load.rs"]
mod http_load;
#[path = "support/rng.rs"]
mod rng;
#[path = "support/workload.rs"]
mod workload;
use http_load::*;

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rng::SplitMix;
use simhash_store::{BulkOptions, Entry, Fingerprint, Store};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use workload::Workload;

struct Options {
    n: u64,
    runs: usize,
    seconds: f64,
    threads: usize,
    conns: usize,
    batch_conns: usize,
    dir: Option<std::path::PathBuf>,
    store: Option<std::path::PathBuf>,
    workload: Workload,
}

fn options() -> Options {
    let mut o = Options {
        n: 10_000_000,
        runs: 3,
        seconds: 5.0,
        threads: 0,
        conns: 64,
        batch_conns: 16,
        dir: None,
        store: None,
        workload: Workload::Uniform,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = || args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--n" => o.n = value().parse().expect("--n N"),
            "--runs" => o.runs = value().parse().expect("--runs R"),
            "--seconds" => o.seconds = value().parse().expect("--seconds S"),
            "--threads" => o.threads = value().parse().expect("--threads T"),
            "--conns" => o.conns = value().parse().expect("--conns C"),
            "--batch-conns" => o.batch_conns = value().parse().expect("--batch-conns B"),
            "--dir" => o.dir = Some(value().into()),
            "--store" => o.store = Some(value().into()),
            "--workload" => {
                o.workload = Workload::parse(&value()).unwrap_or_else(|e| panic!("{e}"))
            }
            _ => {
                i += 1;
                continue; // `--bench` and the like from cargo
            }
        }
        i += 2;
    }
    o
}

/// The queried fingerprints: half near stored ones, half fresh draws of the workload.
fn queries(rng: &mut SplitMix, stored: &[u64], count: usize, workload: &Workload) -> Vec<u64> {
    (0..count)
        .map(|i| {
            if i % 2 == 0 {
                let fp = stored[rng.below(stored.len() as u64) as usize];
                let d = rng.below(4) as u32;
                rng.flip(fp, d)
            } else {
                workload.draw(rng)
            }
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

/// CPU time (user + system) of process `pid` (`self` for this one) so far, from
/// /proc/PID/stat; zero where unknown.
fn cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (in parentheses): utime is the 12th, stime the 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|f| f.parse::<u64>().ok()))
        .sum();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    ticks as f64 / hz
}

// ---- in-process ----

/// Runs `work(thread, i)` on `threads` threads for `seconds`; returns operations/s, where
/// `work` returns how many operations it did, and operations per CPU-second of this process.
fn in_process(threads: usize, seconds: f64, work: impl Fn(usize, u64) -> u64 + Sync) -> (f64, f64) {
    let stop = AtomicBool::new(false);
    let done = AtomicU64::new(0);
    let cpu = cpu_seconds("self");
    let started = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let (stop, done, work) = (&stop, &done, &work);
            s.spawn(move || {
                let mut i = 0;
                let mut ops = 0;
                while !stop.load(Ordering::Relaxed) {
                    ops += work(t, i);
                    i += 1;
                }
                done.fetch_add(ops, Ordering::Relaxed);
            });
        }
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
    });
    let ops = done.load(Ordering::Relaxed) as f64;
    let cpu = (cpu_seconds("self") - cpu).max(1e-3);
    (ops / started.elapsed().as_secs_f64(), ops / cpu)
}

/// Loads `n` random fingerprints (ids 0..n) into a new store at `dir`; returns them.
fn build(dir: &std::path::Path, n: u64, workload: &Workload, rng: &mut SplitMix) -> Vec<u64> {
    let mut stored: Vec<u64> = Vec::with_capacity(n as usize);
    for i in 0..n {
        let fp = match workload.exact_duplicate(i, rng) {
            Some(earlier) => stored[earlier as usize],
            None => workload.draw(rng),
        };
        stored.push(fp);
    }
    if dir.join("CURRENT").exists() {
        eprintln!("using the store at {}", dir.display());
        Store::open(dir).expect("open").compact().expect("compact");
        return stored;
    }
    let started = Instant::now();
    let store = Store::open(dir).expect("open");
    let mut loader = store.bulk_loader_with(BulkOptions::new()).expect("loader");
    for (id, &fp) in stored.iter().enumerate() {
        loader.add(id as u64, Fingerprint(fp)).expect("add");
    }
    loader.finish().expect("finish");
    store.compact().expect("compact");
    eprintln!(
        "loaded {n} fingerprints of workload {workload} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    stored
}

fn main() {
    let o = options();
    let cores = cores::available();
    let threads = if o.threads == 0 {
        cores
    } else {
        o.threads.min(cores)
    };
    // The server and the in-process work on cores 0..T-1, the load generator on the rest.
    let pinned = threads < cores;
    let server_cpus = if pinned {
        cores::cpu_list(0..threads)
    } else {
        String::new()
    };
    let parent = o
        .dir
        .clone()
        .unwrap_or_else(|| std::env::current_dir().expect("cwd"));
    let temp = tempfile::tempdir_in(&parent).expect("tempdir");
    let dir = o.store.clone().unwrap_or_else(|| temp.path().to_path_buf());
    let mut rng = SplitMix(0x5e_77_1c_e5);
    let stored = Arc::new(build(&dir, o.n, &o.workload, &mut rng));
    let pool = {
        if pinned {
            cores::pin(0..threads);
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("rayon pool")
    };
    let bin = std::env::var_os("SIMHASH_STORE_BIN")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_simhash-store").into());
    let baseline = std::env::var_os("SIMHASH_STORE_BASELINE_BIN");
    let next_id = Arc::new(AtomicU64::new(o.n));
    // In-process: single queries/s, batched fingerprints/s, inserts/s, then single queries
    // and batched fingerprints per CPU-second.
    let mut inproc: Vec<[f64; 5]> = Vec::new();
    let mut http: Vec<HttpRun> = Vec::new();
    let mut base: Vec<HttpRun> = Vec::new();
    // Each run: queries in-process, over HTTP (this server, then the baseline); then inserts
    // the same three ways, and a compaction, so that no run's queries share the CPU with the
    // flushes and compactions of earlier inserts.
    for run in 0..o.runs {
        let qs = Arc::new(queries(&mut rng, &stored, 200_000, &o.workload));
        if pinned {
            cores::pin(0..threads);
        }
        {
            let store = Store::open(&dir).expect("open");
            for q in &qs[..20_000] {
                store.query(Fingerprint(*q), 3).expect("query");
            }
            let single = in_process(threads, o.seconds, |t, i| {
                let q = qs[((t as u64 * 7919 + i) % qs.len() as u64) as usize];
                std::hint::black_box(store.query(Fingerprint(q), 3).expect("query"));
                1
            });
            let batched = in_process(1, o.seconds, |_, i| {
                let start = (i as usize * 1000) % (qs.len() - 1000);
                let batch: Vec<Fingerprint> = qs[start..start + 1000]
                    .iter()
                    .map(|&q| Fingerprint(q))
                    .collect();
                pool.install(|| std::hint::black_box(store.query_batch(&batch, 3).expect("batch")));
                1000
            });
            inproc.push([single.0, batched.0, 0.0, single.1, batched.1]);
        }
        if pinned {
            cores::pin(threads..cores);
        }
        let [single, batched, _, _, batched_cpu] = inproc[run];
        let server = Server::start(&bin, &dir, &server_cpus, Some(threads));
        let pid = server.child.id().to_string();
        let now = over_http(server.addr, &pid, &o, &qs, true);
        server.stop();
        eprintln!(
            "run {run}: single {:.0}/s ({:.2} of in-process query_batch; per CPU-second {:.2}), p50 {:.0} µs, p99 {:.0} µs; batches {:.0} fp/s (in-process {batched:.0}), p50 {:.1} ms, p99 {:.1} ms; in-process single {single:.0}/s",
            now.single,
            now.single / batched,
            now.single_cpu / batched_cpu,
            now.single_p50,
            now.single_p99,
            now.batched,
            now.batch_p50 / 1e3,
            now.batch_p99 / 1e3,
        );
        http.push(now);
        if let Some(bin) = &baseline {
            let server = Server::start(bin, &dir, &server_cpus, None);
            let pid = server.child.id().to_string();
            let then = over_http(server.addr, &pid, &o, &qs, false);
            server.stop();
            eprintln!(
                "run {run}: baseline single {:.0}/s ({:.2} of in-process query_batch; per CPU-second {:.2}), p50 {:.0} µs, p99 {:.0} µs; batches {:.0} fp/s, p50 {:.1} ms, p99 {:.1} ms",
                then.single,
                then.single / batched,
                then.single_cpu / batched_cpu,
                then.single_p50,
                then.single_p99,
                then.batched,
                then.batch_p50 / 1e3,
                then.batch_p99 / 1e3,
            );
            base.push(then);
        }
        if pinned {
            cores::pin(0..threads);
        }
        {
            let store = Store::open(&dir).expect("open");
            inproc[run][2] = in_process(16, o.seconds, |_, _| {
                let id = next_id.fetch_add(1, Ordering::Relaxed);
                store
                    .insert_entry(Entry::new(
                        id,
                        Fingerprint(id.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                    ))
                    .expect("insert");
                1
            })
            .0;
        }
        if pinned {
            cores::pin(threads..cores);
        }
        let server = Server::start(&bin, &dir, &server_cpus, Some(threads));
        http[run].inserts = inserts_over_http(server.addr, &o, &next_id);
        server.stop();
        if let Some(bin) = &baseline {
            let server = Server::start(bin, &dir, &server_cpus, None);
            base[run].inserts = inserts_over_http(server.addr, &o, &next_id);
            server.stop();
        }
        let started = Instant::now();
        Store::open(&dir).expect("open").compact().expect("compact");
        eprintln!(
            "run {run}: inserts/s in-process {:.0}, this server {:.0}, baseline {}; compacted in {:.1} s",
            inproc[run][2],
            http[run].inserts,
            base.get(run).map_or("-".into(), |b| format!("{:.0}", b.inserts)),
            started.elapsed().as_secs_f64()
        );
    }
    let column = |runs: &[HttpRun], f: &dyn Fn(&HttpRun) -> Option<f64>| -> Vec<f64> {
        runs.iter().filter_map(f).collect()
    };
    let show = |v: Vec<f64>, digits: usize| {
        if v.is_empty() {
            "-".to_owned()
        } else {
            format!("{:.*}", digits, median(v))
        }
    };
    let per_core = |v: Vec<f64>| {
        v.into_iter()
            .map(|x| x / threads as f64)
            .collect::<Vec<_>>()
    };
    let ratio = |runs: &[HttpRun], f: &dyn Fn(&HttpRun) -> f64, inproc_col: usize| {
        runs.iter()
            .zip(&inproc)
            .map(|(r, i)| f(r) / i[inproc_col])
            .collect::<Vec<_>>()
    };
    println!(
        "\n{} documents, server on {} of {} cores{}, median of {} runs, {} s each",
        o.n,
        threads,
        cores,
        if pinned {
            " (pinned; the load generator on the others)"
        } else {
            " (the load generator shares them)"
        },
        o.runs,
        o.seconds
    );
    let rows: Vec<(String, Vec<f64>, Vec<f64>, usize)> = vec![
        (
            format!("single k=3 queries/s ({} connections)", o.conns),
            column(&http, &|r| Some(r.single)),
            column(&base, &|r| Some(r.single)),
            0,
        ),
        (
            "single k=3 queries/s per core".into(),
            per_core(column(&http, &|r| Some(r.single))),
            per_core(column(&base, &|r| Some(r.single))),
            0,
        ),
        (
            "single queries / in-process `query_batch` (same run)".into(),
            ratio(&http, &|r| r.single, 1),
            ratio(&base, &|r| r.single, 1),
            2,
        ),
        (
            "single queries per server CPU-second / in-process `query_batch` per CPU-second".into(),
            ratio(&http, &|r| r.single_cpu, 4),
            ratio(&base, &|r| r.single_cpu, 4),
            2,
        ),
        (
            "single query p50, µs".into(),
            column(&http, &|r| Some(r.single_p50)),
            column(&base, &|r| Some(r.single_p50)),
            0,
        ),
        (
            "single query p99, µs".into(),
            column(&http, &|r| Some(r.single_p99)),
            column(&base, &|r| Some(r.single_p99)),
            0,
        ),
        (
            format!(
                "batches of 1,000 (JSON, {} connections), fingerprints/s",
                o.batch_conns
            ),
            column(&http, &|r| Some(r.batched)),
            column(&base, &|r| Some(r.batched)),
            0,
        ),
        (
            "batched fingerprints per server CPU-second / in-process".into(),
            ratio(&http, &|r| r.batched_cpu, 4),
            ratio(&base, &|r| r.batched_cpu, 4),
            2,
        ),
        (
            "batch p50, ms".into(),
            column(&http, &|r| Some(r.batch_p50 / 1e3)),
            column(&base, &|r| Some(r.batch_p50 / 1e3)),
            1,
        ),
        (
            "batch p99, ms".into(),
            column(&http, &|r| Some(r.batch_p99 / 1e3)),
            column(&base, &|r| Some(r.batch_p99 / 1e3)),
            1,
        ),
        (
            "batch p99 / p50".into(),
            column(&http, &|r| Some(r.batch_p99 / r.batch_p50)),
            column(&base, &|r| Some(r.batch_p99 / r.batch_p50)),
            2,
        ),
        (
            "batches of 1,000 (binary body), fingerprints/s".into(),
            column(&http, &|r| r.binary.map(|b| b.0)),
            Vec::new(),
            0,
        ),
        (
            "binary batch p50, ms".into(),
            column(&http, &|r| r.binary.map(|b| b.1 / 1e3)),
            Vec::new(),
            1,
        ),
        (
            "binary batch p99, ms".into(),
            column(&http, &|r| r.binary.map(|b| b.2 / 1e3)),
            Vec::new(),
            1,
        ),
        (
            "one-document inserts/s (16 connections)".into(),
            column(&http, &|r| Some(r.inserts)),
            column(&base, &|r| Some(r.inserts)),
            0,
        ),
    ];
    println!("| measure (HTTP) | this server | baseline server |\n|---|---|---|");
    for (name, now, then, digits) in rows {
        println!(
            "| {name} | {} | {} |",
            show(now, digits),
            show(then, digits)
        );
    }
    let names = [
        format!("single k=3 queries/s ({threads} threads)"),
        format!("`query_batch` of 1,000, fingerprints/s (rayon, {threads} threads)"),
        "one-document inserts/s (16 threads)".to_owned(),
        "single k=3 queries per CPU-second".to_owned(),
        "`query_batch` fingerprints per CPU-second".to_owned(),
    ];
    println!("\n| in-process | total | per core |\n|---|---|---|");
    for (c, name) in names.iter().enumerate() {
        let v: Vec<f64> = inproc.iter().map(|r| r[c]).collect();
        let per = if c < 3 {
            show(per_core(v.clone()), 0)
        } else {
            "-".to_owned()
        };
        println!("| {name} | {} | {per} |", show(v, 0));
    }
}
