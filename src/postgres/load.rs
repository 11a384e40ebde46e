//! Bulk loads into the index: [`PgLoader`] (documents gathered and loaded a batch per
//! transaction, [`PgIndex::load_batch`]), what the batches did, and the stored ids a loader
//! assigns new ids past and looks keys up in, a batch at a time.

use super::tiers::Tiers;
use super::{col, connection, pg_error, PgIndex};
use crate::error::Result;
use crate::upsert::Entry;

/// Documents per transaction of a [`PgLoader`] by default: about 4 x 65,536 groups touched
/// ~15 times each.
pub const DEFAULT_LOAD_BATCH: usize = 1_000_000;

/// What one or more [`PgIndex::load_batch`]es did, as the store's bulk loader counts.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PgLoadSummary {
    /// Documents stored that were not in the index before.
    pub added: u64,
    /// Documents stored that replaced a stored document with the same id or key.
    pub replaced: u64,
    /// Stored documents removed because a loaded document took their external key.
    pub removed: u64,
    /// Adds superseded within a batch: a later add of the same id or external key won.
    pub superseded: u64,
}

impl std::ops::AddAssign for PgLoadSummary {
    fn add_assign(&mut self, other: PgLoadSummary) {
        self.added += other.added;
        self.replaced += other.replaced;
        self.removed += other.removed;
        self.superseded += other.superseded;
    }
}

impl PgIndex {
    /// The largest stored id as a `u64` (ids from 2^63 on are negative `bigint`s), `None`
    /// for an empty index: new ids go past it.
    ///
    /// # Errors
    /// [`Error::Postgres`](crate::Error::Postgres).
    pub async fn largest_id(&self) -> Result<Option<u64>> {
        let conn = connection(&self.pool).await?;
        // Two index probes: the largest negative id (the largest u64 if any), else the
        // largest non-negative one.
        let row = conn
            .query_one(
                "SELECT (SELECT max(id) FROM simhash_docs WHERE id < 0),
                        (SELECT max(id) FROM simhash_docs WHERE id >= 0)",
                &[],
            )
            .await
            .map_err(pg_error("read the largest id"))?;
        let (high, low): (Option<i64>, Option<i64>) = (col(&row, 0)?, col(&row, 1)?);
        Ok(high.or(low).map(|id| id as u64))
    }

    /// The ids of the documents stored under `keys`, in one statement; `None` for a key no
    /// document holds.
    ///
    /// # Errors
    /// [`Error::Postgres`](crate::Error::Postgres).
    pub async fn ids_for_keys(&self, keys: &[&str]) -> Result<Vec<Option<u64>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let conn = connection(&self.pool).await?;
        let wanted: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
        let rows = conn
            .query(
                "SELECT key, id FROM simhash_keys WHERE key = ANY($1)",
                &[&wanted],
            )
            .await
            .map_err(pg_error("read keys"))?;
        let mut owners = std::collections::HashMap::with_capacity(rows.len());
        for row in rows {
            let (key, id): (Vec<u8>, i64) = (col(&row, 0)?, col(&row, 1)?);
            owners.insert(key, id as u64);
        }
        Ok(wanted.iter().map(|k| owners.get(*k).copied()).collect())
    }
}

/// A bulk load into the index a batch at a time: entries are gathered, and every
/// `batch_size` of them are loaded in one transaction, by the rules of
/// [`PgIndex::load_batch`]: the new documents by binary COPY, their block entries packed in
/// this process. Entries carry their ids; a later entry of the same id or key replaces an
/// earlier one, as in any upsert.
///
/// A batch does not rewrite the groups it touches whole: it merges its new documents'
/// entries with the parts this load wrote to those groups in recent batches, as a binary
/// counter carries (batch `b` merges the parts of the trailing 1-bits of `b - 1`), so each
/// entry is rewritten about log2(batches) / 2 times and a group holds one part for each
/// 1-bit of the batch count. Groups whose stored entries a batch replaces or deletes, and
/// groups with delta rows, are packed whole.
///
/// A load that stops (an error, a lost connection, a killed process) leaves every batch
/// before it committed and nothing of the one in flight, so the index is consistent; loading
/// the same entries again finishes it, since each replaces itself by id.
#[derive(Debug)]
pub struct PgLoader<'a> {
    index: &'a PgIndex,
    batch_size: usize,
    pending: Vec<Entry>,
    tiers: Tiers,
    summary: PgLoadSummary,
    batches: u64,
    committed: u64,
}

impl<'a> PgLoader<'a> {
    /// A load into `index` in transactions of `batch_size` entries (at least 1; see
    /// [`DEFAULT_LOAD_BATCH`]): larger batches load faster and leave fewer parts per group,
    /// and hold more in memory (a few hundred bytes an entry).
    pub fn new(index: &'a PgIndex, batch_size: usize) -> PgLoader<'a> {
        PgLoader {
            index,
            batch_size: batch_size.max(1),
            pending: Vec::new(),
            tiers: Tiers::new(),
            summary: PgLoadSummary::default(),
            batches: 0,
            committed: 0,
        }
    }

    /// Gathers `entries`, loading each batch as it fills.
    ///
    /// # Errors
    /// As [`PgIndex::load_batch`]; the batch that failed is not written, nor are the
    /// entries gathered after it.
    pub async fn add_all(&mut self, entries: impl IntoIterator<Item = Entry>) -> Result<()> {
        for entry in entries {
            self.pending.push(entry);
            if self.pending.len() >= self.batch_size {
                self.flush().await?;
            }
        }
        Ok(())
    }

    /// Loads the gathered entries now, as one batch (nothing if none are gathered).
    ///
    /// # Errors
    /// As [`PgIndex::load_batch`]; on error nothing of the batch is written.
    pub async fn flush(&mut self) -> Result<()> {
        let entries = std::mem::take(&mut self.pending);
        if entries.is_empty() {
            return Ok(());
        }
        let n = entries.len() as u64;
        self.summary += self.index.load_tier(entries, self.tiers.next()).await?;
        self.tiers.committed();
        self.batches += 1;
        self.committed += n;
        Ok(())
    }

    /// Loads what is gathered and returns what the whole load did.
    ///
    /// # Errors
    /// As [`PgLoader::flush`].
    pub async fn finish(mut self) -> Result<PgLoadSummary> {
        self.flush().await?;
        Ok(self.summary)
    }

    /// What the committed batches did.
    pub fn summary(&self) -> PgLoadSummary {
        self.summary
    }

    /// The batches committed.
    pub fn batches(&self) -> u64 {
        self.batches
    }

    /// The entries of the committed batches.
    pub fn committed(&self) -> u64 {
        self.committed
    }

    /// Where a load that stopped left the index, for its error message: the batches
    /// committed and the batch not written.
    pub fn stopped(&self) -> String {
        match (self.batches, self.committed) {
            (0, _) => "each batch is one transaction: no batch of this load was committed before the one that failed, and nothing of that one is in the index".to_owned(),
            (1, n) => format!(
                "each batch is one transaction: the 1 batch of this load before the one that failed ({n} {}) is in the index, nothing of that one is",
                if n == 1 { "entry" } else { "entries" }
            ),
            (b, n) => format!(
                "each batch is one transaction: the {b} batches of this load before the one that failed ({n} entries) are in the index, nothing of that one is"
            ),
        }
    }
}
