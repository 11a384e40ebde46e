//! `meta/bulk_load`: the record of a bulk load whose runs are spooled, from its first spooled
//! run until its merge is ingested: which spool files each run wrote, where the merge writes,
//! and which block families it has ingested. How the record makes a load crash-safe is in
//! `src/postings/spool/mod.rs`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Database;
use crate::codec;
use crate::error::Result;
use crate::fingerprint::BLOCKS;
use crate::keys::{self, META_FAMILY};

/// One spooled run: its segment and its spool files per block family, each with the block
/// values `lo..hi` it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SpooledRun {
    pub(crate) segment: u32,
    pub(crate) files: Vec<Vec<SpoolFile>>,
}

/// A spool file and the block values `lo..hi` it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SpoolFile {
    pub(crate) lo: u32,
    pub(crate) hi: u32,
    pub(crate) path: String,
}

/// `meta/bulk_load`: a load whose runs are spooled, present from its first spooled run until
/// its merge is ingested (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LoadRecord {
    /// Where the merge writes its SST files.
    pub(crate) dir: String,
    /// Whether merged chunks may be final: the block families held no chunk when the load
    /// began, and no other writer has written since (the loader holds the write lock).
    pub(crate) final_chunks: bool,
    pub(crate) runs: Vec<SpooledRun>,
    /// The merge's segment, once it began.
    pub(crate) merge_segment: Option<u32>,
    /// The families whose merge is ingested.
    pub(crate) done: Vec<bool>,
}

impl LoadRecord {
    pub(crate) fn new(dir: &Path, final_chunks: bool) -> LoadRecord {
        LoadRecord {
            dir: dir.to_string_lossy().into_owned(),
            final_chunks,
            runs: Vec::new(),
            merge_segment: None,
            done: vec![false; BLOCKS],
        }
    }

    /// Writes the record, synced.
    pub(crate) fn save(&self, db: &Database) -> Result<()> {
        db.put_synced(
            META_FAMILY,
            keys::META_BULK_LOAD,
            &codec::encode_meta(self),
            "write the bulk load record",
        )
    }

    /// The record a load left in the database, if any.
    pub(crate) fn load(db: &Database) -> Result<Option<LoadRecord>> {
        match db.get(META_FAMILY, keys::META_BULK_LOAD)? {
            None => Ok(None),
            Some(bytes) => Ok(Some(codec::decode_meta(
                &bytes,
                keys::META_BULK_LOAD,
                "bulk load record",
            )?)),
        }
    }

    /// Deletes the record, synced.
    pub(crate) fn delete(db: &Database) -> Result<()> {
        db.delete_synced(
            META_FAMILY,
            keys::META_BULK_LOAD,
            "delete the bulk load record",
        )
    }

    /// Every spool file of the record.
    pub(crate) fn all_files(&self) -> impl Iterator<Item = &SpoolFile> {
        self.runs.iter().flat_map(|r| r.files.iter().flatten())
    }
}
