//! The index on PostgreSQL against the embedded store and a hand-written SQL index, in one
//! run over the same fingerprints.
//!
//! ```text
//! scripts/postgres-test-server.sh start && . target/postgres-test-server.env
//! cargo bench --features server,postgres --bench postgres_compare -- --n 10000000 --workload real --runs 3
//! ```
//!
//! Loads N fingerprints of the workload (ids 0..N) three ways, each timed, with its size:
//!   1. a `PgLoader` (what `simhash-store load --postgres` runs) into a new database,
//!      `--pg-batch` documents a transaction (default as the command's): bytes of its
//!      `simhash_*` tables with their TOAST and indexes;
//!   2. the store's bulk loader into a new directory (`load --store`): the directory's bytes;
//!   3. the peer (`support/sql_peer.rs`: one row per document, a B-tree on each block
//!      column) into another database on the same server, by binary COPY, then its indexes.
//!
//! Then `VACUUM ANALYZE` of both databases (untimed), and `simhash-store serve --postgres` and
//! `serve --store` of this build on 127.0.0.1. Every answer of the three is checked against a
//! brute-force scan on `--check` queries (single queries and one batch; the bench stops at
//! the first difference). Then, per run (`--runs`), with a fresh query set: through each
//! service, single k = 3 queries as JSON from one client (after a warm-up of 2,000), p50 and
//! p99 over `--queries` of them; binary batches of 1,000 (`application/octet-stream`) from
//! each of `--batch-clients` clients for `--batch-seconds`, fingerprints/s. The peer gets the
//! same from this process directly (prepared statements on its own connections; a batch is
//! one statement over arrays). A query set is fresh draws of the workload, not in the index,
//! except every 10th, which is a stored fingerprint with 1 to 3 bits flipped. Prints the
//! median over runs; the databases and the store are dropped at the end.
//!
//! Options: `--n N` (default 1,000,000), `--workload uniform|real|templated|crowded:<share>`
//! (default real), `--runs R` (1), `--queries Q` (20,000), `--max-seconds S` (single queries
//! of one target stop after S seconds, default 120), `--batch-clients 1,4`,
//! `--batch-seconds S` (10), `--pg-batch N` (1,000,000), `--check C` (200), `--url URL` (a
//! superuser's URL; default `$SIMHASH_TEST_POSTGRES_URL`), `--dir PATH` (where the store's
//! temporary directory goes; default the current directory), `--keep-databases` (leave the
//! two databases on the server at the end, and print their names), `--reuse ID` (query the
//! databases `simhash_cmp_ID` and `simhash_cmp_ID_peer` that an earlier run with the same
//! `--n` and `--workload` loaded and kept, instead of loading new ones; the store is loaded
//! again).
//!
//! Measured: `docs/scale-out.md` ("Against the store and a hand-written SQL index").

#[path = "support/http_client.rs"]
mod http_client;
#[path = "support/rng.rs"]
mod rng;
#[path = "support/sql_peer.rs"]
mod sql_peer;
#[path = "support/workload.rs"]
mod workload;

use std::time::{Duration, Instant};

use http_client::{Conn, Service};
use rayon::prelude::*;
use rng::SplitMix;
use simhash_store::postgres::{PgIndex, PgLoader};
use simhash_store::{BulkOptions, Entry, Fingerprint, Store};
use sql_peer::Peer;
use tokio::runtime::Runtime;
use workload::Workload;

struct Args {
    n: u64,
    workload: Workload,
    runs: usize,
    queries: usize,
    max_seconds: f64,
    batch_clients: Vec<usize>,
    batch_seconds: f64,
    pg_batch: usize,
    check: usize,
    url: String,
    dir: std::path::PathBuf,
    keep: bool,
    reuse: Option<u32>,
}

fn args() -> Args {
    let mut a = Args {
        n: 1_000_000,
        workload: Workload::parse("real").expect("real"),
        runs: 1,
        queries: 20_000,
        max_seconds: 120.0,
        batch_clients: vec![1, 4],
        batch_seconds: 10.0,
        pg_batch: 1_000_000,
        check: 200,
        url: std::env::var("SIMHASH_TEST_POSTGRES_URL").unwrap_or_default(),
        dir: std::env::current_dir().expect("cwd"),
        keep: false,
        reuse: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--n" => a.n = value().parse().expect("--n N"),
            "--workload" => {
                a.workload = Workload::parse(&value()).unwrap_or_else(|e| panic!("{e}"))
            }
            "--runs" => a.runs = value().parse().expect("--runs R"),
            "--queries" => a.queries = value().parse().expect("--queries Q"),
            "--max-seconds" => a.max_seconds = value().parse().expect("--max-seconds S"),
            "--batch-clients" => {
                a.batch_clients = value()
                    .split(',')
                    .map(|c| c.parse().expect("--batch-clients 1,4"))
                    .collect()
            }
            "--batch-seconds" => a.batch_seconds = value().parse().expect("--batch-seconds S"),
            "--pg-batch" => a.pg_batch = value().parse().expect("--pg-batch N"),
            "--check" => a.check = value().parse().expect("--check C"),
            "--url" => a.url = value(),
            "--dir" => a.dir = value().into(),
            "--keep-databases" => a.keep = true,
            "--reuse" => a.reuse = Some(value().parse().expect("--reuse ID")),
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    assert!(
        !a.url.is_empty(),
        "give --url URL or set SIMHASH_TEST_POSTGRES_URL (scripts/postgres-test-server.sh start, then . target/postgres-test-server.env)"
    );
    a
}

/// `url` with its database replaced by `name` (its query string kept).
fn database_url(url: &str, name: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let server = base.rsplit_once('/').map_or(base, |(s, _)| s);
    match query {
        Some(q) => format!("{server}/{name}?{q}"),
        None => format!("{server}/{name}"),
    }
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"));
    tokio::spawn(connection);
    client
}

/// The bench's two databases, dropped (with their connections) when this is dropped.
struct Databases {
    admin: String,
    names: [String; 2],
    /// Left on the server at the end.
    keep: bool,
}

impl Databases {
    /// New databases, or those of run `reuse` (kept, and not made again).
    fn create(rt: &Runtime, admin: &str, reuse: Option<u32>, keep: bool) -> Databases {
        let id = reuse.unwrap_or_else(std::process::id);
        let names = [
            format!("simhash_cmp_{id}"),
            format!("simhash_cmp_{id}_peer"),
        ];
        let keep = keep || reuse.is_some();
        if keep {
            eprintln!(
                "databases {} and {} are kept (--reuse {id})",
                names[0], names[1]
            );
        }
        if reuse.is_some() {
            return Databases {
                admin: admin.to_owned(),
                names,
                keep,
            };
        }
        rt.block_on(async {
            let client = connect(admin).await;
            for name in &names {
                client
                    .batch_execute(&format!("CREATE DATABASE {name}"))
                    .await
                    .expect("create a database");
            }
        });
        Databases {
            admin: admin.to_owned(),
            names,
            keep,
        }
    }

    fn url(&self, i: usize) -> String {
        database_url(&self.admin, &self.names[i])
    }
}

impl Drop for Databases {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async {
            let client = connect(&self.admin).await;
            for name in &self.names {
                let _ = client
                    .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .await;
            }
        });
    }
}

/// Bytes of the files under `dir`.
fn dir_size(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

/// Fresh draws of the workload; every 10th a stored fingerprint with 1 to 3 bits flipped.
fn query_set(rng: &mut SplitMix, stored: &[u64], count: usize, workload: &Workload) -> Vec<u64> {
    (0..count)
        .map(|i| {
            if i % 10 == 9 {
                let fp = stored[rng.below(stored.len() as u64) as usize];
                let d = 1 + rng.below(3) as u32;
                rng.flip(fp, d)
            } else {
                workload.draw(rng)
            }
        })
        .collect()
}

/// The ids of each answer list of a `/v1/query` response, ascending.
fn answer_ids(body: &[u8]) -> Vec<Vec<u64>> {
    let v: serde_json::Value = serde_json::from_slice(body).expect("a JSON answer");
    v["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|list| {
            let mut ids: Vec<u64> = list
                .as_array()
                .expect("a list")
                .iter()
                .map(|m| m["id"].as_u64().expect("an id"))
                .collect();
            ids.sort_unstable();
            ids
        })
        .collect()
}

/// One way of answering queries: a service, or the peer directly.
enum Target<'a> {
    Service(&'a Service),
    Peer { rt: &'a Runtime, url: String },
}

impl Target<'_> {
    /// The answers (ids ascending) to `qs`, one single query each, and as one batch.
    fn answers(&self, qs: &[u64]) -> (Vec<Vec<u64>>, Vec<Vec<u64>>) {
        match self {
            Target::Service(s) => {
                let mut conn = Conn::open(s.addr);
                let single = qs
                    .iter()
                    .map(|q| {
                        let (status, body) =
                            conn.post_json("/v1/query", single_body(*q).as_bytes());
                        assert_eq!(status, 200, "{}", String::from_utf8_lossy(body));
                        answer_ids(body).pop().expect("one answer")
                    })
                    .collect();
                let (status, body) = conn.post_binary("/v1/query?k=3", qs);
                assert_eq!(status, 200, "{}", String::from_utf8_lossy(body));
                (single, answer_ids(body))
            }
            Target::Peer { rt, url } => rt.block_on(async {
                let client = connect(url).await;
                let peer = Peer::prepare(&client).await;
                let mut single = Vec::new();
                for &q in qs {
                    single.push(peer.query(&client, q).await);
                }
                (single, peer.query_many(&client, qs).await)
            }),
        }
    }

    /// Single queries, one client, after a warm-up: sorted latencies and matches found.
    fn single(&self, qs: &[u64], max_seconds: f64) -> (Vec<Duration>, usize) {
        let warm = 2000.min(qs.len() / 2);
        let deadline = Duration::from_secs_f64(max_seconds);
        let mut times = Vec::with_capacity(qs.len());
        let mut found = 0;
        match self {
            Target::Service(s) => {
                let mut conn = Conn::open(s.addr);
                let started = Instant::now();
                for (i, &q) in qs.iter().enumerate() {
                    let body = single_body(q);
                    let t = Instant::now();
                    let (status, answer) = conn.post_json("/v1/query", body.as_bytes());
                    let took = t.elapsed();
                    assert_eq!(status, 200, "{}", String::from_utf8_lossy(answer));
                    if i >= warm {
                        times.push(took);
                        // An empty answer is `{"results":[[]]}`.
                        found += usize::from(answer.len() > 16);
                    }
                    if started.elapsed() > deadline {
                        break;
                    }
                }
            }
            Target::Peer { rt, url } => rt.block_on(async {
                let client = connect(url).await;
                let peer = Peer::prepare(&client).await;
                let started = Instant::now();
                for (i, &q) in qs.iter().enumerate() {
                    let t = Instant::now();
                    let ids = peer.query(&client, q).await;
                    let took = t.elapsed();
                    if i >= warm {
                        times.push(took);
                        found += usize::from(!ids.is_empty());
                    }
                    if started.elapsed() > deadline {
                        break;
                    }
                }
            }),
        }
        times.sort_unstable();
        (times, found)
    }

    /// Batches of 1,000 from `clients` clients for `seconds`: fingerprints/s.
    fn batches(&self, qs: &[u64], clients: usize, seconds: f64) -> f64 {
        let batch = |c: usize, i: usize| {
            let start = ((c * 7 + i) * 1000) % (qs.len() - 1000);
            &qs[start..start + 1000]
        };
        let deadline = Duration::from_secs_f64(seconds);
        let started = Instant::now();
        let done: usize = match self {
            Target::Service(s) => std::thread::scope(|scope| {
                let workers: Vec<_> = (0..clients)
                    .map(|c| {
                        scope.spawn(move || {
                            let mut conn = Conn::open(s.addr);
                            let mut i = 0;
                            while i == 0 || started.elapsed() < deadline {
                                let (status, body) = conn.post_binary("/v1/query?k=3", batch(c, i));
                                assert_eq!(status, 200, "{}", String::from_utf8_lossy(body));
                                i += 1;
                            }
                            i
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .map(|w| w.join().expect("a client"))
                    .sum()
            }),
            Target::Peer { rt, url } => rt.block_on(async {
                let mut tasks = Vec::new();
                for c in 0..clients {
                    let client = connect(url).await;
                    let peer = Peer::prepare(&client).await;
                    let fps: Vec<Vec<u64>> =
                        (0..qs.len() / 1000).map(|i| batch(c, i).to_vec()).collect();
                    tasks.push(tokio::spawn(async move {
                        let mut i = 0;
                        while i == 0 || started.elapsed() < deadline {
                            std::hint::black_box(
                                peer.query_many(&client, &fps[i % fps.len()]).await,
                            );
                            i += 1;
                        }
                        i
                    }));
                }
                let mut sum = 0;
                for t in tasks {
                    sum += t.await.expect("a client");
                }
                sum
            }),
        };
        done as f64 * 1000.0 / started.elapsed().as_secs_f64()
    }
}

fn single_body(q: u64) -> String {
    format!("{{\"fingerprints\":[\"{q:016x}\"],\"k\":3}}")
}

fn percentile_us(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e6
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// What one target did in one run: p50 and p99 (µs), single queries timed, answers with a
/// match, then fingerprints/s per entry of `--batch-clients`.
struct Run {
    p50: f64,
    p99: f64,
    count: usize,
    found: usize,
    batches: Vec<f64>,
}

fn main() {
    let a = args();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    eprintln!("load average at the start: {}", load_average());
    let mut rng = SplitMix(0xc0_ba5e);
    let mut stored: Vec<u64> = Vec::with_capacity(a.n as usize);
    for i in 0..a.n {
        let fp = match a.workload.exact_duplicate(i, &mut rng) {
            Some(earlier) => stored[earlier as usize],
            None => a.workload.draw(&mut rng),
        };
        stored.push(fp);
    }
    let n = a.n as f64;
    let dbs = Databases::create(&rt, &a.url, a.reuse, a.keep);
    let (index_url, peer_url) = (dbs.url(0), dbs.url(1));

    // Loads: the index on PostgreSQL, the store, the peer.
    let (pg_load, pg_bytes) = rt.block_on(async {
        let index = PgIndex::open(&index_url, None)
            .await
            .expect("open the index");
        // A reused database was loaded by an earlier run: no load to time (NaN).
        let mut took = f64::NAN;
        if a.reuse.is_none() {
            let t = Instant::now();
            let mut loader = PgLoader::new(&index, a.pg_batch);
            loader
                .add_all(
                    stored
                        .iter()
                        .enumerate()
                        .map(|(i, &fp)| Entry::new(i as u64, Fingerprint(fp))),
                )
                .await
                .expect("load a batch");
            loader.finish().await.expect("load the last batch");
            took = t.elapsed().as_secs_f64();
        }
        let client = connect(&index_url).await;
        let bytes: i64 = client
            .query_one(
                "SELECT sum(pg_total_relation_size(oid))::bigint FROM pg_class \
                 WHERE relkind = 'r' AND relname LIKE 'simhash\\_%'",
                &[],
            )
            .await
            .expect("the index's size")
            .get(0);
        (n / took / 1e6, bytes as f64 / n)
    });
    eprintln!("PgIndex: {pg_load:.3} M docs/s, {pg_bytes:.1} B/doc");
    let temp = tempfile::tempdir_in(&a.dir).expect("a directory for the store");
    let (store_load, store_bytes) = {
        let store = Store::open(temp.path()).expect("open the store");
        let t = Instant::now();
        let mut loader = store
            .bulk_loader_with(BulkOptions::new())
            .expect("a loader");
        for (id, &fp) in stored.iter().enumerate() {
            loader.add(id as u64, Fingerprint(fp)).expect("add");
        }
        loader.finish().expect("finish the load");
        let took = t.elapsed().as_secs_f64();
        drop(store);
        (n / took / 1e6, dir_size(temp.path()) as f64 / n)
    };
    eprintln!("store: {store_load:.3} M docs/s, {store_bytes:.1} B/doc");
    let (peer_load, peer_bytes) = rt.block_on(async {
        let client = connect(&peer_url).await;
        let mut took = f64::NAN;
        if a.reuse.is_none() {
            let t = Instant::now();
            sql_peer::load(&client, &stored).await;
            took = t.elapsed().as_secs_f64();
        }
        (n / took / 1e6, sql_peer::size(&client).await as f64 / n)
    });
    eprintln!("peer: {peer_load:.3} M docs/s, {peer_bytes:.1} B/doc");
    rt.block_on(async {
        for url in [&index_url, &peer_url] {
            connect(url)
                .await
                .batch_execute("VACUUM ANALYZE")
                .await
                .expect("VACUUM ANALYZE");
        }
    });

    let store_dir = temp.path().to_str().expect("a UTF-8 path").to_owned();
    let store_service = Service::start(&["--store", &store_dir]);
    let pg_service = Service::start(&["--postgres", &index_url]);
    let targets = [
        ("store (service)", Target::Service(&store_service)),
        ("PgIndex (service)", Target::Service(&pg_service)),
        (
            "SQL peer (direct)",
            Target::Peer {
                rt: &rt,
                url: peer_url.clone(),
            },
        ),
    ];

    // Every answer against brute force.
    let check = query_set(&mut SplitMix(0xc4ec), &stored, a.check, &a.workload);
    let truth: Vec<Vec<u64>> = check
        .par_iter()
        .map(|&q| {
            (0..stored.len() as u64)
                .filter(|&id| (stored[id as usize] ^ q).count_ones() <= 3)
                .collect()
        })
        .collect();
    for (name, target) in &targets {
        let (single, batch) = target.answers(&check);
        for (i, want) in truth.iter().enumerate() {
            assert_eq!(&single[i], want, "{name}, single query {:016x}", check[i]);
            assert_eq!(
                &batch[i], want,
                "{name}, batch entry {i} ({:016x})",
                check[i]
            );
        }
    }
    let matched = truth.iter().filter(|t| !t.is_empty()).count();
    eprintln!(
        "{} queries: all three equal brute force ({matched} with a match)",
        check.len()
    );

    let mut runs: Vec<Vec<Run>> = targets.iter().map(|_| Vec::new()).collect();
    for run in 0..a.runs {
        let qs = query_set(
            &mut SplitMix(run as u64 + 1),
            &stored,
            a.queries,
            &a.workload,
        );
        let before = load_average();
        for (t, (name, target)) in targets.iter().enumerate() {
            let (times, found) = target.single(&qs, a.max_seconds);
            let batches: Vec<f64> = a
                .batch_clients
                .iter()
                .map(|&c| target.batches(&qs, c, a.batch_seconds))
                .collect();
            let r = Run {
                p50: percentile_us(&times, 0.5),
                p99: percentile_us(&times, 0.99),
                count: times.len(),
                found,
                batches,
            };
            eprintln!(
                "run {run}, {name}: single p50 {:.0} µs, p99 {:.0} µs ({} queries, {} with a match); batches of 1,000: {:?} fingerprints/s",
                r.p50,
                r.p99,
                r.count,
                r.found,
                r.batches.iter().map(|b| b.round()).collect::<Vec<_>>()
            );
            runs[t].push(r);
        }
        eprintln!(
            "run {run}: load average {before} before, {} after",
            load_average()
        );
    }

    println!(
        "\n{} documents, workload {}, median of {} runs (load average now {})\n",
        a.n,
        a.workload,
        a.runs,
        load_average()
    );
    println!("| | store (service) | PgIndex (service) | SQL peer (direct) |\n|---|---|---|---|");
    println!(
        "| bulk load, M docs/s | {store_load:.3} | {pg_load:.3} | {peer_load:.3} |\n| bytes/document | {store_bytes:.1} | {pg_bytes:.1} | {peer_bytes:.1} |"
    );
    let row = |label: String, f: &dyn Fn(&Run) -> f64, digits: usize| {
        let cells: Vec<String> = runs
            .iter()
            .map(|r| format!("{:.*}", digits, median(r.iter().map(f).collect())))
            .collect();
        println!("| {label} | {} |", cells.join(" | "));
    };
    row("single k=3 query, one client, p50 µs".into(), &|r| r.p50, 0);
    row("p99 µs".into(), &|r| r.p99, 0);
    row("p99 / p50".into(), &|r| r.p99 / r.p50, 1);
    row("queries timed".into(), &|r| r.count as f64, 0);
    row("  ... with a match".into(), &|r| r.found as f64, 0);
    for (i, c) in a.batch_clients.iter().enumerate() {
        row(
            format!("binary batches of 1,000, {c} client(s), fingerprints/s"),
            &|r| r.batches[i],
            0,
        );
    }
}
