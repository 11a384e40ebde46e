//! `simhash-store serve` under load, beside the same work done in-process, in one run.
//!
//! `cargo bench --features server --bench service -- --n 10000000` bulk-loads N random
//! fingerprints (ids 0..N) into a new store, then for each of `--runs` runs measures,
//! in-process on the `Store`: single k = 3 queries from one thread per core, `query_batch`
//! of 1,000, and single-document inserts from 16 threads; then starts the real server (`simhash-store serve`, this build,
//! `--durability buffered`) on 127.0.0.1 and measures the same over HTTP with a load
//! generator in this process (tokio, keep-alive connections, each sending its next request
//! as soon as the last is answered): single queries on `--conns` connections (64; queries/s,
//! p50, p99), batches of 1,000 on 4 connections (fingerprints/s), and one-document inserts
//! on 16 connections (documents/s, grouped into commits by the server's writer). The table
//! gives the median over runs of each number. Half the queried fingerprints are 0..=3 bits
//! from a stored one, half fresh draws of the workload.
//!
//! The load generator shares the machine with the server: on 2 cores it takes part of the
//! CPU the server would otherwise have, so the HTTP rates are a lower bound.
//!
//! Options: `--n N` (default 10,000,000), `--runs R` (3), `--seconds S` (per measurement,
//! 5), `--conns C` (64), `--dir PATH` (where to create the store; default a temporary
//! directory under the current one), `--workload uniform|real|templated|crowded:<share>`
//! (the distribution of the stored and queried fingerprints, `benches/support/workload.rs`;
//! default uniform; all but uniform make 1% of the stored ones exact copies of earlier ones). `SIMHASH_STORE_BIN=PATH` runs that server command
//! instead of the one built with the bench.

#[path = "support/rng.rs"]
mod rng;
#[path = "support/workload.rs"]
mod workload;

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
    conns: usize,
    dir: Option<std::path::PathBuf>,
    workload: Workload,
}

fn options() -> Options {
    let mut o = Options {
        n: 10_000_000,
        runs: 3,
        seconds: 5.0,
        conns: 64,
        dir: None,
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
            "--conns" => o.conns = value().parse().expect("--conns C"),
            "--dir" => o.dir = Some(value().into()),
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

// ---- in-process ----

/// Runs `work(thread, i)` on `threads` threads for `seconds`; returns operations/s, where
/// `work` returns how many operations it did.
fn in_process(threads: usize, seconds: f64, work: impl Fn(usize, u64) -> u64 + Sync) -> f64 {
    let stop = AtomicBool::new(false);
    let done = AtomicU64::new(0);
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
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

// ---- over HTTP ----

struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(dir: &std::path::Path) -> Server {
        use std::io::BufRead;
        // `SIMHASH_STORE_BIN` overrides the command built with this bench.
        let bin = std::env::var_os("SIMHASH_STORE_BIN")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_simhash-store").into());
        let mut child = Command::new(bin)
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--durability",
                "buffered",
                "--store",
            ])
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the server");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("its address");
        let addr = line
            .trim()
            .rsplit("://")
            .next()
            .and_then(|a| a.parse().ok())
            .expect("an address");
        Server { child, addr }
    }

    fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// One keep-alive connection sending requests and reading whole responses.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Conn {
            stream,
            buf: Vec::with_capacity(1 << 16),
        }
    }

    /// POSTs `body` to `path`; returns the status and the response body.
    async fn post(&mut self, path: &str, body: &str) -> (u16, Vec<u8>) {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let mut request = head.into_bytes();
        request.extend_from_slice(body.as_bytes());
        self.stream.write_all(&request).await.expect("send");
        self.buf.clear();
        let mut chunk = [0u8; 16384];
        loop {
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.buf[..end]).to_ascii_lowercase();
                let status: u16 = head
                    .split_whitespace()
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .expect("status");
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .expect("content-length");
                while self.buf.len() < end + 4 + length {
                    let n = self.stream.read(&mut chunk).await.expect("read");
                    assert!(n > 0, "connection closed");
                    self.buf.extend_from_slice(&chunk[..n]);
                }
                let body = self.buf[end + 4..end + 4 + length].to_vec();
                return (status, body);
            }
            let n = self.stream.read(&mut chunk).await.expect("read");
            assert!(n > 0, "connection closed");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

/// Drives `conns` connections for `seconds`; each sends `body(conn, i)` to `path` again and
/// again. Returns (requests/s, sorted latencies).
fn load(
    addr: SocketAddr,
    conns: usize,
    seconds: f64,
    path: &'static str,
    body: impl Fn(usize, u64) -> String + Send + Sync + 'static,
) -> (f64, Vec<Duration>) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let body = Arc::new(body);
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let tasks: Vec<_> = (0..conns)
            .map(|c| {
                let (body, stop) = (Arc::clone(&body), Arc::clone(&stop));
                tokio::spawn(async move {
                    let mut conn = Conn::open(addr).await;
                    let mut latencies = Vec::new();
                    let mut i = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let b = body(c, i);
                        let t = Instant::now();
                        let (status, response) = conn.post(path, &b).await;
                        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&response));
                        latencies.push(t.elapsed());
                        i += 1;
                    }
                    latencies
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
        stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.expect("connection task"));
        }
        let rate = all.len() as f64 / started.elapsed().as_secs_f64();
        all.sort_unstable();
        (rate, all)
    })
}

fn main() {
    let o = options();
    let parent = o
        .dir
        .clone()
        .unwrap_or_else(|| std::env::current_dir().expect("cwd"));
    let dir = tempfile::tempdir_in(&parent).expect("tempdir");
    let mut rng = SplitMix(0x5e_77_1c_e5);
    let mut stored: Vec<u64> = Vec::with_capacity(o.n as usize);
    for i in 0..o.n {
        let fp = match o.workload.exact_duplicate(i, &mut rng) {
            Some(earlier) => stored[earlier as usize],
            None => o.workload.draw(&mut rng),
        };
        stored.push(fp);
    }
    let started = Instant::now();
    {
        let store = Store::open(dir.path()).expect("open");
        let mut loader = store.bulk_loader_with(BulkOptions::new()).expect("loader");
        for (id, &fp) in stored.iter().enumerate() {
            loader.add(id as u64, Fingerprint(fp)).expect("add");
        }
        loader.finish().expect("finish");
        store.compact().expect("compact");
    }
    eprintln!(
        "loaded {} fingerprints of workload {} in {:.1} s",
        o.n,
        o.workload,
        started.elapsed().as_secs_f64()
    );
    let stored = Arc::new(stored);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next_id = Arc::new(AtomicU64::new(o.n));
    let mut rows: Vec<[Vec<f64>; 2]> = vec![Default::default(); 5];
    for run in 0..o.runs {
        let qs = Arc::new(queries(&mut rng, &stored, 200_000, &o.workload));
        {
            let store = Store::open(dir.path()).expect("open");
            let warm = &qs[..20_000];
            for q in warm {
                store.query(Fingerprint(*q), 3).expect("query");
            }
            let single = in_process(cores, o.seconds, |t, i| {
                let q = qs[((t as u64 * 7919 + i) % qs.len() as u64) as usize];
                std::hint::black_box(store.query(Fingerprint(q), 3).expect("query"));
                1
            });
            let batch: Vec<Fingerprint> = qs[..1000].iter().map(|&q| Fingerprint(q)).collect();
            let batched = in_process(1, o.seconds, |_, _| {
                std::hint::black_box(store.query_batch(&batch, 3).expect("batch"));
                1000
            });
            let inserts = in_process(16, o.seconds, |_, _| {
                let id = next_id.fetch_add(1, Ordering::Relaxed);
                store
                    .insert_entry(Entry::new(
                        id,
                        Fingerprint(id.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                    ))
                    .expect("insert");
                1
            });
            rows[0][0].push(single);
            rows[3][0].push(batched);
            rows[4][0].push(inserts);
        }
        let server = Server::start(dir.path());
        let q1 = Arc::clone(&qs);
        let (_, _) = load(server.addr, o.conns, 1.0, "/v1/query", move |c, i| {
            format!(
                "{{\"fingerprints\":[\"{:x}\"],\"k\":3}}",
                q1[(c * 1000 + i as usize) % q1.len()]
            )
        });
        let q2 = Arc::clone(&qs);
        let (qps, lat) = load(server.addr, o.conns, o.seconds, "/v1/query", move |c, i| {
            format!(
                "{{\"fingerprints\":[\"{:x}\"],\"k\":3}}",
                q2[(c * 3001 + i as usize * 7) % q2.len()]
            )
        });
        rows[0][1].push(qps);
        rows[1][1].push(percentile(&lat, 0.5));
        rows[2][1].push(percentile(&lat, 0.99));
        let q3 = Arc::clone(&qs);
        let (batches, _) = load(server.addr, 4, o.seconds, "/v1/query", move |c, i| {
            let start = ((c * 50 + i as usize) * 1000) % (q3.len() - 1000);
            let fps: Vec<String> = q3[start..start + 1000]
                .iter()
                .map(|q| format!("\"{q:x}\""))
                .collect();
            format!("{{\"fingerprints\":[{}],\"k\":3}}", fps.join(","))
        });
        rows[3][1].push(batches * 1000.0);
        let ids = Arc::clone(&next_id);
        let (inserts, _) = load(server.addr, 16, o.seconds, "/v1/insert", move |_, _| {
            let id = ids.fetch_add(1, Ordering::Relaxed);
            format!(
                "{{\"documents\":[{{\"id\":{id},\"fingerprint\":\"{:x}\"}}]}}",
                id.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            )
        });
        rows[4][1].push(inserts);
        server.stop();
        eprintln!(
            "run {run}: single {qps:.0}/s (in-process {:.0}/s), p50 {:.0} µs, p99 {:.0} µs; batched {:.0} fp/s (in-process {:.0}); inserts {inserts:.0}/s (in-process {:.0})",
            rows[0][0][run], rows[1][1][run], rows[2][1][run], rows[3][1][run], rows[3][0][run], rows[4][0][run]
        );
    }
    let names = [
        "single k=3 queries/s (HTTP: 64 connections; in-process: one thread per core)",
        "single query p50, µs (HTTP)",
        "single query p99, µs (HTTP)",
        "batches of 1,000, fingerprints/s (HTTP: 4 connections; in-process: one thread)",
        "one-document inserts/s, 16 clients (HTTP: 16 connections; in-process: 16 threads)",
    ];
    println!(
        "\n{} documents, {} cores, median of {} runs, {} s each",
        o.n, cores, o.runs, o.seconds
    );
    println!("| measure | over HTTP | in-process |\n|---|---|---|");
    for (name, [inproc, http]) in names.iter().zip(rows) {
        let show = |v: Vec<f64>| {
            if v.is_empty() {
                "-".to_owned()
            } else {
                format!("{:.0}", median(v))
            }
        };
        println!("| {name} | {} | {} |", show(http), show(inproc));
    }
}
