//! What an operator of `simhash-store serve` sees: the write counters move on every write,
//! `DELETE` included; a store held by another writer names `serve --read-only`; a token
//! file's comment lines are not tokens.
#![cfg(feature = "server")]

mod server_support;

use std::process::Command;

use serde_json::json;
use server_support::Server;

/// The value of the counter `name` in a `/metrics` text.
fn counter(metrics: &str, name: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {metrics}"))
}

#[test]
fn write_counters_count_deletes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    server.post_ok(
        "/v1/insert",
        &json!({"documents": [{"id": 1, "fingerprint": "ff"}, {"id": 2, "fingerprint": "ff00"}]}),
    );
    let before = server.call("GET", "/metrics", None).text();
    let groups = counter(&before, "simhash_write_groups_total");
    let documents = counter(&before, "simhash_written_documents_total");
    assert_eq!((groups, documents), (1, 2), "{before}");

    let removed = server.call("DELETE", "/v1/documents/1", None).json();
    assert_eq!(removed["removed"], true);
    let after = server.call("GET", "/metrics", None).text();
    assert_eq!(counter(&after, "simhash_write_groups_total"), groups + 1);
    assert_eq!(
        counter(&after, "simhash_written_documents_total"),
        documents + 1
    );

    // Removing what is not stored writes nothing.
    let missing = server.call("DELETE", "/v1/documents/1", None).json();
    assert_eq!(missing["removed"], false);
    let last = server.call("GET", "/metrics", None).text();
    assert_eq!(counter(&last, "simhash_write_groups_total"), groups + 1);
    assert_eq!(
        counter(&last, "simhash_written_documents_total"),
        documents + 1
    );
}

#[test]
fn a_store_held_by_a_writer_suggests_read_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let _writer = Server::start(dir.path(), &[]);
    let second = Command::new(env!("CARGO_BIN_EXE_simhash-store"))
        .arg("serve")
        .arg("--store")
        .arg(dir.path())
        .args(["--listen", "127.0.0.1:0"])
        .output()
        .expect("run simhash-store serve");
    assert!(!second.status.success());
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("is in use by another process")
            && stderr.contains(&format!(
                "simhash-store serve --store {} --read-only",
                dir.path().display()
            )),
        "{stderr}"
    );
    // What it suggests works beside the writer.
    let reader = Server::start(dir.path(), &["--read-only"]);
    assert_eq!(reader.call("GET", "/healthz", None).status, 200);
}

#[test]
fn token_file_comments_are_not_tokens() {
    const TOKEN: &str = "0123456789abcdef0123456789abcdef";
    const COMMENT: &str = "# tokens for the crawler fleet, rotate monthly";
    let dir = tempfile::tempdir().expect("tempdir");
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, format!("{COMMENT}\n\n{TOKEN}\n")).expect("write");
    let store = dir.path().join("store");
    let server = Server::start(&store, &["--token-file", tokens.to_str().expect("utf-8")]);
    let body = json!({"fingerprints": ["ff"]}).to_string();
    let body = Some(body.as_bytes());
    assert_eq!(
        server
            .call_with("POST", "/v1/query", body, Some(COMMENT))
            .status,
        401
    );
    assert_eq!(
        server
            .call_with("POST", "/v1/query", body, Some(TOKEN))
            .status,
        200
    );

    // A short token is refused at start, naming the file and the line.
    std::fs::write(&tokens, format!("{COMMENT}\n{TOKEN}\nshort\n")).expect("write");
    let refused = Command::new(env!("CARGO_BIN_EXE_simhash-store"))
        .args(["serve", "--listen", "127.0.0.1:0", "--store"])
        .arg(dir.path().join("other"))
        .arg("--token-file")
        .arg(&tokens)
        .output()
        .expect("run simhash-store serve");
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&format!("line 3 of the token file {}", tokens.display())),
        "{stderr}"
    );
}
