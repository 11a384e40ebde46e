//! [`Database`]: the RocksDB instance of a store, opened with the store's options, and the
//! operations the layers above need from it, each with its error naming the store.

use std::path::{Path, PathBuf};

use rocksdb::checkpoint::Checkpoint;
use rocksdb::{
    ColumnFamily, ColumnFamilyDescriptor, FlushOptions, IngestExternalFileOptions, Options,
    ReadOptions, WriteBatch, WriteOptions, DB,
};

use super::cursor::{Cursor, FamilyRef, Reading};
use super::families::column_family_options;
use super::secondary::open_secondary;
use super::View;
use crate::error::{Error, Result};
use crate::keys::{ALL_FAMILIES, BLOCK_FAMILIES, META_FAMILY};

/// The size of the MANIFEST at which the writer starts a new one (see [`Database::open`]).
const MAX_MANIFEST_BYTES: usize = 256 * 1024;

/// Who opens a store's database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// The writer.
    Write,
    /// A reader beside a possible writer: a RocksDB secondary instance, checked by a strict
    /// read-only open (`secondary.rs`).
    Read,
    /// A reader of a damaged store, for salvage: a plain read-only open that opens each table
    /// file only when a read needs it, so that the files it can read are read
    /// ([`Database::scan_over_damage`]).
    Salvage,
}

/// How to open a store's database.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpenOptions {
    /// Who opens it.
    pub(crate) access: Access,
    /// Whether reads go through memory maps (else positioned reads).
    pub(crate) mmap_reads: bool,
    /// The block cache's size in bytes.
    pub(crate) block_cache_bytes: usize,
}

/// A store's RocksDB instance: every column family of [`ALL_FAMILIES`], and the store's
/// directory for errors.
pub(crate) struct Database {
    rocks: DB,
    path: PathBuf,
    read_only: bool,
    /// A read-only store's own directory (RocksDB secondary instance), removed on drop.
    /// Declared after `rocks`, so the database closes first.
    _secondary_dir: Option<tempfile::TempDir>,
}

/// RocksDB's error for a failed `operation` (on `family`) of the store at `path`, as the
/// crate's [`Error`]: corruption and a held lock get their own variants.
pub(crate) fn error(
    operation: &'static str,
    family: Option<&'static str>,
    path: &Path,
    err: rocksdb::Error,
) -> Error {
    let message = err.to_string();
    match err.kind() {
        rocksdb::ErrorKind::Corruption => Error::Corruption {
            path: path.to_path_buf(),
            message,
        },
        // ENOSPC, as RocksDB words it (also when it repeats the error that stopped writes).
        rocksdb::ErrorKind::IOError if message.contains("No space left on device") => {
            Error::DiskFull {
                path: path.to_path_buf(),
                message,
            }
        }
        rocksdb::ErrorKind::IOError if message.contains("lock") && message.contains("LOCK") => {
            Error::Locked {
                path: path.to_path_buf(),
                message,
            }
        }
        _ => Error::RocksDb {
            operation,
            column_family: family,
            message,
        },
    }
}

fn synced() -> WriteOptions {
    let mut opts = WriteOptions::default();
    opts.set_sync(true);
    opts
}

impl Database {
    /// Opens (creating it if missing and not `read_only`) the database at `path`, whose
    /// directory the caller has checked: `exists` says whether it holds a database.
    pub(crate) fn open(path: &Path, exists: bool, options: OpenOptions) -> Result<Database> {
        let mut db_opts = Options::default();
        db_opts.create_if_missing(true);
        db_opts.create_missing_column_families(true);
        db_opts.set_max_background_jobs(2);
        // The block families' hashed memtables (`families::block_family_options`) take one
        // writer at a time; so does the store (its write lock).
        db_opts.set_allow_concurrent_memtable_write(false);
        db_opts.set_keep_log_file_num(4);
        // Start a new, compacted MANIFEST once the current one passes this (RocksDB also
        // allows up to six times the compacted size, for stores of many files). Its default
        // is 1 GiB: a writer that keeps flushing and compacting grows the MANIFEST without
        // bound, and every read-only open replays it all (4.3 s after 3,000 flushes,
        // `docs/reliability.md`).
        db_opts.set_max_manifest_file_size(MAX_MANIFEST_BYTES);
        // Flush all column families together: without a write-ahead log (Durability::NoWal)
        // this is what keeps a crash from leaving a document in `docs` but not in `block2`.
        db_opts.set_atomic_flush(true);
        db_opts.set_allow_mmap_reads(options.mmap_reads);
        if exists {
            let present = DB::list_cf(&db_opts, path)
                .map_err(|e| error("list column families", None, path, e))?;
            if !present.iter().any(|name| name == META_FAMILY) {
                super::creation::check_unfinished(&db_opts, path, &present)?;
            }
        }
        let cache = rocksdb::Cache::new_lru_cache(options.block_cache_bytes);
        let descriptors = || -> Vec<ColumnFamilyDescriptor> {
            ALL_FAMILIES
                .iter()
                .map(|name| ColumnFamilyDescriptor::new(*name, column_family_options(name, &cache)))
                .collect()
        };
        // A read-only store is a RocksDB *secondary* instance: unlike a plain read-only open
        // it is meant to run beside a writer (which may flush, compact and delete files
        // meanwhile) and sees a consistent state of every column family. Its own small
        // files (an info log) go to a temporary directory.
        let secondary_dir = if options.access == Access::Read {
            Some(tempfile::tempdir().map_err(|e| {
                Error::io("create a temporary directory for", std::env::temp_dir(), e)
            })?)
        } else {
            None
        };
        let rocks = match (&secondary_dir, options.access) {
            (Some(secondary), _) => {
                db_opts.set_max_open_files(-1);
                open_secondary(&db_opts, path, secondary.path(), descriptors)?
            }
            (None, Access::Salvage) => {
                // No table file is opened by the open (RocksDB's `open_files_async`, which the
                // crate does not wrap, opens them in the background, where a failure is only
                // logged), and few are kept open.
                db_opts.set_max_open_files(20);
                let lazy = db_opts
                    .get_options_from_string(
                        "open_files_async=true;skip_stats_update_on_db_open=true",
                    )
                    .map_err(|e| error("set the salvage options", None, path, e))?;
                DB::open_cf_descriptors_read_only(&lazy, path, descriptors(), false)
                    .map_err(|e| error("open the store", None, path, e))?
            }
            (None, _) => DB::open_cf_descriptors(&db_opts, path, descriptors())
                .map_err(|e| error("open the store", None, path, e))?,
        };
        Ok(Database {
            rocks,
            path: path.to_path_buf(),
            read_only: options.access != Access::Write,
            _secondary_dir: secondary_dir,
        })
    }

    /// The store's directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this is a read-only (secondary) instance.
    pub(crate) fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The RocksDB instance, for this layer's reads (no layer above names it).
    pub(super) fn rocks(&self) -> &DB {
        &self.rocks
    }

    /// Column family `name`, for reads ([`View::cursor`], [`View::get`]).
    #[inline]
    pub(crate) fn handle(&self, name: &'static str) -> Result<FamilyRef<'_>> {
        Ok(FamilyRef::new(self.family(name)?, name, &self.path))
    }

    /// Block family `i`, for reads.
    #[inline]
    pub(crate) fn block_handle(&self, i: usize) -> Result<FamilyRef<'_>> {
        self.handle(BLOCK_FAMILIES[i])
    }

    /// The database as it is now, read without a snapshot: by the writer under its write
    /// lock (nothing else writes meanwhile), or a read-only store.
    #[inline]
    pub(crate) fn latest(&self) -> View<'_> {
        View::Fixed(&self.rocks)
    }

    /// A cursor over `family` as it is now (see [`Database::latest`]).
    #[inline]
    pub(crate) fn cursor<'a>(&'a self, family: FamilyRef<'a>, reading: Reading) -> Cursor<'a> {
        Cursor::new(
            self.rocks.raw_iterator_cf_opt(family.handle, reading.0),
            family,
        )
    }

    /// The number of entries in the memtables of `family` (the active one and those waiting
    /// to be flushed); `None` where RocksDB does not know.
    pub(crate) fn memtable_entries(&self, family: FamilyRef<'_>) -> Result<Option<u64>> {
        let mut total = 0u64;
        for property in [
            "rocksdb.num-entries-active-mem-table",
            "rocksdb.num-entries-imm-mem-tables",
        ] {
            let entries = self
                .rocks
                .property_int_value_cf(family.handle, property)
                .map_err(|e| family.error("read a property of", e))?;
            let Some(entries) = entries else {
                return Ok(None);
            };
            total = total.saturating_add(entries);
        }
        Ok(Some(total))
    }

    /// Column family `name`.
    pub(crate) fn family(&self, name: &'static str) -> Result<&ColumnFamily> {
        self.rocks.cf_handle(name).ok_or_else(|| Error::NotAStore {
            path: self.path.clone(),
            reason: format!("column family `{name}` is missing"),
        })
    }

    /// The error for a failed RocksDB `operation` on `family` of this store.
    pub(crate) fn error(
        &self,
        operation: &'static str,
        family: Option<&'static str>,
        e: rocksdb::Error,
    ) -> Error {
        error(operation, family, &self.path, e)
    }

    /// A consistent view of the database as it is now.
    pub(crate) fn view(&self) -> View<'_> {
        if self.read_only {
            View::Fixed(&self.rocks)
        } else {
            View::Snapshot(self.rocks.snapshot())
        }
    }

    /// The value of `key` in `family`.
    pub(crate) fn get(&self, family: &'static str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.rocks
            .get_cf(self.family(family)?, key)
            .map_err(|e| self.error("read", Some(family), e))
    }

    /// Writes `batch` atomically with `options`; `operation` names it in an error.
    pub(crate) fn write(
        &self,
        batch: WriteBatch,
        options: &WriteOptions,
        operation: &'static str,
    ) -> Result<()> {
        self.rocks
            .write_opt(batch, options)
            .map_err(|e| self.error(operation, None, e))
    }

    /// Writes `batch` atomically and syncs the write-ahead log.
    pub(crate) fn write_synced(&self, batch: WriteBatch, operation: &'static str) -> Result<()> {
        self.write(batch, &synced(), operation)
    }

    /// Puts `key` = `value` in `family`, synced.
    pub(crate) fn put_synced(
        &self,
        family: &'static str,
        key: &[u8],
        value: &[u8],
        operation: &'static str,
    ) -> Result<()> {
        self.rocks
            .put_cf_opt(self.family(family)?, key, value, &synced())
            .map_err(|e| self.error(operation, Some(family), e))
    }

    /// Deletes `key` from `family`, synced.
    pub(crate) fn delete_synced(
        &self,
        family: &'static str,
        key: &[u8],
        operation: &'static str,
    ) -> Result<()> {
        self.rocks
            .delete_cf_opt(self.family(family)?, key, &synced())
            .map_err(|e| self.error(operation, Some(family), e))
    }

    /// Whether `family` holds an entry (one seek).
    pub(crate) fn has_entries(&self, family: &'static str) -> Result<bool> {
        let mut it = self
            .rocks
            .raw_iterator_cf_opt(self.family(family)?, ReadOptions::default());
        it.seek_to_first();
        it.status()
            .map_err(|e| self.error("scan", Some(family), e))?;
        Ok(it.valid())
    }

    /// Writes every family's memtable to SST files, all in one step (`atomic_flush`):
    /// flushing them one by one would let a crash (without a write-ahead log) or a read-only
    /// reader see `block0` flushed and `docs` not.
    pub(crate) fn flush_all(&self) -> Result<()> {
        let families = ALL_FAMILIES
            .iter()
            .map(|name| self.family(name))
            .collect::<Result<Vec<_>>>()?;
        self.rocks
            .flush_cfs_opt(&families, &FlushOptions::default())
            .map_err(|e| self.error("flush", None, e))
    }

    /// Compacts every family fully.
    pub(crate) fn compact_all(&self) -> Result<()> {
        for name in ALL_FAMILIES {
            self.rocks
                .compact_range_cf(self.family(name)?, None::<&[u8]>, None::<&[u8]>);
        }
        Ok(())
    }

    /// Bytes of live SST files per family, in the order of [`ALL_FAMILIES`].
    pub(crate) fn live_file_bytes(&self) -> Result<Vec<(&'static str, u64)>> {
        let files = self
            .rocks
            .live_files()
            .map_err(|e| self.error("list live files", None, e))?;
        Ok(ALL_FAMILIES
            .iter()
            .map(|name| {
                let bytes = files
                    .iter()
                    .filter(|f| f.column_family_name == *name)
                    .map(|f| f.size as u64)
                    .sum();
                (*name, bytes)
            })
            .collect())
    }

    /// The live SST files of `family`: each one's path and smallest key.
    #[cfg(test)]
    pub(crate) fn table_files(
        &self,
        family: &'static str,
    ) -> Result<Vec<(PathBuf, Option<Vec<u8>>)>> {
        let files = self
            .rocks
            .live_files()
            .map_err(|e| self.error("list live files", Some(family), e))?;
        Ok(files
            .into_iter()
            .filter(|f| f.column_family_name == family)
            .map(|f| {
                let path = self.path.join(f.name.trim_start_matches('/'));
                (path, f.start_key)
            })
            .collect())
    }

    /// Writes a consistent copy of the database into the new directory `dest` (which must
    /// not exist; its parent must): RocksDB's checkpoint. Every family's memtable is flushed
    /// first (one atomic flush), then each live SST file is hard-linked into `dest` where it
    /// is on the same file system, and copied otherwise; the MANIFEST, OPTIONS and live
    /// write-ahead log are copied. File deletions pause meanwhile, so compactions go on
    /// without removing a file being linked or copied. The copy holds every write made
    /// before the call; RocksDB syncs its files and directory before returning.
    pub(crate) fn checkpoint(&self, dest: &Path) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly {
                path: self.path.clone(),
            });
        }
        Checkpoint::new(&self.rocks)
            .and_then(|checkpoint| checkpoint.create_checkpoint(dest))
            .map_err(|e| self.error("create a checkpoint", None, e))
    }

    /// Ingests `files` (SST files of `family`) by moving them into the database: all or
    /// none.
    pub(crate) fn ingest(&self, family: &'static str, files: &[PathBuf]) -> Result<()> {
        if files.is_empty() {
            return Ok(());
        }
        let mut opts = IngestExternalFileOptions::default();
        opts.set_move_files(true);
        self.rocks
            .ingest_external_file_cf_opts(self.family(family)?, &opts, files.to_vec())
            .map_err(|e| self.error("ingest SST files", Some(family), e))
    }
}
