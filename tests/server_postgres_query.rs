//! A service on PostgreSQL (`serve --postgres URL`) answers queries as brute force does over
//! what it acknowledged: planted near-duplicates at every distance 0..=k, documents inserted
//! through the service in batches (ids assigned by the service), queries in JSON and binary,
//! one at a time and in batches. Needs the test server: `scripts/postgres-test-server.sh start`.
#![cfg(all(feature = "server", feature = "postgres"))]

mod common;
mod server_support;

use serde_json::{json, Value};

use common::postgres::fresh_database;
use common::{brute_force, planted, Rng};
use server_support::{matches, Server};

fn database(test: &str) -> String {
    tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(fresh_database(test))
}

#[test]
fn queries_through_the_service_equal_brute_force() {
    const K: u32 = 4;
    let url = database("svc_query");
    let server = Server::start_postgres(&url, &[]);
    let mut rng = Rng::new(5);
    let (planted_docs, queries) = planted(&mut rng, 300, 20, K);
    let mut docs = Vec::new();
    for chunk in planted_docs.chunks(97) {
        let documents: Vec<Value> = chunk
            .iter()
            .map(|&(_, fp)| json!({ "fingerprint": format!("{fp:016x}") }))
            .collect();
        let answer = server.post_ok("/v1/insert", &json!({ "documents": documents }));
        let ids = answer["ids"].as_array().expect("ids");
        assert_eq!(ids.len(), chunk.len());
        for (id, &(_, fp)) in ids.iter().zip(chunk) {
            docs.push((id.as_u64().expect("an id"), fp));
        }
    }
    let mut ids: Vec<u64> = docs.iter().map(|d| d.0).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), docs.len(), "every document got an id of its own");
    let stats = server.post_ok("/v1/query", &json!({"fingerprints": [], "k": 0}));
    assert_eq!(stats["results"], json!([]));
    let count = server.call("GET", "/v1/stats", None).json();
    assert_eq!(count["documents"], json!(docs.len()));
    assert_eq!(count["backend"], json!("postgres"));
    for k in [0, 2, K] {
        // One by one.
        for &q in &queries {
            let answer = server.post_ok(
                "/v1/query",
                &json!({"fingerprints": [format!("{q:016x}")], "k": k}),
            );
            assert_eq!(
                matches(&answer["results"][0]),
                brute_force(&docs, q, k),
                "query {q:016x} at k = {k}"
            );
        }
        // In one batch (more than a store answers inline).
        let all: Vec<String> = queries.iter().map(|q| format!("{q:016x}")).collect();
        let answer = server.post_ok("/v1/query", &json!({"fingerprints": all, "k": k}));
        for (q, list) in queries
            .iter()
            .zip(answer["results"].as_array().expect("results"))
        {
            assert_eq!(matches(list), brute_force(&docs, *q, k), "batch, k = {k}");
        }
    }
    // A document and a key through the service.
    let (id, fp) = docs[7];
    let doc = server
        .call("GET", &format!("/v1/documents/{id}"), None)
        .json();
    assert_eq!(doc["fingerprint"], json!(format!("{fp:016x}")));
    let keyed = server.post_ok(
        "/v1/insert",
        &json!({"documents": [{"key": "https://a.example/", "text": "the quick brown fox jumps over the lazy dog"}]}),
    );
    let keyed_id = keyed["ids"][0].as_u64().expect("an id");
    let by_key = server
        .call("GET", "/v1/keys/https://a.example/", None)
        .json();
    assert_eq!(by_key["id"], json!(keyed_id));
    let text = server.post_ok(
        "/v1/query-text",
        &json!({"texts": ["the quick brown fox jumps over the lazy dog"], "k": 0}),
    );
    assert_eq!(text["results"][0][0]["id"], json!(keyed_id));
    // Sent again by key: the same id, not a second document.
    let again = server.post_ok(
        "/v1/insert",
        &json!({"documents": [{"key": "https://a.example/", "text": "the quick brown fox jumps over the lazy cat"}]}),
    );
    assert_eq!(again["ids"][0], json!(keyed_id));
    let count = server.call("GET", "/v1/stats", None).json();
    assert_eq!(count["documents"], json!(docs.len() + 1));
}
