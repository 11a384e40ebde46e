//! A query's read of the block families: in each family the groups within that family's
//! pigeonhole radius of the query's block ([`pigeonhole::query_radii`]). In the packed layout
//! their chunks are scanned in place ([`Chunk::scan`]) without decoding the entries that do
//! not match; in the entries layout the groups' keys are stepped through, or read from the
//! query cache.

use rayon::prelude::*;

use super::cache::PostingsCache;
use super::chunk::{Chunk, Ids, IdsLayout};
use super::groups::malformed_error;
use super::{Db, Postings};
use crate::codec::{self, Delta};
use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::keys::{self, PackedKey, BLOCK_FAMILIES};
use crate::pigeonhole;
use crate::storage::{FamilyRef, Reading, View};

/// A candidate of one group: (remainder, id, distance, segment of its chunk; `u32::MAX` for
/// an added delta).
type Candidate = (u64, u64, u32, u32);

/// Reads in flight at once with concurrent reads (for all queries together: they share the
/// threads): a disk serves more bytes per second with more requests queued (this machine's:
/// 128 KiB reads, 470 MB/s one at a time, 670 four at a time, 930 eight at a time, 990
/// sixteen; `benches/disk_reads.py`).
const IO_THREADS: usize = 8;

/// The threads that read the groups of a query at once
/// ([`crate::StoreBuilder::concurrent_reads`]): [`IO_THREADS`], apart from rayon's pool, whose
/// threads are the cores' for computing. Made on first use; `None` if the threads cannot be
/// started (then families are read one after another).
fn io_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(IO_THREADS)
            .thread_name(|i| format!("simhash-store-read-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// How a query reads the block families of the packed layout; the store chooses from its
/// size, at open and after each bulk load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reads {
    /// The families at once, on [`io_pool`]'s threads (a store read from disk); with
    /// `whole_groups`, every group of the query at once (a k = 6 query reads 52).
    pub(crate) concurrent: bool,
    /// Each group is read in one request: an iterator bounded to the group that reads ahead
    /// up to [`GROUP_READAHEAD`] bytes (RocksDB trims it to the bound), instead of one disk
    /// read per data block. On with concurrent reads and positioned reads (a store read from
    /// disk): at a billion documents a group's chunks are about 78 KB in four values (their
    /// ids apart), and reading each group in one request took a fresh k = 3 query from a cold
    /// page cache from 1.0-1.2 ms to 0.6-0.8 (format 7, ids inside the chunks).
    pub(crate) whole_groups: bool,
    /// Data blocks read go into the block cache. With positioned reads (`pread`) worth it
    /// only while the block families fit in the cache: beyond that a fresh query's blocks are
    /// nearly never there, and inserting each one (an allocation, a copy, an eviction) is pure
    /// cost: at 100M documents a fresh k = 3 query takes 50 µs instead of 67, k = 6 780
    /// instead of 1,080 (the store chooses, [`crate::store::CacheFill`]).
    pub(crate) fill_cache: bool,
}

/// The most a query reads ahead in one group when [`Reads::whole_groups`] is on. RocksDB
/// trims each read to the group's end (the iterator's upper bound), so this only caps the
/// read of a group larger than it.
pub(crate) const GROUP_READAHEAD: usize = 2 << 20;

/// A query's probe of the block families: every document within `k` of `q` in `view` of
/// `db`, probing in each family `i` the groups within `radii[i]` of the query's block
/// ([`pigeonhole::query_radii`]; none if `None`), each document from one family only.
#[derive(Clone, Copy)]
pub(crate) struct Probe<'v, 'db> {
    pub(crate) db: Db<'db>,
    pub(crate) view: &'v View<'db>,
    /// The query cache's epoch, read before `view` was taken (entries layout).
    pub(crate) epoch: u64,
    pub(crate) q: Fingerprint,
    pub(crate) k: u32,
    pub(crate) radii: [Option<u32>; BLOCKS],
    /// How the packed layout reads.
    pub(crate) reads: Reads,
}

impl Postings {
    /// Pushes (id, fingerprint, distance) of every document that `probe` finds onto `found`.
    pub(crate) fn probe(
        &self,
        probe: Probe<'_, '_>,
        found: &mut Vec<(u64, Fingerprint, u32)>,
    ) -> Result<()> {
        let Probe {
            q, radii, reads, ..
        } = probe;
        match self {
            Postings::Entries { cache } => probe_entries(probe, cache.as_ref(), found),
            Postings::Packed(_) => {
                // The block values each family reads (none for a family without a radius).
                let values = |i: usize| {
                    radii[i].map(|radius| pigeonhole::values_within(q.blocks()[i], radius))
                };
                let read = |i: usize, values: &[u16], found: &mut Vec<_>| {
                    probe_packed(probe, i, values, found)
                };
                match reads.concurrent.then(io_pool).flatten() {
                    Some(pool) => {
                        // Groups read whole are read one per task, so that all of a query's
                        // are in flight together; otherwise one task per family.
                        let families: Vec<(usize, Vec<u16>)> =
                            (0..BLOCKS).filter_map(|i| Some((i, values(i)?))).collect();
                        let tasks: Vec<(usize, &[u16])> = families
                            .iter()
                            .flat_map(|(i, values)| {
                                let per_task = if reads.whole_groups { 1 } else { values.len() };
                                values.chunks(per_task.max(1)).map(|part| (*i, part))
                            })
                            .collect();
                        let parts: Vec<Result<Vec<(u64, Fingerprint, u32)>>> = pool.install(|| {
                            tasks
                                .par_iter()
                                .with_max_len(1)
                                .map(|&(i, values)| {
                                    let mut part = Vec::new();
                                    read(i, values, &mut part).map(|()| part)
                                })
                                .collect()
                        });
                        for part in parts {
                            found.extend(part?);
                        }
                    }
                    None => {
                        for i in 0..BLOCKS {
                            if let Some(values) = values(i) {
                                read(i, &values, found)?;
                            }
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// Reads the block families of `view` of `db` into the query cache until it is full or
    /// holds every group, and returns the number of groups cached: 0 without a cache (the
    /// packed layout has none).
    pub(crate) fn preload_cache(&self, db: Db<'_>, view: &View<'_>) -> Result<u64> {
        let Some(cache) = self.cache() else {
            return Ok(0);
        };
        let epoch = cache.epoch();
        let mut cached = 0;
        for (i, family) in BLOCK_FAMILIES.iter().enumerate() {
            let mut it = view.cursor(db.block(i)?, Reading::new().in_key_order());
            it.seek_to_first();
            let mut range: Vec<(Fingerprint, u64)> = Vec::new();
            let mut value = None;
            loop {
                let next = match it.key() {
                    Some(key) => {
                        Some(keys::decode_block_key(i, key).ok_or_else(|| bad_key(family, key))?)
                    }
                    None => None,
                };
                let next_value = next.map(|(fp, _)| fp.blocks()[i]);
                if let Some(v) = value.filter(|&v| Some(v) != next_value) {
                    if !cache.has_room_for(range.len()) {
                        return Ok(cached);
                    }
                    cache.insert(i, v, epoch, std::mem::take(&mut range));
                    cached += 1;
                }
                let Some((fp, id)) = next else { break };
                value = next_value;
                range.push((fp, id));
                it.next();
            }
            it.status()?;
        }
        Ok(cached)
    }
}

/// The error for a block key of the entries layout that is not 16 bytes.
fn bad_key(family: &'static str, key: &[u8]) -> Error {
    Error::Decode {
        column_family: family,
        key: keys::hex(key),
        what: "block key",
        message: format!("expected 16 bytes, found {}", key.len()),
    }
}

/// [`Postings::probe`] in the entries layout, through the query cache (if any).
fn probe_entries(
    probe: Probe<'_, '_>,
    cache: Option<&PostingsCache>,
    found: &mut Vec<(u64, Fingerprint, u32)>,
) -> Result<()> {
    let Probe {
        db,
        view: snapshot,
        epoch,
        q,
        k,
        radii,
        ..
    } = probe;
    let qb = q.blocks();
    let mut check = |fp: Fingerprint, id: u64, i: usize| {
        let d = fp.distance(q);
        if d <= k && pigeonhole::query_reporting_family(fp.0, q.0, &radii) == Some(i) {
            found.push((id, fp, d));
        }
    };
    let mut range: Vec<(Fingerprint, u64)> = Vec::new();
    for (i, family) in BLOCK_FAMILIES.iter().enumerate() {
        let Some(radius) = radii[i] else { continue };
        let values = pigeonhole::values_within(qb[i], radius);
        // Created only when a range is not in the query cache.
        let mut it = None;
        for &v in &values {
            if let Some(postings) = cache.and_then(|c| c.get(i, v, epoch)) {
                for &(fp, id) in postings.entries.iter() {
                    check(fp, id, i);
                }
                continue;
            }
            let it = match &mut it {
                Some(it) => it,
                None => it.insert(snapshot.cursor(db.block(i)?, Reading::new())),
            };
            let prefix = keys::block_prefix(v);
            range.clear();
            it.seek(keys::group_start(v));
            while let Some(key) = it.key() {
                if !key.starts_with(&prefix) {
                    break;
                }
                let (fp, id) =
                    keys::decode_block_key(i, key).ok_or_else(|| bad_key(family, key))?;
                check(fp, id, i);
                if cache.is_some() {
                    range.push((fp, id));
                }
                it.next();
            }
            it.status()?;
            if let Some(cache) = cache {
                cache.insert(i, v, epoch, std::mem::take(&mut range));
            }
        }
    }
    Ok(())
}

/// Pushes (id, fingerprint, distance) of every document within `k` of `q` onto `found`,
/// probing in family `i` each block value of `values` (sorted); only documents that family
/// `i` reports ([`pigeonhole::query_reporting_family`] with `radii`, so each document comes
/// from one family). Packed layout only.
fn probe_packed(
    probe: Probe<'_, '_>,
    i: usize,
    values: &[u16],
    found: &mut Vec<(u64, Fingerprint, u32)>,
) -> Result<()> {
    let Probe {
        db,
        view,
        q,
        k,
        radii,
        reads,
        ..
    } = probe;
    let family = BLOCK_FAMILIES[i];
    let cf = db.block(i)?;
    let (q_value, q_rem) = keys::split(i, q);
    let first_family = |fp: Fingerprint| pigeonhole::query_reporting_family(fp.0, q.0, &radii);
    // With whole-group reads, an iterator per group bounded to its chunks (so that RocksDB
    // trims its read-ahead to them, leaving their ids); otherwise one iterator seeking from
    // group to group.
    let options = |group: Option<u16>| {
        let options = Reading::new().fill_cache(reads.fill_cache);
        match group {
            Some(v) => options
                .readahead(GROUP_READAHEAD)
                .upper_bound(keys::ids_prefix(v)),
            None => options,
        }
    };
    let mut bound = values.first().copied().filter(|_| reads.whole_groups);
    let mut it = view.cursor(cf, options(bound));
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut removals: Vec<(u64, u64, u32)> = Vec::new();
    // Matches in chunks whose ids are apart: (remainder, entry, distance, chunk of `apart`).
    let mut unresolved: Vec<(u64, usize, u32, usize)> = Vec::new();
    // Those chunks: (segment, number, what reading their ids takes).
    let mut apart: Vec<(u32, u32, IdsLayout)> = Vec::new();
    for &v in values {
        let outside = (v ^ q_value).count_ones();
        if outside > k {
            continue;
        }
        let budget = k - outside;
        candidates.clear();
        removals.clear();
        unresolved.clear();
        apart.clear();
        let prefix = keys::block_prefix(v);
        if reads.whole_groups && bound != Some(v) {
            bound = Some(v);
            it = view.cursor(cf, options(bound));
        }
        it.seek(keys::group_start(v));
        // The group's deltas come first (so its removals are known before its chunks are
        // scanned), then its chunks; a final chunk is the group's last chunk, and the chunks'
        // ids (format 8) follow them.
        while let (Some(key), Some(value)) = (it.key(), it.value()) {
            if !key.starts_with(&prefix) {
                break;
            }
            match keys::decode_packed_key(i, key) {
                Some(PackedKey::Chunk {
                    segment, number, ..
                }) => match Chunk::parse(value) {
                    Ok(chunk) => {
                        let ids = chunk.ids();
                        let at = apart.len();
                        let mut matched = false;
                        chunk.scan(q_rem, budget, |rem, e, d| match ids {
                            Some(ids) => candidates.push((rem, ids.get(e), d + outside, segment)),
                            // Ids are read only for a document this family reports.
                            None if first_family(keys::join(i, v, rem)) == Some(i) => {
                                matched = true;
                                unresolved.push((rem, e, d + outside, at));
                            }
                            None => {}
                        });
                        if matched {
                            apart.push((segment, number, chunk.ids_layout()));
                        }
                        if chunk.is_final() {
                            break;
                        }
                    }
                    Err(message) => malformed_error(family, key, format!("chunk: {message}"))?,
                },
                // A split segment (`write.rs`): its copies are read by parts (`SplitRead`).
                Some(PackedKey::SplitMark { segment, .. }) => {
                    let split = SplitRead {
                        view,
                        cf,
                        family,
                        value: v,
                        segment,
                        q_rem,
                        budget,
                        outside,
                        reads,
                    };
                    candidates.extend(split.read()?);
                    // On to the chunks of older segments, if any.
                    match segment.checked_sub(1) {
                        Some(older) => {
                            it.seek(keys::chunk_key(v, older, 0));
                            continue;
                        }
                        None => break,
                    }
                }
                // The ids and the copies of split segments follow the chunks.
                Some(PackedKey::Ids { .. } | PackedKey::Part { .. }) => break,
                Some(PackedKey::Delta { fingerprint, id }) => {
                    let (_, rem) = keys::split(i, fingerprint);
                    match codec::decode_delta(value) {
                        Some(Delta::Added) => {
                            let d = fingerprint.distance(q);
                            if d <= k {
                                candidates.push((rem, id, d, u32::MAX));
                            }
                        }
                        Some(Delta::Removed { watermark }) => {
                            removals.push((rem, id, watermark));
                        }
                        None => {
                            malformed_error(family, key, format!("a {}-byte delta", value.len()))?
                        }
                    }
                }
                None => malformed_error(family, key, "not a key of the packed layout".into())?,
            }
            it.next();
        }
        it.status()?;
        // The ids of the chunks that matched, each read once.
        for (at, &(segment, number, layout)) in apart.iter().enumerate() {
            let key = keys::ids_key(v, segment, number);
            let bytes = view.get_with(cf, key, Reading::new().fill_cache(reads.fill_cache))?;
            let Some(bytes) = bytes else {
                malformed_error(family, &key, "the ids of a chunk are missing".into())?;
                continue;
            };
            let ids = match Ids::parse(&bytes, layout) {
                Ok(ids) => ids,
                Err(message) => {
                    malformed_error(family, &key, format!("ids: {message}"))?;
                    continue;
                }
            };
            for &(rem, e, d, _) in unresolved.iter().filter(|u| u.3 == at) {
                candidates.push((rem, ids.get(e), d, segment));
            }
        }
        for &(rem, id, d, segment) in &candidates {
            // A delta (segment `u32::MAX`) is never hidden; removals are in key order:
            // sorted by (remainder, id).
            let hidden = segment != u32::MAX
                && !removals.is_empty()
                && removals
                    .binary_search_by(|r| (r.0, r.1).cmp(&(rem, id)))
                    .is_ok_and(|at| segment < removals[at].2);
            let fp = keys::join(i, v, rem);
            if !hidden && first_family(fp) == Some(i) {
                found.push((id, fp, d));
            }
        }
    }
    Ok(())
}

/// The read of one segment of a split group (`write.rs`) by a query: in each part's copy the
/// chunks of the part values within that part's radius of the query's (the pigeonhole rule
/// over the four parts, with the `budget` bits left for the remainder; an entry found in
/// several is reported by the first part within its radius); for a budget that would read too
/// many part values, part 0's copy whole (each entry once).
struct SplitRead<'v, 'db> {
    view: &'v View<'db>,
    cf: FamilyRef<'v>,
    family: &'static str,
    value: u16,
    segment: u32,
    q_rem: u64,
    budget: u32,
    outside: u32,
    reads: Reads,
}

impl SplitRead<'_, '_> {
    /// The candidates of the segment. With concurrent reads, the part values are read at once
    /// on the I/O threads (from disk, four reads one after another took a query landing on a
    /// split group of 1B documents four times a uniform query's time).
    fn read(&self) -> Result<Vec<Candidate>> {
        let radii = pigeonhole::query_radii(self.budget);
        let mut ranges: Vec<(usize, u16, u16)> = Vec::new();
        for (j, radius) in radii.iter().enumerate() {
            if let Some(radius) = radius {
                let sub = pigeonhole::part(self.q_rem, j);
                ranges.extend(
                    pigeonhole::part_values_within(sub, *radius)
                        .into_iter()
                        .map(|s| (j, s, s)),
                );
            }
        }
        let by_part = ranges.len() <= pigeonhole::MAX_PART_VALUES_READ;
        if !by_part {
            ranges = vec![(0, 0, 0xfff)];
        }
        let reporting = by_part.then_some(&radii);
        let mut candidates = Vec::new();
        match self.reads.concurrent.then(io_pool).flatten() {
            Some(pool) if ranges.len() > 1 => {
                let parts: Vec<Result<Vec<Candidate>>> = pool.install(|| {
                    ranges
                        .par_iter()
                        .with_max_len(1)
                        .map(|&range| {
                            let mut part = Vec::new();
                            self.read_range(range, reporting, &mut part).map(|()| part)
                        })
                        .collect()
                });
                for part in parts {
                    candidates.extend(part?);
                }
            }
            _ => {
                for &range in &ranges {
                    self.read_range(range, reporting, &mut candidates)?;
                }
            }
        }
        Ok(candidates)
    }

    /// Pushes the candidates of part `j`'s copy, part values `first..=last`, onto `out`; with
    /// `reporting` (the parts' radii), only those that part `j` reports.
    fn read_range(
        &self,
        (j, first, last): (usize, u16, u16),
        reporting: Option<&[Option<u32>; pigeonhole::PARTS]>,
        out: &mut Vec<Candidate>,
    ) -> Result<()> {
        let (v, segment) = (self.value, self.segment);
        let end = keys::part_end(v, segment, j, last);
        let mut options = Reading::new().fill_cache(self.reads.fill_cache);
        if self.reads.whole_groups {
            // The part values' chunks in one bounded read.
            options = options.readahead(GROUP_READAHEAD);
        }
        let mut it = self.view.cursor(self.cf, options.upper_bound(end));
        it.seek(keys::part_start(v, segment, j, first));
        while let (Some(key), Some(value)) = (it.key(), it.value()) {
            match Chunk::parse(value).map(|c| (c, c.ids())) {
                Ok((chunk, Some(ids))) => {
                    chunk.scan(self.q_rem, self.budget, |rem, e, d| {
                        let reported = reporting.is_none_or(|radii| {
                            pigeonhole::reporting_part(rem, self.q_rem, radii) == Some(j)
                        });
                        if reported {
                            out.push((rem, ids.get(e), d + self.outside, segment));
                        }
                    });
                }
                Ok((_, None)) => {
                    malformed_error(self.family, key, "a part chunk without ids".into())?
                }
                Err(message) => malformed_error(self.family, key, format!("chunk: {message}"))?,
            }
            it.next();
        }
        it.status()
    }
}
