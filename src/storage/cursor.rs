//! Reads of one column family: [`FamilyRef`] (a family's handle with what its errors name),
//! [`Reading`] (how a read reads: bounds, read-ahead, the block cache), [`Cursor`] (a
//! positioned iterator) and [`Pinned`] (a value read in place). Each wraps RocksDB's own type
//! without copying: the query path reads through them.

use std::path::Path;

use rocksdb::{ColumnFamily, DBPinnableSlice, DBRawIteratorWithThreadMode, ReadOptions, DB};

use super::database::error;
use crate::error::{Error, Result};

/// A column family of a store's database, with its name and the store's directory for the
/// errors of its reads ([`super::Database::handle`]).
#[derive(Clone, Copy)]
pub(crate) struct FamilyRef<'a> {
    pub(super) handle: &'a ColumnFamily,
    name: &'static str,
    path: &'a Path,
}

impl<'a> FamilyRef<'a> {
    pub(super) fn new(handle: &'a ColumnFamily, name: &'static str, path: &'a Path) -> Self {
        FamilyRef { handle, name, path }
    }

    /// The crate's error for a failed RocksDB `operation` on this family.
    pub(crate) fn error(self, operation: &'static str, e: rocksdb::Error) -> Error {
        error(operation, Some(self.name), self.path, e)
    }
}

/// How a read reads: RocksDB's defaults unless a setter says otherwise.
#[derive(Default)]
pub(crate) struct Reading(pub(super) ReadOptions);

impl Reading {
    /// RocksDB's defaults: data blocks read go into the block cache, no bound, no read-ahead
    /// beyond RocksDB's own.
    #[inline]
    pub(crate) fn new() -> Reading {
        Reading::default()
    }

    /// Whether data blocks read go into the block cache (default: yes).
    #[inline]
    pub(crate) fn fill_cache(mut self, fill: bool) -> Reading {
        self.0.fill_cache(fill);
        self
    }

    /// Reads ahead up to `bytes` in one request (trimmed to the upper bound).
    #[inline]
    pub(crate) fn readahead(mut self, bytes: usize) -> Reading {
        self.0.set_readahead_size(bytes);
        self
    }

    /// The iterator ends before the first key at or after `key`.
    #[inline]
    pub(crate) fn upper_bound(mut self, key: impl Into<Vec<u8>>) -> Reading {
        self.0.set_iterate_upper_bound(key);
        self
    }

    /// The iterator reads in key order across block values. A block family's memtables keep
    /// their keys hashed by block value (`families.rs`), so an iterator otherwise sees the
    /// memtable entries of the block value it last sought only; in key order it copies the
    /// memtables into one sorted list first.
    #[inline]
    pub(crate) fn in_key_order(mut self) -> Reading {
        self.0.set_total_order_seek(true);
        self
    }
}

/// A positioned iterator over one column family of a [`super::View`] or of the database as
/// it is now. Like RocksDB's raw iterator: [`Cursor::key`] is `None` once it is past the end
/// or a read failed, and [`Cursor::status`] tells which.
pub(crate) struct Cursor<'a> {
    it: DBRawIteratorWithThreadMode<'a, DB>,
    family: FamilyRef<'a>,
}

impl<'a> Cursor<'a> {
    #[inline]
    pub(super) fn new(it: DBRawIteratorWithThreadMode<'a, DB>, family: FamilyRef<'a>) -> Self {
        Cursor { it, family }
    }

    /// Moves to the first key at or after `key`.
    #[inline]
    pub(crate) fn seek(&mut self, key: impl AsRef<[u8]>) {
        self.it.seek(key);
    }

    /// Moves to the first key.
    #[inline]
    pub(crate) fn seek_to_first(&mut self) {
        self.it.seek_to_first();
    }

    /// Moves to the last key.
    #[inline]
    pub(crate) fn seek_to_last(&mut self) {
        self.it.seek_to_last();
    }

    /// Moves to the next key.
    #[inline]
    pub(crate) fn next(&mut self) {
        self.it.next();
    }

    /// The key here, if any.
    #[inline]
    pub(crate) fn key(&self) -> Option<&[u8]> {
        self.it.key()
    }

    /// The value here, if any.
    #[inline]
    pub(crate) fn value(&self) -> Option<&[u8]> {
        self.it.value()
    }

    /// Fails if a read failed (rather than the cursor being past the end): a scan's error.
    #[inline]
    pub(crate) fn status(&self) -> Result<()> {
        self.status_of("scan")
    }

    /// [`Cursor::status`], naming the failed `operation`.
    #[inline]
    pub(crate) fn status_of(&self, operation: &'static str) -> Result<()> {
        self.it
            .status()
            .map_err(|e| self.family.error(operation, e))
    }
}

/// A value read in place (pinned in the block cache or memtable), without a copy.
pub(crate) struct Pinned<'a>(pub(super) DBPinnableSlice<'a>);

impl std::ops::Deref for Pinned<'_> {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        &self.0
    }
}
