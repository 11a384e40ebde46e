//! `simhash-store serve --postgres` under insert-if-new load: how the writer's group commit
//! serves concurrent clients.
//!
//! `cargo bench --features server,postgres --bench service_postgres -- --url URL` makes a
//! fresh database on the server of URL (a superuser's URL, e.g. the test server's
//! `$SIMHASH_TEST_POSTGRES_URL`), loads `--preload N` random documents into it (default
//! 200,000), starts two service processes of this build on 127.0.0.1, and measures for
//! `--seconds S` each (default 5), with keep-alive connections that each send their next
//! request as soon as the last is answered:
//!   1. 1 client, single-document insert-if-new (k = 3), one service;
//!   2. 16 clients, single documents, over both services;
//!   3. 16 clients, requests of 100 documents, over both services.
//!
//! Each document has a key of its own and a random fingerprint, one in ten within 2 bits of a
//! document sent before by the same client (refused as a near-duplicate). Prints
//! requests/s, documents/s, p50 and p99 per scenario. The database is dropped at the end.
//!
//! `--database NAME` uses (and keeps) database NAME of the server instead: it is made and
//! preloaded only if it does not exist, so later runs skip the preload. `--scenario N`
//! (1, 2 or 3) runs only that scenario.

#[path = "support/http_client.rs"]
mod http_client;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_client::{Conn, Service};
use simhash_store::postgres::{PgIndex, PgLoader, DEFAULT_LOAD_BATCH};
use simhash_store::{Entry, Fingerprint};

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Runs `clients` connections for `seconds`, client c on `addrs[c % len]`, each sending
/// insert-if-new requests of `docs` documents. Returns (requests/s, sorted latencies).
fn run(
    addrs: &[SocketAddr],
    clients: usize,
    docs: usize,
    seconds: f64,
    seed: u64,
) -> (f64, Vec<Duration>) {
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let addr = addrs[c % addrs.len()];
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut rng = Rng(seed * 1000 + c as u64);
                let mut conn = Conn::open(addr);
                let mut latencies = Vec::new();
                let mut last = rng.next();
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let documents: Vec<String> = (0..docs)
                        .map(|_| {
                            i += 1;
                            let fp = if i.is_multiple_of(10) {
                                last ^ (1 << (rng.next() % 64)) ^ (1 << (rng.next() % 64))
                            } else {
                                rng.next()
                            };
                            last = fp;
                            format!(r#"{{"key":"s{seed}-c{c}-{i}","fingerprint":"{fp:016x}"}}"#)
                        })
                        .collect();
                    let body = format!(r#"{{"k":3,"documents":[{}]}}"#, documents.join(","));
                    let t = Instant::now();
                    let (status, answer) = conn.post_json("/v1/insert-if-new", body.as_bytes());
                    assert_eq!(status, 200, "{}", String::from_utf8_lossy(answer));
                    latencies.push(t.elapsed());
                }
                latencies
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    stop.store(true, Ordering::Relaxed);
    let mut all: Vec<Duration> = threads
        .into_iter()
        .flat_map(|t| t.join().expect("a client"))
        .collect();
    let rate = all.len() as f64 / started.elapsed().as_secs_f64();
    all.sort_unstable();
    (rate, all)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let url = value("--url")
        .or_else(|| std::env::var("SIMHASH_TEST_POSTGRES_URL").ok())
        .expect("give --url URL (a superuser's URL: the bench makes a database)");
    let seconds: f64 = value("--seconds").map_or(5.0, |s| s.parse().expect("--seconds"));
    let preload: u64 = value("--preload").map_or(200_000, |s| s.parse().expect("--preload"));
    let scenario: Option<usize> = value("--scenario").map(|s| s.parse().expect("--scenario"));
    let kept = value("--database");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let name = kept
        .clone()
        .unwrap_or_else(|| format!("simhash_svc_bench_{}", std::process::id()));
    let (admin, fresh) = runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .expect("connect");
        tokio::spawn(connection);
        let exists = client
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
            .await
            .expect("look for the database")
            .is_some();
        if !exists {
            client
                .batch_execute(&format!("CREATE DATABASE {name}"))
                .await
                .expect("create the database");
        }
        (client, !exists)
    });
    let (base, query) = url
        .split_once('?')
        .map_or((url.as_str(), ""), |(b, q)| (b, q));
    let db_url = format!(
        "{}/{name}{}",
        base.rsplit_once('/').map_or(base, |(b, _)| b),
        if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        }
    );
    runtime.block_on(async {
        if !fresh {
            eprintln!("using database {name} as it is");
            return;
        }
        let index = PgIndex::open(&db_url, None).await.expect("open");
        let mut rng = Rng(7);
        let t = Instant::now();
        let mut loader = PgLoader::new(&index, DEFAULT_LOAD_BATCH);
        loader
            .add_all((0..preload).map(|id| Entry::new(id, Fingerprint(rng.next()))))
            .await
            .expect("load");
        loader.finish().await.expect("load");
        eprintln!(
            "preloaded {preload} documents in {:.1} s",
            t.elapsed().as_secs_f64()
        );
    });
    let services = [
        Service::start(&["--postgres", &db_url]),
        Service::start(&["--postgres", &db_url]),
    ];
    let one = [services[0].addr];
    let both = [services[0].addr, services[1].addr];
    println!("scenario                          requests/s   documents/s   p50 ms   p99 ms");
    for (n, (label, addrs, clients, docs, seed)) in [
        ("1 client, 1 doc, 1 service", &one[..], 1, 1, 1),
        ("16 clients, 1 doc, 2 services", &both[..], 16, 1, 2),
        ("16 clients, 100 docs, 2 services", &both[..], 16, 100, 3),
    ]
    .into_iter()
    .enumerate()
    {
        if scenario.is_some_and(|s| s != n + 1) {
            continue;
        }
        // A kept database holds earlier runs' documents: draw other fingerprints and keys.
        let seed = seed
            + kept
                .as_ref()
                .map_or(0, |_| 16 * u64::from(std::process::id()));
        let (rate, latencies) = run(addrs, clients, docs, seconds, seed);
        println!(
            "{label:<33} {rate:>10.0} {:>13.0} {:>8.2} {:>8.2}",
            rate * docs as f64,
            percentile(&latencies, 0.5),
            percentile(&latencies, 0.99)
        );
    }
    drop(services);
    if kept.is_some() {
        return;
    }
    runtime.block_on(async {
        let _ = admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
            .await;
    });
}
