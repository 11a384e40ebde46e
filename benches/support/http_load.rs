//! The service bench's client side: the server it starts, keep-alive HTTP/1.1 connections
//! that send a body again and again, and the load of many of them with their latencies.

use super::*;

pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
}

impl Server {
    /// Starts `bin serve` on the store at `dir`, pinned to `cpus` (a `taskset -c` list; empty:
    /// not pinned), with `--threads` when `threads` is given.
    pub(crate) fn start(
        bin: &std::ffi::OsStr,
        dir: &std::path::Path,
        cpus: &str,
        threads: Option<usize>,
    ) -> Server {
        use std::io::BufRead;
        let mut command = if cpus.is_empty() {
            Command::new(bin)
        } else {
            let mut c = Command::new("taskset");
            c.args(["-c", cpus]).arg(bin);
            c
        };
        command.args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--durability",
            "buffered",
            "--store",
        ]);
        command.arg(dir);
        if let Some(t) = threads {
            command.args(["--threads", &t.to_string()]);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the server");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("its address");
        let addr = line
            .trim()
            .rsplit("://")
            .next()
            .and_then(|a| a.parse().ok())
            .expect("an address");
        Server { child, addr }
    }

    pub(crate) fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// A request body and its content type.
#[derive(Clone)]
pub(crate) struct Body {
    pub(crate) content_type: &'static str,
    pub(crate) bytes: Vec<u8>,
}

impl Body {
    pub(crate) fn json(text: String) -> Body {
        Body {
            content_type: "application/json",
            bytes: text.into_bytes(),
        }
    }

    /// Fingerprints as little-endian u64s.
    pub(crate) fn binary(fps: &[u64]) -> Body {
        Body {
            content_type: "application/octet-stream",
            bytes: fps.iter().flat_map(|f| f.to_le_bytes()).collect(),
        }
    }
}

/// One keep-alive connection sending requests and reading whole responses.
pub(crate) struct Conn {
    pub(crate) stream: TcpStream,
    pub(crate) buf: Vec<u8>,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Conn {
            stream,
            buf: Vec::with_capacity(1 << 16),
        }
    }

    /// POSTs `body` to `path`; returns the status and the response body.
    async fn post(&mut self, path: &str, body: &Body) -> (u16, Vec<u8>) {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: {}\r\nContent-Length: {}\r\n\r\n",
            body.content_type,
            body.bytes.len()
        );
        let mut request = head.into_bytes();
        request.extend_from_slice(&body.bytes);
        self.stream.write_all(&request).await.expect("send");
        self.buf.clear();
        let mut chunk = [0u8; 16384];
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
                    let n = self.stream.read(&mut chunk).await.expect("read");
                    assert!(n > 0, "connection closed");
                    self.buf.extend_from_slice(&chunk[..n]);
                }
                let body = self.buf[end + 4..end + 4 + length].to_vec();
                return (status, body);
            }
            let n = self.stream.read(&mut chunk).await.expect("read");
            assert!(n > 0, "connection closed");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

/// Drives `conns` connections for `seconds`; each sends `body(conn, i)` to `path` again and
/// again. Returns (requests/s, sorted latencies).
pub(crate) fn load(
    addr: SocketAddr,
    conns: usize,
    seconds: f64,
    path: &'static str,
    body: impl Fn(usize, u64) -> Body + Send + Sync + 'static,
) -> (f64, Vec<Duration>) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let body = Arc::new(body);
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let tasks: Vec<_> = (0..conns)
            .map(|c| {
                let (body, stop) = (Arc::clone(&body), Arc::clone(&stop));
                tokio::spawn(async move {
                    let mut conn = Conn::open(addr).await;
                    let mut latencies = Vec::new();
                    let mut i = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let b = body(c, i);
                        let t = Instant::now();
                        let (status, response) = conn.post(path, &b).await;
                        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&response));
                        latencies.push(t.elapsed());
                        i += 1;
                    }
                    latencies
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
        stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.expect("connection task"));
        }
        let rate = all.len() as f64 / started.elapsed().as_secs_f64();
        all.sort_unstable();
        (rate, all)
    })
}

/// What one server did in one run.
#[derive(Default, Clone)]
pub(crate) struct HttpRun {
    pub(crate) single: f64,
    /// Single queries per CPU-second of the server.
    pub(crate) single_cpu: f64,
    pub(crate) single_p50: f64,
    pub(crate) single_p99: f64,
    pub(crate) batched: f64,
    /// Batched fingerprints per CPU-second of the server.
    pub(crate) batched_cpu: f64,
    pub(crate) batch_p50: f64,
    pub(crate) batch_p99: f64,
    pub(crate) binary: Option<(f64, f64, f64)>,
    pub(crate) inserts: f64,
}

/// Measures the server at `addr`: single queries, batches (JSON, and binary when `binary`).
pub(crate) fn over_http(
    addr: SocketAddr,
    pid: &str,
    o: &Options,
    qs: &Arc<Vec<u64>>,
    binary: bool,
) -> HttpRun {
    let single = |c: usize, i: u64, qs: &[u64]| {
        Body::json(format!(
            "{{\"fingerprints\":[\"{:x}\"],\"k\":3}}",
            qs[(c * 3001 + i as usize * 7) % qs.len()]
        ))
    };
    let q = Arc::clone(qs);
    load(addr, o.conns, 1.0, "/v1/query", move |c, i| {
        single(c, i, &q)
    }); // warm-up
    let q = Arc::clone(qs);
    let cpu = cpu_seconds(pid);
    let (qps, lat) = load(addr, o.conns, o.seconds, "/v1/query", move |c, i| {
        single(c, i, &q)
    });
    let single_cpu = qps * o.seconds / (cpu_seconds(pid) - cpu).max(1e-3);
    let slice = |c: usize, i: u64, qs: &[u64]| {
        let start = ((c * 50 + i as usize) * 1000) % (qs.len() - 1000);
        start..start + 1000
    };
    let q = Arc::clone(qs);
    let cpu = cpu_seconds(pid);
    let (batches, blat) = load(addr, o.batch_conns, o.seconds, "/v1/query", move |c, i| {
        let fps: Vec<String> = q[slice(c, i, &q)]
            .iter()
            .map(|q| format!("\"{q:x}\""))
            .collect();
        Body::json(format!("{{\"fingerprints\":[{}],\"k\":3}}", fps.join(",")))
    });
    let batched_cpu = batches * 1000.0 * o.seconds / (cpu_seconds(pid) - cpu).max(1e-3);
    let binary = binary.then(|| {
        let q = Arc::clone(qs);
        let (rate, lat) = load(
            addr,
            o.batch_conns,
            o.seconds,
            "/v1/query?k=3",
            move |c, i| Body::binary(&q[slice(c, i, &q)]),
        );
        (rate * 1000.0, percentile(&lat, 0.5), percentile(&lat, 0.99))
    });
    HttpRun {
        single: qps,
        single_cpu,
        single_p50: percentile(&lat, 0.5),
        single_p99: percentile(&lat, 0.99),
        batched: batches * 1000.0,
        batched_cpu,
        batch_p50: percentile(&blat, 0.5),
        batch_p99: percentile(&blat, 0.99),
        binary,
        inserts: 0.0,
    }
}

/// One-document inserts/s from 16 connections to the server at `addr`.
pub(crate) fn inserts_over_http(addr: SocketAddr, o: &Options, next_id: &Arc<AtomicU64>) -> f64 {
    let ids = Arc::clone(next_id);
    load(addr, 16, o.seconds, "/v1/insert", move |_, _| {
        let id = ids.fetch_add(1, Ordering::Relaxed);
        Body::json(format!(
            "{{\"documents\":[{{\"id\":{id},\"fingerprint\":\"{:x}\"}}]}}",
            id.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ))
    })
    .0
}
