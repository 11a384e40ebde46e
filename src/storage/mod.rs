//! The storage layer: the one part of the crate that names RocksDB. Everything above it (the
//! postings, the store, the bulk loader, queries) reads and writes through what it exports.
//!
//! - `database.rs`: [`Database`], a store's RocksDB instance: opening it (a writer, or a
//!   read-only secondary instance: `secondary.rs`), its column families, synced writes,
//!   flushes, compaction, ingestion of SST files, checkpoints (the copies backups are), the
//!   memtables' entry counts, and RocksDB's errors as the crate's.
//! - `cursor.rs`: reads of one family: [`FamilyRef`] (a family's handle, which names it in
//!   errors), [`Reading`] (bounds, read-ahead, the block cache), [`Cursor`] (a positioned
//!   iterator whose errors name the family and the operation) and `Pinned` (a value read
//!   in place). They wrap RocksDB's types without copying.
//! - `view.rs`: [`View`], a consistent read view (a snapshot, or the latest state of a
//!   read-only store or of the writer under its write lock), with cursors and point reads.
//! - `docs.rs`: [`Docs`], the `docs` family read as documents (by id, sorted multi-gets, the
//!   first and last ids, all in id order); `owners.rs`: `Owners`, the `keys` family read as
//!   the owners of external keys.
//! - `families.rs`: every column family's RocksDB options, for the store and for the SST
//!   files written outside it: one function each.
//! - `journal.rs`: crash-safe ingestion of SST files across families, and its recovery.
//! - `load_record.rs`: [`LoadRecord`], the record of a bulk load with spooled runs.
//! - `sink.rs`: [`Sink`], one family's puts and deletes, into a write batch ([`BatchSink`],
//!   committed atomically) or an SST file (`SstWriter`, `sst/writer.rs`: keys in order).
//! - `sst/`: writing SST files outside the store, with their pages kept in the page cache.
//! - `creation.rs`: a store directory before its store is whole (created by another
//!   process, or a creation that stopped).
//! - `files.rs`: syncing a directory, reading files into the page cache.
//! - `damage.rs`: reading a damaged store's families over the table files that cannot be
//!   read, naming them ([`Damage`]): salvage, and `verify` naming every damaged file.
//!
//! The layers above read only through the types above and write through a [`Sink`] (a
//! [`BatchSink`] committed with a [`Persist`], or a bulk run's SST files); no RocksDB type,
//! handle or alias is exported to them; a failed SST fill is an opaque [`FillError`], which
//! the SST writer turns into the crate's error naming the file.

mod creation;
mod cursor;
mod damage;
mod database;
mod docs;
mod families;
pub(crate) mod files;
pub(crate) mod journal;
mod load_record;
mod owners;
mod secondary;
mod sink;
pub(crate) mod sst;
mod view;

pub(crate) use creation::holds_other_files;
pub(crate) use cursor::{Cursor, FamilyRef, Reading};
pub(crate) use damage::Damage;
pub(crate) use database::{error, Access, Database, OpenOptions};
pub(crate) use docs::Docs;
pub(crate) use families::Destination;
pub(crate) use journal::{Journal, DEFAULT_TEMP_DIR};
pub(crate) use load_record::{LoadRecord, SpoolFile, SpooledRun};
pub(crate) use sink::{BatchSink, Persist, Sink};
pub(crate) use sst::{FillError, FillResult, Keep};
pub(crate) use view::View;

/// Options of a read (the damage scan's).
type ReadOptions = rocksdb::ReadOptions;
/// A column family's handle.
type Family = rocksdb::ColumnFamily;
