//! Hostile clients: a million fingerprints in one body, a 1 GB body (announced, and streamed
//! without a length), headers sent one byte at a time, garbage instead of HTTP. Each is
//! answered with a 4xx or has its connection closed after a timeout, while the server keeps
//! answering other clients.
#![cfg(feature = "server")]

mod server_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::json;
use server_support::{parse_response, Server};

const GIB: u64 = 1024 * 1024 * 1024;

fn serves_others(server: &Server) {
    let r = server.call("POST", "/v1/query", Some(&json!({"fingerprints": ["ff"]})));
    assert_eq!(r.status, 200, "{}", r.text());
}

fn connect(server: &Server) -> TcpStream {
    let stream = TcpStream::connect(server.addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    stream
        .set_write_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    stream
}

/// Sends `head`, then up to `limit` bytes of body in 1 MiB pieces (as chunks when
/// `chunked`) until the server answers or closes; returns the bytes of body sent and what
/// came back.
fn stream_body(server: &Server, head: &str, limit: u64, chunked: bool) -> (u64, Vec<u8>) {
    let mut stream = connect(server);
    stream.write_all(head.as_bytes()).expect("headers");
    let piece = vec![b'1'; 1 << 20];
    let mut sent = 0u64;
    stream.set_nonblocking(false).expect("blocking");
    let mut reader = stream.try_clone().expect("clone");
    let answer = std::thread::spawn(move || {
        let mut raw = Vec::new();
        let _ = reader.read_to_end(&mut raw);
        raw
    });
    while sent < limit {
        let written = if chunked {
            stream
                .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
                .and_then(|()| stream.write_all(&piece))
                .and_then(|()| stream.write_all(b"\r\n"))
        } else {
            stream.write_all(&piece)
        };
        if written.is_err() || answer.is_finished() {
            break;
        }
        sent += piece.len() as u64;
    }
    let _ = stream.shutdown(std::net::Shutdown::Write);
    (sent, answer.join().expect("reader"))
}

#[test]
fn huge_bodies_are_refused_early() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--max-body", "8388608"]);

    // Announced: refused from the length alone, before the body.
    let head = format!(
        "POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {GIB}\r\n\r\n"
    );
    let (sent, raw) = stream_body(&server, &head, GIB, false);
    let r = parse_response(&raw).expect("an answer");
    assert_eq!(r.status, 413, "{}", r.text());
    assert_eq!(r.error_kind(), "body_too_large");
    assert!(sent < GIB / 4, "sent {sent} bytes before the answer");
    serves_others(&server);

    // Streamed without a length: refused once over the limit.
    let head = "POST /v1/insert HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    let (sent, raw) = stream_body(&server, head, GIB, true);
    let r = parse_response(&raw).expect("an answer");
    assert_eq!(r.status, 413, "{}", r.text());
    assert!(sent < GIB / 4, "sent {sent} bytes before the answer");
    serves_others(&server);
}

#[test]
fn a_million_fingerprints_in_one_body_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let fps: Vec<String> = (0..1_000_000u64).map(|i| format!("{i:016x}")).collect();
    let body = json!({"fingerprints": fps, "k": 3}).to_string();
    let r = server.call_with("POST", "/v1/query", Some(body.as_bytes()), None);
    assert_eq!(r.status, 413, "{}", r.text());
    assert_eq!(r.error_kind(), "too_many_items");
    serves_others(&server);
}

#[test]
fn slow_headers_are_cut_off_while_others_are_served() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--header-timeout", "2"]);
    let mut slow = connect(&server);
    let request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let mut closed = false;
    for (i, byte) in request.iter().enumerate() {
        if slow.write_all(&[*byte]).is_err() {
            closed = true;
            break;
        }
        if i % 4 == 0 {
            serves_others(&server);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    if !closed {
        // Everything was sent: the server must have closed (or answered 408) by now, long
        // after its 2 s header timeout.
        slow.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let mut raw = Vec::new();
        let read = slow.read_to_end(&mut raw);
        let answered_ok = parse_response(&raw)
            .map(|r| r.status == 200)
            .unwrap_or(false);
        assert!(
            read.is_err() || !answered_ok,
            "a request sent over 20 s was served"
        );
    }
    serves_others(&server);
}

#[test]
fn garbage_and_unknown_routes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    for garbage in [
        &b"\x00\x01\x02 not http\r\n\r\n"[..],
        b"GET / HTTP/9.9\r\n\r\n",
        b"POST /v1/query HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
    ] {
        let mut s = connect(&server);
        let _ = s.write_all(garbage);
        let mut raw = Vec::new();
        let _ = s.read_to_end(&mut raw);
        if let Ok(r) = parse_response(&raw) {
            assert!(
                (400..500).contains(&r.status),
                "{:?} answered {}",
                garbage,
                r.status
            );
        }
        serves_others(&server);
    }
    for path in [
        "/v2/query",
        "/v1/query/extra",
        "/../../etc/passwd",
        "/v1/documents/",
        "/%00",
    ] {
        let r = server.call("GET", path, None);
        assert!((400..500).contains(&r.status), "{path}: {}", r.status);
        r.error_kind();
    }
    serves_others(&server);
}
