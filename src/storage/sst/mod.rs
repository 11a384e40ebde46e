//! SST files written outside the store and ingested into it: [`write_file`] and its
//! [`SstWriter`] (`writer.rs`, with the files' options from `families.rs`), and the pages of
//! a file being written that stay in the page cache (`kept_pages.rs`).

pub(crate) mod kept_pages;
mod writer;

/// Entries per SST file at most (about 70 MB of a block family) when its pages are kept in
/// the page cache (`kept_pages.rs`): a task's sorted range is written as several files. RocksDB's
/// writer drops the whole file's pages after every megabyte, and the kernel steps through
/// every cached page of the file each time, so keeping a file's pages costs time growing
/// with the square of its size: 0.9 s of system time for a 415 MB file, 0.02 s for 64 MB.
pub(crate) const KEPT_FILE_ENTRIES: usize = 8 << 20;

pub(crate) use writer::{write_file, FillError, FillResult, Keep};
