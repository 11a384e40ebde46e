//! Where writes go: a [`Sink`] takes one column family's puts and deletes. Two kinds:
//!
//! - a write batch ([`BatchSink`], its families through [`BatchSink::family`]): every family's
//!   entries, committed atomically by [`BatchSink::commit`]; any order, the last write of a
//!   key wins;
//! - an SST file (`SstWriter`, `sst/writer.rs`: one family's file of a bulk run): keys
//!   in strictly increasing byte order, each once, or the writer fails.
//!
//! A writer of both (`src/upsert/apply.rs`) therefore emits each family's entries in
//! key order, which a batch accepts as well.

use std::convert::Infallible;

use rocksdb::{ColumnFamily, WriteBatch, WriteOptions};

use super::Database;
use crate::error::Result;
use crate::keys::BLOCK_FAMILIES;

/// One column family's writes.
pub(crate) trait Sink {
    /// Why a write failed.
    type Error;

    /// Puts `key` = `value`. An SST file takes keys in increasing order only.
    fn put(&mut self, key: &[u8], value: &[u8]) -> std::result::Result<(), Self::Error>;

    /// Deletes `key` (in an SST file, a tombstone), in the same order as puts.
    fn delete(&mut self, key: &[u8]) -> std::result::Result<(), Self::Error>;
}

/// How a committed batch is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Persist {
    /// Through the write-ahead log, synced before the commit returns.
    Synced,
    /// Through the write-ahead log, left to the operating system to write out.
    Logged,
    /// In memory only until the next flush (no write-ahead log).
    Unlogged,
}

impl Persist {
    fn options(self) -> WriteOptions {
        let mut options = WriteOptions::default();
        match self {
            Persist::Synced => options.set_sync(true),
            Persist::Logged => {}
            Persist::Unlogged => options.disable_wal(true),
        }
        options
    }
}

/// A write batch of `db`: writes to any of its families, applied atomically by
/// [`BatchSink::commit`] (or not at all).
pub(crate) struct BatchSink<'db> {
    db: &'db Database,
    batch: WriteBatch,
}

impl<'db> BatchSink<'db> {
    /// An empty batch of `db`.
    pub(crate) fn new(db: &'db Database) -> BatchSink<'db> {
        BatchSink {
            db,
            batch: WriteBatch::default(),
        }
    }

    /// The writes to family `name`.
    ///
    /// # Errors
    /// [`crate::Error::NotAStore`] if the store lacks the family.
    pub(crate) fn family(&mut self, name: &'static str) -> Result<FamilyWrites<'_>> {
        Ok(FamilyWrites {
            family: self.db.family(name)?,
            batch: &mut self.batch,
        })
    }

    /// The writes to block family `i`.
    ///
    /// # Errors
    /// As [`BatchSink::family`].
    pub(crate) fn block_family(&mut self, i: usize) -> Result<FamilyWrites<'_>> {
        self.family(BLOCK_FAMILIES[i])
    }

    /// Puts `key` = `value` in family `name`.
    ///
    /// # Errors
    /// As [`BatchSink::family`].
    pub(crate) fn put(&mut self, name: &'static str, key: &[u8], value: &[u8]) -> Result<()> {
        let Ok(()) = self.family(name)?.put(key, value);
        Ok(())
    }

    /// Whether the batch holds no write.
    pub(crate) fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }

    /// The batch's size in bytes, as RocksDB counts it.
    pub(crate) fn size_in_bytes(&self) -> usize {
        self.batch.size_in_bytes()
    }

    /// Writes the batch atomically, made durable as `persist` says; `operation` names it in
    /// an error.
    ///
    /// # Errors
    /// RocksDB's write error.
    pub(crate) fn commit(self, persist: Persist, operation: &'static str) -> Result<()> {
        self.db.write(self.batch, &persist.options(), operation)
    }
}

/// The writes of a [`BatchSink`] to one family.
pub(crate) struct FamilyWrites<'a> {
    batch: &'a mut WriteBatch,
    family: &'a ColumnFamily,
}

impl Sink for FamilyWrites<'_> {
    type Error = Infallible;

    #[inline]
    fn put(&mut self, key: &[u8], value: &[u8]) -> std::result::Result<(), Infallible> {
        self.batch.put_cf(self.family, key, value);
        Ok(())
    }

    #[inline]
    fn delete(&mut self, key: &[u8]) -> std::result::Result<(), Infallible> {
        self.batch.delete_cf(self.family, key);
        Ok(())
    }
}
