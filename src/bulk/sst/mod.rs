//! Writing a run's net effect as sorted SST files, one set per column family (the store
//! ingests them: `Store::ingest_journal`).
//!
//! Every task writes one file ([`write_run`]; a block range whose pages are kept, several of
//! at most [`KEPT_FILE_ENTRIES`]): a key range of a block family (its keys sorted by the task
//! itself, as `u128`, whose numeric order is their byte order because keys are big-endian), a
//! range of `docs` (survivors are already in id order) or `keys`. The threads
//! take tasks from one list until it is empty, so both cores stay busy to the end. Puts and
//! deletion tombstones (old block entries, old keys, removed documents) are merged into the
//! same files in key order; a key appears once per run.
//!
//! The files: this one schedules a run's tasks ([`write_run`]); `writer.rs` writes one SST
//! file ([`SstWriter`], the one place its options are set); `split.rs` cuts a sorted range
//! into pieces for the threads; `packed.rs` writes a block range as packed chunks;
//! `radix.rs` sorts block keys; `tests.rs`.

mod radix;
mod split;
#[cfg(test)]
mod tests;

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

use super::prefault;
use super::runs::RunBuffer;
use crate::error::Result;
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::keys::{self, BLOCK_FAMILIES, DOCS_FAMILY, KEYS_FAMILY};
use crate::pigeonhole::BLOCK_VALUES;
use crate::postings::spool::SpoolWriter;

use crate::storage::sst::{write_file, KEPT_FILE_ENTRIES};
use crate::storage::{Destination, Keep};
use crate::upsert::apply;
use crate::upsert::plan::UpsertPlan;

use crate::postings::run_chunks::{write_packed, ChunkOut, Segment};
use radix::*;
use split::*;

/// Entries per SST file at most (about 440 MB of a block family): every task of a block
/// family scans all of the run's survivors for the keys of its range, so fewer, larger tasks
/// scan less (at 100M documents, 3 tasks per family instead of 13 made the write phase 25%
/// shorter, and 2 instead of 3 another 10%), while each thread's sort buffers (16 bytes per
/// entry, 32 where one block value holds most keys: 1.5 GiB at most) stay within the memory
/// budget.
const MAX_FILE_ENTRIES: usize = 48 << 20;
/// Below this many entries a family is written as one file.
const MIN_PARALLEL_ENTRIES: usize = 1 << 16;
/// `docs` files per thread: more, smaller tasks than the block families' (see [`write_run`]).
const DOCS_PARTS_PER_THREAD: usize = 4;

/// The SST files of one run, in ingestion order, and their total size; and, for a spooled
/// run, its spool files per block family.
#[derive(Debug, Default)]
pub(crate) struct Written {
    pub(crate) files: Vec<(&'static str, PathBuf)>,
    pub(crate) bytes: u64,
    /// (path, block values `lo..hi`) of each spool file.
    pub(crate) spools: [Vec<(PathBuf, u32, u32)>; BLOCKS],
}

/// Where a run's block entries go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chunks {
    /// Into the run's SST files, as chunks of the run's segment; the last chunk of each group
    /// final if `final_chunks` (nothing else of the group can sort after it); groups of more
    /// than `split_above` entries split (`postings::GroupWriter`).
    Ingest {
        final_chunks: bool,
        split_above: usize,
    },
    /// Into spool files (`spool.rs`), merged with the other runs' at `finish`; the run's SST
    /// files get only its removal deltas.
    Spool,
}

/// What one task wrote: its SST files (family, path, size), in key order, and a spool file
/// (family index, path, values `lo..hi`, size) if any.
type Made = (
    Vec<(&'static str, PathBuf, u64)>,
    Option<(usize, PathBuf, (u32, u32), u64)>,
);

/// One SST file to write.
enum Task {
    /// The `keys` file.
    Keys,
    /// Part `p` of block family `i`: block values `lo..hi`.
    Block(usize, usize, (usize, usize)),
    /// Part `p` of `docs`: these survivors and deleted ids.
    Docs(usize, Range<usize>, Range<usize>),
}

impl Task {
    /// Where the task's file goes in ingestion order: `docs`, `keys`, `block0..3`.
    fn rank(&self) -> (usize, usize) {
        match *self {
            Task::Docs(p, ..) => (0, p),
            Task::Keys => (1, 0),
            Task::Block(i, p, _) => (2 + i, p),
        }
    }
}

/// Which families of a run keep their files' pages in the page cache as they are written.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Kept {
    /// The block families: what every query reads.
    pub(crate) blocks: bool,
    /// `docs`: what a query reads only for the keys of its matches, in a store with keys.
    pub(crate) docs: bool,
}

/// Where and how [`write_run`] writes a run's files.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunFiles<'a> {
    /// The directory of the files ...
    pub(crate) dir: &'a Path,
    /// ... and the prefix of their names.
    pub(crate) prefix: &'a str,
    /// The store the files are for (their options).
    pub(crate) dest: Destination,
    /// The run's segment: its chunks' number, and the watermark of its removals.
    pub(crate) segment: u32,
    /// Where its block entries go.
    pub(crate) chunks: Chunks,
    /// Whose pages stay in the page cache as they are written ([`KeptPages`]): for a run
    /// whose files are read back.
    pub(crate) kept: Kept,
    /// The `added` time of new documents.
    pub(crate) now: u64,
}

/// Writes the run's SST files as `files` says, and returns them in ingestion order: `docs`,
/// `keys`, then `block0..3`. Documents and keys are written by the one translation of a plan
/// into writes (`upsert::apply`). The block families get removals of the documents the run
/// replaces, numbered `segment`, and the run's entries as chunks of segment `segment`
/// ([`write_packed`]), in the SST files or in spool files (`chunks`).
///
/// Tasks: one per thread and block family (its range written as files of at most
/// [`KEPT_FILE_ENTRIES`] when kept), more for a family of more than
/// [`MAX_FILE_ENTRIES`] (its key range cut along block values), four per thread for `docs`
/// (no sort needed, so these are small and last: the threads finish close together), and
/// `keys`. Each thread takes the next task from the list
/// until none is left, so no thread waits at the end of a family. A thread sorts the block
/// keys of its task itself, into buffers it keeps: at most one part per thread is in memory
/// (32 bytes per key of the part: the keys and the radix sort's scratch).
pub(crate) fn write_run(buf: &RunBuffer, net: &UpsertPlan, files: RunFiles<'_>) -> Result<Written> {
    let RunFiles {
        dir,
        prefix,
        dest,
        segment,
        chunks,
        kept,
        now,
    } = files;
    let starts = block_starts(buf, &net.survivors);
    let block_deletes: Vec<Vec<u128>> = (0..BLOCKS)
        .map(|i| {
            let mut d: Vec<u128> = net
                .block_deletes
                .iter()
                .map(|&(id, fp)| block_key(i, fp, id))
                .collect();
            d.sort_unstable();
            d
        })
        .collect();
    let doc_deletes: Vec<u128> = net.doc_deletes.iter().map(|&id| u128::from(id)).collect();
    let rec = |s: u32| buf.recs.get(s as usize);
    let doc_id = |&s: &u32| rec(s).map_or(0, |r| u128::from(r.id));

    // `keys` (one file that cannot be split) first, then the large block parts, and the
    // small docs parts last, so that they fill the end.
    let mut tasks = vec![Task::Keys];
    for (i, st) in starts.iter().enumerate() {
        let parts = parts_for(net.survivors.len() + block_deletes[i].len(), 1);
        for (p, range) in block_ranges(st, parts).into_iter().enumerate() {
            tasks.push(Task::Block(i, p, range));
        }
    }
    let doc_parts = parts_for(
        net.survivors.len() + doc_deletes.len(),
        DOCS_PARTS_PER_THREAD,
    );
    for (p, (pr, dr)) in split(&net.survivors, &doc_deletes, doc_parts, doc_id)
        .into_iter()
        .enumerate()
    {
        tasks.push(Task::Docs(p, pr, dr));
    }

    let run = |task: &Task, keys: &mut Vec<u128>, scratch: &mut Vec<u128>| -> Result<Made> {
        let made = match *task {
            Task::Keys => {
                let path = dir.join(format!("{prefix}-{KEYS_FAMILY}-000.sst"));
                let size = write_file(
                    KEYS_FAMILY,
                    &path,
                    dest,
                    net.key_writes.len(),
                    Keep::Nothing,
                    |w| Ok(apply::keys(&net.key_writes, buf, w)?),
                )?;
                (
                    size.map(|s| (KEYS_FAMILY, path, s)).into_iter().collect(),
                    None,
                )
            }
            Task::Block(i, p, (lo, hi)) => {
                let family = BLOCK_FAMILIES[i];
                sort_block_range(buf, &net.survivors, i, &starts[i], (lo, hi), keys, scratch);
                let d = &block_deletes[i];
                let deletes = &d[d.partition_point(|&k| block_value(k) < lo)
                    ..d.partition_point(|&k| block_value(k) < hi)];
                match chunks {
                    Chunks::Ingest {
                        final_chunks,
                        split_above,
                    } => {
                        let pieces = if kept.blocks {
                            pieces(keys, deletes, hi, KEPT_FILE_ENTRIES)
                        } else {
                            vec![(0..keys.len(), 0..deletes.len())]
                        };
                        let mut files = Vec::with_capacity(pieces.len());
                        for (q, (keys_range, deletes_range)) in pieces.into_iter().enumerate() {
                            let (keys, deletes) = (&keys[keys_range], &deletes[deletes_range]);
                            let path = dir.join(format!("{prefix}-{family}-{p:03}-{q:03}.sst"));
                            let count = keys.len() + deletes.len();
                            let keep = Keep::all_if(kept.blocks);
                            let size = write_file(family, &path, dest, count, keep, |w| {
                                let w = std::cell::RefCell::new(w);
                                let chunks = Segment {
                                    segment,
                                    final_chunks,
                                    split_above,
                                };
                                write_packed(
                                    i,
                                    chunks,
                                    keys,
                                    deletes,
                                    &mut |k, v| Ok(w.borrow_mut().put(k, v)?),
                                    ChunkOut::Store(&mut |k, v| Ok(w.borrow_mut().put(k, v)?)),
                                )
                            })?;
                            files.extend(size.map(|s| (family, path, s)));
                        }
                        (files, None)
                    }
                    Chunks::Spool => {
                        let path = dir.join(format!("{prefix}-{family}-{p:03}.sst"));
                        let size =
                            write_file(family, &path, dest, deletes.len(), Keep::Nothing, |w| {
                                write_packed(
                                    i,
                                    Segment::unsplit(segment),
                                    &[],
                                    deletes,
                                    &mut |k, v| Ok(w.put(k, v)?),
                                    ChunkOut::Store(&mut |_, _| Ok(())),
                                )
                            })?;
                        let spool_path = dir.join(format!("{prefix}-{family}-{p:03}.spool"));
                        let mut spool = SpoolWriter::create(&spool_path, lo as u32, hi as u32)?;
                        let filled = write_packed(
                            i,
                            Segment::unsplit(segment),
                            keys,
                            &[],
                            &mut |_, _| Ok(()),
                            ChunkOut::Spool(&mut |value, bytes| Ok(spool.put(value, bytes)?)),
                        );
                        if let Some(e) = filled
                            .err()
                            .and_then(|e| e.into_error("write a spool file", family, &spool_path))
                        {
                            return Err(e);
                        }
                        let spool_size = spool.finish()?;
                        (
                            size.map(|s| (family, path, s)).into_iter().collect(),
                            Some((i, spool_path, (lo as u32, hi as u32), spool_size)),
                        )
                    }
                }
            }
            Task::Docs(p, ref pr, ref dr) => {
                let path = dir.join(format!("{prefix}-{DOCS_FAMILY}-{p:03}.sst"));
                let (puts, deletes) = (&net.survivors[pr.clone()], &net.doc_deletes[dr.clone()]);
                let size = write_file(
                    DOCS_FAMILY,
                    &path,
                    dest,
                    puts.len() + deletes.len(),
                    Keep::all_if(kept.docs),
                    |w| {
                        Ok(apply::docs(
                            net,
                            buf,
                            puts,
                            deletes,
                            now,
                            &mut Vec::new(),
                            w,
                        )?)
                    },
                )?;
                (
                    size.map(|s| (DOCS_FAMILY, path, s)).into_iter().collect(),
                    None,
                )
            }
        };
        Ok(made)
    };

    // One worker per thread, each taking the next task until none is left (or one failed).
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let workers = rayon::current_num_threads().clamp(1, tasks.len());
    let done: Vec<Vec<(usize, Result<Made>)>> = (0..workers)
        .into_par_iter()
        .with_max_len(1)
        .map(|_| {
            let (mut keys, mut scratch) = (Vec::new(), Vec::new());
            let mut out = Vec::new();
            while !failed.load(Ordering::Relaxed) {
                let t = next.fetch_add(1, Ordering::Relaxed);
                let Some(task) = tasks.get(t) else { break };
                let result = run(task, &mut keys, &mut scratch);
                if result.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                out.push((t, result));
            }
            out
        })
        .collect();
    let mut results: Vec<(usize, Result<Made>)> = done.into_iter().flatten().collect();
    results.sort_by_key(|(t, _)| tasks.get(*t).map(Task::rank));
    let mut out = Written::default();
    for (_, r) in results {
        let (files, spool) = r?;
        for (family, path, size) in files {
            out.files.push((family, path));
            out.bytes += size;
        }
        if let Some((i, path, (lo, hi), size)) = spool {
            out.spools[i].push((path, lo, hi));
            out.bytes += size;
        }
    }
    Ok(out)
}
