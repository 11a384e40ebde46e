//! Crash-safe ingestion of SST files across column families: the journal, and how opening a
//! store finishes an ingestion that a crash interrupted.
//!
//! RocksDB ingests external files atomically per column family, not across families, so a
//! kill between two families' ingestions would leave them disagreeing. Before the first
//! ingestion of a bulk loader's run, [`Store::begin_ingestion`] writes, synced, one
//! `meta/bulk_journal` record: the run's SST files in ingestion order and the document count
//! after the run. [`Store::ingest_journal`] ingests them; after the last ingestion
//! [`Store::commit_ingestion`] writes the new `meta/doc_count` and deletes the record in one
//! synced batch.
//!
//! [`recover`], called by `Store::open` on a writable store, rolls a run whose record is still
//! there forward: it ingests, in order, the listed files that still exist (ingestion moves a
//! file into the store, so an ingested file is gone; one ingested but not yet unlinked when
//! the process died is ingested again, which is harmless: same keys, same values, and no
//! other write came in between), then commits the count. A kill during recovery leaves the
//! record, and the next open finishes the job.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use rocksdb::{IngestExternalFileOptions, WriteBatch, WriteOptions};
use serde::{Deserialize, Serialize};

use super::Store;
use crate::codec;
use crate::error::{Error, Result};
use crate::keys::{self, ALL_FAMILIES, META_FAMILY};

/// The directory inside a store where loaders put their temporary files by default; removed
/// by [`recover`].
pub(crate) const DEFAULT_TEMP_DIR: &str = "bulk-tmp";

/// A run being ingested.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Journal {
    /// The document count once the run is in.
    pub(crate) doc_count: u64,
    /// (column family, SST file path), in ingestion order.
    pub(crate) files: Vec<(String, String)>,
}

fn synced() -> WriteOptions {
    let mut opts = WriteOptions::default();
    opts.set_sync(true);
    opts
}

impl Store {
    /// Records `journal`, synced, before any of its files is ingested, and `next_segment`
    /// (the run's chunks are in the segment before it). The caller holds the write lock until
    /// [`Store::commit_ingestion`].
    pub(crate) fn begin_ingestion(&self, journal: &Journal, next_segment: u32) -> Result<()> {
        let packed = self.packed()?;
        let meta = self.cf(META_FAMILY)?;
        let mut batch = WriteBatch::default();
        batch.put_cf(meta, keys::META_BULK_JOURNAL, codec::encode_meta(journal));
        batch.put_cf(
            meta,
            keys::META_NEXT_SEGMENT,
            codec::encode_u32(next_segment),
        );
        self.db
            .write_opt(batch, &synced())
            .map_err(|e| self.rocks_err("write the bulk load journal", Some(META_FAMILY), e))?;
        packed.set_next_segment(next_segment);
        Ok(())
    }

    /// Ingests the journal's files that still exist, family by family, in order. After an
    /// error the journal stays, and so must the files: the next open ingests them. With
    /// `crash_after = Some(n)`, stops with an error after `n` families, as a crash would.
    pub(crate) fn ingest_journal(&self, journal: &Journal, crash_after: Option<u32>) -> Result<()> {
        let mut done = 0u32;
        let mut i = 0;
        while i < journal.files.len() {
            let family_name = &journal.files[i].0;
            let family = ALL_FAMILIES
                .iter()
                .copied()
                .find(|f| f == family_name)
                .ok_or_else(|| Error::NotAStore {
                    path: self.path.clone(),
                    reason: format!(
                        "the bulk load journal names an unknown column family `{family_name}`"
                    ),
                })?;
            let mut files: Vec<PathBuf> = Vec::new();
            while let Some((f, path)) = journal.files.get(i) {
                if f != family_name {
                    break;
                }
                let path = PathBuf::from(path);
                if path.exists() {
                    files.push(path);
                }
                i += 1;
            }
            if crash_after == Some(done) {
                return Err(Error::InvalidArgument(format!(
                    "simulated crash before ingesting `{family}` (a test hook): reopen the store to recover"
                )));
            }
            self.ingest_files(family, &files)?;
            done += 1;
        }
        Ok(())
    }

    /// Writes the new count and deletes the journal in one synced batch, then publishes the
    /// count.
    pub(crate) fn commit_ingestion(&self, doc_count: u64) -> Result<()> {
        let meta = self.cf(META_FAMILY)?;
        let mut batch = WriteBatch::default();
        batch.put_cf(meta, keys::META_DOC_COUNT, codec::encode_u64(doc_count));
        batch.delete_cf(meta, keys::META_BULK_JOURNAL);
        self.db
            .write_opt(batch, &synced())
            .map_err(|e| self.rocks_err("commit a bulk load run", Some(META_FAMILY), e))?;
        self.doc_count.store(doc_count, Ordering::SeqCst);
        Ok(())
    }

    /// Ingests `files` (of one family) by moving them into the store. Atomic for the family:
    /// all files or none.
    fn ingest_files(&self, family: &'static str, files: &[PathBuf]) -> Result<()> {
        if files.is_empty() {
            return Ok(());
        }
        let mut opts = IngestExternalFileOptions::default();
        opts.set_move_files(true);
        // The files may touch any block range: no cached range is trusted across the ingestion.
        if let Some(cache) = self.postings.cache() {
            cache.begin_ingest();
        }
        let ingested = self
            .db
            .ingest_external_file_cf_opts(self.cf(family)?, &opts, files.to_vec())
            .map_err(|e| self.rocks_err("ingest SST files", Some(family), e));
        if let Some(cache) = self.postings.cache() {
            cache.end_ingest();
        }
        ingested
    }
}

/// Removes the files of `journal` that are still there, and their directories if empty.
fn remove_files(journal: &Journal) {
    for (_, path) in &journal.files {
        let path = Path::new(path);
        let _ = std::fs::remove_file(path);
        if let Some(dir) = path.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Rolls an interrupted run forward and removes temporary files a killed load left in the
/// store directory. Does nothing on a read-only store (its writer may be loading right now).
pub(crate) fn recover(store: &Store) -> Result<()> {
    if store.read_only {
        return Ok(());
    }
    if let Some(bytes) = store.get_raw(META_FAMILY, keys::META_BULK_JOURNAL)? {
        let journal: Journal =
            codec::decode_meta(&bytes, keys::META_BULK_JOURNAL, "bulk load journal")?;
        store.ingest_journal(&journal, None)?;
        store.commit_ingestion(journal.doc_count)?;
        remove_files(&journal);
    }
    // A load killed after its first spooled run: merge what it spooled.
    crate::bulk::recover_load(store)?;
    let tmp = store.path.join(DEFAULT_TEMP_DIR);
    match std::fs::remove_dir_all(&tmp) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(
            "removing the bulk loader's temporary files in",
            tmp,
            e,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_round_trips() {
        let j = Journal {
            doc_count: 42,
            files: vec![("docs".into(), "/tmp/x/0000-docs-000.sst".into())],
        };
        let bytes = codec::encode_meta(&j);
        let back: Journal =
            codec::decode_meta(&bytes, keys::META_BULK_JOURNAL, "bulk load journal").unwrap();
        assert_eq!(back, j);
    }
}
