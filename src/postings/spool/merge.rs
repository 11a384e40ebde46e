//! The merge at the end of a load of many runs, and its recovery: every group of the block
//! families in one piece (see `mod.rs`).

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::format::SpoolReader;
use super::kernel::{drop_hidden, merge_runs, split_entry_key};
use crate::codec::{self, Delta};
use crate::error::{Error, Result};
use crate::failpoint::{self, Point};
use crate::fingerprint::BLOCKS;
use crate::keys::{self, PackedKey, BLOCK_FAMILIES};
use crate::postings::chunk;
use crate::postings::run_chunks::Segment;
use crate::postings::{GroupWriter, Packed, Postings};
use crate::storage::sst::{self, kept_pages, Keep, KEPT_FILE_ENTRIES};
use crate::storage::{
    files, journal, Database, Destination, FillError, Journal, LoadRecord, Reading, SpooledRun,
};

/// The packed layout's state, which a merge needs (a store of the current format).
fn packed<'p>(db: &Database, postings: &'p Postings) -> Result<&'p Packed> {
    postings.packed().ok_or_else(|| Error::NotAStore {
        path: db.path().to_path_buf(),
        reason: "a bulk load record in a store whose block families are not packed".into(),
    })
}

/// Parts of a family's merge, at least: parts are the unit of parallel work, of output files
/// and of chunks kept in the page cache ([`kept_parts`]).
const MIN_PARTS: u32 = 32;
/// Entries per part of a family's merge, about, at most: about 70 MB of output, small enough
/// for its pages to be kept cheaply ([`KEPT_FILE_ENTRIES`]); at 1B documents 128 parts.
const PART_ENTRIES: u64 = KEPT_FILE_ENTRIES as u64;
/// The share of the memory available at the start of a merge whose block families do not all
/// fit that the merge fills with their chunks ([`kept_parts`]), in quarters.
const KEPT_QUARTERS_OF_AVAILABLE: u64 = 3;

/// Merges the spooled runs of `record` whose ingestion began (their segment is below the
/// store's next segment), family by family, ingesting each family's merged chunks under
/// the journal, then deletes the record and the spool files. The caller holds the write
/// lock (or is `Store::open`). `on_family` is called after each family (progress, tests).
pub(crate) fn merge(
    db: &Database,
    postings: &Postings,
    doc_count: u64,
    mut record: LoadRecord,
    mut on_family: impl FnMut(usize) -> Result<()>,
) -> Result<u64> {
    let next = packed(db, postings)?.next_segment();
    let split_above = packed(db, postings)?.split_above();
    record.runs.retain(|r| r.segment < next);
    let segment = match record.merge_segment {
        Some(s) => s,
        None => {
            record.merge_segment = Some(next);
            record.save(db)?;
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
    let parts = parts(doc_count);
    let kept = if warm {
        0
    } else {
        // Kept parts keep their chunks, not their ids.
        let chunks = spooled as f64 * chunk_share(doc_count);
        kept_parts(parts, chunks as u64, available)
    };
    let plan = MergePlan {
        runs: record.runs.clone(),
        dir: &dir,
        into: Segment {
            segment,
            split_above,
            final_chunks: record.final_chunks,
        },
        parts,
        kept,
        threads: merge_threads(&dir)?,
    };
    let mut bytes = 0;
    let mut removals = Vec::new();
    let families: Vec<usize> = (0..BLOCKS)
        .filter(|&i| !record.done.get(i).copied().unwrap_or(false))
        .collect();
    let ingestion = FamilyIngestion {
        db,
        postings,
        dir: &dir,
        doc_count,
        segment,
        warm,
    };
    std::thread::scope(|scope| -> Result<()> {
        // A family's files are synced, read back and ingested on a thread of their own while
        // the next family merges: at 100M documents the read-back alone is 0.3 to 0.6 s a
        // family, which the merge's threads would otherwise wait for.
        let mut ingesting = None;
        let mut finish = |(i, ingested): (usize, std::thread::ScopedJoinHandle<'_, Result<()>>),
                          record: &mut LoadRecord|
         -> Result<()> {
            ingested
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            on_family(i)?;
            if let Some(d) = record.done.get_mut(i) {
                *d = true;
            }
            record.save(db)?;
            // Freeing a spool file's blocks takes the file system a while (0.1 s a family at
            // 50M documents): the next family's merge does not wait for it.
            let spooled: Vec<PathBuf> = record
                .runs
                .iter()
                .flat_map(|run| run.files.get(i).into_iter().flatten())
                .map(|f| PathBuf::from(&f.path))
                .collect();
            removals.push(std::thread::spawn(move || {
                for path in spooled {
                    let _ = std::fs::remove_file(path);
                }
            }));
            Ok(())
        };
        for &i in &families {
            let files = merge_family(db, &plan, i)?;
            bytes += files.iter().map(|f| f.1).sum::<u64>();
            if let Some(previous) = ingesting.take() {
                finish(previous, &mut record)?;
            }
            let ingestion = &ingestion;
            // A test's failure of this ingestion (armed on this thread).
            let fails = failpoint::hit(Point::MergeIngestion(i));
            ingesting = Some((
                i,
                scope.spawn(move || fails.and_then(|()| ingestion.ingest(i, &files))),
            ));
        }
        match ingesting.take() {
            Some(last) => finish(last, &mut record),
            None => Ok(()),
        }
    })?;
    for removal in removals {
        let _ = removal.join();
    }
    LoadRecord::delete(db)?;
    for f in record.all_files() {
        let _ = std::fs::remove_file(&f.path);
    }
    // The chunks kept in the page cache are read back while the merge goes on: the first
    // queries find them there.
    kept_pages::wait_for_read_backs();
    Ok(bytes)
}

/// Finishes a load that a crash interrupted after its first spooled run (see the module
/// documentation). Called when a writable store of the current format opens, after the
/// journal's recovery, with the store's document count.
pub(crate) fn recover(db: &Database, postings: &Postings, doc_count: u64) -> Result<()> {
    match LoadRecord::load(db)? {
        Some(record) => merge(db, postings, doc_count, record, |_| Ok(())).map(|_| ()),
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

/// How a merge ingests each family's merged files.
struct FamilyIngestion<'a> {
    db: &'a Database,
    postings: &'a Postings,
    /// Where the merged files are.
    dir: &'a Path,
    doc_count: u64,
    /// The merge's segment.
    segment: u32,
    /// Whether the merged files are read into the page cache (all of them fit in memory).
    warm: bool,
}

impl FamilyIngestion<'_> {
    /// Syncs the merged `files` of family `i` and ingests them under the journal.
    fn ingest(&self, i: usize, files: &[(PathBuf, u64)]) -> Result<()> {
        if files.is_empty() {
            return Ok(());
        }
        files::sync_dir(self.dir)?;
        let journal = Journal {
            doc_count: self.doc_count,
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
        // Before the ingestion moves them: the same inodes become the store's files. (A kept
        // part reads its chunks back itself. Keeping the pages as they are written costs
        // more: at 100M documents 9.5 to 11.3 s of merge against 8.2 to 8.7.)
        if self.warm {
            files::read_into_page_cache(files.iter().map(|f| f.0.as_path()));
        }
        self.postings
            .begin_ingestion(self.db, &journal, self.segment + 1)?;
        self.postings.ingest(self.db, &journal)?;
        journal::commit(self.db, journal.doc_count)
    }
}

/// How a merge writes every family.
struct MergePlan<'a> {
    /// The load's runs whose ingestion began.
    runs: Vec<SpooledRun>,
    /// Where the merged files are written.
    dir: &'a Path,
    /// What it writes: final chunks (`LoadRecord::final_chunks`) only where the group has no
    /// chunks in the store.
    into: Segment,
    /// Parts of each family: the unit of parallel work and of files ([`parts`]).
    parts: u32,
    /// Parts of each family, the first ones, whose chunks are read back into the page cache
    /// as they are finished ([`kept_parts`]; 0 where all the merged files are read back).
    kept: u32,
    /// The threads that merge the parts ([`merge_threads`]).
    threads: rayon::ThreadPool,
}

/// Merge threads per thread of the load's pool. A part waits on the disk twice: reading its
/// runs' spool files, and syncing its merged file once written. With one thread per core the
/// core waits with it; with two, another part computes meanwhile (100M documents in 6 runs on
/// 2 cores: merge 7.76 s at 1.42 busy cores against 8.89 s at 1.26 with one, medians of 3).
/// `docs/benchmarks.md` ("Cores") has the merge as a whole.
const MERGE_THREADS_PER_CORE: usize = 2;

/// A pool of [`MERGE_THREADS_PER_CORE`] threads per thread of the current rayon pool (the
/// load's: its thread count is what the user chose), for a merge into `dir`.
fn merge_threads(dir: &Path) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(MERGE_THREADS_PER_CORE * rayon::current_num_threads())
        .thread_name(|n| format!("simhash-merge-{n}"))
        .build()
        .map_err(|e| {
            Error::io(
                "starting threads to merge into",
                dir,
                std::io::Error::other(e),
            )
        })
}

/// Writes the merged chunks of family `i` into SST files in the plan's directory, one per part
/// of the block values, in parallel on the plan's threads; returns them with their sizes, in
/// key order.
fn merge_family(db: &Database, plan: &MergePlan, i: usize) -> Result<Vec<(PathBuf, u64)>> {
    let per_part = (1u32 << 16) / plan.parts;
    let made: Vec<Result<Option<(PathBuf, u64)>>> = plan.threads.install(|| {
        (0..plan.parts)
            .into_par_iter()
            .with_max_len(1)
            .map(|p| {
                let (lo, hi) = (p * per_part, (p + 1) * per_part);
                let path = plan
                    .dir
                    .join(format!("merge-{}-{lo:05}.sst", BLOCK_FAMILIES[i]));
                let keep = if p < plan.kept {
                    Keep::Chunks
                } else {
                    Keep::Nothing
                };
                merge_part(db, &plan.runs, i, plan.into, (lo, hi), keep, &path)
                    .map(|size| size.map(|s| (path, s)))
            })
            .collect()
    });
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
    db: &Database,
    runs: &[SpooledRun],
    i: usize,
    Segment {
        segment,
        split_above,
        final_chunks,
    }: Segment,
    (lo, hi): (u32, u32),
    keep: Keep,
    path: &Path,
) -> Result<Option<u64>> {
    let family = BLOCK_FAMILIES[i];
    // For each run, its spool files that overlap the range, in value order.
    let mut readers: Vec<(u32, Vec<SpoolReader>)> = Vec::new();
    for run in runs {
        let mut files = Vec::new();
        for f in run.files.get(i).into_iter().flatten() {
            if f.lo < hi && lo < f.hi {
                files.push(SpoolReader::open(Path::new(&f.path), lo, hi)?);
            }
        }
        files.sort_by_key(|r| r.lo);
        readers.push((run.segment, files));
    }
    let mut reading = Reading::new().fill_cache(false);
    if let Ok(hi) = u16::try_from(hi) {
        reading = reading.upper_bound(keys::block_prefix(hi).to_vec());
    }
    let mut it = db.cursor(db.block_handle(i)?, reading);
    let mut entries: Vec<u128> = Vec::new();
    let mut scratch: Vec<u128> = Vec::new();
    // Where each run's entries of the value start in `entries`, and where the last ends.
    let mut bounds: Vec<usize> = Vec::with_capacity(readers.len() + 1);
    let mut removals: Vec<(u64, u64, u32)> = Vec::new();
    let mut group: Vec<(u64, u64)> = Vec::new();
    let mut writer = GroupWriter::new(split_above);
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
                    Some(
                        PackedKey::Chunk { .. }
                        | PackedKey::SplitMark { .. }
                        | PackedKey::Part { .. }
                        | PackedKey::Ids { .. },
                    ) => {
                        has_chunks = true;
                        break;
                    }
                    None => {}
                }
                it.next();
            }
            it.status()?;
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
                final_chunks && !has_chunks,
                |key, bytes| {
                    puts += 1;
                    w.put(key, bytes)
                },
            )?;
        }
        if puts == 0 {
            return Err(FillError::empty());
        }
        Ok(())
    })?;
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        use crate::bulk::BulkOptions;
        use crate::fingerprint::Fingerprint;
        use crate::storage::sst::kept_pages::tests::resident_pages;
        let dir = tempfile::tempdir()?;
        // Where the kernel cannot keep pages (before Linux 5.14), nothing is kept.
        if !crate::storage::sst::kept_pages::tests::keeping_works(dir.path()) {
            return Ok(());
        }
        let store = crate::Store::open(dir.path().join("store"))?;
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
        let files = |family: &'static str| -> Result<Vec<(u16, bool)>> {
            let mut files: Vec<(u16, bool)> = store
                .db()
                .table_files(family)?
                .into_iter()
                .map(|(path, first_key)| {
                    let key = first_key.unwrap_or_default();
                    let value = u16::from_be_bytes([key[0], key[1]]);
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
}
