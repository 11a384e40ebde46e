//! [`PgStagedBatch`]: the PostgreSQL index's [`StagedBatch`](crate::StagedBatch): upserts and
//! check-then-inserts decided one by one, in order, each against the index as the earlier
//! ones leave it, and committed as one transaction.
//!
//! The batch holds the writer lock from its start to its commit, so what it read stays true
//! until then. What the decisions need from the index (the near-duplicates of the entries'
//! fingerprints and the holders of their keys) is read ahead in two statements for the whole
//! batch ([`PgStagedBatch::read_ahead`]); the decisions are then the store's rules
//! ([`PendingAdds`]) over that read, and the commit is one upsert of every staged entry by
//! the store's planner.

use std::collections::HashMap;

use deadpool_postgres::Transaction;

use super::write::{begin, upsert, BlockWrites, ReadBefore};
use super::{col, connection, pg_error, query_reading, PgIndex};
use crate::dedup::{InsertOutcome, KeyHolder};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::query::Match;
use crate::upsert::plan::PendingAdds;
use crate::upsert::{check_key, Entries, Entry};

/// A connection of a [`PgIndex`]'s pool, held for a [`PgStagedBatch`]. A connection that
/// failed is not given back to the pool for reuse: the pool drops closed ones.
pub struct PgConnection(deadpool_postgres::Object);

impl std::fmt::Debug for PgConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConnection").finish_non_exhaustive()
    }
}

/// Writes decided one by one and committed together in one transaction under the writer
/// lock; dropping the batch rolls back and writes nothing.
pub struct PgStagedBatch<'c> {
    index: &'c PgIndex,
    tx: Transaction<'c>,
    pending: PendingAdds,
    /// Stored documents within `read_k` of each fingerprint read ahead.
    near: HashMap<u64, Vec<Match>>,
    read_k: u32,
    /// The stored holder of each key read ahead and the delta rows of each group read ahead,
    /// which the commit's upsert need not read again.
    before: ReadBefore,
    /// Past every stored id; `None` once id 2^64-1 is stored.
    next_id: Option<u64>,
}

impl std::fmt::Debug for PgStagedBatch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStagedBatch")
            .field("database", &self.index.database)
            .field("staged", &self.pending.len())
            .finish()
    }
}

impl PgIndex {
    /// A connection from the index's pool, for [`PgIndex::staged_batch`].
    ///
    /// # Errors
    /// [`Error::Postgres`] if the server cannot be reached.
    pub async fn connection(&self) -> Result<PgConnection> {
        Ok(PgConnection(connection(&self.pool).await?))
    }

    /// Starts a [`PgStagedBatch`] on `conn`: begins a transaction, takes the writer lock and
    /// reads the next free id.
    ///
    /// # Errors
    /// [`Error::Postgres`].
    pub async fn staged_batch<'c>(
        &'c self,
        conn: &'c mut PgConnection,
    ) -> Result<PgStagedBatch<'c>> {
        let tx = begin(&mut conn.0).await?;
        // Ids from 2^63 on are stored as negative bigints: the largest u64 is the largest
        // negative one if there is any.
        let row = tx
            .query_one(
                "SELECT (SELECT max(id) FROM simhash_docs WHERE id < 0), (SELECT max(id) FROM simhash_docs)",
                &[],
            )
            .await
            .map_err(pg_error("read the largest id"))?;
        let largest = col::<Option<i64>>(&row, 0)?.or(col::<Option<i64>>(&row, 1)?);
        let next_id = match largest {
            None => Some(0),
            Some(id) => (id as u64).checked_add(1),
        };
        Ok(PgStagedBatch {
            index: self,
            tx,
            pending: PendingAdds::default(),
            near: HashMap::new(),
            read_k: 0,
            before: ReadBefore::default(),
            next_id,
        })
    }
}

impl PgStagedBatch<'_> {
    /// The smallest id greater than every stored id (0 for an empty index), `None` once id
    /// 2^64-1 is stored: as [`Store::next_id`](crate::Store::next_id), read under the lock.
    pub fn next_id(&self) -> Option<u64> {
        self.next_id
    }

    /// The number of entries staged.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Whether no entry is staged.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Reads what deciding entries with fingerprints `fps` (at distances up to `k`) and keys
    /// `keys` needs from the index, in two statements. Reading again replaces the reads
    /// before.
    ///
    /// # Errors
    /// [`Error::Postgres`]; [`Error::Decode`] for a damaged chunk.
    pub async fn read_ahead(&mut self, fps: &[Fingerprint], keys: &[&str], k: u32) -> Result<()> {
        let mut fps: Vec<Fingerprint> = fps.to_vec();
        fps.sort_unstable_by_key(|fp| fp.0);
        fps.dedup();
        let (found, deltas) = {
            let (found, groups, read) = query_reading(&self.tx, &fps, k).await?;
            (found, read.delta_counts(&groups))
        };
        self.near = fps.iter().map(|fp| fp.0).zip(found).collect();
        self.read_k = k;
        let wanted: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
        let rows = self
            .tx
            .query(
                "SELECT key, id FROM simhash_keys WHERE key = ANY($1)",
                &[&wanted],
            )
            .await
            .map_err(pg_error("read keys"))?;
        let mut owners: HashMap<Vec<u8>, Option<u64>> =
            wanted.iter().map(|&k| (k.to_vec(), None)).collect();
        for row in rows {
            owners.insert(col::<Vec<u8>>(&row, 0)?, Some(col::<i64>(&row, 1)? as u64));
        }
        self.before = ReadBefore { owners, deltas };
        Ok(())
    }

    fn not_read(what: &str) -> Error {
        Error::InvalidArgument(format!(
            "PgStagedBatch: {what} was not read ahead: call read_ahead with every fingerprint and key of the batch first"
        ))
    }

    /// Who holds `key` once the staged entries are committed.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a key not read ahead.
    pub fn key_holder(&self, key: &str) -> Result<Option<KeyHolder>> {
        if let Some(owner) = self.pending.owner_of_key(key) {
            return Ok(owner.map(|(at, id)| KeyHolder::Staged { id, at }));
        }
        let stored = self
            .before
            .owners
            .get(key.as_bytes())
            .ok_or_else(|| Self::not_read("a key"))?;
        Ok(stored
            .filter(|&id| !self.pending.displace(id, None))
            .map(KeyHolder::Stored))
    }

    /// The documents within `k` of `fp` once the staged entries are committed, sorted by
    /// distance, then id.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a fingerprint not read ahead, or `k` above the
    /// distance read ahead.
    pub fn query(&self, fp: Fingerprint, k: u32) -> Result<Vec<Match>> {
        let stored = self
            .near
            .get(&fp.0)
            .filter(|_| k <= self.read_k)
            .ok_or_else(|| Self::not_read("a fingerprint"))?;
        let mut matches: Vec<Match> = stored
            .iter()
            .filter(|m| m.distance <= k && !self.pending.displace(m.id, m.key.as_deref()))
            .cloned()
            .collect();
        matches.extend(self.pending.within(fp, k).map(|(_, e, distance)| Match {
            id: e.id,
            fingerprint: e.fingerprint,
            distance,
            key: e.key.clone(),
        }));
        matches.sort_by_key(|m| (m.distance, m.id));
        Ok(matches)
    }

    /// Stages `entry`: an upsert, as [`PgIndex::insert_batch`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty key or one over 4096 bytes, or a sketch the
    /// index does not keep; nothing is staged then.
    pub fn insert(&mut self, entry: Entry) -> Result<()> {
        if entry.sketch.is_some() && !self.index.keeps_sketches() {
            return Err(Error::InvalidArgument(format!(
                "document {} comes with a sketch, but the index in {} keeps none: leave the sketch out",
                entry.id, self.index.database
            )));
        }
        if let Some(key) = &entry.key {
            check_key(entry.id, key)?;
        }
        self.pending.push(entry);
        Ok(())
    }

    /// Stages `entry` unless a document is within `k` of it as the index will be once the
    /// entries staged before are committed; the document it would replace does not count.
    ///
    /// # Errors
    /// As [`PgStagedBatch::query`] and [`PgStagedBatch::insert`].
    pub fn insert_if_new(&mut self, entry: Entry, k: u32) -> Result<InsertOutcome> {
        let matches: Vec<Match> = self
            .query(entry.fingerprint, k)?
            .into_iter()
            .filter(|m| !(m.id == entry.id || (entry.key.is_some() && m.key == entry.key)))
            .collect();
        if !matches.is_empty() {
            return Ok(InsertOutcome::Duplicate(matches));
        }
        self.insert(entry)?;
        Ok(InsertOutcome::Inserted)
    }

    /// Writes the staged entries as one upsert and commits the transaction. An error of the
    /// COMMIT itself (the connection lost while it ran) leaves the batch committed or not:
    /// resend its writes by id or key, which replace rather than duplicate.
    ///
    /// # Errors
    /// [`Error::Postgres`]; then nothing of the batch is written, except as said above.
    pub async fn commit(self) -> Result<()> {
        if !self.pending.is_empty() {
            let entries =
                Entries::new(self.pending.into_entries(), |e| self.index.check_sketch(e))?;
            upsert(&self.tx, &entries, BlockWrites::Deltas, &self.before).await?;
        }
        self.tx.commit().await.map_err(pg_error("commit a write"))
    }
}
