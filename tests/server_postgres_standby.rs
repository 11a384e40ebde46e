//! `serve --postgres PRIMARY --postgres-read STANDBY` against a real streaming hot standby of
//! the test server (`scripts/postgres-test-server.sh start` makes one beside the primary):
//! - insert-if-new decides on the primary, so a near-duplicate sent right after the document
//!   it duplicates is refused even before the standby has replayed that document;
//! - queries and document reads go to the standby and, once it has replayed what the primary
//!   acknowledged (a lag this test waits out, boundedly), equal brute force over it;
//! - the standby refuses writes, and opening an index on it before it has the tables is an
//!   error that says so;
//! - with the primary stopped, queries are still answered (from the standby) and writes are
//!   answered 503 `unavailable`. This stops the primary for a moment, as
//!   `server_postgres_restart.rs` does: two `cargo test` runs must not share a test server.
#![cfg(all(feature = "server", feature = "postgres"))]

mod common;
mod server_support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::postgres::{fresh_database, on_standby};
use common::{brute_force, planted, Rng};
use server_support::{matches, Server};
use simhash_store::postgres::PgIndex;

/// How long the standby may take to replay what the primary committed.
const REPLAY_LIMIT: Duration = Duration::from_secs(30);

/// Polls `ready` every 50 ms until it holds, failing after [`REPLAY_LIMIT`].
fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < REPLAY_LIMIT,
            "the standby did not {what} within {REPLAY_LIMIT:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn queries_go_to_the_standby_and_insert_if_new_decides_on_the_primary() {
    const K: u32 = 3;
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let url = runtime.block_on(fresh_database("svc_standby"));
    let standby = on_standby(&url);

    // The standby has the database once it has replayed its creation, but no tables: an
    // index cannot be made there, and the error says why.
    wait_for("replay the database's creation", || {
        runtime.block_on(async {
            tokio_postgres::connect(&standby, tokio_postgres::NoTls)
                .await
                .is_ok()
        })
    });
    let refused = runtime
        .block_on(PgIndex::open(&standby, None))
        .expect_err("no index can be made on a standby");
    let message = refused.to_string();
    assert!(
        message.contains("standby") && message.contains("primary"),
        "{message}"
    );

    // The primary makes the tables; the service starts once the standby has them.
    runtime
        .block_on(PgIndex::open(&url, None))
        .expect("the index on the primary");
    wait_for("replay the tables", || {
        runtime.block_on(PgIndex::open(&standby, None)).is_ok()
    });
    let server = Server::start_postgres(&url, &["--postgres-read", &standby]);

    let mut rng = Rng::new(41);
    let (planted_docs, queries) = planted(&mut rng, 200, 20, K);
    let mut docs: Vec<(u64, u64)> = Vec::new();
    let mut admitted_fps: Vec<u64> = Vec::new();
    for (i, &(_, fp)) in planted_docs.iter().enumerate() {
        // Each document, then at once a near-duplicate of it (one bit apart): the second is
        // refused whatever the standby has replayed so far.
        for (n, candidate) in [fp, fp ^ 1].into_iter().enumerate() {
            let answer = server.post_ok(
                "/v1/insert-if-new",
                &json!({"documents": [{"key": format!("doc-{i}-{n}"), "fingerprint": format!("{candidate:016x}")}], "k": K}),
            );
            let result = &answer["results"][0];
            let near = admitted_fps
                .iter()
                .any(|&a| (a ^ candidate).count_ones() <= K);
            assert_eq!(
                result["inserted"],
                json!(!near),
                "document {i}, copy {n}: {result}"
            );
            if !near {
                let id = result["id"].as_u64().expect("an admitted document's id");
                docs.push((id, candidate));
                admitted_fps.push(candidate);
            }
        }
    }
    assert!(
        docs.len() > 20,
        "most documents are far apart: {}",
        docs.len()
    );

    // Reads see the last acknowledged write once the standby has replayed it.
    let (last_id, last_fp) = *docs.last().expect("documents");
    wait_for("replay the last acknowledged insert", || {
        server
            .call("GET", &format!("/v1/documents/{last_id}"), None)
            .status
            == 200
    });
    let doc = server
        .call("GET", &format!("/v1/documents/{last_id}"), None)
        .json();
    assert_eq!(doc["fingerprint"], json!(format!("{last_fp:016x}")));
    for k in [0, 2, K] {
        let all: Vec<String> = queries.iter().map(|q| format!("{q:016x}")).collect();
        let answer = server.post_ok("/v1/query", &json!({"fingerprints": all, "k": k}));
        let lists = answer["results"].as_array().expect("results");
        for (q, list) in queries.iter().zip(lists) {
            assert_eq!(
                matches(list),
                brute_force(&docs, *q, k),
                "{q:016x} at k = {k}"
            );
        }
    }

    // The standby itself takes no write.
    let read_only = runtime.block_on(async {
        let index = PgIndex::open(&standby, None)
            .await
            .expect("open on the standby");
        index
            .insert_batch([simhash_store::Entry::new(
                u64::MAX - 1,
                simhash_store::Fingerprint(7),
            )])
            .await
    });
    let message = read_only.expect_err("a standby refuses writes").to_string();
    // SQLSTATE 25006, read_only_sql_transaction: what a service writing to a server demoted
    // by a failover gets too (answered 503 `unavailable`, retried on the new primary).
    assert!(message.contains("25006"), "{message}");
    let stats: Value = server.call("GET", "/v1/stats", None).json();
    assert_eq!(stats["documents"], json!(docs.len()), "{stats}");

    // With the primary stopped, queries still come from the standby; writes wait (503).
    test_server("pause");
    let q = queries[0];
    let r = server.call(
        "POST",
        "/v1/query",
        Some(&json!({"fingerprints": [format!("{q:016x}")], "k": K})),
    );
    let write = server.call(
        "POST",
        "/v1/insert-if-new",
        Some(&json!({"documents": [{"key": "while-stopped", "fingerprint": "0123456789abcdef"}], "k": K})),
    );
    test_server("resume");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(matches(&r.json()["results"][0]), brute_force(&docs, q, K));
    assert_eq!(write.status, 503, "{}", write.text());
    assert_eq!(write.error_kind(), "unavailable");
}

/// Runs `scripts/postgres-test-server.sh command` (`pause` stops the primary only).
fn test_server(command: &str) {
    let status = std::process::Command::new("scripts/postgres-test-server.sh")
        .arg(command)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run scripts/postgres-test-server.sh");
    assert!(status.success(), "postgres-test-server.sh {command}");
}
