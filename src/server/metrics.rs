//! Counters for `GET /metrics` (Prometheus text format 0.0.4): requests by route and status,
//! a latency histogram per route, write groups and rejected writes. Hand-written: a few
//! atomics and one small map, no metrics framework.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

#[derive(Default)]
struct Histogram {
    /// Cumulative counts are computed when printed; these are per bucket, plus one for +Inf.
    buckets: [u64; BUCKETS.len() + 1],
    sum_seconds: f64,
    count: u64,
}

/// The service's counters.
#[derive(Default)]
pub struct Metrics {
    /// (route, status) -> requests.
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    /// route -> latency.
    latency: Mutex<BTreeMap<String, Histogram>>,
    commits: AtomicU64,
    committed_documents: AtomicU64,
    rejected_writes: AtomicU64,
}

/// Values read at scrape time.
pub struct Gauges {
    /// Documents in the store.
    pub documents: u64,
    /// Bytes of live SST files.
    pub disk_bytes: u64,
    /// Write requests waiting.
    pub queued_writes: usize,
}

impl Metrics {
    /// Counts one answered request.
    pub fn observe(&self, route: &str, status: u16, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        if let Ok(mut requests) = self.requests.lock() {
            *requests.entry((route.to_owned(), status)).or_default() += 1;
        }
        if let Ok(mut latency) = self.latency.lock() {
            let h = latency.entry(route.to_owned()).or_default();
            let bucket = BUCKETS
                .iter()
                .position(|&b| seconds <= b)
                .unwrap_or(BUCKETS.len());
            if let Some(b) = h.buckets.get_mut(bucket) {
                *b += 1;
            }
            h.sum_seconds += seconds;
            h.count += 1;
        }
    }

    /// Counts one committed write group of `documents`.
    pub fn committed(&self, documents: u64) {
        self.commits.fetch_add(1, Ordering::Relaxed);
        self.committed_documents
            .fetch_add(documents, Ordering::Relaxed);
    }

    /// Counts one write request refused because the queue was full.
    pub fn rejected_writes(&self) {
        self.rejected_writes.fetch_add(1, Ordering::Relaxed);
    }

    /// Everything, in the Prometheus text format.
    pub fn render(&self, gauges: &Gauges) -> String {
        let mut out = String::new();
        out.push_str(
            "# HELP simhash_http_requests_total Requests answered, by route and status.\n",
        );
        out.push_str("# TYPE simhash_http_requests_total counter\n");
        if let Ok(requests) = self.requests.lock() {
            for ((route, status), n) in requests.iter() {
                let _ = writeln!(
                    out,
                    "simhash_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}"
                );
            }
        }
        out.push_str("# HELP simhash_http_request_duration_seconds Time to answer, by route.\n");
        out.push_str("# TYPE simhash_http_request_duration_seconds histogram\n");
        if let Ok(latency) = self.latency.lock() {
            for (route, h) in latency.iter() {
                let mut cumulative = 0;
                for (i, n) in h.buckets.iter().enumerate() {
                    cumulative += n;
                    let le = BUCKETS.get(i).map_or("+Inf".to_owned(), |b| b.to_string());
                    let _ = writeln!(
                        out,
                        "simhash_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{le}\"}} {cumulative}"
                    );
                }
                let _ = writeln!(
                    out,
                    "simhash_http_request_duration_seconds_sum{{route=\"{route}\"}} {}\nsimhash_http_request_duration_seconds_count{{route=\"{route}\"}} {}",
                    h.sum_seconds, h.count
                );
            }
        }
        let counters = [
            (
                "simhash_write_groups_total",
                "Write groups committed (one atomic batch each; a DELETE that removed a document is a group of one).",
                self.commits.load(Ordering::Relaxed),
            ),
            (
                "simhash_written_documents_total",
                "Documents written or removed by committed groups.",
                self.committed_documents.load(Ordering::Relaxed),
            ),
            (
                "simhash_rejected_writes_total",
                "Write requests answered 503 because the queue was full.",
                self.rejected_writes.load(Ordering::Relaxed),
            ),
        ];
        for (name, help, value) in counters {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
            );
        }
        let gauges = [
            (
                "simhash_documents",
                "Documents in the store.",
                gauges.documents,
            ),
            (
                "simhash_disk_bytes",
                "Bytes of the store's live SST files.",
                gauges.disk_bytes,
            ),
            (
                "simhash_queued_writes",
                "Write requests waiting for the writer.",
                gauges.queued_writes as u64,
            ),
        ];
        for (name, help, value) in gauges {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
            );
        }
        out
    }
}
