//! Throttled progress reports to the [`BulkOptions`](super::BulkOptions) callback.

use std::time::{Duration, Instant};

use super::options::{BulkPhase, BulkProgress, ProgressFn};

/// Adds between two looks at the clock.
const CHECK_EVERY: u64 = 4096;
/// Least time between two reports of the same phase.
const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// Counts documents and bytes and reports them.
pub(crate) struct Progress {
    callback: Option<ProgressFn>,
    start: Instant,
    last_report: Instant,
    pub(crate) documents: u64,
    pub(crate) bytes: u64,
    pub(crate) runs: u32,
}

impl Progress {
    pub(crate) fn new(callback: Option<ProgressFn>) -> Self {
        let now = Instant::now();
        Progress {
            callback,
            start: now,
            last_report: now,
            documents: 0,
            bytes: 0,
            runs: 0,
        }
    }

    pub(crate) fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Counts one add of `bytes` input bytes; reports now and then.
    #[inline]
    pub(crate) fn add(&mut self, bytes: u64) {
        self.documents += 1;
        self.bytes += bytes;
        if self.callback.is_some()
            && self.documents.is_multiple_of(CHECK_EVERY)
            && self.last_report.elapsed() >= MIN_INTERVAL
        {
            self.report(BulkPhase::Adding);
        }
    }

    /// Counts `documents` adds of `bytes` input bytes in all; reports if the time has come.
    pub(crate) fn add_many(&mut self, documents: u64, bytes: u64) {
        self.documents += documents;
        self.bytes += bytes;
        if self.callback.is_some() && self.last_report.elapsed() >= MIN_INTERVAL {
            self.report(BulkPhase::Adding);
        }
    }

    /// Reports now.
    pub(crate) fn report(&mut self, phase: BulkPhase) {
        let Some(callback) = &self.callback else {
            return;
        };
        self.last_report = Instant::now();
        let elapsed = self.start.elapsed();
        let secs = elapsed.as_secs_f64();
        let report = BulkProgress {
            phase,
            documents: self.documents,
            bytes: self.bytes,
            rate: if secs > 0.0 {
                self.documents as f64 / secs
            } else {
                0.0
            },
            runs: self.runs,
            elapsed,
        };
        callback(&report);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    #[test]
    fn reports_reach_the_callback() {
        let seen = Arc::new(AtomicU64::new(0));
        let s = seen.clone();
        let mut p = Progress::new(Some(Arc::new(move |r: &BulkProgress| {
            s.store(r.documents, Ordering::SeqCst)
        })));
        p.add(10);
        p.add(10);
        p.report(BulkPhase::Done);
        assert_eq!(seen.load(Ordering::SeqCst), 2);
        assert_eq!(p.bytes, 20);
    }
}
