//! [`Store::upgrade`]: every document of a store of any format this build reads copied into a
//! new store of [`FORMAT_VERSION`](super::FORMAT_VERSION) through the bulk loader, then verified; its options,
//! progress and summary. Public as `simhash_store::upgrade` (`src/upgrade.rs`).

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Store;
use crate::bulk::{BulkOptions, BulkPhase};
use crate::error::{Error, Result};

/// Documents copied between two looks at the clock.
const CHECK_EVERY: u64 = 4096;
/// Least time between two progress reports of the same phase.
const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// A progress callback of [`Store::upgrade`].
type ProgressFn = Arc<dyn Fn(&UpgradeProgress) + Send + Sync>;

/// Options of [`Store::upgrade`].
///
/// ```
/// use simhash_store::upgrade::UpgradeOptions;
/// let opts = UpgradeOptions::new()
///     .memory_budget(/* 256 MiB */ 256 << 20)
///     .progress(|p| eprintln!("{:?}: {} of {} documents", p.phase, p.documents, p.total));
/// # let _ = opts;
/// ```
#[derive(Clone, Default)]
pub struct UpgradeOptions {
    memory_budget: Option<usize>,
    progress: Option<ProgressFn>,
}

impl fmt::Debug for UpgradeOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UpgradeOptions")
            .field("memory_budget", &self.memory_budget)
            .field(
                "progress",
                &self.progress.as_ref().map(|_| "Fn(&UpgradeProgress)"),
            )
            .finish()
    }
}

impl UpgradeOptions {
    /// Default options; see each setter for its default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes of documents gathered in memory before they are written as one sorted run
    /// ([`BulkOptions::memory_budget`]). A store that fits in one run (about 18 million
    /// documents without keys per GiB) is written straight to the bottom level.
    /// Default: the bulk loader's ([`BulkOptions::memory_budget`](crate::BulkOptions::memory_budget)).
    pub fn memory_budget(mut self, bytes: usize) -> Self {
        self.memory_budget = Some(bytes);
        self
    }

    /// A callback for progress reports, e.g. to draw a progress bar: called from the thread
    /// that runs the upgrade, a few times a second and at every change of phase.
    /// Default: none.
    pub fn progress(mut self, f: impl Fn(&UpgradeProgress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }
}

/// What an upgrade is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpgradePhase {
    /// Reading the old store's documents and handing them to the bulk loader.
    Copying,
    /// Sorting a run of documents and writing its SST files.
    Writing,
    /// Ingesting a run's SST files into the new store.
    Ingesting,
    /// Checking the new store ([`Store::verify`]).
    Verifying,
    /// The new store is complete and verified.
    Done,
}

/// A progress report of [`Store::upgrade`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UpgradeProgress {
    /// What the upgrade is doing.
    pub phase: UpgradePhase,
    /// Documents copied so far.
    pub documents: u64,
    /// Documents in the old store.
    pub total: u64,
    /// Time since the upgrade started.
    pub elapsed: Duration,
}

/// What [`Store::upgrade`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UpgradeSummary {
    /// Documents copied: all of the old store's.
    pub documents: u64,
    /// Of those, documents with an external key.
    pub keys: u64,
    /// Of those, documents with a sketch.
    pub sketches: u64,
    /// The old store's format version.
    pub from_format: u32,
    /// The new store's format version: [`FORMAT_VERSION`](super::FORMAT_VERSION).
    pub to_format: u32,
    /// Bytes of SST files written.
    pub sst_bytes: u64,
    /// Sorted runs the documents were written in.
    pub runs: u32,
    /// Wall time, verification included.
    pub elapsed: Duration,
}

impl fmt::Display for UpgradeSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} documents ({} with keys, {} with sketches) from format {} to format {}, {} SST bytes in {} run(s), verified, {:.2?}",
            self.documents,
            self.keys,
            self.sketches,
            self.from_format,
            self.to_format,
            self.sst_bytes,
            self.runs,
            self.elapsed
        )
    }
}

/// Counts copied documents and reports them to the callback.
struct Reporter {
    callback: Option<ProgressFn>,
    start: Instant,
    last: Instant,
    total: u64,
}

impl Reporter {
    fn report(&mut self, phase: UpgradePhase, documents: u64) {
        if let Some(callback) = &self.callback {
            self.last = Instant::now();
            callback(&UpgradeProgress {
                phase,
                documents,
                total: self.total,
                elapsed: self.start.elapsed(),
            });
        }
    }

    /// Reports now and then while copying.
    fn copied(&mut self, documents: u64) {
        if self.callback.is_some()
            && documents.is_multiple_of(CHECK_EVERY)
            && self.last.elapsed() >= MIN_INTERVAL
        {
            self.report(UpgradePhase::Copying, documents);
        }
    }
}

impl Store {
    /// Copies the store at `src`, of any format this build reads, into a new store at `dst`
    /// of the newest format ([`FORMAT_VERSION`](super::FORMAT_VERSION)), then verifies the new store.
    ///
    /// The new store records exactly the old one's fingerprint settings and holds every
    /// document as it was: id, fingerprint, external key, text length, sketch and `added`
    /// time ([`Document`](crate::Document)). Documents are read from one snapshot of `src`,
    /// which is opened for writing, so no other process writes to it meanwhile (an
    /// interrupted bulk load in it is completed first); its records are left as they are, so
    /// the release that made it can still open it. They are written through the bulk loader
    /// (sorted SST files, [`Store::bulk_loader`]): the time is about that of
    /// [`Store::verify`] plus a bulk load of the same documents, and the new store is
    /// compact. This build opens stores of older formats read-only: writes to them fail with
    /// [`Error::LegacyFormat`](crate::Error::LegacyFormat) until they are upgraded.
    ///
    /// A store already of [`FORMAT_VERSION`](super::FORMAT_VERSION) is copied all the same ([`UpgradeSummary`]'s
    /// `from_format` equals `to_format`): a compact copy.
    ///
    /// `dst` must not exist or be an empty directory, and must not lie inside `src`. If the
    /// upgrade fails, what it wrote under `dst` is removed (and `dst` itself, if it made it);
    /// `src` is unchanged. A process killed during it leaves `src` whole and `dst`
    /// incomplete: remove `dst` and run it again.
    ///
    /// ```
    /// use simhash_store::Store;
    /// use simhash_store::upgrade::{UpgradeOptions, FORMAT_VERSION};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    /// {
    ///     let store = Store::open(&old)?;
    ///     store.insert_text(1, Some("https://example.com/a"), "An old store's page about harbours and ferries.")?;
    /// }
    /// let summary = Store::upgrade(&old, &new, &UpgradeOptions::new())?;
    /// assert_eq!((summary.documents, summary.to_format), (1, FORMAT_VERSION));
    ///
    /// let store = Store::open(&new)?;
    /// assert_eq!(store.format_version(), FORMAT_VERSION);
    /// assert_eq!(store.id_for_key("https://example.com/a")?, Some(1));
    /// assert_eq!(store.document(1)?, Store::open(&old)?.document(1)?);
    /// # Ok::<_, simhash_store::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::NotAStore`] if `src` holds no store; the errors of [`Store::open`] on `src`
    /// (e.g. [`Error::Locked`] while another process writes to it); [`Error::UnusableDestination`]
    /// if `dst` is not empty or lies inside `src`; [`Error::Corruption`] if the copy would
    /// lose a document (two documents of `src` claim one external key) or the new store does
    /// not verify; RocksDB and I/O errors.
    pub fn upgrade(
        src: impl AsRef<Path>,
        dst: impl AsRef<Path>,
        options: &UpgradeOptions,
    ) -> Result<UpgradeSummary> {
        let (src, dst) = (src.as_ref(), dst.as_ref());
        if !src.join("CURRENT").exists() {
            return Err(Error::NotAStore {
                path: src.to_path_buf(),
                reason: "no store there to upgrade".into(),
            });
        }
        let old = Store::builder().query_cache_size(0).open(src)?;
        let made_dst = prepare_destination(src, dst)?;
        let copied = copy_into(&old, dst, options);
        if copied.is_err() {
            // Everything under `dst` is this upgrade's: it was empty or absent.
            let _ = if made_dst {
                std::fs::remove_dir_all(dst)
            } else {
                remove_contents(dst)
            };
        }
        copied
    }
}

/// Checks that `dst` is absent or an empty directory outside `src`, and creates it; returns
/// whether it made it.
fn prepare_destination(src: &Path, dst: &Path) -> Result<bool> {
    let refuse = |why: &str| {
        Err(Error::UnusableDestination {
            path: dst.to_path_buf(),
            reason: why.to_string(),
            what: "the upgraded store",
        })
    };
    let made = match std::fs::read_dir(dst) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return refuse("is not empty");
            }
            false
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dst)
                .map_err(|e| Error::io("creating the directory", dst, e))?;
            true
        }
        Err(e) => return Err(Error::io("reading the directory", dst, e)),
    };
    let canonical = |p: &Path| {
        p.canonicalize()
            .map_err(|e| Error::io("resolving the path", p, e))
    };
    if canonical(dst)?.starts_with(canonical(src)?) {
        if made {
            let _ = std::fs::remove_dir(dst);
        }
        return refuse(&format!("lies inside the store {}", src.display()));
    }
    Ok(made)
}

/// Removes every entry of directory `dir`, keeping `dir`.
fn remove_contents(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            std::fs::remove_dir_all(&path)?;
        } else {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Copies every document of `old` into a new store at the empty directory `dst`, and
/// verifies it.
fn copy_into(old: &Store, dst: &Path, options: &UpgradeOptions) -> Result<UpgradeSummary> {
    let from_format = old.format_version();
    let mut reporter = Reporter {
        callback: options.progress.clone(),
        start: Instant::now(),
        last: Instant::now(),
        total: old.len(),
    };
    let new = Store::builder()
        .simhash_config(old.simhasher().config().clone())
        .query_cache_size(0)
        .open(dst)?;

    let mut bulk = BulkOptions::new();
    if let Some(bytes) = options.memory_budget {
        bulk = bulk.memory_budget(bytes);
    }
    if let Some(callback) = options.progress.clone() {
        let (start, total) = (reporter.start, reporter.total);
        bulk = bulk.progress(move |p| {
            let phase = match p.phase {
                BulkPhase::Writing => UpgradePhase::Writing,
                BulkPhase::Ingesting => UpgradePhase::Ingesting,
                _ => return,
            };
            callback(&UpgradeProgress {
                phase,
                documents: p.documents,
                total,
                elapsed: start.elapsed(),
            });
        });
    }
    let mut loader = new.bulk_loader_with(bulk)?;
    let (mut documents, mut with_keys, mut sketches) = (0u64, 0u64, 0u64);
    reporter.report(UpgradePhase::Copying, 0);
    // One iterator: one snapshot of `old`, in id order.
    for item in old.documents()? {
        let (id, doc) = item?;
        loader.add_document(id, &doc)?;
        documents += 1;
        with_keys += u64::from(doc.key.is_some());
        sketches += u64::from(doc.sketch.is_some());
        reporter.copied(documents);
    }
    reporter.report(UpgradePhase::Copying, documents);
    let bulk = loader.finish()?;
    if bulk.added != documents || new.len() != documents {
        return Err(Error::Corruption {
            path: old.path().to_path_buf(),
            message: format!(
                "{documents} documents read, but {} would be stored ({} superseded by a later document with the same external key): the store's `keys` family and its documents disagree, see `simhash-store verify`",
                new.len(),
                bulk.superseded
            ),
        });
    }

    reporter.report(UpgradePhase::Verifying, documents);
    let report = new.verify()?;
    if !report.is_clean() || report.documents != documents {
        return Err(Error::Corruption {
            path: dst.to_path_buf(),
            message: format!("the upgraded store does not verify: {report}"),
        });
    }
    new.flush()?;
    let to_format = new.format_version();
    reporter.report(UpgradePhase::Done, documents);
    Ok(UpgradeSummary {
        documents,
        keys: with_keys,
        sketches,
        from_format,
        to_format,
        sst_bytes: bulk.sst_bytes,
        runs: bulk.runs,
        elapsed: reporter.start.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::Fingerprint;

    #[test]
    fn a_destination_inside_the_store_is_refused_and_not_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("old");
        Store::open(&src)
            .unwrap()
            .insert(1, Fingerprint(7))
            .unwrap();
        let inside = src.join("new");
        let err = Store::upgrade(&src, &inside, &UpgradeOptions::new()).unwrap_err();
        assert!(
            matches!(&err, Error::UnusableDestination { reason, .. } if reason.starts_with("lies inside")),
            "{err}"
        );
        assert!(!inside.exists());
    }

    #[test]
    fn no_store_at_the_source_creates_none() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("missing");
        let err = Store::upgrade(&src, dir.path().join("new"), &UpgradeOptions::new());
        assert!(matches!(err, Err(Error::NotAStore { .. })), "{err:?}");
        assert!(!src.exists() && !dir.path().join("new").exists());
    }

    #[test]
    fn progress_ends_verified_and_done() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("old");
        {
            let store = Store::open(&src).unwrap();
            for id in 0..10_000u64 {
                store
                    .insert(id, Fingerprint(id.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
                    .unwrap();
            }
        }
        let phases = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = phases.clone();
        let options = UpgradeOptions::new().progress(move |p| {
            seen.lock().unwrap().push((p.phase, p.documents, p.total));
        });
        let summary = Store::upgrade(&src, dir.path().join("new"), &options).unwrap();
        assert_eq!(summary.documents, 10_000);
        let phases = phases.lock().unwrap();
        assert_eq!(phases.first(), Some(&(UpgradePhase::Copying, 0, 10_000)));
        assert_eq!(phases.last(), Some(&(UpgradePhase::Done, 10_000, 10_000)));
        assert!(phases.iter().any(|p| p.0 == UpgradePhase::Ingesting));
        assert!(phases.iter().any(|p| p.0 == UpgradePhase::Verifying));
    }
}
