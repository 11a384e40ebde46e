//! The bulk loader's options ([`BulkOptions`]), its progress reports ([`BulkProgress`],
//! [`BulkPhase`]) and what [`BulkLoader::finish`](crate::BulkLoader::finish) returns
//! ([`BulkSummary`]).

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A progress callback: called from the thread that calls the loader, at most a few times a
/// second and at every change of phase.
pub type ProgressFn = Arc<dyn Fn(&BulkProgress) + Send + Sync>;

/// Options of a [`BulkLoader`](crate::BulkLoader).
///
/// ```
/// use simhash_store::BulkOptions;
/// let opts = BulkOptions::new()
///     .memory_budget(/* 256 MiB */ 256 << 20)
///     .progress(|p| eprintln!("{:?}: {} documents, {:.0}/s", p.phase, p.documents, p.rate));
/// # let _ = opts;
/// ```
#[derive(Clone)]
pub struct BulkOptions {
    pub(crate) memory_budget: usize,
    pub(crate) temp_dir: Option<PathBuf>,
    pub(crate) progress: Option<ProgressFn>,
    pub(crate) text_chunk_bytes: usize,
}

impl Default for BulkOptions {
    fn default() -> Self {
        BulkOptions {
            memory_budget: crate::memory::default_budget(crate::memory::available()),
            temp_dir: None,
            progress: None,
            text_chunk_bytes: /* 8 MiB */ 8 << 20,
        }
    }
}

impl fmt::Debug for BulkOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BulkOptions")
            .field("memory_budget", &self.memory_budget)
            .field("temp_dir", &self.temp_dir)
            .field(
                "progress",
                &self.progress.as_ref().map(|_| "Fn(&BulkProgress)"),
            )
            .finish()
    }
}

impl BulkOptions {
    /// Default options; see each setter for its default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes of documents the loader gathers in memory before it sorts them, writes them as
    /// SST files and ingests them (one *run*). A larger budget means fewer runs: a load that
    /// fits in one run goes straight to the bottom level of the LSM tree, and a larger one
    /// spools its runs' block entries and merges them at [`finish`](crate::BulkLoader::finish)
    /// (about 1.8 times the time of one run at 100 million documents). Peak memory is about
    /// the budget plus the store's block cache (the resident size of a load whose files fit
    /// in half the memory also counts pages of the files being written, up to about 0.6 GB,
    /// mapped so that they stay in the page cache). Each document counts 56 bytes against the
    /// budget (it uses about 40); in a run where any document has an external key, 8 more and
    /// the key's bytes, and where any has a text length, 8 more.
    ///
    /// Default: a third of the memory available when the options are made (the system's
    /// available memory, or the cgroup's free memory in a container, whichever is less), at
    /// least 256 MiB and with no upper bound, so that a load that fits is written in one run,
    /// with no spool and no merge; 1 GiB where it is unknown. On a machine with 24 GiB that is
    /// about 7 GiB (125 million documents in one run), with 128 GiB about 43 GiB (750 million).
    pub fn memory_budget(mut self, bytes: usize) -> Self {
        self.memory_budget = bytes.max(1);
        self
    }

    /// Directory for the loader's temporary SST files. Default: `bulk-tmp` inside the store
    /// directory, so ingestion moves files by hard link instead of copying them, and
    /// [`Store::open`](crate::Store::open) removes what a killed load left behind. Another
    /// directory works (on another file system the files are copied at ingestion), but a
    /// killed load's leftovers there are not removed. The path must be valid UTF-8.
    pub fn temp_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.temp_dir = Some(dir.into());
        self
    }

    /// A callback for progress reports (documents, bytes, rate), e.g. to draw a progress bar.
    /// Default: none.
    pub fn progress(mut self, f: impl Fn(&BulkProgress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Bytes of text [`BulkLoader::add_text`](crate::BulkLoader::add_text) gathers before it
    /// fingerprints them in parallel. Default: 8 MiB.
    pub fn text_chunk_size(mut self, bytes: usize) -> Self {
        self.text_chunk_bytes = bytes.max(1);
        self
    }
}

/// What the loader is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BulkPhase {
    /// Taking documents (and fingerprinting texts).
    Adding,
    /// Sorting a run, reading what the store holds for its ids and keys, and writing its SST
    /// files.
    Writing,
    /// Ingesting a run's SST files into the store.
    Ingesting,
    /// Merging the runs of a load larger than the memory budget, block family by family
    /// ([`BulkLoader::finish`](crate::BulkLoader::finish)).
    Merging,
    /// [`BulkLoader::finish`](crate::BulkLoader::finish) has completed.
    Done,
}

impl BulkPhase {
    /// The phase as one lowercase word: `adding`, `writing`, `ingesting`, `merging`, `done`
    /// (the names the Python package's progress reports use).
    pub fn name(self) -> &'static str {
        match self {
            BulkPhase::Adding => "adding",
            BulkPhase::Writing => "writing",
            BulkPhase::Ingesting => "ingesting",
            BulkPhase::Merging => "merging",
            BulkPhase::Done => "done",
        }
    }
}

impl fmt::Display for BulkPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A progress report.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BulkProgress {
    /// What the loader is doing.
    pub phase: BulkPhase,
    /// Documents added so far (including texts skipped for having no features).
    pub documents: u64,
    /// Input bytes so far: text bytes for [`add_text`](crate::BulkLoader::add_text), 8 bytes
    /// of fingerprint for the other adds, plus external keys.
    pub bytes: u64,
    /// Documents per second since the loader was created.
    pub rate: f64,
    /// Runs ingested so far.
    pub runs: u32,
    /// Time since the loader was created.
    pub elapsed: Duration,
}

/// What a finished load did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BulkSummary {
    /// Documents the load stored that were not in the store before it.
    pub added: u64,
    /// Documents the load stored that replaced a stored document with the same id.
    pub replaced: u64,
    /// Stored documents removed because a loaded document took their external key.
    pub removed: u64,
    /// Adds superseded within the load: a later add of the same id or external key won.
    pub superseded: u64,
    /// Texts skipped because they had no features ([`Error::NoFeatures`](crate::Error::NoFeatures)).
    pub skipped: u64,
    /// Input bytes (as in [`BulkProgress::bytes`]).
    pub bytes: u64,
    /// Bytes of SST files written and ingested.
    pub sst_bytes: u64,
    /// Sorted runs the load was split into (each ingested on its own).
    pub runs: u32,
    /// Wall time from the loader's creation to the end of `finish`.
    pub elapsed: Duration,
}

impl fmt::Display for BulkSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} added, {} replaced, {} removed, {} superseded, {} skipped; {} input bytes, {} SST bytes in {} run(s), {:.2?}",
            self.added,
            self.replaced,
            self.removed,
            self.superseded,
            self.skipped,
            self.bytes,
            self.sst_bytes,
            self.runs,
            self.elapsed
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phase_names_are_distinct_lowercase_words() {
        let phases = [
            BulkPhase::Adding,
            BulkPhase::Writing,
            BulkPhase::Ingesting,
            BulkPhase::Merging,
            BulkPhase::Done,
        ];
        let names: std::collections::BTreeSet<_> = phases.iter().map(|p| p.name()).collect();
        assert_eq!(names.len(), phases.len());
        assert!(names
            .iter()
            .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_lowercase())));
        assert_eq!(BulkPhase::Merging.to_string(), "merging");
    }
}
