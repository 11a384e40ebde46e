//! Authentication: bearer tokens (401 without or with a wrong one), and the refusal to listen
//! beyond loopback without tokens.
#![cfg(feature = "server")]

mod server_support;

use std::process::Command;

use serde_json::json;
use server_support::Server;

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

#[test]
fn tokens_are_required_when_configured() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tokens = dir.path().join("tokens");
    std::fs::write(
        &tokens,
        format!("\n  {TOKEN}  \nsecond-token-is-also-long\n"),
    )
    .expect("write");
    let store = dir.path().join("store");
    let server = Server::start(&store, &["--token-file", tokens.to_str().expect("utf-8")]);
    let body = json!({"fingerprints": ["ff"]}).to_string();
    let body = Some(body.as_bytes());

    let none = server.call_with("POST", "/v1/query", body, None);
    assert_eq!(none.status, 401);
    assert_eq!(none.error_kind(), "unauthorized");
    assert!(none
        .headers
        .to_ascii_lowercase()
        .contains("www-authenticate: bearer"));
    let wrong = server.call_with(
        "POST",
        "/v1/query",
        body,
        Some("0123456789abcdef0123456789abcdeX"),
    );
    assert_eq!(wrong.status, 401);
    let prefix = server.call_with("POST", "/v1/query", body, Some(&TOKEN[..20]));
    assert_eq!(prefix.status, 401);
    assert_eq!(server.call_with("GET", "/metrics", None, None).status, 401);
    assert_eq!(
        server
            .call_with("GET", "/v1/documents/1", None, None)
            .status,
        401
    );

    assert_eq!(
        server
            .call_with("POST", "/v1/query", body, Some(TOKEN))
            .status,
        200
    );
    assert_eq!(
        server
            .call_with("POST", "/v1/query", body, Some("second-token-is-also-long"))
            .status,
        200
    );
    // Health checks need no token.
    assert_eq!(server.call_with("GET", "/healthz", None, None).status, 200);
}

#[test]
fn non_loopback_without_tokens_refuses_to_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_simhash-store"))
        .arg("serve")
        .arg("--store")
        .arg(dir.path())
        .args(["--listen", "0.0.0.0:0"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--token-file") && stderr.contains("--insecure-no-auth"),
        "{stderr}"
    );

    let tokens = dir.path().join("short");
    std::fs::write(&tokens, "short\n").expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_simhash-store"))
        .arg("serve")
        .arg("--store")
        .arg(dir.path().join("s"))
        .args(["--listen", "127.0.0.1:0", "--token-file"])
        .arg(&tokens)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("shorter than 16"));
}
