//! The progress bar of long commands on standard error, hidden when standard error is not a
//! terminal or with `-q`: documents and documents per second, and, when the inputs' sizes are
//! known (files, not standard input), the share of their bytes read and the time left.

use std::time::{Duration, Instant};

use indicatif::{HumanBytes, HumanCount, ProgressBar, ProgressDrawTarget, ProgressStyle};
use simhash_store::readers::ReadCounter;

/// The bar while the inputs' size is unknown.
const COUNTING: &str = "{spinner} {prefix} {msg} [{elapsed}]";
/// The bar once it is known: the share of the inputs' bytes read, and the time left.
const SIZED: &str =
    "{spinner} {prefix} {bar:24} {percent}% of {total_bytes}, {msg} [{elapsed}, {eta} left]";

/// A progress display for documents read from inputs.
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    /// Bytes of the records read (decoded, uncompressed).
    bytes: u64,
    docs: u64,
    /// Bytes read from the input files, as stored.
    read: ReadCounter,
    sized: bool,
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner())
}

impl Progress {
    /// A bar named `verb` ("loading", "fingerprinting"); hidden when `quiet`.
    pub fn new(verb: &str, quiet: bool) -> Progress {
        let bar = if quiet {
            ProgressBar::hidden()
        } else {
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        };
        bar.set_style(style(COUNTING));
        bar.set_prefix(verb.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress {
            bar,
            start: Instant::now(),
            bytes: 0,
            docs: 0,
            read: ReadCounter::new(),
            sized: false,
        }
    }

    /// The counter the readers add the bytes they read from input files to.
    pub fn read_counter(&self) -> ReadCounter {
        self.read.clone()
    }

    /// The inputs hold `total` bytes (as stored): from now on the bar shows the share read
    /// and the time left.
    pub fn expect_bytes(&mut self, total: u64) {
        self.sized = true;
        self.bar.set_length(total);
        self.bar.set_style(style(SIZED));
    }

    /// Counts `docs` more documents of `bytes` bytes of records.
    pub fn inc(&mut self, docs: u64, bytes: u64) {
        self.bytes += bytes;
        self.docs += docs;
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        let rate = HumanCount((self.docs as f64 / secs) as u64);
        if self.sized {
            self.bar.set_position(self.read.get());
            self.bar
                .set_message(format!("{} docs, {rate} docs/s", HumanCount(self.docs)));
        } else {
            self.bar.set_message(format!(
                "{} docs, {rate} docs/s, {}/s",
                HumanCount(self.docs),
                HumanBytes((self.bytes as f64 / secs) as u64)
            ));
        }
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

    /// Bytes of records so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Time since the start.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
}
