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

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;
use rocksdb::{Cache, DBCompressionType, DataBlockIndexType, Options, SstFileWriter};

use super::kept_pages::{self, ChunkPages, KeptPages};
use super::prefault;
use super::runs::RunBuffer;
use super::spool::SpoolWriter;
use crate::codec;
use crate::codec::Delta;
use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::keys::{self, BLOCK_FAMILIES, DOCS_FAMILY, KEYS_FAMILY};
use crate::pigeonhole::BLOCK_VALUES;
use crate::postings::{self, chunk, GroupWriter};
use crate::store::{self, KeyWrite, UpsertPlan};

/// Entries per SST file at most (about 440 MB of a block family): every task of a block
/// family scans all of the run's survivors for the keys of its range, so fewer, larger tasks
/// scan less (at 100M documents, 3 tasks per family instead of 13 made the write phase 25%
/// shorter, and 2 instead of 3 another 10%), while each thread's sort buffers (16 bytes per
/// entry, 32 where one block value holds most keys: 1.5 GiB at most) stay within the memory
/// budget.
const MAX_FILE_ENTRIES: usize = 48 << 20;
/// Below this many entries a family is written as one file.
const MIN_PARALLEL_ENTRIES: usize = 1 << 16;
/// Entries per SST file at most (about 70 MB of a block family) when its pages are kept in
/// the page cache ([`KeptPages`]): a task's sorted range is written as several files. RocksDB's
/// writer drops the whole file's pages after every megabyte, and the kernel steps through
/// every cached page of the file each time, so keeping a file's pages costs time growing
/// with the square of its size: 0.9 s of system time for a 415 MB file, 0.02 s for 64 MB.
pub(crate) const KEPT_FILE_ENTRIES: usize = 8 << 20;
/// `docs` files per thread: more, smaller tasks than the block families' (see [`write_run`]).
const DOCS_PARTS_PER_THREAD: usize = 4;
/// Zstandard level of bottom-level `docs` and `keys` files. Level 1 compresses these values
/// about as well as RocksDB's default level 3, at twice the speed.
const ZSTD_LEVEL: i32 = 1;

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
    /// final if `final_chunks` (nothing else of the group can sort after it).
    Ingest { final_chunks: bool },
    /// Into spool files (`spool.rs`), merged with the other runs' at `finish`; the run's SST
    /// files get only its removal deltas.
    Spool,
}

/// Why filling an SST file stopped.
pub(crate) enum FillError {
    Rocks(rocksdb::Error),
    Other(Error),
    /// Nothing was put: no file is made.
    Empty,
}

impl From<rocksdb::Error> for FillError {
    fn from(e: rocksdb::Error) -> Self {
        FillError::Rocks(e)
    }
}

impl From<Error> for FillError {
    fn from(e: Error) -> Self {
        FillError::Other(e)
    }
}

pub(crate) type FillResult = std::result::Result<(), FillError>;

/// How a run's files are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Destination {
    /// The files will not overlap anything in the store and go to the bottom level: written
    /// with the bottom level's compression (Zstandard), never rewritten.
    Bottom,
    /// The files overlap stored data and go to level 0, from where compaction rewrites them:
    /// written with the cheaper upper-level compression (LZ4).
    Upper,
}

fn rocks(operation: &'static str, family: &'static str, path: &Path, e: rocksdb::Error) -> Error {
    Error::rocks(operation, Some(family), path, e)
}

/// Which pages of an SST file being written stay in the page cache ([`KeptPages`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// None: RocksDB's writer drops them all.
    Nothing,
    /// All, for a file the caller then reads back ([`super::read_into_page_cache`] reads only
    /// the tail the writer dropped last).
    All,
    /// The chunks and not their ids (`keys::ids_key`), which a query reads only for a
    /// match: a block family file of a store larger than the memory. Read back once the file
    /// is finished ([`ChunkPages`]).
    Chunks,
}

impl Keep {
    /// [`Keep::All`] if `kept`, else [`Keep::Nothing`].
    fn all_if(kept: bool) -> Keep {
        if kept {
            Keep::All
        } else {
            Keep::Nothing
        }
    }
}

/// Where the keys an [`SstWriter`] has put are, for [`Keep::Chunks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdsRange {
    /// Not in ids.
    Outside,
    /// In ids, from the start of the block being filled.
    Skipping,
    /// In ids that began in a block holding other keys: the range begins with the next
    /// block.
    Waiting,
}

/// RocksDB's SST writer, and the pages of its file kept in the page cache if asked
/// ([`KeptPages`]).
pub(crate) struct SstWriter<'a> {
    inner: SstFileWriter<'a>,
    kept: Option<KeptPages>,
    /// Where the chunks are ([`Keep::Chunks`]) ...
    chunks: Option<ChunkPages>,
    /// ... and where the keys put are.
    ids: IdsRange,
    /// Bytes put since the file's size was last looked at.
    unchecked: usize,
}

impl SstWriter<'_> {
    /// Adds `key` with `value`; keys come in increasing order.
    pub(crate) fn put(
        &mut self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> std::result::Result<(), rocksdb::Error> {
        let (key, value) = (key.as_ref(), value.as_ref());
        if self.chunks.is_some() {
            let before = self.inner.file_size();
            self.inner.put(key, value)?;
            self.mark_ids(keys::is_ids_key(key), before);
        } else {
            self.inner.put(key, value)?;
        }
        self.wrote(key.len() + value.len());
        Ok(())
    }

    /// Starts or ends a range of ids where the keys put turn from chunks to ids or back,
    /// given the file's size `before` the put. RocksDB writes a data block out when the next
    /// key does not fit in it, so right after a put the file's size is where the block
    /// holding that key begins. A range begins with the first block that holds ids only: the
    /// block of the first ids key if that put wrote the block before it out, else the next
    /// block written; it ends where the block of the next other key begins.
    fn mark_ids(&mut self, is_ids: bool, before: u64) {
        let at = self.inner.file_size();
        let wrote_block = at > before;
        let Some(chunks) = &mut self.chunks else {
            return;
        };
        match (self.ids, is_ids) {
            (IdsRange::Outside, true) | (IdsRange::Waiting, true) if wrote_block => {
                chunks.ids_from(at);
                self.ids = IdsRange::Skipping;
            }
            (IdsRange::Outside, true) => self.ids = IdsRange::Waiting,
            (IdsRange::Skipping, false) => {
                chunks.ids_until(at);
                self.ids = IdsRange::Outside;
            }
            (IdsRange::Waiting, false) => self.ids = IdsRange::Outside,
            _ => {}
        }
    }

    /// Adds a deletion tombstone for `key`, in the same order as puts.
    pub(crate) fn delete(
        &mut self,
        key: impl AsRef<[u8]>,
    ) -> std::result::Result<(), rocksdb::Error> {
        let key = key.as_ref();
        self.inner.delete(key)?;
        self.wrote(key.len());
        Ok(())
    }

    /// Counts `bytes` put, and keeps the file's new pages every [`kept_pages::CHECK_EVERY`].
    #[inline]
    fn wrote(&mut self, bytes: usize) {
        if let Some(kept) = &mut self.kept {
            self.unchecked += bytes;
            if self.unchecked >= kept_pages::CHECK_EVERY {
                self.unchecked = 0;
                if !kept.keep_up() {
                    self.kept = None;
                }
            }
        }
    }
}

/// Writes one SST file of `family` at `path`; `fill` adds the entries in key order. Returns
/// the file size, or `None` (and no file) if `fill` added nothing. `keep` says which of the
/// file's pages stay in the page cache as they are written ([`KeptPages`]).
pub(crate) fn write_file(
    family: &'static str,
    path: &Path,
    dest: Destination,
    count: usize,
    keep: Keep,
    fill: impl FnOnce(&mut SstWriter<'_>) -> FillResult,
) -> Result<Option<u64>> {
    if count == 0 {
        return Ok(None);
    }
    // The family's options (format, Bloom filters, block size); the cache is only a
    // placeholder.
    let cache = Cache::new_lru_cache(1 << 20);
    let opts = if BLOCK_FAMILIES.contains(&family) {
        // Exactly the store's.
        postings::family_options(store::base_table_options(&cache))
    } else {
        let mut table = store::table_options(family, &cache);
        if family == DOCS_FAMILY {
            // Binary search inside data blocks instead of the family's hash index: 1.4 bytes
            // per document less and 2% fewer instructions to write; a point lookup in a 4 KiB
            // block does a few more key comparisons (no measurable change in query cost).
            table.set_data_block_index_type(DataBlockIndexType::BinarySearch);
        }
        let mut opts = Options::default();
        opts.set_block_based_table_factory(&table);
        let compression = match dest {
            Destination::Bottom => DBCompressionType::Zstd,
            Destination::Upper => DBCompressionType::Lz4,
        };
        opts.set_compression_type(compression);
        opts.set_bottommost_compression_type(compression);
        if compression == DBCompressionType::Zstd {
            // window bits -14 and strategy 0 are RocksDB's defaults; no dictionary.
            opts.set_compression_options(-14, ZSTD_LEVEL, 0, 0);
            opts.set_bottommost_compression_options(-14, ZSTD_LEVEL, 0, 0, true);
        }
        opts
    };
    let inner = SstFileWriter::create(&opts);
    inner
        .open(path)
        .map_err(|e| rocks("create an SST file", family, path, e))?;
    let mut writer = SstWriter {
        inner,
        kept: (keep == Keep::All).then(|| KeptPages::open(path)).flatten(),
        chunks: (keep == Keep::Chunks).then(ChunkPages::default),
        ids: IdsRange::Outside,
        unchecked: 0,
    };
    match fill(&mut writer) {
        Ok(()) => {}
        Err(FillError::Rocks(e)) => return Err(rocks("write an SST file", family, path, e)),
        Err(FillError::Other(e)) => return Err(e),
        Err(FillError::Empty) => {
            drop(writer);
            let _ = std::fs::remove_file(path);
            return Ok(None);
        }
    }
    // The pages stay mapped while the writer syncs the file and drops its pages; then the
    // mappings go and the pages stay in the cache.
    let SstWriter {
        mut inner,
        kept,
        chunks,
        ..
    } = writer;
    inner
        .finish()
        .map_err(|e| rocks("finish an SST file", family, path, e))?;
    drop(kept);
    if let Some(chunks) = chunks {
        chunks.read_back(path);
    }
    let size = std::fs::metadata(path)
        .map_err(|e| Error::io("reading the size of", path, e))?
        .len();
    Ok(Some(size))
}

/// Into how many files to split a family of `n` entries: `per_thread` files per thread (each
/// file is written by one task), more if files would exceed [`MAX_FILE_ENTRIES`]; one file
/// below [`MIN_PARALLEL_ENTRIES`].
fn parts_for(n: usize, per_thread: usize) -> usize {
    if n < MIN_PARALLEL_ENTRIES {
        1
    } else {
        (rayon::current_num_threads() * per_thread)
            .max(n.div_ceil(MAX_FILE_ENTRIES))
            .max(1)
    }
}

/// Splits sorted `puts` into `parts` ranges and sorted `deletes` along the same key bounds:
/// (puts range, deletes range) per part.
fn split<T>(
    puts: &[T],
    deletes: &[u128],
    parts: usize,
    key: impl Fn(&T) -> u128,
) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    let n = puts.len();
    let mut out = Vec::with_capacity(parts);
    let mut d_start = 0;
    for p in 0..parts {
        let (start, end) = (n * p / parts, n * (p + 1) / parts);
        let d_end = if p + 1 == parts {
            deletes.len()
        } else {
            match puts.get(end) {
                Some(next) => {
                    let bound = key(next);
                    deletes.partition_point(|&d| d < bound)
                }
                None => deletes.len(),
            }
        };
        out.push((start..end, d_start..d_end));
        d_start = d_end;
    }
    out
}

/// Writes a put of `T`; the vector is a scratch buffer for the value, reused across puts.
type PutFn<'f, T> = dyn Fn(&mut SstWriter<'_>, &mut Vec<u8>, &T) -> std::result::Result<(), rocksdb::Error>
    + Sync
    + 'f;

/// Cuts a block family's sorted `keys` and `deletes` (all of block values below `hi`) into
/// pieces of whole groups, each of about `max` keys at most (more only where one group holds
/// more): (keys range, deletes range) per piece, in order, together covering both.
fn pieces(
    keys: &[u128],
    deletes: &[u128],
    hi: usize,
    max: usize,
) -> Vec<(Range<usize>, Range<usize>)> {
    let mut out = Vec::new();
    let (mut k, mut d) = (0, 0);
    while k < keys.len() || out.is_empty() {
        // The piece ends where the group of the key `max` keys on begins or ends.
        let mut end = (k + max.max(1)).min(keys.len());
        if let Some(&next) = keys.get(end) {
            let v = block_value(next);
            end = if block_value(keys[k]) == v {
                // One group longer than `max`: all of it.
                end + keys[end..].partition_point(|&x| block_value(x) == v)
            } else {
                k + keys[k..end].partition_point(|&x| block_value(x) < v)
            };
        }
        let value_hi = keys.get(end).map_or(hi, |&x| block_value(x));
        let d_end = d + deletes[d..].partition_point(|&x| block_value(x) < value_hi);
        out.push((k..end, d..d_end));
        (k, d) = (end, d_end);
    }
    out
}

/// Writes puts and deletes merged in key order.
fn merge_into<T>(
    w: &mut SstWriter<'_>,
    puts: &[T],
    deletes: &[u128],
    key: impl Fn(&T) -> u128,
    put: &PutFn<'_, T>,
    delete: impl Fn(&mut SstWriter<'_>, u128) -> std::result::Result<(), rocksdb::Error>,
) -> std::result::Result<(), rocksdb::Error> {
    let mut scratch = Vec::new();
    let mut d = deletes.iter().peekable();
    for p in puts {
        let k = key(p);
        while let Some(&&dk) = d.peek() {
            if dk >= k {
                break;
            }
            delete(w, dk)?;
            d.next();
        }
        put(w, &mut scratch, p)?;
    }
    for &dk in d {
        delete(w, dk)?;
    }
    Ok(())
}

/// Where [`write_packed`] writes a run's chunks.
pub(crate) enum ChunkOut<'a> {
    /// The store's layout: chunk keys and values, then their ids keys and values, through
    /// `put(key, value)` ([`GroupWriter`]).
    Store(&'a mut dyn FnMut(&[u8], &[u8]) -> FillResult),
    /// A spool file: each chunk with its ids inline, through `spool(block value, bytes)`.
    Spool(&'a mut dyn FnMut(u16, &[u8]) -> FillResult),
}

/// Writes the packed layout of sorted block keys `keys` (as `u128`) of family `i`: for each
/// block value, a removal delta for each of its `deletes` (old entries of replaced documents;
/// the removal hides them in older segments, not in this one) through `delta(key, value)`,
/// then its entries as chunks of segment `segment` through `out`, the last one final if
/// `final_chunks` (nothing of the group can sort after it).
pub(crate) fn write_packed(
    i: usize,
    segment: u32,
    final_chunks: bool,
    keys: &[u128],
    deletes: &[u128],
    delta: &mut dyn FnMut(&[u8], &[u8]) -> FillResult,
    mut out: ChunkOut<'_>,
) -> FillResult {
    let split = |k: u128| {
        (
            block_value(k) as u16,
            (k >> 64) as u64 & REMAINDER_MASK,
            k as u64,
        )
    };
    let removal = codec::encode_delta(Delta::Removed { watermark: segment });
    let (mut a, mut d) = (0, 0);
    let mut entries: Vec<(u64, u64)> = Vec::new();
    let mut bytes = Vec::new();
    let mut writer = GroupWriter::default();
    while a < keys.len() || d < deletes.len() {
        let value = match (keys.get(a), deletes.get(d)) {
            (Some(&k), Some(&dk)) => block_value(k).min(block_value(dk)),
            (Some(&k), None) => block_value(k),
            (None, Some(&dk)) => block_value(dk),
            (None, None) => break,
        };
        // Deltas sort before chunks (`keys`).
        while let Some(&dk) = deletes.get(d).filter(|&&dk| block_value(dk) == value) {
            let (v, rem, id) = split(dk);
            delta(&keys::delta_key(i, keys::join(i, v, rem), id), &removal)?;
            d += 1;
        }
        let end = a + keys[a..].partition_point(|&k| block_value(k) == value);
        entries.clear();
        entries.extend(keys[a..end].iter().map(|&k| {
            let (_, rem, id) = split(k);
            (rem, id)
        }));
        match &mut out {
            ChunkOut::Store(put) => {
                writer.write(value as u16, segment, &entries, final_chunks, |k, v| {
                    put(k, v)
                })?
            }
            ChunkOut::Spool(spool) => {
                for part in entries.chunks(chunk::MAX_ENTRIES) {
                    bytes.clear();
                    chunk::encode(part, false, &mut bytes);
                    spool(value as u16, &bytes)?;
                }
            }
        }
        a = end;
    }
    Ok(())
}

/// The 48 bits of a remainder.
const REMAINDER_MASK: u64 = (1 << 48) - 1;

fn block_key(i: usize, fp: u64, id: u64) -> u128 {
    keys::block_key_number(i, Fingerprint(fp), id)
}

/// Bit position, in a block key number, of its 16-bit block value and of the byte that
/// follows it: the radix sort's passes.
const BLOCK_VALUE_SHIFT: u32 = keys::BLOCK_KEY_NUMBER_VALUE_SHIFT;
const NEXT_BYTE_SHIFT: u32 = BLOCK_VALUE_SHIFT - 8;

/// The block value a block key number starts with, as an index.
fn block_value(key: u128) -> usize {
    usize::from(keys::block_value_of_key_number(key))
}
/// Block values per bucket of the first radix pass (their high byte is the bucket).
const COARSE: usize = 256;
/// Keys of one block value up to which a plain sort beats another radix pass.
const SMALL_BUCKET: usize = 48;

/// Start of each block value's keys in each block family's sorted order: `starts[i][b]` keys
/// of family `i` have a block value below `b` (65,537 entries per family). One pass over the
/// survivors, in parallel chunks.
fn block_starts(buf: &RunBuffer, survivors: &[u32]) -> Vec<Vec<usize>> {
    let threads = rayon::current_num_threads().max(1);
    let chunk = survivors.len().div_ceil(threads).max(1);
    let counts = survivors
        .par_chunks(chunk)
        .map(|c| {
            let mut h = vec![0usize; BLOCKS * BLOCK_VALUES];
            for r in c.iter().filter_map(|&s| buf.recs.get(s as usize)) {
                for (i, b) in Fingerprint(r.fp).blocks().into_iter().enumerate() {
                    h[i * BLOCK_VALUES + usize::from(b)] += 1;
                }
            }
            h
        })
        .reduce(
            || vec![0usize; BLOCKS * BLOCK_VALUES],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        );
    counts
        .chunks(BLOCK_VALUES)
        .map(|c| {
            let mut starts = Vec::with_capacity(BLOCK_VALUES + 1);
            let mut sum = 0;
            starts.push(0);
            for &x in c {
                sum += x;
                starts.push(sum);
            }
            starts
        })
        .collect()
}

/// Cuts the block values into `parts` ranges `lo..hi` of about equal numbers of keys, with
/// bounds at multiples of [`COARSE`].
fn block_ranges(starts: &[usize], parts: usize) -> Vec<(usize, usize)> {
    let n = starts.last().copied().unwrap_or(0);
    let mut out = Vec::with_capacity(parts);
    let mut lo = 0;
    for p in 1..=parts {
        let hi = if p == parts {
            BLOCK_VALUES
        } else {
            let at = starts.partition_point(|&x| x < n * p / parts);
            ((at + COARSE / 2) / COARSE * COARSE).clamp(lo, BLOCK_VALUES)
        };
        out.push((lo, hi));
        lo = hi;
    }
    out
}

/// Sorts `keys` stably by the byte at bit `shift` (a counting sort through `scratch`) and
/// returns where each byte value's keys start (and, last, `keys.len()`).
fn sort_by_byte(keys: &mut [u128], scratch: &mut Vec<u128>, shift: u32) -> [usize; 257] {
    let byte = |k: u128| (k >> shift) as usize & 0xff;
    let mut bounds = [0usize; 257];
    for &k in keys.iter() {
        bounds[byte(k) + 1] += 1;
    }
    for j in 0..256 {
        bounds[j + 1] += bounds[j];
    }
    scratch.clear();
    scratch.extend_from_slice(keys);
    let mut next = bounds;
    for &k in scratch.iter() {
        let at = &mut next[byte(k)];
        keys[*at] = k;
        *at += 1;
    }
    bounds
}

/// Fills `keys` with the sorted keys of block family `i` whose block value is in `lo..hi`
/// (multiples of [`COARSE`]; `starts` from [`block_starts`]).
///
/// A most-significant-digit radix sort that keeps its writes local: one pass over the
/// survivors places each key by the high byte of its block value (at most 256 write
/// streams; a key outside the range goes to a spare last slot, so the loop has no
/// unpredictable branch), then each such bucket (about `n / 256` keys, in cache) is sorted by
/// the low byte, and each block value's keys (about `n / 65536`) by the next byte when they
/// are many, then compared. `keys` and `scratch` are reused from task to task, so their
/// pages are faulted in once.
fn sort_block_range(
    buf: &RunBuffer,
    survivors: &[u32],
    i: usize,
    starts: &[usize],
    (lo, hi): (usize, usize),
    keys: &mut Vec<u128>,
    scratch: &mut Vec<u128>,
) {
    let base = starts[lo];
    let m = starts[hi] - base;
    keys.clear();
    if keys.capacity() < m + 1 {
        keys.reserve_exact(m + 1);
        // One call faults the new buffer in, cheaper than a fault per page (`prefault.rs`).
        prefault::populate_write(keys.as_ptr() as usize, keys.capacity() * size_of::<u128>());
    }
    keys.resize(m + 1, 0);
    let mut next = [m; COARSE];
    let mut step = [0usize; COARSE];
    for c in lo / COARSE..hi / COARSE {
        next[c] = starts[c * COARSE] - base;
        step[c] = 1;
    }
    for r in survivors.iter().filter_map(|&s| buf.recs.get(s as usize)) {
        let c = usize::from(Fingerprint(r.fp).block(i)) / COARSE;
        keys[next[c]] = block_key(i, r.fp, r.id);
        next[c] += step[c];
    }
    keys.truncate(m);
    for c in lo / COARSE..hi / COARSE {
        let bucket = &mut keys[starts[c * COARSE] - base..starts[(c + 1) * COARSE] - base];
        let fine = sort_by_byte(bucket, scratch, BLOCK_VALUE_SHIFT);
        for j in 0..256 {
            let same_block = &mut bucket[fine[j]..fine[j + 1]];
            if same_block.len() <= SMALL_BUCKET {
                same_block.sort_unstable();
                continue;
            }
            let third = sort_by_byte(same_block, scratch, NEXT_BYTE_SHIFT);
            for t in 0..256 {
                if third[t + 1] - third[t] > 1 {
                    same_block[third[t]..third[t + 1]].sort_unstable();
                }
            }
        }
    }
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

/// Writes the run's SST files into `dir`, names prefixed by `prefix`, and returns them in
/// ingestion order: `docs`, `keys`, then `block0..3`. `now` is the `added` time of new
/// documents. The block families get removals of the documents the run replaces, numbered
/// `segment`, and the run's entries as chunks of segment `segment` ([`write_packed`]), in the
/// SST files or in spool files (`chunks`). `kept` says whose pages stay in the page cache as
/// they are written ([`KeptPages`]): for a run whose files are read back.
///
/// Tasks: one per thread and block family (its range written as files of at most
/// [`KEPT_FILE_ENTRIES`] when kept), more for a family of more than
/// [`MAX_FILE_ENTRIES`] (its key range cut along block values), four per thread for `docs`
/// (no sort needed, so these are small and last: the threads finish close together), and
/// `keys`. Each thread takes the next task from the list
/// until none is left, so no thread waits at the end of a family. A thread sorts the block
/// keys of its task itself, into buffers it keeps: at most one part per thread is in memory
/// (32 bytes per key of the part: the keys and the radix sort's scratch).
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_run(
    buf: &RunBuffer,
    net: &UpsertPlan,
    dir: &Path,
    prefix: &str,
    dest: Destination,
    segment: u32,
    chunks: Chunks,
    kept: Kept,
    now: u64,
) -> Result<Written> {
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
    let added = |s: u32| net.added(s, now);

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
                    |w| {
                        for write in &net.key_writes {
                            match write {
                                KeyWrite::Put(key, id) => {
                                    w.put(key.bytes(buf), keys::id_value(*id))?
                                }
                                KeyWrite::Delete(key) => w.delete(key.bytes(buf))?,
                            }
                        }
                        Ok(())
                    },
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
                    Chunks::Ingest { final_chunks } => {
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
                                write_packed(
                                    i,
                                    segment,
                                    final_chunks,
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
                                    segment,
                                    false,
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
                            segment,
                            false,
                            keys,
                            &[],
                            &mut |_, _| Ok(()),
                            ChunkOut::Spool(&mut |value, bytes| Ok(spool.put(value, bytes)?)),
                        );
                        match filled {
                            Ok(()) | Err(FillError::Empty) => {}
                            Err(FillError::Other(e)) => return Err(e),
                            Err(FillError::Rocks(e)) => {
                                return Err(rocks("write a spool file", family, &spool_path, e))
                            }
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
                let (puts, deletes) = (&net.survivors[pr.clone()], &doc_deletes[dr.clone()]);
                let size = write_file(
                    DOCS_FAMILY,
                    &path,
                    dest,
                    puts.len() + deletes.len(),
                    Keep::all_if(kept.docs),
                    |w| {
                        Ok(merge_into(
                            w,
                            puts,
                            deletes,
                            doc_id,
                            &|w, scratch, &s| match rec(s) {
                                Some(r) => {
                                    codec::encode_document_into(
                                        &buf.document(s, r, added(s)),
                                        scratch,
                                    );
                                    w.put(keys::doc_key(r.id), &scratch[..])
                                }
                                None => Ok(()),
                            },
                            |w, id| w.delete(keys::doc_key(id as u64)),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A block family file written with [`Keep::Chunks`] keeps the pages of its chunks in the
    /// page cache and not those of their ids; with [`Keep::All`], all of them.
    #[cfg(target_os = "linux")]
    #[test]
    fn keeping_chunks_leaves_their_ids_out_of_the_page_cache() {
        use crate::bulk::kept_pages::tests::{keeping_works, resident_map};
        let dir = tempfile::tempdir().unwrap();
        if !keeping_works(dir.path()) {
            return;
        }
        // 64 groups of 3 chunks (4,096, 4,096, 1,000 entries), 40-bit remainders and 32-bit
        // ids: chunks of about 20 KB and ids of about 16 KB, each longer than a block.
        let mut state = 1u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 11
        };
        let groups: Vec<Vec<(u64, u64)>> = (0..64)
            .map(|_| {
                let mut g: Vec<(u64, u64)> = (0..9192)
                    .map(|_| (next() & ((1 << 48) - 1), next() & 0xffff_ffff))
                    .collect();
                g.sort_unstable();
                g
            })
            .collect();
        for keep in [Keep::Chunks, Keep::All] {
            let path = dir.path().join(format!("{keep:?}.sst"));
            // (whether ids, value) of every key, in file order.
            let mut values: Vec<(bool, Vec<u8>)> = Vec::new();
            let mut writer = GroupWriter::default();
            write_file(
                BLOCK_FAMILIES[0],
                &path,
                Destination::Bottom,
                1,
                keep,
                |w| {
                    for (v, group) in groups.iter().enumerate() {
                        writer.write(v as u16, 1, group, true, |key, value| {
                            values.push((keys::is_ids_key(key), value.to_vec()));
                            w.put(key, value)
                        })?;
                    }
                    Ok(())
                },
            )
            .unwrap();
            if keep == Keep::All {
                // As the caller does: the tail the writer dropped last.
                crate::bulk::read_into_page_cache(std::iter::once(path.as_path()));
            }
            // The chunks are read back on a thread of their own.
            crate::bulk::kept_pages::wait_for_read_backs();
            let resident = resident_map(&path);
            let bytes = std::fs::read(&path).unwrap();
            let page = 4096;
            let (mut chunk_pages, mut ids_pages) = ((0, 0), (0, 0));
            let mut from = 0;
            for (is_ids, value) in &values {
                // Values are stored as they are, in key order: find each by its first bytes.
                let at = from
                    + bytes[from..]
                        .windows(64)
                        .position(|w| w == &value[..64])
                        .expect("a value in the file");
                from = at + value.len();
                // The pages wholly inside the value.
                let count = if *is_ids {
                    &mut ids_pages
                } else {
                    &mut chunk_pages
                };
                for &kept in &resident[at.div_ceil(page)..(at + value.len()) / page] {
                    count.0 += usize::from(kept);
                    count.1 += 1;
                }
            }
            assert!(
                chunk_pages.1 > 500 && ids_pages.1 > 300,
                "{chunk_pages:?} {ids_pages:?}"
            );
            assert_eq!(
                chunk_pages.0, chunk_pages.1,
                "{keep:?}: every chunk page kept"
            );
            match keep {
                Keep::Chunks => {
                    assert_eq!(ids_pages.0, 0, "no ids page kept: {ids_pages:?}")
                }
                _ => assert_eq!(ids_pages.0, ids_pages.1, "every ids page kept"),
            }
        }
    }

    #[test]
    fn pieces_are_whole_groups_that_cover_everything_once() {
        // Block value v holds v % 7 keys (none for some), and value 40 holds 50.
        let key = |v: usize, j: u128| ((v as u128) << BLOCK_VALUE_SHIFT) | j;
        let mut keys = Vec::new();
        for v in 0..100usize {
            let n = if v == 40 { 50 } else { v % 7 };
            keys.extend((0..n as u128).map(|j| key(v, j)));
        }
        let deletes: Vec<u128> = [0usize, 5, 7, 40, 41, 99]
            .iter()
            .map(|&v| key(v, 9))
            .collect();
        for max in [0, 1, 3, 10, 49, 1000] {
            let pieces = pieces(&keys, &deletes, 100, max);
            let (mut k, mut d) = (0, 0);
            for (i, (kr, dr)) in pieces.iter().enumerate() {
                assert_eq!((kr.start, dr.start), (k, d), "max {max}: contiguous");
                (k, d) = (kr.end, dr.end);
                let group = |at: usize| keys.get(at).map(|&x| block_value(x));
                // Cut only between groups, at most `max` keys unless one group is longer.
                assert!(kr.end == keys.len() || group(kr.end) != group(kr.end - 1));
                assert!(kr.len() <= max.max(1) || group(kr.start) == group(kr.end - 1));
                // Each delete in the piece whose block values it covers.
                let next_value = group(kr.end).unwrap_or(100);
                for &x in &deletes[dr.clone()] {
                    assert!(block_value(x) < next_value, "max {max}, piece {i}");
                }
            }
            assert_eq!((k, d), (keys.len(), deletes.len()), "max {max}: everything");
        }
        // Deletes alone: one piece.
        assert_eq!(
            pieces(&[], &deletes, 100, 4),
            vec![(0..0, 0..deletes.len())]
        );
    }

    #[test]
    fn split_covers_everything_once() {
        let puts: Vec<u128> = (0..100).map(|x| x * 10).collect();
        let deletes: Vec<u128> = vec![5, 15, 333, 555, 2000];
        let parts = split(&puts, &deletes, 3, |&k| k);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts.iter().map(|(p, _)| p.len()).sum::<usize>(), 100);
        assert_eq!(parts.iter().map(|(_, d)| d.len()).sum::<usize>(), 5);
        for (p, d) in &parts {
            let lo = puts[p.start];
            let hi = puts.get(p.end).copied().unwrap_or(u128::MAX);
            for &x in &deletes[d.clone()] {
                assert!(
                    x < hi && (p.start == 0 || x >= lo),
                    "{x} outside {lo}..{hi}"
                );
            }
        }
    }

    /// The radix sort of every range, concatenated, equals a plain sort of the family.
    fn check_radix_sort(buf: &RunBuffer) {
        let survivors: Vec<u32> = (0..buf.len() as u32).collect();
        let starts = block_starts(buf, &survivors);
        let (mut keys, mut scratch) = (Vec::new(), Vec::new());
        #[allow(clippy::needless_range_loop)]
        for i in 0..BLOCKS {
            let mut want: Vec<u128> = buf.recs.iter().map(|r| block_key(i, r.fp, r.id)).collect();
            want.sort_unstable();
            for parts in [1, 2, 3, 7] {
                let ranges = block_ranges(&starts[i], parts);
                assert_eq!(ranges.len(), parts);
                let mut got = Vec::new();
                for &(lo, hi) in &ranges {
                    assert!(
                        lo % COARSE == 0 && hi % COARSE == 0 && lo <= hi,
                        "{lo}..{hi}"
                    );
                    sort_block_range(
                        buf,
                        &survivors,
                        i,
                        &starts[i],
                        (lo, hi),
                        &mut keys,
                        &mut scratch,
                    );
                    got.extend_from_slice(&keys);
                }
                assert_eq!(got, want, "family {i}, {parts} parts");
            }
        }
    }

    #[test]
    fn radix_sort_equals_a_plain_sort() {
        let mut buf = RunBuffer::new();
        let mut x = 1u64;
        for id in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Few block values in block 1, so buckets hold many keys (the third-byte pass).
            buf.push(
                id % 700,
                Fingerprint(x & !0x0000_fff0_0000_0000),
                None,
                None,
            );
        }
        check_radix_sort(&buf);
    }

    #[test]
    fn radix_sort_of_equal_fingerprints() {
        // One fingerprint for most documents (as many copies of one text give): a single
        // bucket of every family holds them, ordered by id alone.
        let mut buf = RunBuffer::new();
        for id in (0..5_000u64).rev() {
            let fp = if id % 10 == 0 {
                id.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            } else {
                42
            };
            buf.push(id, Fingerprint(fp), None, None);
        }
        check_radix_sort(&buf);
    }

    #[test]
    fn block_keys_sort_as_bytes() {
        let a = block_key(2, 0x1111_2222_3333_4444, 7);
        assert_eq!(
            a.to_be_bytes(),
            keys::block_key(2, Fingerprint(0x1111_2222_3333_4444), 7)
        );
        assert!(block_key(0, 1, 0) < block_key(0, 2, 0));
    }
}
