//! A `simhash-store serve` process (of this build unless told otherwise) and a blocking keep-alive HTTP/1.1 client
//! for it: what the PostgreSQL service benches need (the store's service bench has its own
//! tokio load generator, `http_load.rs`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};

/// `simhash-store serve ARGS --listen 127.0.0.1:0 --quiet`, stopped (SIGTERM) when dropped.
pub struct Service {
    child: Child,
    pub addr: SocketAddr,
}

impl Service {
    /// Starts the service of this build with `args` (`--store DIR`, `--postgres URL`, ...)
    /// and waits for the address it prints. `SIMHASH_BENCH_SERVE_BIN` names another
    /// `simhash-store` binary to start instead (to compare two builds on one workload).
    pub fn start(args: &[&str]) -> Service {
        let bin = std::env::var_os("SIMHASH_BENCH_SERVE_BIN")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_simhash-store").into());
        let mut child = Command::new(bin)
            .args(["serve", "--quiet", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start simhash-store serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("its address");
        let addr = line
            .trim()
            .rsplit("://")
            .next()
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("an address, not {line:?}"));
        Service { child, addr }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// One keep-alive connection.
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

// Each bench uses some of these.
#[allow(dead_code)]
impl Conn {
    pub fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Conn {
            stream,
            buf: Vec::with_capacity(1 << 16),
        }
    }

    /// POSTs a JSON body to `path`; returns the status and the response body.
    pub fn post_json(&mut self, path: &str, body: &[u8]) -> (u16, &[u8]) {
        self.post(path, "application/json", body)
    }

    /// POSTs fingerprints as a binary body (little-endian u64s) to `path`.
    pub fn post_binary(&mut self, path: &str, fps: &[u64]) -> (u16, &[u8]) {
        let body: Vec<u8> = fps.iter().flat_map(|f| f.to_le_bytes()).collect();
        self.post(path, "application/octet-stream", &body)
    }

    /// POSTs `body` to `path`; returns the status and the response body (valid until the next
    /// request).
    pub fn post(&mut self, path: &str, content_type: &str, body: &[u8]) -> (u16, &[u8]) {
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        request.extend_from_slice(body);
        self.stream.write_all(&request).expect("send");
        self.buf.clear();
        let mut chunk = [0u8; 65536];
        loop {
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.buf[..end]).to_ascii_lowercase();
                let status: u16 = head
                    .split_whitespace()
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .expect("status");
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .expect("content-length");
                while self.buf.len() < end + 4 + length {
                    let n = self.stream.read(&mut chunk).expect("read");
                    assert!(n > 0, "connection closed");
                    self.buf.extend_from_slice(&chunk[..n]);
                }
                return (status, &self.buf[end + 4..end + 4 + length]);
            }
            let n = self.stream.read(&mut chunk).expect("read");
            assert!(n > 0, "connection closed");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}
