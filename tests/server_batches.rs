//! Query batches over the service: a batch answered by the query pool (JSON or a binary body
//! of little-endian u64s) equals the same fingerprints queried one by one, also while other
//! clients send batches at the same time; malformed binary bodies are 400s.
#![cfg(feature = "server")]

mod common;
mod server_support;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use common::Rng;
use serde_json::{json, Value};
use server_support::{read_response, Response, Server};

/// A POST with a binary body on a new connection.
fn post_binary(addr: SocketAddr, path: &str, body: &[u8]) -> Response {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("send");
    stream.write_all(body).expect("send");
    read_response(&mut stream).expect("a response")
}

fn le_bytes(fps: &[u64]) -> Vec<u8> {
    fps.iter().flat_map(|f| f.to_le_bytes()).collect()
}

#[test]
fn batches_equal_single_queries_in_json_and_binary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--threads", "2"]);
    let mut rng = Rng::new(46);
    let stored: Vec<u64> = (0..3000).map(|_| rng.next_u64()).collect();
    let documents: Vec<Value> = stored
        .iter()
        .enumerate()
        .map(|(id, fp)| json!({"id": id, "fingerprint": format!("{fp:016x}")}))
        .collect();
    server.post_ok("/v1/insert", &json!({ "documents": documents }));
    // Half near a stored fingerprint, half random.
    let queries: Vec<u64> = (0..300)
        .map(|i| {
            if i % 2 == 0 {
                let fp = stored[rng.below(stored.len() as u64) as usize];
                fp ^ (1 << rng.below(64)) ^ (1 << rng.below(64))
            } else {
                rng.next_u64()
            }
        })
        .collect();
    let singles: Vec<Value> = queries
        .iter()
        .map(|fp| {
            server.post_ok("/v1/query", &json!({"fingerprints": [fp], "k": 3}))["results"][0]
                .clone()
        })
        .collect();
    assert!(singles
        .iter()
        .any(|r| !r.as_array().expect("list").is_empty()));
    let json_batch = server.post_ok("/v1/query", &json!({"fingerprints": queries, "k": 3}));
    assert_eq!(json_batch["results"], Value::Array(singles.clone()));

    // Binary: the same answer, the JSON response included; k from the query string.
    let addr = server.addr;
    let binary = post_binary(addr, "/v1/query?k=3", &le_bytes(&queries));
    assert_eq!(binary.status, 200, "{}", binary.text());
    assert_eq!(binary.json()["results"], Value::Array(singles.clone()));
    let exact = post_binary(addr, "/v1/query?k=0", &le_bytes(&stored[..20]));
    let exact = exact.json();
    for (i, list) in exact["results"]
        .as_array()
        .expect("results")
        .iter()
        .enumerate()
    {
        assert_eq!(list[0]["id"], i, "{list}");
    }
    let default_k = post_binary(addr, "/v1/query", &le_bytes(&queries[..10]));
    assert_eq!(
        default_k.json()["results"],
        Value::Array(singles[..10].to_vec())
    );

    // Six clients at once, batches of different sizes, each answered in full and in order.
    std::thread::scope(|s| {
        for c in 0..6usize {
            let (queries, singles) = (&queries, &singles);
            s.spawn(move || {
                for round in 0..4usize {
                    let n = 9 + (c * 37 + round * 53) % (queries.len() - 9);
                    let start = (c + round) % (queries.len() - n + 1);
                    let r = if (c + round) % 2 == 0 {
                        post_binary(addr, "/v1/query?k=3", &le_bytes(&queries[start..start + n]))
                    } else {
                        server_support::request(
                            addr,
                            "POST",
                            "/v1/query",
                            Some(
                                json!({"fingerprints": &queries[start..start + n], "k": 3})
                                    .to_string()
                                    .as_bytes(),
                            ),
                            None,
                        )
                    };
                    assert_eq!(r.status, 200, "{}", r.text());
                    assert_eq!(
                        r.json()["results"],
                        Value::Array(singles[start..start + n].to_vec())
                    );
                }
            });
        }
    });

    // Malformed binary bodies.
    for (path, body) in [
        ("/v1/query?k=3", vec![0u8; 7]),
        ("/v1/query?k=x", le_bytes(&queries[..2])),
        ("/v1/query?k=65", le_bytes(&queries[..2])),
        ("/v1/query?n=2", le_bytes(&queries[..2])),
    ] {
        let r = post_binary(addr, path, &body);
        assert_eq!(r.status, 400, "{path}: {}", r.text());
        assert_eq!(r.error_kind(), "bad_request", "{path}");
    }
}
