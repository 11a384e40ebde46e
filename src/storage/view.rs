//! A consistent read view of the store: what queries, `verify` and the pair scan read through.
//!
//! A writable store reads through a RocksDB snapshot, so a concurrent write is seen whole or
//! not at all. A read-only store is a RocksDB secondary instance (see `Store::open_with`),
//! which does not support snapshots; it never changes after it is opened (it does not catch up
//! with the writer), so reading the latest state is already consistent.

use rocksdb::{
    AsColumnFamilyRef, DBPinnableSlice, DBRawIteratorWithThreadMode, ReadOptions,
    SnapshotWithThreadMode, DB,
};

/// What a read sees: one state of the store, whatever is written meanwhile.
pub(crate) enum View<'a> {
    /// A snapshot of a writable store.
    Snapshot(SnapshotWithThreadMode<'a, DB>),
    /// A read-only store, fixed since it was opened.
    Fixed(&'a DB),
}

impl<'a> View<'a> {
    pub(crate) fn raw_iterator_cf_opt(
        &self,
        cf: &impl AsColumnFamilyRef,
        options: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'_, DB> {
        match self {
            View::Snapshot(s) => s.raw_iterator_cf_opt(cf, options),
            View::Fixed(db) => db.raw_iterator_cf_opt(cf, options),
        }
    }

    pub(crate) fn get_cf(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: impl AsRef<[u8]>,
    ) -> Result<Option<Vec<u8>>, rocksdb::Error> {
        match self {
            View::Snapshot(s) => s.get_cf(cf, key),
            View::Fixed(db) => db.get_cf(cf, key),
        }
    }

    pub(crate) fn get_pinned_cf(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: impl AsRef<[u8]>,
    ) -> Result<Option<DBPinnableSlice<'_>>, rocksdb::Error> {
        match self {
            View::Snapshot(s) => s.get_pinned_cf(cf, key),
            View::Fixed(db) => db.get_pinned_cf(cf, key),
        }
    }

    pub(crate) fn get_pinned_cf_opt(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: impl AsRef<[u8]>,
        options: ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>, rocksdb::Error> {
        match self {
            View::Snapshot(s) => s.get_pinned_cf_opt(cf, key, options),
            View::Fixed(db) => db.get_pinned_cf_opt(cf, key, &options),
        }
    }
}
