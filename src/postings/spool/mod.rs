//! Spooled runs and the merge at `finish`: how a load of many runs leaves every group of the
//! block families in one piece.
//!
//! A load larger than one run ingests each run's `docs`, `keys` and removal deltas as it
//! fills (so upserts across runs are planned against the store, as for one run), but writes
//! the run's block entries to *spool files* in the loader's directory instead: per block
//! family and value range, the run's chunks of each block value (segment = the run's).
//! `finish` merges the runs family by family: for each block value it reads the value's
//! chunks from every run, drops the entries hidden by a removal delta of a later run (a
//! document the load replaced), and writes the group as chunks of one new segment into SST
//! files that are ingested under the journal; then that family's spool files are deleted, so
//! the extra disk is at most the spools plus one family's new files. The parts of a family
//! are merged in parallel, on two threads per core, so that a part's waits on the disk
//! (reading spools, syncing its file) leave the core to another part; a family is read back,
//! ingested and its spool files deleted while the next family merges. The merged files are
//! read into the page cache if they all fit in half the memory; otherwise the first parts of
//! each family have their chunks (not their ids, which a query reads only for a match) read
//! back as they are finished, as many parts as three quarters of the memory hold.
//!
//! A spool file:
//!
//! | bytes | field |
//! |---|---|
//! | ... | for each block value `lo..hi` in order: its chunks, each as length (4 B, LE) and bytes |
//! | 8 · (hi − lo + 1) | offset of each value's first chunk, then of the end (LE) |
//! | 4, 4, 8, 8 | `lo`, `hi`, offset of the table, magic `SHSPOOL1` |
//!
//! **Crash safety.** `meta/bulk_load` ([`LoadRecord`]) lists the spool files of each run and
//! is written, synced, before the run's journal: a run's spool files count only if the run
//! began ingesting, which `meta/next_segment` above the run's segment shows (the run's
//! journal raised it atomically). Before the merge the record gets the merge's segment, and
//! after each family is ingested, that the family is done. [`recover`] (called by
//! a writable store's open, after the run journal's recovery) merges the families not done: a family
//! ingested but not yet marked is merged again into the same keys and values, which is
//! harmless. Then the record is deleted.
//!
//! The files: `format.rs` the spool file, `kernel.rs` the merge of one block value's runs,
//! `merge.rs` the merge of a load's runs and its recovery, `write_behind.rs` the spool
//! writer's output. The load record is the storage layer's (`src/storage/load_record.rs`).

mod format;
mod kernel;
mod merge;
mod write_behind;

pub(crate) use format::SpoolWriter;
pub(crate) use merge::{merge, recover};
