//! The four block families in PostgreSQL: packed chunks per group (`simhash_groups`) and the
//! entries put or deleted since (`simhash_deltas`), what a query reads of them, and the fold
//! that packs a group's deltas into its chunks.
//!
//! A group holds an entry `(remainder, id)` if its delta row says `live`, or if it has no
//! delta row and one of its chunks holds the entry. A write puts delta rows only (a few
//! dozen bytes of WAL each, instead of rewriting a chunk of a few kilobytes); the writer
//! folds a group once it has [`FOLD_AT`] delta rows, in the same transaction.

use std::collections::{HashMap, HashSet};

use deadpool_postgres::{GenericClient, Transaction};
use rayon::prelude::*;

use super::tiers::{self, Tier};
use super::{col, pg_error};
use crate::error::{Error, Result};
use crate::pigeonhole::{self, BLOCKS, BLOCK_VALUES};
use crate::postings::chunk::{self, Chunk, MAX_ENTRIES};

/// A group's delta rows that make the writer fold it.
pub(crate) const FOLD_AT: i64 = 64;

/// Group number of block `value` of family `family`: `family * 65536 + value`.
pub(crate) fn group(family: usize, value: u16) -> i32 {
    (family * BLOCK_VALUES + usize::from(value)) as i32
}

/// The family and block value of group `grp`, if it is one.
fn family_value(grp: i32) -> Option<(usize, u16)> {
    let g = usize::try_from(grp).ok()?;
    let family = g / BLOCK_VALUES;
    (family < BLOCKS).then_some((family, (g % BLOCK_VALUES) as u16))
}

/// The four (group, remainder) entries of fingerprint `fp`.
pub(crate) fn entries_of(fp: u64) -> [(i32, u64); BLOCKS] {
    std::array::from_fn(|i| {
        let (value, remainder) = pigeonhole::split(fp, i);
        (group(i, value), remainder)
    })
}

/// The groups a query of distance `k` reads, each with how many bits of `k` the group's
/// block already differs by: the pigeonhole rule's groups ([`pigeonhole::query_radii`]), or
/// every group of family 0 where they would be more (a full scan, at large `k`).
pub(crate) fn probes(fp: u64, k: u32) -> Vec<(i32, u32)> {
    let radii = pigeonhole::query_radii(k);
    let probes: usize = radii
        .iter()
        .flatten()
        .map(|&r| pigeonhole::masks(r).len())
        .sum();
    let radii = if probes > BLOCK_VALUES {
        [Some(pigeonhole::BLOCK_BITS), None, None, None]
    } else {
        radii
    };
    let mut out = Vec::with_capacity(probes.min(BLOCK_VALUES));
    for (i, r) in radii.iter().enumerate() {
        let Some(r) = *r else { continue };
        let block = pigeonhole::block(fp, i);
        for &m in pigeonhole::masks(r) {
            out.push((group(i, block ^ m), m.count_ones()));
        }
    }
    out
}

/// What a query read of some groups: their chunks and delta rows.
#[derive(Default)]
pub(crate) struct GroupsRead {
    chunks: HashMap<i32, Vec<Vec<u8>>>,
    /// Delta rows by group: (remainder, id, live).
    deltas: HashMap<i32, Vec<(u64, u64, bool)>>,
}

/// The statement that reads groups' chunks and delta rows. The delta rows are read group by
/// group through the primary key (`OFFSET 0` keeps the planner from turning the lookups into
/// one join): the table churns too fast for its statistics, and with stale ones the planner
/// scanned all of it for a few groups.
const READ_GROUPS: &str = "
SELECT grp, chunk, NULL::bigint, NULL::bigint, NULL::boolean FROM simhash_groups WHERE grp = ANY($1)
UNION ALL
SELECT g.grp, NULL, d.remainder, d.id, d.live FROM unnest($1::integer[]) AS g(grp)
CROSS JOIN LATERAL (
    SELECT remainder, id, live FROM simhash_deltas WHERE simhash_deltas.grp = g.grp OFFSET 0
) AS d";

impl GroupsRead {
    /// The read of groups' chunks, without delta rows.
    pub(crate) fn from_chunks(chunks: HashMap<i32, Vec<Vec<u8>>>) -> GroupsRead {
        GroupsRead {
            chunks,
            deltas: HashMap::new(),
        }
    }

    /// Reads `groups` in one statement.
    pub(crate) async fn read(client: &impl GenericClient, groups: &[i32]) -> Result<GroupsRead> {
        let stmt = client
            .prepare_cached(READ_GROUPS)
            .await
            .map_err(pg_error("prepare the group read"))?;
        let rows = client
            .query(&stmt, &[&groups])
            .await
            .map_err(pg_error("read groups"))?;
        let mut read = GroupsRead::default();
        for row in rows {
            let grp: i32 = col(&row, 0)?;
            match col::<Option<Vec<u8>>>(&row, 1)? {
                Some(chunk) => read.chunks.entry(grp).or_default().push(chunk),
                None => {
                    let (remainder, id, live): (i64, i64, bool) =
                        (col(&row, 2)?, col(&row, 3)?, col(&row, 4)?);
                    read.deltas
                        .entry(grp)
                        .or_default()
                        .push((remainder as u64, id as u64, live));
                }
            }
        }
        Ok(read)
    }

    /// The number of delta rows read of each of `groups` (groups this read read).
    pub(crate) fn delta_counts(&self, groups: &[i32]) -> HashMap<i32, usize> {
        groups
            .iter()
            .map(|&grp| (grp, self.deltas.get(&grp).map_or(0, Vec::len)))
            .collect()
    }

    /// Calls `found(id, fingerprint, distance)` for every entry of group `grp` within `k`
    /// bits of `fp`, whose block differs from the group's in `block_bits` bits.
    pub(crate) fn scan(
        &self,
        grp: i32,
        fp: u64,
        k: u32,
        block_bits: u32,
        mut found: impl FnMut(u64, u64, u32),
    ) -> Result<()> {
        let Some((family, value)) = family_value(grp) else {
            return Ok(());
        };
        let Some(budget) = k.checked_sub(block_bits) else {
            return Ok(());
        };
        let (_, query) = pigeonhole::split(fp, family);
        let deltas = self.deltas.get(&grp).map_or(&[][..], Vec::as_slice);
        let changed: HashSet<(u64, u64)> = deltas.iter().map(|&(r, id, _)| (r, id)).collect();
        for bytes in self.chunks.get(&grp).into_iter().flatten() {
            let chunk = parse(grp, bytes)?;
            let ids = chunk_ids(grp, &chunk)?;
            chunk.scan(query, budget, |remainder, e, _| {
                let id = ids.get(e);
                if !changed.contains(&(remainder, id)) {
                    let x = pigeonhole::join(family, value, remainder);
                    found(id, x, (x ^ fp).count_ones());
                }
            });
        }
        for &(remainder, id, live) in deltas {
            let x = pigeonhole::join(family, value, remainder);
            let d = (x ^ fp).count_ones();
            if live && d <= k {
                found(id, x, d);
            }
        }
        Ok(())
    }

    /// Every entry of group `grp`, sorted by (remainder, id).
    pub(crate) fn entries(&self, grp: i32) -> Result<Vec<(u64, u64)>> {
        let mut entries = Vec::new();
        for bytes in self.chunks.get(&grp).into_iter().flatten() {
            let chunk = parse(grp, bytes)?;
            let ids = chunk_ids(grp, &chunk)?;
            chunk.for_each(&ids, |remainder, id| entries.push((remainder, id)));
        }
        // Each chunk is sorted: a stable sort merges their runs.
        entries.sort();
        entries.dedup();
        let Some(deltas) = self.deltas.get(&grp).filter(|d| !d.is_empty()) else {
            return Ok(entries);
        };
        let mut changes: Vec<(i32, u64, u64, bool)> = deltas
            .iter()
            .map(|&(remainder, id, live)| (grp, remainder, id, live))
            .collect();
        changes.sort_unstable_by_key(|&(_, remainder, id, _)| (remainder, id));
        Ok(merge(entries, &changes))
    }
}

/// Group `grp`'s chunk `bytes`, checked.
fn parse(grp: i32, bytes: &[u8]) -> Result<Chunk<'_>> {
    Chunk::parse(bytes).map_err(|message| malformed(grp, message))
}

/// The inline ids of a chunk of group `grp`.
fn chunk_ids<'a>(grp: i32, chunk: &Chunk<'a>) -> Result<chunk::Ids<'a>> {
    chunk
        .ids()
        .ok_or_else(|| malformed(grp, "a chunk without inline ids".to_owned()))
}

fn malformed(grp: i32, message: String) -> Error {
    Error::Decode {
        column_family: "simhash_groups",
        key: format!("grp {grp}"),
        what: "packed chunk",
        message,
    }
}

/// Delta rows to write: (group, remainder, id, live), in the order set. A later write of an
/// entry replaces an earlier one.
#[derive(Default)]
pub(crate) struct Deltas(Vec<(i32, u64, u64, bool)>);

impl Deltas {
    /// Entry `(fp, id)` is put in its four groups (`live`) or deleted from them.
    pub(crate) fn set(&mut self, fp: u64, id: u64, live: bool) {
        for (grp, remainder) in entries_of(fp) {
            self.0.push((grp, remainder, id, live));
        }
    }

    /// The rows sorted by (group, remainder, id), each entry once: its last write.
    fn sorted(self) -> Vec<(i32, u64, u64, bool)> {
        // Stable throughout: the writes of one entry stay in order, and the last is kept.
        let mut rows = by_group(self.0);
        rows.par_chunk_by_mut(|a, b| a.0 == b.0)
            .for_each(|group| group.sort_by_key(|&(_, remainder, id, _)| (remainder, id)));
        let mut out: Vec<(i32, u64, u64, bool)> = Vec::with_capacity(rows.len());
        for row in rows {
            match out.last_mut() {
                Some(last) if (last.0, last.1, last.2) == (row.0, row.1, row.2) => *last = row,
                _ => out.push(row),
            }
        }
        out
    }

    /// Writes the rows, then folds each group they touch that has [`FOLD_AT`] rows or more.
    /// `counted` holds the number of delta rows of groups the transaction read before; the
    /// others are counted. The caller holds the writer lock.
    pub(crate) async fn write(
        self,
        client: &Transaction<'_>,
        counted: &HashMap<i32, usize>,
    ) -> Result<()> {
        let rows = self.sorted();
        if rows.is_empty() {
            return Ok(());
        }
        let n = rows.len();
        let (mut grps, mut remainders, mut ids, mut lives) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for &(grp, remainder, id, live) in &rows {
            grps.push(grp);
            remainders.push(remainder as i64);
            ids.push(id as i64);
            lives.push(live);
        }
        client
            .execute(
                "INSERT INTO simhash_deltas (grp, remainder, id, live)
                 SELECT * FROM unnest($1::integer[], $2::bigint[], $3::bigint[], $4::boolean[])
                 ON CONFLICT (grp, remainder, id) DO UPDATE SET live = excluded.live",
                &[&grps, &remainders, &ids, &lives],
            )
            .await
            .map_err(pg_error("write block entries"))?;
        // A group read before holds at most its rows then and the rows written now (fewer
        // if some replaced one); folding a group early is harmless.
        let mut due: Vec<i32> = Vec::new();
        let mut uncounted: Vec<i32> = Vec::new();
        for run in grps.chunk_by(|a, b| a == b) {
            match counted.get(&run[0]) {
                Some(&before) if (before + run.len()) as i64 >= FOLD_AT => due.push(run[0]),
                Some(_) => {}
                None => uncounted.push(run[0]),
            }
        }
        // The others are counted group by group, through the primary key (see
        // [`READ_GROUPS`]).
        const COUNT_DUE: &str = "SELECT g.grp FROM unnest($1::integer[]) AS g(grp)
            WHERE (SELECT count(*) FROM simhash_deltas AS d WHERE d.grp = g.grp) >= $2";
        let counted_due: Vec<i32> = if uncounted.is_empty() {
            Vec::new()
        } else {
            client
                .query(COUNT_DUE, &[&uncounted, &FOLD_AT])
                .await
                .map_err(pg_error("count block entries to fold"))?
                .iter()
                .map(|row| col(row, 0))
                .collect::<Result<_>>()?
        };
        due.extend(counted_due);
        due.sort_unstable();
        fold(client, &due).await
    }
}

/// `rows` in group order, in their order within a group: a counting sort, one pass over
/// 262,144 counters instead of comparisons (a bulk load's batch has millions of rows).
fn by_group(rows: Vec<(i32, u64, u64, bool)>) -> Vec<(i32, u64, u64, bool)> {
    const GROUPS: usize = BLOCKS * BLOCK_VALUES;
    if rows.len() < GROUPS / 8 {
        let mut rows = rows;
        rows.sort_by_key(|&(grp, ..)| grp);
        return rows;
    }
    // Groups are 0..GROUPS (`group`); anything else would be a defect, kept last.
    let slot = |grp: i32| usize::try_from(grp).map_or(GROUPS, |g| g.min(GROUPS));
    let mut starts = vec![0usize; GROUPS + 2];
    for &(grp, ..) in &rows {
        starts[slot(grp) + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut out = vec![(0, 0, 0, false); rows.len()];
    for row in rows {
        let at = &mut starts[slot(row.0)];
        out[*at] = row;
        *at += 1;
    }
    out
}

impl Deltas {
    /// Packs the rows into the chunks of the groups they touch, with those groups' delta
    /// rows, instead of writing them: what a bulk load does. Rewrites every group touched.
    /// The caller holds the writer lock.
    pub(crate) async fn pack(self, client: &Transaction<'_>) -> Result<()> {
        let rows = self.sorted();
        let mut groups: Vec<i32> = rows.iter().map(|&(grp, ..)| grp).collect();
        groups.dedup();
        pack(client, &groups, &rows).await
    }
}

impl Deltas {
    /// What a batch of a [`PgLoader`](super::PgLoader) does with the rows: the live entries
    /// of documents new to the index go in `tier` of their groups ([`tiers::append`]), with
    /// no group read whole; every group that `rewrite` names (in any order; those the batch
    /// replaces or deletes entries of) or that has delta rows is packed whole, as
    /// [`Deltas::pack`] does. The caller holds the writer lock.
    pub(crate) async fn load(
        self,
        client: &Transaction<'_>,
        mut rewrite: Vec<i32>,
        tier: Tier,
    ) -> Result<()> {
        let rows = self.sorted();
        let mut touched: Vec<i32> = rows.iter().map(|&(grp, ..)| grp).collect();
        touched.dedup();
        let with_deltas: Vec<i32> = client
            .query(
                "SELECT DISTINCT grp FROM simhash_deltas WHERE grp = ANY($1)",
                &[&touched],
            )
            .await
            .map_err(pg_error("find groups with delta rows"))?
            .iter()
            .map(|row| col(row, 0))
            .collect::<Result<_>>()?;
        rewrite.extend(with_deltas);
        rewrite.sort_unstable();
        rewrite.dedup();
        let (packed, appended): (Vec<_>, Vec<_>) = rows
            .into_iter()
            .partition(|r| rewrite.binary_search(&r.0).is_ok());
        pack(client, &rewrite, &packed).await?;
        let mut groups: Vec<i32> = appended.iter().map(|&(grp, ..)| grp).collect();
        groups.dedup();
        tiers::append(client, &groups, &appended, tier).await
    }
}

/// Packs the delta rows of `groups` into their chunks. The caller holds the writer lock.
pub(crate) async fn fold(client: &Transaction<'_>, groups: &[i32]) -> Result<()> {
    pack(client, groups, &[]).await
}

/// Rewrites the chunks of `groups` (sorted, distinct) with their delta rows and `more`
/// (sorted, distinct, [`Deltas::sorted`]) applied, and deletes their delta rows. The caller
/// holds the writer lock.
async fn pack(
    client: &Transaction<'_>,
    groups: &[i32],
    more: &[(i32, u64, u64, bool)],
) -> Result<()> {
    if groups.is_empty() {
        return Ok(());
    }
    let read = GroupsRead::read(client, groups).await?;
    // Each group's entries merged and encoded on all cores; then written in group order.
    let packed: Vec<(i32, Vec<Vec<u8>>)> = groups
        .par_iter()
        .map(|&grp| {
            let entries = merge(read.entries(grp)?, rows_of(more, grp));
            Ok((grp, encode_chunks(&entries)))
        })
        .collect::<Result<_>>()?;
    client
        .execute("DELETE FROM simhash_groups WHERE grp = ANY($1)", &[&groups])
        .await
        .map_err(pg_error("rewrite groups"))?;
    client
        .execute("DELETE FROM simhash_deltas WHERE grp = ANY($1)", &[&groups])
        .await
        .map_err(pg_error("rewrite groups"))?;
    copy_chunks(client, &packed, |chunk| chunk as i32).await
}

/// The rows of group `grp` among `rows` (sorted by group).
pub(crate) fn rows_of(rows: &[(i32, u64, u64, bool)], grp: i32) -> &[(i32, u64, u64, bool)] {
    let from = rows.partition_point(|r| r.0 < grp);
    let to = rows.partition_point(|r| r.0 <= grp);
    &rows[from..to]
}

/// A group's `entries` (sorted, distinct) as chunks of up to [`MAX_ENTRIES`].
pub(crate) fn encode_chunks(entries: &[(u64, u64)]) -> Vec<Vec<u8>> {
    let n = entries.len().div_ceil(MAX_ENTRIES);
    entries
        .chunks(MAX_ENTRIES)
        .enumerate()
        .map(|(i, slice)| {
            let mut bytes = Vec::new();
            chunk::encode(slice, i + 1 == n, &mut bytes);
            bytes
        })
        .collect()
}

/// Writes packed chunks with binary COPY: (group, its chunks), the `i`th chunk of a group
/// as part `part(i)`.
pub(crate) async fn copy_chunks(
    client: &Transaction<'_>,
    packed: &[(i32, Vec<Vec<u8>>)],
    part: impl Fn(usize) -> i32,
) -> Result<()> {
    use tokio_postgres::binary_copy::BinaryCopyInWriter;
    use tokio_postgres::types::Type;
    let sink = client
        .copy_in("COPY simhash_groups (grp, part, chunk) FROM STDIN BINARY")
        .await
        .map_err(pg_error("write groups"))?;
    let writer = BinaryCopyInWriter::new(sink, &[Type::INT4, Type::INT4, Type::BYTEA]);
    let mut writer = std::pin::pin!(writer);
    for (grp, chunks) in packed {
        for (i, bytes) in chunks.iter().enumerate() {
            let part = part(i);
            writer
                .as_mut()
                .write(&[grp, &part, &bytes.as_slice()])
                .await
                .map_err(pg_error("write groups"))?;
        }
    }
    writer.finish().await.map_err(pg_error("write groups"))?;
    Ok(())
}

/// `entries` (sorted, distinct) with `changes` (sorted by remainder and id, distinct) applied.
fn merge(entries: Vec<(u64, u64)>, changes: &[(i32, u64, u64, bool)]) -> Vec<(u64, u64)> {
    if changes.is_empty() {
        return entries;
    }
    let mut out = Vec::with_capacity(entries.len() + changes.len());
    let mut old = entries.into_iter().peekable();
    for &(_, remainder, id, live) in changes {
        while let Some(&e) = old.peek() {
            if e >= (remainder, id) {
                break;
            }
            out.push(e);
            old.next();
        }
        if old.peek() == Some(&(remainder, id)) {
            old.next();
        }
        if live {
            out.push((remainder, id));
        }
    }
    out.extend(old);
    out
}

/// The groups that have delta rows, ascending.
pub(crate) async fn with_deltas(client: &impl GenericClient) -> Result<Vec<i32>> {
    client
        .query("SELECT DISTINCT grp FROM simhash_deltas ORDER BY grp", &[])
        .await
        .map_err(pg_error("find groups with delta rows"))?
        .iter()
        .map(|row| col(row, 0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_round_trip() {
        for family in 0..BLOCKS {
            for value in [0u16, 1, 0x8000, u16::MAX] {
                assert_eq!(family_value(group(family, value)), Some((family, value)));
            }
        }
        assert_eq!(family_value(-1), None);
        assert_eq!(family_value(group(3, u16::MAX) + 1), None);
    }

    #[test]
    fn merge_applies_the_changes() {
        let entries = vec![(1, 1), (2, 5), (3, 3)];
        let changes = [
            (0, 0, 9, true),
            (0, 2, 5, false),
            (0, 3, 3, true),
            (0, 4, 1, true),
        ];
        assert_eq!(merge(entries, &changes), [(0, 9), (1, 1), (3, 3), (4, 1)]);
        let mut d = Deltas::default();
        d.set(7, 1, true);
        d.set(7, 1, false);
        d.set(9, 2, true);
        let rows = d.sorted();
        assert_eq!(rows.len(), 8);
        assert!(
            rows.iter().all(|r| r.3 == (r.2 == 2)),
            "the last write of each entry wins"
        );
    }

    #[test]
    fn sorted_keeps_the_last_write_of_each_entry_at_any_size() {
        for n in [10u64, 50_000] {
            let mut d = Deltas::default();
            let mut x = 0x9e37_79b9_7f4a_7c15_u64;
            for i in 0..n {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                // Few distinct entries, so that most are written more than once.
                let fp = x % 512 * 0x0001_0001_0001_0001;
                d.set(fp, x >> 60, i % 3 != 0);
            }
            let mut want = d.0.clone();
            want.sort_by_key(|&(grp, remainder, id, _)| (grp, remainder, id));
            let mut last: Vec<(i32, u64, u64, bool)> = Vec::new();
            for row in want {
                match last.last_mut() {
                    Some(l) if (l.0, l.1, l.2) == (row.0, row.1, row.2) => *l = row,
                    _ => last.push(row),
                }
            }
            assert_eq!(d.sorted(), last, "{n} writes");
        }
    }

    #[test]
    fn probes_follow_the_rule() {
        // k <= 3: one group per family it reads.
        assert_eq!(probes(0, 3).len(), 4);
        assert_eq!(probes(0, 0).len(), 1);
        // Large k: all of family 0.
        assert_eq!(probes(0, 64).len(), BLOCK_VALUES);
    }
}
