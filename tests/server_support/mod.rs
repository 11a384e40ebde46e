//! Helpers of the `server_*` tests: a `simhash-store serve` process on 127.0.0.1 with an
//! ephemeral port, and a tiny blocking HTTP/1.1 client (one request per connection) so the
//! tests need no HTTP library and can also send what no library would.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A running server.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Server {
    /// Starts `simhash-store serve --store DIR --listen 127.0.0.1:0 ARGS...` and waits for its
    /// `listening on` line.
    pub fn start(store: &Path, args: &[&str]) -> Server {
        let store = store.to_str().expect("a UTF-8 path");
        Server::serve(&["--store", store], args)
    }

    /// Starts `simhash-store serve --postgres URL --listen 127.0.0.1:0 ARGS...`.
    pub fn start_postgres(url: &str, args: &[&str]) -> Server {
        Server::serve(&["--postgres", url], args)
    }

    /// Starts `simhash-store serve INDEX --listen 127.0.0.1:0 ARGS...` and waits for its
    /// `listening on` line.
    fn serve(index: &[&str], args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_simhash-store"))
            .arg("serve")
            .args(index)
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start simhash-store serve");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the first line");
        let addr = line
            .trim()
            .rsplit("://")
            .next()
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| {
                let _ = child.kill();
                panic!("the server did not print its address, got {line:?}")
            });
        Server { child, addr }
    }

    /// `kill -9`.
    pub fn kill(mut self) {
        self.child.kill().expect("kill");
        self.child.wait().expect("wait");
    }

    /// SIGTERM, then waits (at most 60 s) for the exit status.
    pub fn terminate(mut self) -> ExitStatus {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill -TERM");
        assert!(sent.success());
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the server did not stop within 60 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A request with an optional bearer token.
    pub fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Response {
        self.call_with(
            method,
            path,
            body.map(|b| b.to_string().into_bytes()).as_deref(),
            None,
        )
    }

    /// A request with a raw body and an optional token.
    pub fn call_with(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
        token: Option<&str>,
    ) -> Response {
        request(self.addr, method, path, body, token)
    }

    /// POST of a JSON body; panics unless the answer is 200.
    pub fn post_ok(&self, path: &str, body: &Value) -> Value {
        let r = self.call("POST", path, Some(body));
        assert_eq!(r.status, 200, "POST {path}: {}", r.text());
        r.json()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response: status and body.
pub struct Response {
    pub status: u16,
    pub headers: String,
    pub body: Vec<u8>,
}

impl Response {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }

    /// The `error.kind` of a JSON error body (panics if the body is not one).
    pub fn error_kind(&self) -> String {
        let v = self.json();
        v["error"]["kind"]
            .as_str()
            .unwrap_or_else(|| panic!("not an error body: {v}"))
            .to_owned()
    }
}

/// One HTTP/1.1 request on a new connection (`Connection: close`), with 60 s timeouts.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    token: Option<&str>,
) -> Response {
    try_request(addr, method, path, body, token).expect("an HTTP exchange")
}

/// [`request`], with failures (refused, reset) returned.
pub fn try_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    token: Option<&str>,
) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    stream.set_write_timeout(Some(Duration::from_secs(60)))?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(token) = token {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    let body = body.unwrap_or_default();
    if !body.is_empty() || method == "POST" {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    read_response(&mut stream)
}

/// Reads a whole response from a connection the server closes after it.
pub fn read_response(stream: &mut TcpStream) -> std::io::Result<Response> {
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse_response(&raw)
}

pub fn parse_response(raw: &[u8]) -> std::io::Result<Response> {
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not an HTTP response");
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(bad)?;
    let headers = String::from_utf8_lossy(&raw[..end]).into_owned();
    let status = headers
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(bad)?;
    Ok(Response {
        status,
        headers,
        body: raw[end + 4..].to_vec(),
    })
}

/// The fingerprint in a response (16 hex digits) as a u64.
pub fn fp(v: &Value) -> u64 {
    u64::from_str_radix(v.as_str().expect("a hex string"), 16).expect("hex")
}

/// The (distance, id) pairs of one result list.
pub fn matches(list: &Value) -> Vec<(u32, u64, u64)> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|m| {
            (
                m["distance"].as_u64().expect("distance") as u32,
                m["id"].as_u64().expect("id"),
                fp(&m["fingerprint"]),
            )
        })
        .collect()
}
