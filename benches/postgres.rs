//! The index in PostgreSQL at scale: bulk load rate, bytes per document by table, query
//! latency (one client, single k=3 queries), query_many throughput and insert-if-new with one
//! client, on the server that `SIMHASH_TEST_POSTGRES_URL` names (database `simhash_bench`,
//! made anew).
//!
//! ```text
//! scripts/postgres-test-server.sh start && . target/postgres-test-server.env
//! cargo bench --features postgres --bench postgres -- --docs 1000000 --workload real
//! ```
//!
//! `--docs N` (default 1,000,000), `--batch N` documents per transaction of a `PgLoader` (default
//! 1,000,000), `--workload uniform|real|templated|crowded:<share>` (default `real`),
//! `--queries N` (default 2,000).

use std::time::Instant;

use simhash_store::postgres::{PgIndex, PgLoader};
use simhash_store::{Entry, Fingerprint};

#[path = "support/rng.rs"]
mod rng;
use rng::SplitMix;
#[path = "support/workload.rs"]
mod workload;
use workload::Workload;

struct Args {
    docs: u64,
    batch: u64,
    workload: Workload,
    queries: usize,
}

fn args() -> Args {
    let mut args = Args {
        docs: 1_000_000,
        batch: 1_000_000,
        workload: Workload::parse("real").unwrap_or(Workload::Uniform),
        queries: 2000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--docs" => args.docs = value().parse().expect("--docs N"),
            "--batch" => args.batch = value().parse().expect("--batch N"),
            "--queries" => args.queries = value().parse().expect("--queries N"),
            "--workload" => {
                args.workload = Workload::parse(&value()).unwrap_or_else(|e| panic!("{e}"))
            }
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    args
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> simhash_store::Result<()> {
    let args = args();
    let server = std::env::var("SIMHASH_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!("SIMHASH_TEST_POSTGRES_URL is not set: scripts/postgres-test-server.sh start, then . target/postgres-test-server.env")
    });
    let (client, connection) = tokio_postgres::connect(&server, tokio_postgres::NoTls)
        .await
        .expect("connect to the server");
    tokio::spawn(connection);
    for statement in [
        "DROP DATABASE IF EXISTS simhash_bench",
        "CREATE DATABASE simhash_bench",
    ] {
        client.batch_execute(statement).await.expect(statement);
    }
    let url = format!(
        "{}/simhash_bench",
        server.rsplit_once('/').expect("a URL").0
    );
    let index = PgIndex::open(&url, None).await?;

    let mut rng = SplitMix(1);
    let mut fps: Vec<u64> = Vec::with_capacity(args.docs as usize);
    for i in 0..args.docs {
        let fp = match args.workload.exact_duplicate(i, &mut rng) {
            Some(j) => fps[j as usize],
            None => args.workload.draw(&mut rng),
        };
        fps.push(fp);
    }
    let start = Instant::now();
    let mut loader = PgLoader::new(&index, args.batch as usize);
    loader
        .add_all(
            fps.iter()
                .enumerate()
                .map(|(i, &fp)| Entry::new(i as u64, Fingerprint(fp))),
        )
        .await?;
    loader.finish().await?;
    let load = start.elapsed().as_secs_f64();
    println!(
        "load: {} documents ({}) in {load:.1} s: {:.3} M docs/s (batches of {})",
        args.docs,
        args.workload,
        args.docs as f64 / load / 1e6,
        args.batch
    );
    let bench = super_client(&url).await;
    // As loaded (a load of several batches leaves the groups' old versions as free space),
    // then compacted (what one batch, or a table rewritten, takes).
    for (when, vacuum) in [
        ("as loaded", "VACUUM ANALYZE"),
        ("compacted", "VACUUM FULL ANALYZE"),
    ] {
        bench.batch_execute(vacuum).await.expect(vacuum);
        let mut total = 0i64;
        let mut parts = Vec::new();
        for table in [
            "simhash_docs",
            "simhash_keys",
            "simhash_groups",
            "simhash_deltas",
            "simhash_meta",
        ] {
            let bytes: i64 = bench
                .query_one(
                    "SELECT pg_total_relation_size($1::text::regclass)",
                    &[&table],
                )
                .await
                .expect("size")
                .get(0);
            total += bytes;
            parts.push(format!("{table} {:.1}", bytes as f64 / args.docs as f64));
        }
        println!(
            "disk {when}: {:.1} B/doc (tables, TOAST and indexes: {})",
            total as f64 / args.docs as f64,
            parts.join(", ")
        );
    }

    // Fresh queries of the workload, and planted near-duplicates of stored documents.
    let queries: Vec<Fingerprint> = (0..args.queries)
        .map(|i| {
            Fingerprint(if i % 2 == 0 {
                args.workload.draw(&mut rng)
            } else {
                let stored = fps[rng.below(fps.len() as u64) as usize];
                rng.flip(stored, 2)
            })
        })
        .collect();
    let mut times = Vec::with_capacity(queries.len());
    let mut found = 0usize;
    for &q in &queries {
        let t = Instant::now();
        found += index.query(q, 3).await?.len();
        times.push(t.elapsed().as_secs_f64() * 1e6);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "query k=3, one client: p50 {:.0} us, p99 {:.0} us ({} matches)",
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        found
    );
    let start = Instant::now();
    for batch in queries.chunks(1000) {
        index.query_many(batch, 3).await?;
    }
    println!(
        "query_many k=3, batches of 1,000: {:.0} fingerprints/s",
        queries.len() as f64 / start.elapsed().as_secs_f64()
    );
    let mut times = Vec::new();
    let mut inserted = 0;
    let start = Instant::now();
    for i in 0..500u64 {
        let fp = if i % 2 == 0 {
            args.workload.draw(&mut rng)
        } else {
            let stored = fps[rng.below(fps.len() as u64) as usize];
            rng.flip(stored, 1)
        };
        let t = Instant::now();
        if index
            .insert_if_new(Entry::new(args.docs + i, Fingerprint(fp)), 3)
            .await?
            .is_inserted()
        {
            inserted += 1;
        }
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "insert_if_new k=3, one client, single documents: {:.0}/s, p50 {:.2} ms, p99 {:.2} ms ({inserted} of 500 inserted)",
        500.0 / start.elapsed().as_secs_f64(),
        percentile(&times, 0.5),
        percentile(&times, 0.99)
    );
    Ok(())
}

async fn super_client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect to the bench database");
    tokio::spawn(connection);
    client
}
