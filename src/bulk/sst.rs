//! Writing a run's net effect as sorted SST files, one set per column family, and ingesting
//! them.
//!
//! Each family's entries are sorted in memory (block keys as `u128`, whose numeric order is
//! their byte order because keys are big-endian) and written by `SstFileWriter` in
//! `parts` non-overlapping files, one rayon task each, so both cores write. Puts and
//! deletion tombstones (old block entries, old keys, removed documents) are merged into the
//! same files in key order; a key appears once per run.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rocksdb::{Cache, DBCompressionType, IngestExternalFileOptions, SstFileWriter};

use super::runs::{Net, RunBuffer};
use crate::codec;
use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::keys::{self, BLOCK_FAMILIES, DOCS_FAMILY, KEYS_FAMILY};
use crate::store::{self, Store};

/// Entries per SST file at most (about 100 MB of block keys): big enough to be cheap to
/// ingest, small enough for later compactions to work file by file.
const MAX_FILE_ENTRIES: usize = 8 << 20;
/// Below this many entries a family is written as one file.
const MIN_PARALLEL_ENTRIES: usize = 1 << 16;
/// Zstandard level of bottom-level files. Level 1 compresses these keys (random
/// fingerprints and ids) about as well as RocksDB's default level 3, at twice the speed.
const ZSTD_LEVEL: i32 = 1;

/// The SST files of one run, in ingestion order, and their total size.
#[derive(Debug, Default)]
pub(crate) struct Written {
    pub(crate) files: Vec<(&'static str, PathBuf)>,
    pub(crate) bytes: u64,
}

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

/// Writes one SST file of `family` at `path`; `fill` adds the entries in key order. Returns
/// the file size, or `None` (and no file) if `fill` added nothing.
fn write_file(
    family: &'static str,
    path: &Path,
    dest: Destination,
    count: usize,
    fill: impl FnOnce(&mut SstFileWriter<'_>) -> std::result::Result<(), rocksdb::Error>,
) -> Result<Option<u64>> {
    if count == 0 {
        return Ok(None);
    }
    // The family's table options (format, Bloom filters); the cache is only a placeholder.
    let cache = Cache::new_lru_cache(1 << 20);
    let mut opts = store::column_family_options(family, &cache);
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
    let mut writer = SstFileWriter::create(&opts);
    writer
        .open(path)
        .map_err(|e| rocks("create an SST file", family, path, e))?;
    fill(&mut writer).map_err(|e| rocks("write an SST file", family, path, e))?;
    writer
        .finish()
        .map_err(|e| rocks("finish an SST file", family, path, e))?;
    let size = std::fs::metadata(path)
        .map_err(|e| Error::io("reading the size of", path, e))?
        .len();
    Ok(Some(size))
}

/// Into how many files to split `n` entries.
fn parts_for(n: usize) -> usize {
    if n < MIN_PARALLEL_ENTRIES {
        1
    } else {
        rayon::current_num_threads()
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

/// Writes puts and deletes merged in key order.
fn merge_into<T>(
    w: &mut SstFileWriter<'_>,
    puts: &[T],
    deletes: &[u128],
    key: impl Fn(&T) -> u128,
    put: impl Fn(&mut SstFileWriter<'_>, &T) -> std::result::Result<(), rocksdb::Error>,
    delete: impl Fn(&mut SstFileWriter<'_>, u128) -> std::result::Result<(), rocksdb::Error>,
) -> std::result::Result<(), rocksdb::Error> {
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
        put(w, p)?;
    }
    for &dk in d {
        delete(w, dk)?;
    }
    Ok(())
}

fn block_key(i: usize, fp: u64, id: u64) -> u128 {
    u128::from_be_bytes(keys::block_key(i, Fingerprint(fp), id))
}

/// Number of values of a 16-bit block.
const BLOCK_VALUES: usize = 1 << 16;

/// The survivors' keys in block family `i`, sorted. A block key starts with the 16-bit
/// block value, so a counting sort on it, written straight into one vector, leaves buckets
/// of about `n / 65536` keys, sorted in parallel: about three times faster than a
/// comparison sort of the whole vector, and no second vector.
fn sorted_block_keys(buf: &RunBuffer, survivors: &[u32], i: usize) -> Vec<u128> {
    let recs = || survivors.iter().filter_map(|&s| buf.recs.get(s as usize));
    let mut starts = vec![0usize; BLOCK_VALUES + 1];
    for r in recs() {
        starts[usize::from(Fingerprint(r.fp).block(i)) + 1] += 1;
    }
    for b in 0..BLOCK_VALUES {
        starts[b + 1] += starts[b];
    }
    let mut keys = vec![0u128; starts[BLOCK_VALUES]];
    let mut next = starts.clone();
    for r in recs() {
        let b = usize::from(Fingerprint(r.fp).block(i));
        keys[next[b]] = block_key(i, r.fp, r.id);
        next[b] += 1;
    }
    let mut buckets: Vec<&mut [u128]> = Vec::with_capacity(BLOCK_VALUES);
    let mut rest = keys.as_mut_slice();
    for b in 0..BLOCK_VALUES {
        let (bucket, tail) = rest.split_at_mut(starts[b + 1] - starts[b]);
        buckets.push(bucket);
        rest = tail;
    }
    buckets
        .into_par_iter()
        .with_min_len(256)
        .for_each(|bucket| bucket.sort_unstable());
    keys
}

/// Writes and returns the files of one family: `parts` files from sorted `puts` and `deletes`.
#[allow(clippy::too_many_arguments)]
fn write_family<T: Sync>(
    dir: &Path,
    prefix: &str,
    family: &'static str,
    dest: Destination,
    puts: &[T],
    deletes: &[u128],
    key: impl Fn(&T) -> u128 + Sync,
    put: impl Fn(&mut SstFileWriter<'_>, &T) -> std::result::Result<(), rocksdb::Error> + Sync,
    delete: impl Fn(&mut SstFileWriter<'_>, u128) -> std::result::Result<(), rocksdb::Error> + Sync,
) -> Result<Written> {
    let parts = split(puts, deletes, parts_for(puts.len() + deletes.len()), &key);
    let results: Vec<Result<Option<(PathBuf, u64)>>> = parts
        .into_par_iter()
        .enumerate()
        .map(|(p, (pr, dr))| {
            let path = dir.join(format!("{prefix}-{family}-{p:03}.sst"));
            let (puts, deletes) = (&puts[pr], &deletes[dr]);
            let size = write_file(family, &path, dest, puts.len() + deletes.len(), |w| {
                merge_into(w, puts, deletes, &key, &put, &delete)
            })?;
            Ok(size.map(|s| (path, s)))
        })
        .collect();
    let mut out = Written::default();
    for r in results {
        if let Some((path, size)) = r? {
            out.files.push((family, path));
            out.bytes += size;
        }
    }
    Ok(out)
}

/// Writes the run's SST files into `dir`, names prefixed by `prefix`, in ingestion order:
/// `docs`, `keys`, then `block0..3`. `now` is the `added` time of new documents.
pub(crate) fn write_run(
    buf: &RunBuffer,
    net: &Net,
    dir: &Path,
    prefix: &str,
    dest: Destination,
    now: u64,
) -> Result<Written> {
    let mut all = Written::default();
    let mut push = |w: Written| {
        all.files.extend(w.files);
        all.bytes += w.bytes;
    };

    // docs: survivors (already in id order) and removed ids.
    let doc_deletes: Vec<u128> = net.doc_deletes.iter().map(|&id| u128::from(id)).collect();
    let rec = |s: u32| buf.recs.get(s as usize);
    let added = |s: u32| {
        net.old_added
            .get(s as usize)
            .copied()
            .filter(|&a| a != 0)
            .unwrap_or(now)
    };
    push(write_family(
        dir,
        prefix,
        DOCS_FAMILY,
        dest,
        &net.survivors,
        &doc_deletes,
        |&s| rec(s).map_or(0, |r| u128::from(r.id)),
        |w, &s| match rec(s) {
            Some(r) => w.put(
                keys::doc_key(r.id),
                codec::encode_document(&buf.document(r, added(s))),
            ),
            None => Ok(()),
        },
        |w, id| w.delete(keys::doc_key(id as u64)),
    )?);

    // keys: already sorted and distinct.
    let path = dir.join(format!("{prefix}-{KEYS_FAMILY}-000.sst"));
    let size = write_file(KEYS_FAMILY, &path, dest, net.key_ops.len(), |w| {
        for &(k, owner) in &net.key_ops {
            let key = net.key_bytes(buf, k);
            match owner {
                Some(id) => w.put(key, keys::id_value(id))?,
                None => w.delete(key)?,
            }
        }
        Ok(())
    })?;
    if let Some(size) = size {
        push(Written {
            files: vec![(KEYS_FAMILY, path)],
            bytes: size,
        });
    }

    // block0..3, one family at a time so only one sort vector is alive.
    for (i, family) in BLOCK_FAMILIES.iter().enumerate().take(BLOCKS) {
        let puts = sorted_block_keys(buf, &net.survivors, i);
        let mut deletes: Vec<u128> = net
            .block_deletes
            .iter()
            .map(|&(id, fp)| block_key(i, fp, id))
            .collect();
        deletes.sort_unstable();
        push(write_family(
            dir,
            prefix,
            family,
            dest,
            &puts,
            &deletes,
            |&k| k,
            |w, &k| w.put(k.to_be_bytes(), []),
            |w, k| w.delete(k.to_be_bytes()),
        )?);
    }
    Ok(all)
}

/// Ingests `files` (of one family) by moving them into the store. Atomic for the family:
/// all files or none.
pub(crate) fn ingest(store: &Store, family: &'static str, files: &[PathBuf]) -> Result<()> {
    if files.is_empty() {
        return Ok(());
    }
    let mut opts = IngestExternalFileOptions::default();
    opts.set_move_files(true);
    // The files may touch any block range: no cached range is trusted across the ingestion.
    if let Some(cache) = &store.postings {
        cache.begin_ingest();
    }
    let ingested = store
        .db
        .ingest_external_file_cf_opts(store.cf(family)?, &opts, files.to_vec())
        .map_err(|e| store.rocks_err("ingest SST files", Some(family), e));
    if let Some(cache) = &store.postings {
        cache.end_ingest();
    }
    ingested
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn counting_sort_equals_a_plain_sort() {
        let mut buf = RunBuffer::new();
        let mut x = 1u64;
        for id in 0..5000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Few block values in block 1, so buckets hold many keys.
            buf.push(
                id % 700,
                Fingerprint(x & !0x0000_fff0_0000_0000),
                None,
                None,
            );
        }
        let survivors: Vec<u32> = (0..5000).collect();
        for i in 0..BLOCKS {
            let got = sorted_block_keys(&buf, &survivors, i);
            let mut want: Vec<u128> = buf.recs.iter().map(|r| block_key(i, r.fp, r.id)).collect();
            want.sort_unstable();
            assert_eq!(got, want, "family {i}");
        }
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
