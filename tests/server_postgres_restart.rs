//! The PostgreSQL server stopped and started again under a running service: meanwhile
//! requests are answered 503 `unavailable` with `Retry-After` (revealing nothing internal),
//! then the service recovers by itself, without a restart, and what it acknowledged before
//! is there. Stops the whole test server for a few seconds: cargo runs test binaries one after
//! another, so no other test uses it then, but two `cargo test` runs must not share a server.
#![cfg(all(feature = "server", feature = "postgres"))]

mod common;
mod server_support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use common::postgres::fresh_database;
use server_support::Server;

fn test_server(command: &str) {
    let status = Command::new("scripts/postgres-test-server.sh")
        .arg(command)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run scripts/postgres-test-server.sh");
    assert!(status.success(), "postgres-test-server.sh {command}");
}

#[test]
fn a_database_restart_is_answered_503_then_recovered() {
    let url = tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(fresh_database("svc_restart"));
    let server = Server::start_postgres(&url, &[]);
    let body = |fp: u64| json!({"documents": [{"key": format!("k{fp}"), "fingerprint": format!("{fp:016x}")}], "k": 3});
    let first = server.post_ok("/v1/insert-if-new", &body(0xff00_0000_0000_0000));
    assert_eq!(first["results"][0]["inserted"], json!(true));

    test_server("pause");
    for path in ["/v1/insert-if-new", "/v1/query"] {
        let request = if path == "/v1/query" {
            json!({"fingerprints": ["ff00000000000000"], "k": 3})
        } else {
            body(0x00ff_0000_0000_0000)
        };
        let r = server.call("POST", path, Some(&request));
        assert_eq!(r.status, 503, "{path}: {}", r.text());
        assert_eq!(r.error_kind(), "unavailable");
        assert!(
            r.headers.to_ascii_lowercase().contains("retry-after: 1"),
            "{}",
            r.headers
        );
        let text = r.text();
        assert!(
            !text.contains("127.0.0.1") && !text.contains("SQLSTATE"),
            "{text}"
        );
    }
    let r = server.call("GET", "/v1/documents/0", None);
    assert_eq!(r.status, 503, "{}", r.text());
    test_server("resume");

    // Recovered without a restart: within a bounded time, writes and reads answer again.
    let deadline = Instant::now() + Duration::from_secs(30);
    let answer = loop {
        let r = server.call(
            "POST",
            "/v1/insert-if-new",
            Some(&body(0x00ff_0000_0000_0000)),
        );
        if r.status == 200 {
            break r.json();
        }
        assert_eq!(r.status, 503, "{}", r.text());
        assert!(Instant::now() < deadline, "not recovered within 30 s");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(answer["results"][0]["inserted"], json!(true));
    let found = server.post_ok(
        "/v1/query",
        &json!({"fingerprints": ["ff00000000000001"], "k": 3}),
    );
    assert_eq!(
        found["results"][0][0]["key"],
        json!(format!("k{}", 0xff00_0000_0000_0000u64))
    );
    let stats = server.call("GET", "/v1/stats", None).json();
    assert_eq!(stats["documents"], json!(2));
}
