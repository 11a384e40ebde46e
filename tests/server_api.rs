//! Every route of `simhash-store serve` against a real server process: answers as the
//! library gives them, errors as JSON bodies with 4xx statuses.
#![cfg(feature = "server")]

mod server_support;

use serde_json::json;
use server_support::{fp, matches, Server};

const PAGE: &str = "Near-duplicate detection finds web pages that are almost the same: the same \
                    article under two addresses, a copy with another advert, a reposted story.";

#[test]
fn routes_answer_as_the_library_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);

    assert_eq!(server.call("GET", "/healthz", None).status, 200);

    // Inserts: texts get server-assigned ids (after every id the request gives),
    // fingerprints keep given ones, per-item errors.
    let r = server.post_ok(
        "/v1/insert",
        &json!({"documents": [
            {"key": "https://example.com/a b", "text": PAGE},
            {"id": 100, "fingerprint": "00000000000000ff"},
            {"key": "k2", "fingerprint": 511},
            {"key": "empty", "text": " ,. "},
        ]}),
    );
    assert_eq!(r["ids"], json!([101, 100, 102, null]), "{r}");
    assert_eq!(r["errors"][0]["index"], 3);
    assert_eq!(r["errors"][0]["error"]["kind"], "no_features");

    // A stored key keeps its id.
    let again = server.post_ok(
        "/v1/insert",
        &json!({"documents": [{"key": "k2", "fingerprint": "1ff"}]}),
    );
    assert_eq!(again["ids"], json!([102]));

    // Queries: hex and integers, results in order as Store::query orders them.
    let q = server.post_ok(
        "/v1/query",
        &json!({"fingerprints": ["ff", 0x1ff, "ffffffffffffffff"], "k": 3}),
    );
    let results = q["results"].as_array().expect("results");
    assert_eq!(results.len(), 3);
    assert_eq!(matches(&results[0]), vec![(0, 100, 0xff), (1, 102, 0x1ff)]);
    assert_eq!(matches(&results[1]), vec![(0, 102, 0x1ff), (1, 100, 0xff)]);
    assert!(matches(&results[2]).is_empty());
    assert_eq!(results[1][0]["key"], "k2");

    let t = server.post_ok("/v1/query-text", &json!({"texts": [PAGE]}));
    assert_eq!(t["results"][0][0]["id"], 101);
    assert_eq!(t["results"][0][0]["key"], "https://example.com/a b");

    // Documents by id and by percent-encoded key.
    let d = server.call("GET", "/v1/documents/100", None);
    assert_eq!(d.status, 200);
    assert_eq!(fp(&d.json()["fingerprint"]), 0xff);
    let by_key = server.call("GET", "/v1/keys/https%3A%2F%2Fexample.com%2Fa%20b", None);
    assert_eq!(by_key.status, 200, "{}", by_key.text());
    assert_eq!(by_key.json()["id"], 101);
    assert_eq!(
        server.call("GET", "/v1/keys/nope", None).error_kind(),
        "not_found"
    );
    assert_eq!(server.call("GET", "/v1/documents/7", None).status, 404);

    // insert-if-new: a near-duplicate is refused with its matches, a new one goes in.
    let n = server.post_ok(
        "/v1/insert-if-new",
        &json!({"documents": [{"fingerprint": "fe"}, {"id": 500, "fingerprint": "ff00ff00ff00ff00"}], "k": 2}),
    );
    assert_eq!(n["results"][0]["inserted"], false);
    assert_eq!(n["results"][0]["matches"][0]["id"], 100);
    assert_eq!(n["results"][1], json!({"inserted": true, "id": 500}));

    // Removal, then stats.
    assert_eq!(
        server.call("DELETE", "/v1/documents/100", None).json()["removed"],
        true
    );
    assert_eq!(
        server.call("DELETE", "/v1/documents/100", None).json()["removed"],
        false
    );
    let stats = server.call("GET", "/v1/stats", None).json();
    assert_eq!(stats["documents"], 3, "{stats}");
    assert_eq!(
        stats["format_version"],
        simhash_store::upgrade::FORMAT_VERSION,
        "{stats}"
    );
    assert_eq!(stats["read_only"], false);
    assert!(stats.get("groups").is_none(), "{stats}");
    // With ?groups=TOP, the spread over block values, as the library computes it.
    let with_groups = server.call("GET", "/v1/stats?groups=2", None).json();
    let groups = &with_groups["groups"];
    let store_fps: Vec<simhash_store::Fingerprint> = [101u64, 102, 500]
        .iter()
        .filter_map(|id| {
            let d = server.call("GET", &format!("/v1/documents/{id}"), None);
            (d.status == 200).then(|| simhash_store::Fingerprint(fp(&d.json()["fingerprint"])))
        })
        .collect();
    assert_eq!(store_fps.len(), 3, "{with_groups}");
    let want = simhash_store::groups::BlockGroups::from_fingerprints(store_fps);
    for b in 0..4 {
        let block = &groups["blocks"][b];
        assert_eq!(block["family"], format!("block{b}"));
        // Block values in hex, as `simhash-store stats` prints them.
        let largest: Vec<(String, u64)> = serde_json::from_value(block["largest"].clone()).unwrap();
        let hex: Vec<(String, u64)> = want
            .largest(b, 2)
            .into_iter()
            .map(|(value, n)| (format!("{value:04x}"), n))
            .collect();
        assert_eq!(largest, hex, "block {b}: {with_groups}");
        assert_eq!(block["max_share"], want.largest_share(b));
        assert_eq!(block["shared_block_factor"], want.shared_block_factor(b));
        assert_eq!(block["split_groups"], 0);
    }
    assert_eq!(
        groups["uniform_scan_per_query"],
        want.uniform_scan_per_query()
    );
    for bad in ["groups=0", "groups=101", "groups=x", "top=3"] {
        let r = server.call("GET", &format!("/v1/stats?{bad}"), None);
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
        assert_eq!(r.error_kind(), "bad_request", "{bad}");
    }

    let metrics = server.call("GET", "/metrics", None).text();
    assert!(
        metrics.contains("simhash_http_requests_total{route=\"/v1/query\",status=\"200\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("simhash_documents 3"), "{metrics}");
    assert!(metrics.contains(
        "simhash_http_request_duration_seconds_bucket{route=\"/v1/insert\",le=\"+Inf\"} 2"
    ));
}

#[test]
fn bad_requests_are_json_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--max-batch", "10"]);
    // (method, path, body, status, error kind)
    type Case<'a> = (&'a str, &'a str, Option<&'a [u8]>, u16, &'a str);
    let cases: Vec<Case> = vec![
        (
            "POST",
            "/v1/query",
            Some(&b"{\"fingerprints\": ["[..]),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/v1/query",
            Some(&b"not json at all"[..]),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/v1/query",
            Some(&b"{\"fingerprints\": \"ff\"}"[..]),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/v1/query",
            Some(&b"{\"fingerprints\": [true]}"[..]),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/v1/query",
            Some(&b"{\"fingerprints\": [\"xyz\"]}"[..]),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/v1/query",
            Some(&b"{\"fingerprints\": [\"12345678901234567\"]}"[..]),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/v1/query",
            Some(&b"{\"fingerprints\": [1.5]}"[..]),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/v1/query",
            Some(&b"{\"fingerprints\": [1], \"k\": 65}"[..]),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/v1/query",
            Some(&b"{\"fingerprints\": [1,2,3,4,5,6,7,8,9,10,11]}"[..]),
            413,
            "too_many_items",
        ),
        ("POST", "/v1/query", Some(&b""[..]), 400, "bad_request"),
        (
            "POST",
            "/v1/insert",
            Some(&b"{\"documents\": [{\"id\": \"seven\", \"fingerprint\": 1}]}"[..]),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/v1/query-text",
            Some(&b"{\"texts\": [\"a b c d\"], \"verified\": true}"[..]),
            400,
            "no_sketches",
        ),
        ("GET", "/v1/query", None, 405, "method_not_allowed"),
        ("GET", "/v1/nothing", None, 404, "not_found"),
        ("GET", "/", None, 404, "not_found"),
        ("GET", "/v1/documents/abc", None, 400, "bad_request"),
        (
            "GET",
            "/v1/documents/99999999999999999999999",
            None,
            400,
            "bad_request",
        ),
        ("DELETE", "/v1/documents/-1", None, 400, "bad_request"),
    ];
    for (method, path, body, status, kind) in cases {
        let r = server.call_with(method, path, body, None);
        let shown = String::from_utf8_lossy(body.unwrap_or_default());
        assert_eq!(r.status, status, "{method} {path} {shown}: {}", r.text());
        assert_eq!(r.error_kind(), kind, "{method} {path} {shown}");
        assert!(r
            .headers
            .to_ascii_lowercase()
            .contains("content-type: application/json"));
    }
    // The per-item error of a document with neither text nor fingerprint.
    let r = server.post_ok(
        "/v1/insert",
        &json!({"documents": [{"key": "x"}, {"fingerprint": 1}]}),
    );
    assert_eq!(r["ids"][0], serde_json::Value::Null);
    assert_eq!(r["errors"][0]["error"]["kind"], "bad_request");
    assert_eq!(server.call("GET", "/healthz", None).status, 200);
}

#[test]
fn read_only_server_sees_the_writers_commits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let writer = Server::start(dir.path(), &[]);
    writer.post_ok(
        "/v1/insert",
        &json!({"documents": [{"id": 1, "fingerprint": "abc"}]}),
    );
    let reader = Server::start(dir.path(), &["--read-only", "--refresh-ms", "100"]);
    let refused = reader.call(
        "POST",
        "/v1/insert",
        Some(&json!({"documents": [{"fingerprint": 1}]})),
    );
    assert_eq!(refused.status, 403);
    assert_eq!(refused.error_kind(), "read_only");
    assert_eq!(reader.call("GET", "/v1/documents/1", None).status, 200);

    writer.post_ok(
        "/v1/insert",
        &json!({"documents": [{"id": 2, "fingerprint": "def"}]}),
    );
    // Visible after the refresh interval; wait for it at most 30 s.
    let mut seen = false;
    for _ in 0..300 {
        if reader.call("GET", "/v1/documents/2", None).status == 200 {
            seen = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(seen, "the read-only server never saw document 2");
    assert_eq!(
        reader.call("GET", "/v1/stats", None).json()["read_only"],
        true
    );
}
