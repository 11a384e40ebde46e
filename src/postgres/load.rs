//! What a bulk load into the index needs beside [`PgIndex::load_batch`]: what a batch did,
//! and the stored ids a loader assigns new ids past and looks keys up in, a batch at a time.

use super::{col, connection, pg_error, PgIndex};
use crate::error::Result;

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
