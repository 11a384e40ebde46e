//! Crash-safe ingestion of SST files across column families: the journal, and how opening a
//! store finishes an ingestion that a crash interrupted.
//!
//! RocksDB ingests external files atomically per column family, not across families, so a
//! kill between two families' ingestions would leave them disagreeing. Before the first
//! ingestion of a bulk loader's run, [`begin`] writes, synced, one `meta/bulk_journal`
//! record: the run's SST files in ingestion order and the document count after the run.
//! [`ingest`] ingests them; after the last ingestion [`commit`] writes the new
//! `meta/doc_count` and deletes the record in one synced batch.
//!
//! [`recover`], called when a writable store opens, rolls a run whose record is still there
//! forward: it ingests, in order, the listed files that still exist (ingestion moves a file
//! into the store, so an ingested file is gone; one ingested but not yet unlinked when the
//! process died is ingested again, which is harmless: same keys, same values, and no other
//! write came in between), then commits the count. A kill during recovery leaves the record,
//! and the next open finishes the job.

use std::path::{Path, PathBuf};

use rocksdb::WriteBatch;
use serde::{Deserialize, Serialize};

use super::Database;
use crate::codec;
use crate::error::{Error, Result};
use crate::failpoint;
use crate::keys::{self, ALL_FAMILIES, META_FAMILY};

/// The directory inside a store where loaders put their temporary files by default; removed
/// when a writable store opens.
pub(crate) const DEFAULT_TEMP_DIR: &str = "bulk-tmp";

/// A run being ingested.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Journal {
    /// The document count once the run is in.
    pub(crate) doc_count: u64,
    /// (column family, SST file path), in ingestion order.
    pub(crate) files: Vec<(String, String)>,
}

/// Records `journal`, synced, before any of its files is ingested, and `next_segment`
/// (the run's chunks are in the segment before it). The caller holds the store's write lock
/// until [`commit`].
pub(crate) fn begin(db: &Database, journal: &Journal, next_segment: u32) -> Result<()> {
    let meta = db.family(META_FAMILY)?;
    let mut batch = WriteBatch::default();
    batch.put_cf(meta, keys::META_BULK_JOURNAL, codec::encode_meta(journal));
    batch.put_cf(
        meta,
        keys::META_NEXT_SEGMENT,
        codec::encode_u32(next_segment),
    );
    db.write_synced(batch, "write the bulk load journal")
}

/// Ingests the journal's files that still exist, family by family, in order. After an error
/// the journal stays, and so must the files: the next open ingests them. A test's failpoint
/// ([`failpoint::before_ingesting`]) can stop it between families, as a crash would.
pub(crate) fn ingest(db: &Database, journal: &Journal) -> Result<()> {
    let mut done = 0u32;
    let mut i = 0;
    while i < journal.files.len() {
        let family_name = &journal.files[i].0;
        let family = ALL_FAMILIES
            .iter()
            .copied()
            .find(|f| f == family_name)
            .ok_or_else(|| Error::NotAStore {
                path: db.path().to_path_buf(),
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
        failpoint::before_ingesting(done)?;
        db.ingest(family, &files)?;
        done += 1;
    }
    failpoint::ingested();
    Ok(())
}

/// Writes the new count and deletes the journal in one synced batch.
pub(crate) fn commit(db: &Database, doc_count: u64) -> Result<()> {
    let meta = db.family(META_FAMILY)?;
    let mut batch = WriteBatch::default();
    batch.put_cf(meta, keys::META_DOC_COUNT, codec::encode_u64(doc_count));
    batch.delete_cf(meta, keys::META_BULK_JOURNAL);
    db.write_synced(batch, "commit a bulk load run")
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

/// Rolls a run whose journal is still there forward (see the module documentation);
/// whether there was one. For a writable store only: a read-only one's writer may be loading
/// right now.
pub(crate) fn recover(db: &Database) -> Result<bool> {
    let Some(bytes) = db.get(META_FAMILY, keys::META_BULK_JOURNAL)? else {
        return Ok(false);
    };
    let journal: Journal =
        codec::decode_meta(&bytes, keys::META_BULK_JOURNAL, "bulk load journal")?;
    ingest(db, &journal)?;
    commit(db, journal.doc_count)?;
    remove_files(&journal);
    Ok(true)
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
