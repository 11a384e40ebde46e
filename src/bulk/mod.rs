//! Bulk loading's parts: the in-memory run of a [`BulkLoader`](crate::BulkLoader), its sort
//! and its files. The loader itself is the store's (`src/store/bulk_loader/`): it fills a run
//! here, has the store plan it, writes it with `sst` and has the store ingest the files.
//! Nothing here knows the store.
//!
//! - `runs.rs`: the in-memory run, which the upsert planner (`src/upsert/plan/`, the same as
//!   for [`Store::insert_batch`](crate::Store::insert_batch)) reads as its adds.
//! - `prefault.rs`: the run's memory faulted in ahead of the adds, on another core.
//! - `sst/`: sorting a run and writing its SST files through the one apply
//!   (`src/upsert/apply.rs`) and the storage layer's SST writer (`src/storage/sst/`), or its
//!   block entries into spool files (`src/postings/spool/`, which also merges them).
//! - `progress.rs`: progress reports.
//! - `options.rs`: [`BulkOptions`], [`BulkProgress`], [`BulkSummary`].
//!
//! The design, and why runs are spooled and merged, is in `docs/design.md`, "Bulk loading".

mod options;
mod prefault;
pub(crate) mod progress;
pub(crate) mod runs;
pub(crate) mod sst;

use std::path::Path;

pub use options::{BulkOptions, BulkPhase, BulkProgress, BulkSummary};

use crate::memory;
use crate::storage::files::read_into_page_cache;

/// Reads `files` into the OS page cache when their total size fits ([`memory::files_fit`]):
/// the SST writer drops the pages it writes, which would leave a fresh store's files cold for
/// the first queries (about 6 times slower at 100M until the kernel has read them back).
pub(crate) fn warm<'p>(files: impl Iterator<Item = &'p Path> + Clone) {
    if memory::files_fit(files.clone()) {
        read_into_page_cache(files);
    }
}
