//! [`BulkLoader`]: the store's bulk load. It gathers documents in a run (`src/bulk/`) up to
//! a memory budget; then it has the store plan the run (the upsert planner, as for
//! [`Store::insert_batch`]), writes the run's files with `bulk::sst` (through the one apply),
//! and ingests them through [`Ingestion`], which holds the write lock and the journal. A load
//! of several runs spools their block entries and merges them at [`BulkLoader::finish`].
//!
//! `crash_tests.rs`: a load stopped at each crash point (`src/failpoint.rs`), then reopened.

#[cfg(test)]
mod crash_tests;

use rayon::prelude::*;

use super::{Ingestion, Store};
use crate::bulk::progress::Progress;
use crate::bulk::runs::RunBuffer;
use crate::bulk::sst::{self, Chunks};
use crate::bulk::{warm, BulkOptions, BulkPhase, BulkSummary};
use crate::codec::Document;
use crate::error::{Error, Result};
use crate::failpoint::{self, Point};
use crate::fingerprint::Fingerprint;
use crate::memory;
use crate::sketch::Sketch;
use crate::storage::files;
use crate::storage::{Destination, Journal, LoadRecord, SpoolFile, SpooledRun, DEFAULT_TEMP_DIR};
use crate::upsert::{check_key, Entry};

/// Input bytes counted for an add of a precomputed fingerprint.
const FINGERPRINT_BYTES: u64 = 8;
/// Bytes of SST files per document of a run, about, for deciding before writing whether its
/// files will fit in memory (46 at 100M documents without keys; more with keys, which are
/// neither kept nor read back).
const ESTIMATED_BYTES_PER_DOCUMENT: u64 = 48;

/// A text waiting to be fingerprinted.
struct PendingText {
    id: u64,
    key: Option<String>,
    text: String,
}

/// Loads many documents into a [`Store`] fast: SST files written and ingested, not one write
/// batch per document. Made by [`Store::bulk_loader`] or [`Store::bulk_loader_with`].
///
/// Documents are gathered in memory up to the budget ([`BulkOptions::memory_budget`]); then
/// that *run* is sorted, written as SST files and ingested while the store's write lock is
/// held (other writes wait; queries go on). A load larger than the budget is several runs:
/// each run's documents and keys are ingested when it fills, its block-family entries are
/// spooled to files, and [`BulkLoader::finish`] merges the spools family by family, so every
/// group ends as one packed segment whatever the size of the load. Such a load holds the
/// write lock from its first run to the end of `finish`: writes from other threads wait, and
/// a write from the loading thread meanwhile fails with [`Error::BulkLoadInProgress`] instead of
/// waiting for itself. Adding is single-threaded (`&mut self`); texts are fingerprinted in
/// parallel on all cores in chunks, and sorting and writing use all cores too.
///
/// **Upserts.** Loading into a store that holds documents replaces, never doubles: a loaded
/// id that is stored replaces the stored document, and a loaded external key that another
/// stored document carries removes that document. Within a load the last add of an id wins,
/// and so does the last add of an external key. The result is that of
/// [`Store::insert_batch`] of the same adds in the same order: both are planned by the same
/// upsert planner.
///
/// **Crashes.** Each run is ingested under a journal: whenever the process dies, the store
/// opens consistent ([`Store::verify`] clean) with every run that began ingesting (a merge
/// that had begun is finished when the store is opened), and every document of a returned
/// `finish` is there. Documents still in memory are lost; run the same load again to
/// complete it (upserts make that idempotent). A loader dropped without `finish` discards
/// what it holds in memory.
///
/// ```
/// use simhash_store::{BulkOptions, Fingerprint, Store};
///
/// let dir = tempfile::tempdir()?;
/// let store = Store::open(dir.path())?;
/// let mut loader = store.bulk_loader_with(BulkOptions::new().memory_budget(/* 64 MiB */ 64 << 20))?;
/// loader.add(1, Fingerprint(0x0123_4567_89ab_cdef))?;
/// loader.add_with_key(2, Fingerprint(0x0123_4567_89ab_cdee), "https://example.com/b")?;
/// loader.add_text(3, Some("https://example.com/c"), "Bulk loading writes sorted SST files and ingests them.")?;
/// loader.add_text(4, None, "  ,.  ")?; // no features: skipped
/// let summary = loader.finish()?;
/// assert_eq!((summary.added, summary.skipped), (3, 1));
/// assert_eq!(store.len(), 3);
/// assert_eq!(store.query(Fingerprint(0x0123_4567_89ab_cdef), 1)?.len(), 2);
/// assert!(store.verify()?.is_clean());
/// # Ok::<_, simhash_store::Error>(())
/// ```
pub struct BulkLoader<'a> {
    store: &'a Store,
    options: BulkOptions,
    buf: RunBuffer,
    texts: Vec<PendingText>,
    text_bytes: usize,
    /// The run files' directory; `None` once a failed ingestion handed it to recovery.
    dir: Option<tempfile::TempDir>,
    progress: Progress,
    summary: BulkSummary,
    /// The spooled runs, from the first run of a load larger than one run until the merge.
    record: Option<LoadRecord>,
    /// The write lock, held from the first spooled run to the end of the merge: no other
    /// write changes the block families while runs wait in spool files.
    held: Option<Ingestion<'a>>,
}

impl std::fmt::Debug for BulkLoader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BulkLoader")
            .field("store", &self.store.path())
            .field("options", &self.options)
            .field("buffered", &self.buf.len())
            .field("runs", &self.summary.runs)
            .finish()
    }
}

impl Store {
    /// A [`BulkLoader`] with default options (a memory budget of a third of the memory available, temporary files inside the
    /// store directory).
    ///
    /// # Errors
    /// As [`Store::bulk_loader_with`].
    pub fn bulk_loader(&self) -> Result<BulkLoader<'_>> {
        self.bulk_loader_with(BulkOptions::default())
    }

    /// A [`BulkLoader`] with `options`.
    ///
    /// # Errors
    /// [`Error::ReadOnly`]; [`Error::LegacyFormat`] for a store of a format before 8
    /// (convert it with `simhash-store upgrade`); [`Error::Io`] if the temporary directory
    /// cannot be created; [`Error::InvalidArgument`] if its path is not UTF-8.
    pub fn bulk_loader_with(&self, options: BulkOptions) -> Result<BulkLoader<'_>> {
        // Also refuses a store of an older format (`Error::LegacyFormat`, naming
        // `simhash-store upgrade`): the bulk loader writes format 9 only.
        self.check_writable()?;
        let root = options
            .temp_dir
            .clone()
            .unwrap_or_else(|| self.path().join(DEFAULT_TEMP_DIR));
        std::fs::create_dir_all(&root)
            .map_err(|e| Error::io("creating the directory", &root, e))?;
        let dir = tempfile::Builder::new()
            .prefix("load-")
            .tempdir_in(&root)
            .map_err(|e| Error::io("creating a temporary directory in", &root, e))?;
        if dir.path().to_str().is_none() {
            return Err(Error::InvalidArgument(format!(
                "the bulk loader's temporary directory {} is not valid UTF-8: choose another with BulkOptions::temp_dir",
                dir.path().display()
            )));
        }
        let progress = Progress::new(options.progress.clone());
        let buf = RunBuffer::with_budget(options.memory_budget);
        Ok(BulkLoader {
            store: self,
            options,
            buf,
            texts: Vec::new(),
            text_bytes: 0,
            dir: Some(dir),
            progress,
            summary: BulkSummary::default(),
            record: None,
            held: None,
        })
    }
}

impl BulkLoader<'_> {
    /// Adds document `id` with fingerprint `fp` and no external key (upsert).
    ///
    /// # Errors
    /// Errors of writing and ingesting a run, when this add fills the memory budget.
    pub fn add(&mut self, id: u64, fp: Fingerprint) -> Result<()> {
        self.progress.add(FINGERPRINT_BYTES);
        self.fingerprint_texts()?;
        self.push(id, fp, None, None, None)
    }

    /// Adds documents `ids[i]` with fingerprints `fingerprints[i]` and no external key: the
    /// same upserts, in the same order, as [`BulkLoader::add`] of each, with the documents
    /// copied into the run on all cores (arrays of fingerprints computed elsewhere, such as
    /// Python's `bulk_load_fingerprints`).
    ///
    /// ```
    /// use simhash_store::Store;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let store = Store::open(dir.path())?;
    /// let mut loader = store.bulk_loader()?;
    /// loader.add_fingerprints(&[1, 2, 3], &[0xdead_beef, 0xdead_beee, 0x1234])?;
    /// loader.finish()?;
    /// assert_eq!(store.len(), 3);
    /// assert_eq!(store.query(simhash_store::Fingerprint(0xdead_beef), 1)?.len(), 2);
    /// # Ok::<_, simhash_store::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the two slices differ in length (nothing is added); as
    /// [`BulkLoader::add`].
    pub fn add_fingerprints(&mut self, ids: &[u64], fingerprints: &[u64]) -> Result<()> {
        if ids.len() != fingerprints.len() {
            return Err(Error::InvalidArgument(format!(
                "add_fingerprints: {} ids but {} fingerprints; give one fingerprint per id",
                ids.len(),
                fingerprints.len()
            )));
        }
        self.fingerprint_texts()?;
        let mut at = 0;
        while at < ids.len() {
            // As many as the run has room for: a run ends where one add at a time ends it.
            let room = self
                .options
                .memory_budget
                .saturating_sub(self.buf.bytes())
                .div_ceil(self.buf.bytes_per_plain_add())
                .clamp(
                    1,
                    (u32::MAX as usize - 1)
                        .saturating_sub(self.buf.len())
                        .max(1),
                );
            let end = ids.len().min(at + room);
            self.buf
                .extend_fingerprints(&ids[at..end], &fingerprints[at..end]);
            let added = (end - at) as u64;
            self.progress.add_many(added, added * FINGERPRINT_BYTES);
            self.ingest_if_full()?;
            at = end;
        }
        Ok(())
    }

    /// Adds document `id` with fingerprint `fp` and external key `key` (a URL, a path):
    /// upsert by id and by key.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty key or one over 4096 bytes; as
    /// [`BulkLoader::add`].
    pub fn add_with_key(&mut self, id: u64, fp: Fingerprint, key: &str) -> Result<()> {
        check_key(id, key)?;
        self.progress.add(FINGERPRINT_BYTES + key.len() as u64);
        self.fingerprint_texts()?;
        self.push(id, fp, Some(key), None, None)
    }

    /// Adds an [`Entry`]: id, fingerprint, optional external key, text length and sketch
    /// (upsert by id and by key). The general form of [`BulkLoader::add`] and
    /// [`BulkLoader::add_with_key`], for callers that fingerprinted the text themselves.
    ///
    /// # Errors
    /// As [`BulkLoader::add_with_key`]; [`Error::InvalidArgument`] for a sketch given to a
    /// store that keeps none.
    pub fn add_entry(&mut self, entry: &Entry) -> Result<()> {
        self.store.check_sketch(entry.id, entry.sketch.as_ref())?;
        let key = entry.key.as_deref();
        if let Some(key) = key {
            check_key(entry.id, key)?;
        }
        self.progress
            .add(FINGERPRINT_BYTES + key.map_or(0, |k| k.len() as u64));
        self.fingerprint_texts()?;
        self.push(
            entry.id,
            entry.fingerprint,
            key,
            entry.text_len,
            entry.sketch.as_ref(),
        )
    }

    /// Adds document `id` from its text, fingerprinted with [`Store::simhasher`], with an
    /// optional external key (and its sketch, in a store that keeps sketches). Texts are gathered into chunks
    /// ([`BulkOptions::text_chunk_size`]) and fingerprinted in parallel on all cores. A text
    /// with no features is skipped and counted in [`BulkSummary::skipped`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a bad key; fingerprinting errors other than
    /// [`Error::NoFeatures`] of any text of the chunk this add completes; as
    /// [`BulkLoader::add`].
    pub fn add_text(&mut self, id: u64, key: Option<&str>, text: &str) -> Result<()> {
        if let Some(key) = key {
            check_key(id, key)?;
        }
        self.progress
            .add((text.len() + key.map_or(0, str::len)) as u64);
        self.text_bytes += text.len() + 64;
        self.texts.push(PendingText {
            id,
            key: key.map(str::to_owned),
            text: text.to_owned(),
        });
        if self.text_bytes >= self.options.text_chunk_bytes {
            self.fingerprint_texts()?;
        }
        Ok(())
    }

    /// Fingerprints the pending texts, if any, and adds them in order. Every add calls it;
    /// only the check is inlined there.
    #[inline]
    fn fingerprint_texts(&mut self) -> Result<()> {
        if self.texts.is_empty() {
            return Ok(());
        }
        self.fingerprint_pending_texts()
    }

    /// Fingerprints the pending texts in parallel and adds them in order.
    #[inline(never)]
    fn fingerprint_pending_texts(&mut self) -> Result<()> {
        let texts = std::mem::take(&mut self.texts);
        self.text_bytes = 0;
        let hasher = self.store.simhasher();
        let fps: Vec<Result<(Fingerprint, Option<Sketch>)>> = texts
            .par_iter()
            .map(|t| hasher.fingerprint_and_sketch(&t.text))
            .collect();
        let mut first_error = None;
        for (t, fp) in texts.iter().zip(fps) {
            match fp {
                Ok((fp, sketch)) => self.push(
                    t.id,
                    fp,
                    t.key.as_deref(),
                    Some(t.text.len() as u64),
                    sketch.as_ref(),
                )?,
                Err(Error::NoFeatures) => self.summary.skipped += 1,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Adds a stored document as it is: fingerprint, key, text length, sketch and its
    /// `added` time, which is kept instead of the load's (the upgrade of a store,
    /// `src/store/upgrade.rs`).
    pub(crate) fn add_document(&mut self, id: u64, doc: &Document) -> Result<()> {
        self.store.check_sketch(id, doc.sketch.as_ref())?;
        if let Some(key) = &doc.key {
            check_key(id, key)?;
        }
        self.progress
            .add(FINGERPRINT_BYTES + doc.key.as_ref().map_or(0, |k| k.len() as u64));
        self.fingerprint_texts()?;
        self.buf.push_document(id, &doc.view());
        self.ingest_if_full()
    }

    /// Adds a fingerprinted document to the run. The public adds fingerprint the pending
    /// texts first: adds keep their order, which decides which add of an id or a key wins.
    fn push(
        &mut self,
        id: u64,
        fp: Fingerprint,
        key: Option<&str>,
        text_len: Option<u64>,
        sketch: Option<&Sketch>,
    ) -> Result<()> {
        self.buf.push_sketched(id, fp, key, text_len, sketch);
        self.ingest_if_full()
    }

    /// Ingests the run once it fills the memory budget.
    fn ingest_if_full(&mut self) -> Result<()> {
        if self.buf.bytes() >= self.options.memory_budget || self.buf.len() >= u32::MAX as usize - 1
        {
            self.ingest_run(false)?;
        }
        Ok(())
    }

    /// Sorts, writes and ingests the buffered run under the write lock. A run that is not
    /// `last`, and every run after one, is spooled (`src/postings/spool/`).
    fn ingest_run(&mut self, last: bool) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        // Put back, emptied, once the run is written: the next run reuses its memory.
        let mut buf = std::mem::replace(&mut self.buf, RunBuffer::new());
        self.progress.report(BulkPhase::Writing);
        let store = self.store;
        let dir = match &self.dir {
            Some(dir) => dir.path().to_path_buf(),
            None => return Err(Error::LoaderFailed),
        };
        let spooled = !last || self.record.is_some();
        if spooled && self.held.is_none() {
            self.held = Some(store.ingest_load()?);
        }
        let per_run;
        let ingestion = match &self.held {
            Some(held) => held,
            None => {
                per_run = store.ingest_run()?;
                &per_run
            }
        };
        ingestion.flush_unlogged()?;
        if spooled && self.record.is_none() {
            self.record = Some(LoadRecord::new(&dir, ingestion.block_families_empty()?));
        }
        let before = ingestion.doc_count();
        let net = ingestion.plan(&buf)?;
        // A run whose ids all follow the stored ones (a load in id order) does not overlap
        // `docs`: its files go to the bottom level, as a run into an empty store.
        let first_id = net
            .survivors
            .first()
            .and_then(|&s| buf.recs.get(s as usize))
            .map(|r| r.id);
        let dest =
            if before == 0 || (net.doc_deletes.is_empty() && first_id > ingestion.last_id()?) {
                Destination::Bottom
            } else {
                Destination::Upper
            };
        let prefix = format!("{:05}", self.summary.runs);
        // Changed only under the write lock, which this run holds until it is committed.
        let segment = ingestion.next_segment()?;
        let chunks = if spooled {
            Chunks::Spool
        } else {
            Chunks::Ingest {
                final_chunks: ingestion.block_families_empty()?,
                split_above: ingestion.split_above()?,
            }
        };
        // The files of a run ingested directly (not spooled) are read back (`warm`) if they
        // fit in memory: their pages are kept as they are written, so only the tails are read.
        let keep_pages =
            !spooled && memory::fits(net.survivors.len() as u64 * ESTIMATED_BYTES_PER_DOCUMENT);
        // `docs` is kept only where queries read it: a store without keys answers without it,
        // and its pages would take fresh memory for nothing (a fifth of what a load writes).
        let kept = sst::Kept {
            blocks: keep_pages,
            docs: keep_pages && ingestion.may_have_keys(),
        };
        let files = sst::RunFiles {
            dir: &dir,
            prefix: &prefix,
            dest,
            segment,
            chunks,
            kept,
            now: ingestion.now_micros(),
        };
        let written = sst::write_run(&buf, &net, files)?;
        if spooled {
            buf.clear();
            self.buf = buf;
        } else {
            // Freed before the files are read back: the page cache can take pages this
            // process has just used, which cost less to touch than pages the system has not
            // used for a while (see `read_into_page_cache`).
            drop(buf);
        }
        files::sync_dir(&dir)?;
        if let Some(record) = &mut self.record {
            record.runs.push(SpooledRun {
                segment,
                files: written
                    .spools
                    .iter()
                    .map(|files| {
                        files
                            .iter()
                            .map(|(path, lo, hi)| SpoolFile {
                                lo: *lo,
                                hi: *hi,
                                path: path.to_string_lossy().into_owned(),
                            })
                            .collect()
                    })
                    .collect(),
            });
            // Before the journal: the spool files count once the run's journal raises
            // `next_segment` above `segment`.
            ingestion.save_record(record)?;
        }
        let journal = Journal {
            doc_count: net.count_after(before),
            files: written
                .files
                .iter()
                .map(|(family, path)| (family.to_string(), path.to_string_lossy().into_owned()))
                .collect(),
        };
        self.progress.report(BulkPhase::Ingesting);
        if !spooled {
            warm(
                written
                    .files
                    .iter()
                    .filter(|(family, _)| {
                        *family != crate::keys::KEYS_FAMILY
                            && (kept.docs || *family != crate::keys::DOCS_FAMILY)
                    })
                    .map(|(_, path)| path.as_path()),
            );
        }
        let applied = ingestion.apply(&journal, segment + 1);
        if let Err(e) = applied {
            self.hand_to_recovery();
            return Err(e);
        }

        self.summary.added += net.added;
        self.summary.replaced += net.replaced;
        self.summary.removed += net.removed;
        self.summary.superseded += net.superseded;
        self.summary.sst_bytes += written.bytes;
        self.summary.runs += 1;
        self.progress.runs = self.summary.runs;
        Ok(())
    }

    /// After a failed ingestion or merge: the journal or the load record names files in the
    /// directory, so keep them for `Store::open` to finish the load instead of deleting them
    /// with the loader.
    fn hand_to_recovery(&mut self) {
        if let Some(dir) = self.dir.take() {
            let _ = dir.keep();
        }
        self.record = None;
        self.held = None;
    }

    /// Merges the spooled runs, if any, into one segment per group and ingests it. A load
    /// into a store that held chunks is then folded, so every group it touched is compact.
    fn merge(&mut self) -> Result<()> {
        let Some(record) = self.record.clone() else {
            return Ok(());
        };
        self.progress.report(BulkPhase::Merging);
        // The run buffer is not needed again: its memory goes to the page cache, which the
        // merge fills with the pages it writes.
        self.buf = RunBuffer::new();
        let final_chunks = record.final_chunks;
        let merged = failpoint::hit(Point::BeforeMerge).and_then(|()| match &self.held {
            Some(held) => held.merge(record, |i| failpoint::hit(Point::AfterMergeFamily(i))),
            None => Err(Error::LoaderFailed),
        });
        match merged {
            Ok(bytes) => self.summary.sst_bytes += bytes,
            Err(e) => {
                self.hand_to_recovery();
                return Err(e);
            }
        }
        self.record = None;
        self.held = None;
        if !final_chunks {
            self.store.fold_groups()?;
        }
        Ok(())
    }

    /// Ingests what is left and returns what the load did. Every document added is in the
    /// store when it returns (durably: SST files and the count are synced).
    ///
    /// A load of more than one run ends with the merge ([`BulkPhase::Merging`]): each block
    /// family's runs are merged into one segment per group and ingested. From the first run
    /// of such a load to the end of the merge, the loader holds the store's write lock (other
    /// writers wait; readers do not, and see the loaded documents in `get` before they see
    /// them in queries). A load into a store whose block families held chunks then folds the
    /// groups (as [`Store::compact`] does). The merged block families stay in the OS page
    /// cache as far as three quarters of the memory available hold them (pages the kernel
    /// reclaims as it needs, as any file's), so the first queries find about as much of them
    /// cached as later ones.
    ///
    /// # Errors
    /// Fingerprinting errors of the last chunk of texts; RocksDB and I/O errors of writing,
    /// ingesting or merging. If ingestion or the merge fails, the journal and the load
    /// record stay and the next [`Store::open`] completes the load: reopen the store before
    /// writing to it again.
    pub fn finish(mut self) -> Result<BulkSummary> {
        self.fingerprint_texts()?;
        self.ingest_run(true)?;
        self.merge()?;
        self.store.choose_reads();
        self.progress.report(BulkPhase::Done);
        let mut summary = std::mem::take(&mut self.summary);
        summary.bytes = self.progress.bytes;
        summary.elapsed = self.progress.elapsed();
        Ok(summary)
    }
}

impl Drop for BulkLoader<'_> {
    /// A loader dropped without `finish` after spooled runs still merges them: their
    /// documents are in the store and need their postings. If that fails, the next open does.
    fn drop(&mut self) {
        if self.record.is_some() && self.merge().is_err() {
            self.hand_to_recovery();
        }
    }
}
