//! The progress bar of long commands: documents, documents per second and megabytes of input
//! per second, on standard error, hidden when standard error is not a terminal or with `-q`.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress display for documents read from inputs.
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    bytes: u64,
}

impl Progress {
    /// A bar named `verb` ("loading", "fingerprinting"); hidden when `quiet`.
    pub fn new(verb: &str, quiet: bool) -> Progress {
        let bar = if quiet {
            ProgressBar::hidden()
        } else {
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        };
        let style = ProgressStyle::with_template(
            "{spinner} {prefix} {human_pos} docs, {per_sec} {msg} [{elapsed}]",
        )
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_prefix(verb.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress {
            bar,
            start: Instant::now(),
            bytes: 0,
        }
    }

    /// Counts `docs` more documents of `bytes` input bytes.
    pub fn inc(&mut self, docs: u64, bytes: u64) {
        self.bytes += bytes;
        self.bar.inc(docs);
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        self.bar
            .set_message(format!("{:.1} MB/s", self.bytes as f64 / 1e6 / secs));
    }

    /// Prints a line above the bar.
    pub fn println(&self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// A handle on the bar, e.g. to show the phase of a load from another thread.
    pub fn bar(&self) -> ProgressBar {
        self.bar.clone()
    }

    /// Input bytes so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Time since the start.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
}
