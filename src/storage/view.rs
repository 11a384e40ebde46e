//! A consistent read view of the store: what queries, `verify` and the pair scan read through.
//!
//! A writable store reads through a RocksDB snapshot, so a concurrent write is seen whole or
//! not at all. A read-only store is a RocksDB secondary instance (see `Store::open_with`),
//! which does not support snapshots; it never changes after it is opened (it does not catch up
//! with the writer), so reading the latest state is already consistent. The writer also reads
//! the latest state through a view ([`super::Database::latest`]) where its write lock keeps
//! it from changing.

use rocksdb::{SnapshotWithThreadMode, DB};

use super::cursor::{Cursor, FamilyRef, Pinned, Reading};
use crate::error::Result;

/// What a read sees: one state of the store, whatever is written meanwhile.
pub(crate) enum View<'a> {
    /// A snapshot of a writable store.
    Snapshot(SnapshotWithThreadMode<'a, DB>),
    /// The latest state: a read-only store, fixed since it was opened, or the writer's under
    /// its write lock.
    Fixed(&'a DB),
}

impl<'a> View<'a> {
    /// A cursor over `family` in this view, reading as `reading` says.
    #[inline]
    pub(crate) fn cursor<'v>(&'v self, family: FamilyRef<'v>, reading: Reading) -> Cursor<'v> {
        let it = match self {
            View::Snapshot(s) => s.raw_iterator_cf_opt(family.handle, reading.0),
            View::Fixed(db) => db.raw_iterator_cf_opt(family.handle, reading.0),
        };
        Cursor::new(it, family)
    }

    /// The value of `key` in `family`, read in place.
    #[inline]
    pub(crate) fn get<'v>(
        &'v self,
        family: FamilyRef<'_>,
        key: impl AsRef<[u8]>,
    ) -> Result<Option<Pinned<'v>>> {
        let found = match self {
            View::Snapshot(s) => s.get_pinned_cf(family.handle, key),
            View::Fixed(db) => db.get_pinned_cf(family.handle, key),
        };
        found
            .map(|v| v.map(Pinned))
            .map_err(|e| family.error("read", e))
    }

    /// [`View::get`], reading as `reading` says.
    #[inline]
    pub(crate) fn get_with<'v>(
        &'v self,
        family: FamilyRef<'_>,
        key: impl AsRef<[u8]>,
        reading: Reading,
    ) -> Result<Option<Pinned<'v>>> {
        let found = match self {
            View::Snapshot(s) => s.get_pinned_cf_opt(family.handle, key, reading.0),
            View::Fixed(db) => db.get_pinned_cf_opt(family.handle, key, &reading.0),
        };
        found
            .map(|v| v.map(Pinned))
            .map_err(|e| family.error("read", e))
    }
}
