//! A service on PostgreSQL answers bad input, and what only a store directory offers, with
//! 4xx JSON errors, and goes on serving. Needs the test server:
//! `scripts/postgres-test-server.sh start`.
#![cfg(all(feature = "server", feature = "postgres"))]

mod common;
mod server_support;

use serde_json::json;

use common::postgres::fresh_database;
use server_support::Server;

/// A request (method, path, body) and its answer (status, error kind).
type Case<'a> = (&'a str, &'a str, Option<&'a [u8]>, u16, &'a str);

#[test]
fn bad_requests_get_json_errors() {
    let url = tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(fresh_database("svc_bad"));
    let server = Server::start_postgres(&url, &[]);
    let cases: Vec<Case> = vec![
        ("POST", "/v1/query", Some(b"{not json"), 400, "bad_request"),
        (
            "POST",
            "/v1/query",
            Some(br#"{"fingerprints": ["zz"], "k": 3}"#),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/v1/query",
            Some(br#"{"fingerprints": ["01"], "k": 65}"#),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/v1/insert",
            Some(br#"{"documents": [{"fingerprint": "01", "key": ""}]}"#),
            200,
            "bad_request",
        ),
        (
            "POST",
            "/v1/insert-if-new",
            Some(br#"{"documents": [{"text": "!!!"}], "k": 3}"#),
            200,
            "no_features",
        ),
        (
            "POST",
            "/v1/backup",
            Some(br#"{"name": "b"}"#),
            400,
            "not_on_postgres",
        ),
        (
            "POST",
            "/v1/query-text",
            Some(br#"{"texts": ["some words here"], "verified": true}"#),
            400,
            "not_on_postgres",
        ),
        ("GET", "/v1/stats?groups=3", None, 400, "not_on_postgres"),
        ("GET", "/v1/documents/x", None, 400, "bad_request"),
        ("GET", "/v1/documents/5", None, 404, "not_found"),
        ("GET", "/v1/keys/nothing", None, 404, "not_found"),
    ];
    for (method, path, body, status, kind) in cases {
        let r = server.call_with(method, path, body, None);
        assert_eq!(r.status, status, "{method} {path}: {}", r.text());
        if status != 200 {
            assert_eq!(r.error_kind(), kind, "{method} {path}");
        } else {
            // An error of one item of a batch: in the item's place.
            let v = r.json();
            let item = if v["errors"].is_array() {
                &v["errors"][0]
            } else {
                &v["results"][0]
            };
            assert_eq!(item["error"]["kind"], json!(kind), "{method} {path}: {v}");
        }
    }
    // Still serving.
    let ok = server.post_ok(
        "/v1/insert-if-new",
        &json!({"documents": [{"fingerprint": "ff00"}], "k": 3}),
    );
    assert_eq!(ok["results"][0]["inserted"], json!(true));
}
