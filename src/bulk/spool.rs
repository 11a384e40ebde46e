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
//! the extra disk is at most the spools plus one family's new files. The merged files are read
//! into the page cache if they all fit in half the memory; otherwise the first parts of each
//! family have their chunks (not their ids, which a query reads only for a match) read back
//! as they are finished, as many parts as three quarters of the memory hold.
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
//! `Store::open` after the run journal's recovery) merges the families not done: a family
//! ingested but not yet marked is merged again into the same keys and values, which is
//! harmless. Then the record is deleted.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rocksdb::{ReadOptions, WriteOptions};
use serde::{Deserialize, Serialize};

use super::sst::{self, Destination, FillError, Keep};
use super::write_behind::WriteBehind;
use crate::codec::{self, Delta};
use crate::error::{Error, Result};
use crate::fingerprint::BLOCKS;
use crate::keys::{self, PackedKey, BLOCK_FAMILIES, META_FAMILY};
use crate::postings::chunk::{self, Chunk};
use crate::postings::GroupWriter;
use crate::store::{Journal, Store};

const MAGIC: &[u8; 8] = b"SHSPOOL1";
const FOOTER: usize = 24;
/// Parts of a family's merge, at least: parts are the unit of parallel work, of output files
/// and of chunks kept in the page cache ([`kept_parts`]).
const MIN_PARTS: u32 = 32;
/// Entries per part of a family's merge, about, at most: about 70 MB of output, small enough
/// for its pages to be kept cheaply ([`sst::KEPT_FILE_ENTRIES`]); at 1B documents 128 parts.
const PART_ENTRIES: u64 = sst::KEPT_FILE_ENTRIES as u64;
/// The share of the memory available at the start of a merge whose block families do not all
/// fit that the merge fills with their chunks ([`kept_parts`]), in quarters.
const KEPT_QUARTERS_OF_AVAILABLE: u64 = 3;
/// Read buffer per spool file in a merge part.
const READ_BUFFER: usize = 64 << 10;

fn invalid(path: &Path, message: String) -> Error {
    Error::io(
        "reading the spool file",
        path,
        std::io::Error::new(std::io::ErrorKind::InvalidData, message),
    )
}

/// Writes one spool file: the chunks of block values `lo..hi`, in value order.
pub(crate) struct SpoolWriter {
    out: WriteBehind,
    path: PathBuf,
    lo: u32,
    hi: u32,
    /// The next value whose offset is not yet in `offsets`.
    next: u32,
    offsets: Vec<u64>,
    pos: u64,
}

impl SpoolWriter {
    pub(crate) fn create(path: &Path, lo: u32, hi: u32) -> Result<SpoolWriter> {
        let file = File::create(path).map_err(|e| Error::io("creating", path, e))?;
        Ok(SpoolWriter {
            out: WriteBehind::new(file),
            path: path.to_path_buf(),
            lo,
            hi,
            next: lo,
            offsets: Vec::with_capacity((hi - lo + 1) as usize),
            pos: 0,
        })
    }

    /// Appends a chunk of block value `value` (not below the last one's, inside `lo..hi`).
    pub(crate) fn put(&mut self, value: u16, bytes: &[u8]) -> Result<()> {
        let value = u32::from(value);
        debug_assert!(value >= self.lo && value < self.hi && value + 1 >= self.next);
        while self.next <= value {
            self.offsets.push(self.pos);
            self.next += 1;
        }
        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        self.out
            .write_all(&len.to_le_bytes())
            .and_then(|()| self.out.write_all(bytes))
            .map_err(|e| Error::io("writing", &self.path, e))?;
        self.pos += 4 + bytes.len() as u64;
        Ok(())
    }

    /// Writes the offset table and the footer, syncs the file and returns its size.
    pub(crate) fn finish(mut self) -> Result<u64> {
        while self.next <= self.hi {
            self.offsets.push(self.pos);
            self.next += 1;
        }
        let mut tail = Vec::with_capacity(self.offsets.len() * 8 + FOOTER);
        for o in &self.offsets {
            tail.extend_from_slice(&o.to_le_bytes());
        }
        tail.extend_from_slice(&self.lo.to_le_bytes());
        tail.extend_from_slice(&self.hi.to_le_bytes());
        tail.extend_from_slice(&self.pos.to_le_bytes());
        tail.extend_from_slice(MAGIC);
        self.out
            .write_all(&tail)
            .map_err(|e| Error::io("writing", &self.path, e))?;
        let file = self
            .out
            .into_inner()
            .map_err(|e| Error::io("writing", &self.path, e))?;
        file.sync_all()
            .map_err(|e| Error::io("syncing", &self.path, e))?;
        Ok(self.pos + tail.len() as u64)
    }
}

/// Reads one spool file, value by value in increasing order.
struct SpoolReader {
    file: BufReader<File>,
    path: PathBuf,
    lo: u32,
    hi: u32,
    offsets: Vec<u64>,
    /// The position of `file` in the data.
    pos: u64,
    /// Where the pages already read and dropped from the page cache end.
    dropped: u64,
    bytes: Vec<u8>,
}

/// Bytes a merge part reads from a spool file between two drops of what it has read from the
/// page cache: spools are read once, and their pages would push out the chunks the merge
/// keeps there.
const DROP_EVERY: u64 = 8 << 20;

impl SpoolReader {
    /// Opens `path` to read the values of `lo..hi` it holds.
    fn open(path: &Path, lo: u32, hi: u32) -> Result<SpoolReader> {
        let mut file = File::open(path).map_err(|e| Error::io("opening", path, e))?;
        let io = |e| Error::io("reading", path, e);
        let len = file.metadata().map_err(io)?.len();
        if len < FOOTER as u64 {
            return Err(invalid(path, format!("{len} bytes, shorter than a footer")));
        }
        let mut footer = [0u8; FOOTER];
        file.seek(SeekFrom::Start(len - FOOTER as u64))
            .and_then(|_| file.read_exact(&mut footer))
            .map_err(io)?;
        let word = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&footer[at..at + 8]);
            u64::from_le_bytes(b)
        };
        let (file_lo, file_hi) = (word(0) as u32, (word(0) >> 32) as u32);
        let table_at = word(8);
        if &footer[16..24] != MAGIC || file_lo > file_hi || file_hi > 1 << 16 {
            return Err(invalid(path, "bad footer".into()));
        }
        let entries = u64::from(file_hi - file_lo + 1);
        if table_at + 8 * entries + FOOTER as u64 != len {
            return Err(invalid(
                path,
                "the offset table does not fit the file".into(),
            ));
        }
        // The offsets of the values of `lo..hi` in the file, and of the end of the last.
        let (lo, hi) = (lo.clamp(file_lo, file_hi), hi.clamp(file_lo, file_hi));
        let mut table = vec![0u8; 8 * (hi - lo + 1) as usize];
        file.seek(SeekFrom::Start(table_at + 8 * u64::from(lo - file_lo)))
            .and_then(|_| file.read_exact(&mut table))
            .map_err(io)?;
        let offsets: Vec<u64> = table
            .chunks_exact(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        let start = offsets.first().copied().unwrap_or(0);
        if offsets.windows(2).any(|w| w[0] > w[1]) || offsets.last().is_some_and(|&o| o > table_at)
        {
            return Err(invalid(path, "offsets out of order".into()));
        }
        file.seek(SeekFrom::Start(start)).map_err(io)?;
        Ok(SpoolReader {
            file: BufReader::with_capacity(READ_BUFFER, file),
            path: path.to_path_buf(),
            lo,
            hi,
            offsets,
            pos: start,
            dropped: start,
            bytes: Vec::new(),
        })
    }

    /// Drops the pages read so far from the page cache, every [`DROP_EVERY`] bytes.
    fn drop_behind(&mut self) {
        if self.pos - self.dropped < DROP_EVERY {
            return;
        }
        super::kept_pages::advise(
            self.file.get_ref(),
            self.dropped,
            self.pos - self.dropped,
            libc::POSIX_FADV_DONTNEED,
        );
        self.dropped = self.pos;
    }

    fn covers(&self, value: u32) -> bool {
        self.lo <= value && value < self.hi
    }

    /// Appends the entries of block value `value` (covered, and not below the last one read)
    /// to `out`, in order, as [`entry_key`]s.
    fn read_value(&mut self, value: u32, out: &mut Vec<u128>) -> Result<()> {
        let at = (value - self.lo) as usize;
        let (start, end) = (self.offsets[at], self.offsets[at + 1]);
        let io = |e| Error::io("reading", &self.path, e);
        if start != self.pos {
            let skip = start as i64 - self.pos as i64;
            self.file.seek_relative(skip).map_err(io)?;
            self.pos = start;
        }
        while self.pos < end {
            let mut len = [0u8; 4];
            self.file.read_exact(&mut len).map_err(io)?;
            let len = u32::from_le_bytes(len) as usize;
            if self.pos + 4 + len as u64 > end {
                return Err(invalid(
                    &self.path,
                    format!("a chunk of value {value} runs past it"),
                ));
            }
            self.bytes.resize(len, 0);
            self.file.read_exact(&mut self.bytes).map_err(io)?;
            self.pos += 4 + len as u64;
            let chunk = Chunk::parse(&self.bytes)
                .map_err(|m| invalid(&self.path, format!("a chunk of value {value}: {m}")))?;
            let ids = chunk.ids().ok_or_else(|| {
                invalid(
                    &self.path,
                    format!("a chunk of value {value} without its ids"),
                )
            })?;
            chunk.for_each(&ids, |rem, id| out.push(entry_key(rem, id)));
        }
        self.drop_behind();
        Ok(())
    }
}

/// One spooled run: its segment and its spool files per block family, each with the block
/// values `lo..hi` it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SpooledRun {
    pub(crate) segment: u32,
    pub(crate) files: Vec<Vec<SpoolFile>>,
}

/// A spool file and the block values `lo..hi` it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SpoolFile {
    pub(crate) lo: u32,
    pub(crate) hi: u32,
    pub(crate) path: String,
}

/// `meta/bulk_load`: a load whose runs are spooled, present from its first spooled run until
/// its merge is ingested (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LoadRecord {
    /// Where the merge writes its SST files.
    pub(crate) dir: String,
    /// Whether merged chunks may be final: the block families held no chunk when the load
    /// began, and no other writer has written since (the loader holds the write lock).
    pub(crate) final_chunks: bool,
    pub(crate) runs: Vec<SpooledRun>,
    /// The merge's segment, once it began.
    pub(crate) merge_segment: Option<u32>,
    /// The families whose merge is ingested.
    pub(crate) done: Vec<bool>,
}

fn synced() -> WriteOptions {
    let mut opts = WriteOptions::default();
    opts.set_sync(true);
    opts
}

impl LoadRecord {
    pub(crate) fn new(dir: &Path, final_chunks: bool) -> LoadRecord {
        LoadRecord {
            dir: dir.to_string_lossy().into_owned(),
            final_chunks,
            runs: Vec::new(),
            merge_segment: None,
            done: vec![false; BLOCKS],
        }
    }

    /// Writes the record, synced.
    pub(crate) fn save(&self, store: &Store) -> Result<()> {
        store
            .db()
            .put_cf_opt(
                store.cf(META_FAMILY)?,
                keys::META_BULK_LOAD,
                codec::encode_meta(self),
                &synced(),
            )
            .map_err(|e| store.rocks_err("write the bulk load record", Some(META_FAMILY), e))
    }

    fn load(store: &Store) -> Result<Option<LoadRecord>> {
        match store.get_raw(META_FAMILY, keys::META_BULK_LOAD)? {
            None => Ok(None),
            Some(bytes) => Ok(Some(codec::decode_meta(
                &bytes,
                keys::META_BULK_LOAD,
                "bulk load record",
            )?)),
        }
    }

    fn delete(store: &Store) -> Result<()> {
        store
            .db()
            .delete_cf_opt(store.cf(META_FAMILY)?, keys::META_BULK_LOAD, &synced())
            .map_err(|e| store.rocks_err("delete the bulk load record", Some(META_FAMILY), e))
    }

    /// Every spool file of the record.
    fn all_files(&self) -> impl Iterator<Item = &SpoolFile> {
        self.runs.iter().flat_map(|r| r.files.iter().flatten())
    }
}

/// Merges the spooled runs of `record` whose ingestion began (their segment is below the
/// store's next segment), family by family, ingesting each family's merged chunks under
/// the journal, then deletes the record and the spool files. The caller holds the write
/// lock (or is `Store::open`). `on_family` is called after each family (progress, tests).
pub(crate) fn merge(
    store: &Store,
    mut record: LoadRecord,
    mut on_family: impl FnMut(usize) -> Result<()>,
) -> Result<u64> {
    let next = store.packed()?.next_segment();
    record.runs.retain(|r| r.segment < next);
    let segment = match record.merge_segment {
        Some(s) => s,
        None => {
            record.merge_segment = Some(next);
            record.save(store)?;
            next
        }
    };
    let dir = PathBuf::from(&record.dir);
    // The merged families are about the size of the spool files: warm them if all fit, or
    // keep the pages of as many parts of each as fit.
    let spooled: u64 = record
        .all_files()
        .filter_map(|f| std::fs::metadata(&f.path).ok())
        .map(|m| m.len())
        .sum();
    let available = available_to_merge();
    let warm = crate::memory::fits_in(spooled, available);
    let parts = parts(store.len());
    let kept = if warm {
        0
    } else {
        // Kept parts keep their chunks, not their ids.
        let chunks = spooled as f64 * chunk_share(store.len());
        kept_parts(parts, chunks as u64, available)
    };
    let mut bytes = 0;
    // `i` names the family in every call below, not only an index.
    #[allow(clippy::needless_range_loop)]
    for i in 0..BLOCKS {
        if record.done.get(i).copied().unwrap_or(false) {
            continue;
        }
        let files = merge_family(store, &record, i, segment, &dir, parts, kept)?;
        bytes += files.iter().map(|f| f.1).sum::<u64>();
        if !files.is_empty() {
            super::sync_dir(&dir)?;
            let journal = Journal {
                doc_count: store.len(),
                files: files
                    .iter()
                    .map(|(p, _)| {
                        (
                            BLOCK_FAMILIES[i].to_string(),
                            p.to_string_lossy().into_owned(),
                        )
                    })
                    .collect(),
            };
            // Before the ingestion moves them: the same inodes become the store's files. (A
            // kept part reads its chunks back itself.)
            if warm {
                super::read_into_page_cache(files.iter().map(|f| f.0.as_path()));
            }
            store.begin_ingestion(&journal, segment + 1)?;
            store.ingest_journal(&journal, None)?;
            store.commit_ingestion(journal.doc_count)?;
        }
        on_family(i)?;
        if let Some(d) = record.done.get_mut(i) {
            *d = true;
        }
        record.save(store)?;
        for run in &record.runs {
            for f in run.files.get(i).into_iter().flatten() {
                let _ = std::fs::remove_file(&f.path);
            }
        }
    }
    LoadRecord::delete(store)?;
    for f in record.all_files() {
        let _ = std::fs::remove_file(&f.path);
    }
    // The chunks kept in the page cache are read back while the merge goes on: the first
    // queries find them there.
    super::kept_pages::wait_for_read_backs();
    Ok(bytes)
}

/// Finishes a load that a crash interrupted after its first spooled run (see the module
/// documentation). Called by `Store::open` on a writable store, after the journal's recovery.
pub(crate) fn recover(store: &Store) -> Result<()> {
    match LoadRecord::load(store)? {
        Some(record) => merge(store, record, |_| Ok(())).map(|_| ()),
        None => Ok(()),
    }
}

#[cfg(test)]
thread_local! {
    /// The memory available as a merge on this thread sees it, if a test says.
    static AVAILABLE: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// The memory available to a merge ([`crate::memory::available`]).
fn available_to_merge() -> u64 {
    #[cfg(test)]
    if let Some(bytes) = AVAILABLE.with(std::cell::Cell::get) {
        return bytes;
    }
    crate::memory::available()
}

/// The parts of each family's merge in a store of `documents`: a power of two from
/// [`MIN_PARTS`], each of about [`PART_ENTRIES`] entries at most.
fn parts(documents: u64) -> u32 {
    let parts = documents.div_ceil(PART_ENTRIES).next_power_of_two();
    u32::try_from(parts)
        .unwrap_or(u32::MAX)
        .clamp(MIN_PARTS, 1 << 16)
}

/// The share of a block family's bytes its chunks take (the rest are their ids, which a kept
/// part leaves out of the page cache) in a store of `documents` with ids of about
/// `log2(documents)` bits each, as a load's dense ids are (sparser ids take more bits, and the
/// share is then smaller than this): at 1B documents 40-bit remainders and 30-bit ids, 0.57.
fn chunk_share(documents: u64) -> f64 {
    let per_chunk = (documents >> 16).clamp(1, chunk::MAX_ENTRIES as u64) as usize;
    let remainder_bits = chunk::REMAINDER_BITS - chunk::bucket_bits(per_chunk);
    let id_bits = 64 - documents.leading_zeros();
    f64::from(remainder_bits) / f64::from(remainder_bits + id_bits)
}

/// How many of each family's `parts` (the first ones) have their chunks read back into the
/// page cache by the merge, for `chunks` bytes of merged chunks (without their ids) in all
/// families and `available` bytes of memory: as many as take [`KEPT_QUARTERS_OF_AVAILABLE`]
/// quarters of it. A query right after the load then finds most groups' chunks in the page
/// cache (at 1B documents with 23.2 GB available, those of 111 parts of 128) and reads from
/// disk only the others.
fn kept_parts(parts: u32, chunks: u64, available: u64) -> u32 {
    let quota = available / 4 * KEPT_QUARTERS_OF_AVAILABLE;
    let kept = u128::from(parts) * u128::from(quota) / u128::from(chunks.max(1));
    u32::try_from(kept).unwrap_or(u32::MAX).min(parts)
}

/// Writes the merged chunks of family `i`, segment `segment`, into SST files in `dir`, one per
/// part of the block values (`parts` of them, the first `kept` with their chunks read back
/// into the page cache), in parallel; returns them with their sizes, in key order.
fn merge_family(
    store: &Store,
    record: &LoadRecord,
    i: usize,
    segment: u32,
    dir: &Path,
    parts: u32,
    kept: u32,
) -> Result<Vec<(PathBuf, u64)>> {
    let per_part = (1u32 << 16) / parts;
    let made: Vec<Result<Option<(PathBuf, u64)>>> = (0..parts)
        .into_par_iter()
        .with_max_len(1)
        .map(|p| {
            let (lo, hi) = (p * per_part, (p + 1) * per_part);
            let path = dir.join(format!("merge-{}-{lo:05}.sst", BLOCK_FAMILIES[i]));
            let keep = if p < kept {
                Keep::Chunks
            } else {
                Keep::Nothing
            };
            merge_part(store, record, i, segment, (lo, hi), keep, &path)
                .map(|size| size.map(|s| (path, s)))
        })
        .collect();
    let mut out = Vec::new();
    for m in made {
        if let Some(f) = m? {
            out.push(f);
        }
    }
    Ok(out)
}

/// Merges block values `lo..hi` of family `i` into the SST file `path`, keeping in the page
/// cache the pages `keep` says; its size, or `None` if the range holds nothing.
fn merge_part(
    store: &Store,
    record: &LoadRecord,
    i: usize,
    segment: u32,
    (lo, hi): (u32, u32),
    keep: Keep,
    path: &Path,
) -> Result<Option<u64>> {
    let family = BLOCK_FAMILIES[i];
    // For each run, its spool files that overlap the range, in value order.
    let mut readers: Vec<(u32, Vec<SpoolReader>)> = Vec::new();
    for run in &record.runs {
        let mut files = Vec::new();
        for f in run.files.get(i).into_iter().flatten() {
            if f.lo < hi && lo < f.hi {
                files.push(SpoolReader::open(Path::new(&f.path), lo, hi)?);
            }
        }
        files.sort_by_key(|r| r.lo);
        readers.push((run.segment, files));
    }
    let mut options = ReadOptions::default();
    options.fill_cache(false);
    if let Ok(hi) = u16::try_from(hi) {
        options.set_iterate_upper_bound(keys::block_prefix(hi).to_vec());
    }
    let mut it = store.db().raw_iterator_cf_opt(store.block_cf(i)?, options);
    let mut entries: Vec<u128> = Vec::new();
    let mut scratch: Vec<u128> = Vec::new();
    // Where each run's entries of the value start in `entries`, and where the last ends.
    let mut bounds: Vec<usize> = Vec::with_capacity(readers.len() + 1);
    let mut removals: Vec<(u64, u64, u32)> = Vec::new();
    let mut group: Vec<(u64, u64)> = Vec::new();
    let mut writer = GroupWriter::default();
    let mut puts = 0usize;
    let size = sst::write_file(family, path, Destination::Bottom, 1, keep, |w| {
        for value in lo..hi {
            entries.clear();
            bounds.clear();
            for (_, files) in readers.iter_mut() {
                bounds.push(entries.len());
                if let Some(r) = files.iter_mut().find(|r| r.covers(value)) {
                    r.read_value(value, &mut entries)?;
                }
            }
            bounds.push(entries.len());
            if entries.is_empty() {
                continue;
            }
            // The group's removal deltas in the store, and whether it has chunks of its own.
            let v = value as u16;
            removals.clear();
            let mut has_chunks = false;
            it.seek(keys::group_start(v));
            while let Some(key) = it.key() {
                if !key.starts_with(&keys::block_prefix(v)) {
                    break;
                }
                match keys::decode_packed_key(i, key) {
                    Some(PackedKey::Delta { fingerprint, id }) => {
                        if let Some(Delta::Removed { watermark }) =
                            it.value().and_then(codec::decode_delta)
                        {
                            removals.push((keys::split(i, fingerprint).1, id, watermark));
                        }
                    }
                    Some(PackedKey::Chunk { .. } | PackedKey::Ids { .. }) => {
                        has_chunks = true;
                        break;
                    }
                    None => {}
                }
                it.next();
            }
            it.status()
                .map_err(|e| store.rocks_err("scan", Some(family), e))?;
            if !removals.is_empty() {
                removals.sort_unstable();
                drop_hidden(&mut entries, &mut bounds, &removals, |run| readers[run].0);
            }
            merge_runs(&mut entries, &mut bounds, &mut scratch);
            // A document in two runs with the same fingerprint, not removed in between, is one
            // entry.
            group.clear();
            let mut previous = None;
            for &key in entries.iter() {
                if previous != Some(key) {
                    group.push(split_entry_key(key));
                    previous = Some(key);
                }
            }
            writer.write(
                v,
                segment,
                &group,
                record.final_chunks && !has_chunks,
                |key, bytes| {
                    puts += 1;
                    w.put(key, bytes)
                },
            )?;
        }
        if puts == 0 {
            return Err(FillError::Empty);
        }
        Ok(())
    })?;
    Ok(size)
}

/// An entry (remainder, id) as one number whose order is the entries' order.
fn entry_key(rem: u64, id: u64) -> u128 {
    (u128::from(rem) << 64) | u128::from(id)
}

/// The (remainder, id) of an [`entry_key`].
fn split_entry_key(key: u128) -> (u64, u64) {
    ((key >> 64) as u64, key as u64)
}

/// Removes from each run's entries (`entries[bounds[r]..bounds[r + 1]]`, of segment
/// `segment(r)`) those hidden by one of `removals` (remainder, id, watermark; sorted): a
/// removal hides the document's entries in segments below its watermark. `bounds` follows.
fn drop_hidden(
    entries: &mut Vec<u128>,
    bounds: &mut [usize],
    removals: &[(u64, u64, u32)],
    segment: impl Fn(usize) -> u32,
) {
    let mut kept = 0;
    for run in 0..bounds.len().saturating_sub(1) {
        let (from, to) = (bounds[run], bounds[run + 1]);
        bounds[run] = kept;
        let seg = segment(run);
        for at in from..to {
            let key = entries[at];
            let (rem, id) = split_entry_key(key);
            let hidden = removals
                .binary_search_by(|r| (r.0, r.1).cmp(&(rem, id)))
                .is_ok_and(|j| seg < removals[j].2);
            if !hidden {
                entries[kept] = key;
                kept += 1;
            }
        }
    }
    if let Some(last) = bounds.last_mut() {
        *last = kept;
    }
    entries.truncate(kept);
}

/// Merges the sorted runs `entries[bounds[r]..bounds[r + 1]]` into one sorted sequence, in
/// passes that merge neighbouring runs pairwise (⌈log2 runs⌉ passes through `scratch`, one
/// comparison per entry and pass). `bounds` is left as `[0, entries.len()]`.
fn merge_runs(entries: &mut Vec<u128>, bounds: &mut Vec<usize>, scratch: &mut Vec<u128>) {
    bounds.dedup();
    while bounds.len() > 2 {
        scratch.clear();
        scratch.reserve(entries.len());
        let mut r = 0;
        while r + 1 < bounds.len() {
            let (lo, mid) = (bounds[r], bounds[r + 1]);
            match bounds.get(r + 2) {
                Some(&hi) => {
                    merge_two(&entries[lo..mid], &entries[mid..hi], scratch);
                    r += 2;
                }
                None => {
                    scratch.extend_from_slice(&entries[lo..mid]);
                    r += 1;
                }
            }
        }
        std::mem::swap(entries, scratch);
        // The merged runs start where the first of each pair did.
        let mut at = 0;
        bounds.retain(|_| {
            at += 1;
            at % 2 == 1
        });
        if bounds.last() != Some(&entries.len()) {
            bounds.push(entries.len());
        }
    }
}

/// Appends the merge of sorted `a` and `b` to `out`.
fn merge_two(a: &[u128], b: &[u128], out: &mut Vec<u128>) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        // One of the two advances: written without a branch on the comparison.
        let take_a = a[i] <= b[j];
        out.push(if take_a { a[i] } else { b[j] });
        i += usize::from(take_a);
        j += usize::from(!take_a);
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Hidden entries dropped, then the runs merged, equal the old way: every run's
        /// entries with their segment, sorted, and filtered one by one.
        #[test]
        fn merging_runs_equals_sorting_them(
            runs in proptest::collection::vec(
                proptest::collection::vec((0u64..40, 0u64..6), 0..60), 0..9),
            removals in proptest::collection::vec((0u64..40, 0u64..6, 0u32..12), 0..20),
        ) {
            let mut removals = removals;
            removals.sort_unstable();
            removals.dedup_by_key(|r| (r.0, r.1));
            let segment = |run: usize| 2 * run as u32 + 1;
            let mut entries = Vec::new();
            let mut bounds = Vec::new();
            let mut old_way = Vec::new();
            for (r, run) in runs.iter().enumerate() {
                let mut run = run.clone();
                run.sort_unstable();
                run.dedup();
                bounds.push(entries.len());
                entries.extend(run.iter().map(|&(rem, id)| entry_key(rem, id)));
                old_way.extend(run.iter().map(|&(rem, id)| (rem, id, segment(r))));
            }
            bounds.push(entries.len());
            old_way.sort_by_key(|&(rem, id, _)| (rem, id));
            let mut want: Vec<(u64, u64)> = Vec::new();
            for &(rem, id, seg) in &old_way {
                let hidden = removals
                    .binary_search_by(|r| (r.0, r.1).cmp(&(rem, id)))
                    .is_ok_and(|at| seg < removals[at].2);
                if !hidden && want.last() != Some(&(rem, id)) {
                    want.push((rem, id));
                }
            }
            drop_hidden(&mut entries, &mut bounds, &removals, segment);
            merge_runs(&mut entries, &mut bounds, &mut Vec::new());
            let mut got: Vec<(u64, u64)> = entries.iter().map(|&k| split_entry_key(k)).collect();
            got.dedup();
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert_eq!(bounds.len().min(2), entries.len().min(1) + 1);
        }
    }

    #[test]
    fn merge_parts_hold_about_a_kept_file_each() {
        assert_eq!(parts(0), MIN_PARTS);
        assert_eq!(parts(100_000_000), MIN_PARTS);
        // 1B: 128 parts of 7.8 M entries.
        assert_eq!(parts(1_000_000_000), 128);
        assert!(1_000_000_000 / u64::from(parts(1_000_000_000)) <= PART_ENTRIES);
        assert_eq!(parts(u64::MAX), 1 << 16);
    }

    #[test]
    fn the_merge_keeps_as_many_parts_as_three_quarters_of_the_memory_hold() {
        const GB: u64 = 1 << 30;
        // 1B: 34 GB of block families, 22 GB available: 16.5 GB kept.
        assert_eq!(kept_parts(128, 34 * GB, 22 * GB), 62);
        assert_eq!(kept_parts(128, 34 * GB, 0), 0);
        assert_eq!(kept_parts(128, 34 * GB, 1 << 62), 128);
        assert_eq!(kept_parts(32, 0, 8 * GB), 32);
    }

    #[test]
    fn chunks_take_a_share_of_a_family_that_grows_with_fewer_id_bits() {
        // 1B: 40-bit remainders (8 bucket bits), 30-bit ids.
        assert!((chunk_share(1_000_000_000) - 40.0 / 70.0).abs() < 1e-9);
        // 100M: 1,525 per group, 7 bucket bits; 27-bit ids.
        assert!((chunk_share(100_000_000) - 41.0 / 68.0).abs() < 1e-9);
        assert!(chunk_share(0) > 0.9 && chunk_share(0) <= 1.0);
    }

    /// A merge whose block families do not fit in memory keeps the pages of the first parts
    /// of each in the page cache, and not those of the others. (Whole files here: the ids of
    /// a group of 61 documents share their blocks with chunks, and a kept part leaves out
    /// only blocks of ids alone, `sst::tests`.)
    #[cfg(target_os = "linux")]
    #[test]
    fn a_merge_larger_than_the_memory_keeps_the_pages_of_its_first_parts(
    ) -> std::result::Result<(), Box<dyn std::error::Error>> {
        use crate::bulk::kept_pages::tests::resident_pages;
        use crate::bulk::BulkOptions;
        use crate::fingerprint::Fingerprint;
        let dir = tempfile::tempdir()?;
        // Where the kernel cannot keep pages (before Linux 5.14), nothing is kept.
        if !crate::bulk::kept_pages::tests::keeping_works(dir.path()) {
            return Ok(());
        }
        let store = Store::open(dir.path().join("store"))?;
        // Two runs of 2M documents: 32 parts per family, of about 1.2 MB each.
        let n: u64 = 4_000_000;
        let budget = (n as usize / 2) * crate::bulk::runs::BYTES_PER_ADD;
        let mut loader = store.bulk_loader_with(BulkOptions::new().memory_budget(budget))?;
        for id in 0..n {
            loader.add(
                id,
                Fingerprint(id.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17)),
            )?;
        }
        // Spools of about 160 MB, chunks about 0.68 of them: 40 MB of memory (30 kept) keeps
        // 8 parts of each family.
        AVAILABLE.with(|a| a.set(Some(40 << 20)));
        let summary = loader.finish();
        AVAILABLE.with(|a| a.set(None));
        assert!(summary?.runs >= 2);
        // (first block value, whether its pages are cached) of each file of `family`, in key
        // order. Keeping pages is best effort: a page the kernel drops meanwhile (another
        // process's memory, or the VM's) is read back by the first query instead, so a kept
        // file counts with 90% of its pages cached; a file not kept has all of its chunks
        // dropped.
        let files = |family: &str| -> std::result::Result<Vec<(u16, bool)>, rocksdb::Error> {
            let mut files: Vec<(u16, bool)> = store
                .db()
                .live_files()?
                .into_iter()
                .filter(|f| f.column_family_name == family)
                .map(|f| {
                    let key = f.start_key.unwrap_or_default();
                    let value = u16::from_be_bytes([key[0], key[1]]);
                    let path = store.path().join(f.name.trim_start_matches('/'));
                    let (resident, pages) = resident_pages(&path);
                    (value, resident * 10 >= pages * 9)
                })
                .collect();
            files.sort_unstable();
            Ok(files)
        };
        let as_expected = |files: &[(u16, bool)]| {
            let kept = files.iter().take_while(|f| f.1).count();
            kept > 0 && kept < files.len() && files[kept..].iter().all(|f| !f.1)
        };
        for family in BLOCK_FAMILIES {
            let found = files(family)?;
            assert!(as_expected(&found), "{family}: {found:?}");
        }
        Ok(())
    }

    #[test]
    fn a_spool_file_reads_back() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", "", e))?;
        let path = dir.path().join("x.spool");
        let mut w = SpoolWriter::create(&path, 10, 20)?;
        let mut want = Vec::new();
        for (value, n) in [(11u16, 3u64), (11, 2), (15, 5000), (19, 1)] {
            let entries: Vec<(u64, u64)> = (0..n).map(|j| (j * 7, j + 100)).collect();
            let mut bytes = Vec::new();
            chunk::encode(&entries[..n.min(4096) as usize], false, &mut bytes);
            w.put(value, &bytes)?;
            want.push((value, entries[..n.min(4096) as usize].to_vec()));
        }
        w.finish()?;
        let mut r = SpoolReader::open(&path, 0, 1 << 16)?;
        assert!(r.covers(10) && r.covers(19) && !r.covers(20) && !r.covers(9));
        let mut part = SpoolReader::open(&path, 12, 16)?;
        assert!(!part.covers(11) && part.covers(15) && !part.covers(16));
        let mut got = Vec::new();
        part.read_value(15, &mut got)?;
        assert_eq!(got.len(), 4096);
        for value in [10u32, 11, 15, 19] {
            let mut got = Vec::new();
            r.read_value(value, &mut got)?;
            let expect: Vec<u128> = want
                .iter()
                .filter(|(v, _)| u32::from(*v) == value)
                .flat_map(|(_, e)| e.iter().map(|&(a, b)| entry_key(a, b)))
                .collect();
            assert_eq!(got, expect, "value {value}");
        }
        Ok(())
    }
}
