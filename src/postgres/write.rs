//! Writes: upserts planned by the store's planner, removals, check-then-insert; each in one
//! transaction under the writer lock.

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use deadpool_postgres::{GenericClient, Transaction};

use super::groups::{self, Deltas};
use super::load::PgLoadSummary;
use super::stored::Snapshot;
use super::tiers::Tier;
use super::{col, connection, pg_error, query_on, PgIndex};
use crate::dedup::InsertOutcome;
use crate::error::{Error, Result};
use crate::query::Match;
use crate::upsert::plan::{self as upsert, KeyName, KeyWrite, UpsertPlan};
use crate::upsert::{Entries, Entry};

/// The advisory lock every write transaction takes first (`pg_advisory_xact_lock`).
const WRITER_LOCK: i64 = 0x7369_6d68_6173_6802;

/// Groups [`PgIndex::fold`] folds per transaction.
const FOLD_BATCH: usize = 4096;

/// Microseconds since the Unix epoch: the `added` time of a new document.
fn now_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// Begins a write transaction: takes the writer lock.
pub(super) async fn begin(conn: &mut deadpool_postgres::Object) -> Result<Transaction<'_>> {
    let tx = conn
        .transaction()
        .await
        .map_err(pg_error("begin a write"))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITER_LOCK])
        .await
        .map_err(pg_error("take the writer lock"))?;
    Ok(tx)
}

/// How a write puts its block entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BlockWrites {
    /// As delta rows; a group is folded once it has [`groups::FOLD_AT`] of them.
    Deltas,
    /// Packed into the chunks of every group touched, in this process (a bulk load of
    /// one batch).
    Pack,
    /// A batch of a load of many: the new documents' entries merged into the load's
    /// parts of the given tier ([`super::tiers`]), the other groups touched packed whole.
    Load(Tier),
}

/// What a write transaction read under the writer lock before its upsert, so that the
/// upsert need not read it again: nothing else writes while the lock is held.
#[derive(Debug, Default)]
pub(super) struct ReadBefore {
    /// The holder of each key read (`None`: no document holds it).
    pub(super) owners: HashMap<Vec<u8>, Option<u64>>,
    /// The number of delta rows of each group read.
    pub(super) deltas: HashMap<i32, usize>,
}

/// Plans `entries` against the index and applies the plan; returns what it did. The caller
/// holds the writer lock, and read `before` under it.
pub(super) async fn upsert(
    client: &Transaction<'_>,
    entries: &Entries,
    blocks: BlockWrites,
    before: &ReadBefore,
) -> Result<PgLoadSummary> {
    let snapshot = Snapshot::read(client, entries, &before.owners).await?;
    let plan = upsert::plan(&snapshot, entries)?;
    let count = plan.count_after(upsert::Stored::count(&snapshot));
    apply(client, entries, &plan, &snapshot, count, blocks, before).await?;
    Ok(PgLoadSummary {
        added: plan.added,
        replaced: plan.replaced,
        removed: plan.removed,
        superseded: plan.superseded,
    })
}

/// Writes `plan` of `entries`, and the new document count. The caller holds the writer lock.
async fn apply(
    client: &Transaction<'_>,
    entries: &Entries,
    plan: &UpsertPlan,
    snapshot: &Snapshot,
    count: u64,
    blocks: BlockWrites,
    before: &ReadBefore,
) -> Result<()> {
    let now = now_micros();
    let mut deltas = Deltas::default();
    // The groups an entry is deleted from or replaced in: a load packs these whole.
    let mut rewrite: Vec<i32> = Vec::new();
    for &(id, fp) in &plan.block_deletes {
        deltas.set(fp, id, false);
        rewrite.extend(groups::entries_of(fp).map(|(grp, _)| grp));
    }
    if !plan.doc_deletes.is_empty() {
        let ids: Vec<i64> = plan.doc_deletes.iter().map(|&id| id as i64).collect();
        client
            .execute("DELETE FROM simhash_docs WHERE id = ANY($1)", &[&ids])
            .await
            .map_err(pg_error("delete documents"))?;
    }
    let (mut put_keys, mut put_ids, mut deleted_keys) = (Vec::new(), Vec::new(), Vec::new());
    // Keys no document held go in with COPY (each key is written once per plan).
    let mut new_keys: Vec<(&[u8], i64)> = Vec::new();
    for write in &plan.key_writes {
        match write {
            KeyWrite::Put(key, id) if snapshot.key_is_free(key.bytes(entries)) => {
                new_keys.push((key.bytes(entries), *id as i64));
            }
            KeyWrite::Put(key, id) => {
                put_keys.push(key.bytes(entries));
                put_ids.push(*id as i64);
            }
            KeyWrite::Delete(key) => deleted_keys.push(key.bytes(entries)),
        }
    }
    if !deleted_keys.is_empty() {
        client
            .execute(
                "DELETE FROM simhash_keys WHERE key = ANY($1)",
                &[&deleted_keys],
            )
            .await
            .map_err(pg_error("delete keys"))?;
    }
    copy_keys(client, &new_keys).await?;
    if !put_keys.is_empty() {
        client
            .execute(
                "INSERT INTO simhash_keys (key, id) SELECT * FROM unnest($1::bytea[], $2::bigint[])
                 ON CONFLICT (key) DO UPDATE SET id = excluded.id",
                &[&put_keys, &put_ids],
            )
            .await
            .map_err(pg_error("write keys"))?;
    }
    // Documents not stored before go in with COPY (no conflict to check); the others
    // replace the stored rows.
    let mut new_docs = Vec::new();
    let mut replacing = Vec::new();
    for &s in &plan.survivors {
        let Some(e) = entries.get(s) else {
            continue;
        };
        deltas.set(e.fingerprint.0, e.id, true);
        let row = DocRow {
            id: e.id as i64,
            fingerprint: e.fingerprint.0 as i64,
            key: e.key.as_deref().map(str::as_bytes),
            text_len: e.text_len.map(|n| n as i64),
            added: plan.added(s, now) as i64,
            sketch: e.sketch.as_ref().map(|s| s.as_bytes().as_slice()),
        };
        if snapshot.holds(e.id) {
            rewrite.extend(groups::entries_of(e.fingerprint.0).map(|(grp, _)| grp));
            replacing.push(row);
        } else {
            new_docs.push(row);
        }
    }
    copy_documents(client, &new_docs).await?;
    upsert_documents(client, &replacing).await?;
    match blocks {
        BlockWrites::Deltas => deltas.write(client, &before.deltas).await?,
        BlockWrites::Pack => deltas.pack(client).await?,
        BlockWrites::Load(tier) => deltas.load(client, rewrite, tier).await?,
    }
    client
        .execute("UPDATE simhash_meta SET documents = $1", &[&(count as i64)])
        .await
        .map_err(pg_error("write the document count"))?;
    Ok(())
}

/// A row of `simhash_docs` to write.
struct DocRow<'a> {
    id: i64,
    fingerprint: i64,
    key: Option<&'a [u8]>,
    text_len: Option<i64>,
    added: i64,
    sketch: Option<&'a [u8]>,
}

/// Writes documents whose ids are not stored, with binary COPY.
async fn copy_documents(client: &Transaction<'_>, rows: &[DocRow<'_>]) -> Result<()> {
    use tokio_postgres::binary_copy::BinaryCopyInWriter;
    use tokio_postgres::types::Type;
    if rows.is_empty() {
        return Ok(());
    }
    let sink = client
        .copy_in(
            "COPY simhash_docs (id, fingerprint, key, text_len, added, sketch) FROM STDIN BINARY",
        )
        .await
        .map_err(pg_error("write documents"))?;
    let writer = BinaryCopyInWriter::new(
        sink,
        &[
            Type::INT8,
            Type::INT8,
            Type::BYTEA,
            Type::INT8,
            Type::INT8,
            Type::BYTEA,
        ],
    );
    let mut writer = std::pin::pin!(writer);
    for r in rows {
        writer
            .as_mut()
            .write(&[
                &r.id,
                &r.fingerprint,
                &r.key,
                &r.text_len,
                &r.added,
                &r.sketch,
            ])
            .await
            .map_err(pg_error("write documents"))?;
    }
    writer.finish().await.map_err(pg_error("write documents"))?;
    Ok(())
}

/// Writes keys that no document holds, with binary COPY.
async fn copy_keys(client: &Transaction<'_>, keys: &[(&[u8], i64)]) -> Result<()> {
    use tokio_postgres::binary_copy::BinaryCopyInWriter;
    use tokio_postgres::types::Type;
    if keys.is_empty() {
        return Ok(());
    }
    let sink = client
        .copy_in("COPY simhash_keys (key, id) FROM STDIN BINARY")
        .await
        .map_err(pg_error("write keys"))?;
    let writer = BinaryCopyInWriter::new(sink, &[Type::BYTEA, Type::INT8]);
    let mut writer = std::pin::pin!(writer);
    for (key, id) in keys {
        writer
            .as_mut()
            .write(&[key, id])
            .await
            .map_err(pg_error("write keys"))?;
    }
    writer.finish().await.map_err(pg_error("write keys"))?;
    Ok(())
}

/// Replaces stored documents.
async fn upsert_documents(client: &Transaction<'_>, rows: &[DocRow<'_>]) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let fps: Vec<i64> = rows.iter().map(|r| r.fingerprint).collect();
    let keys: Vec<Option<&[u8]>> = rows.iter().map(|r| r.key).collect();
    let lens: Vec<Option<i64>> = rows.iter().map(|r| r.text_len).collect();
    let added: Vec<i64> = rows.iter().map(|r| r.added).collect();
    let sketches: Vec<Option<&[u8]>> = rows.iter().map(|r| r.sketch).collect();
    client
        .execute(
            "INSERT INTO simhash_docs (id, fingerprint, key, text_len, added, sketch)
             SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::bigint[],
                                  $5::bigint[], $6::bytea[])
             ON CONFLICT (id) DO UPDATE SET fingerprint = excluded.fingerprint,
                 key = excluded.key, text_len = excluded.text_len,
                 added = excluded.added, sketch = excluded.sketch",
            &[&ids, &fps, &keys, &lens, &added, &sketches],
        )
        .await
        .map_err(pg_error("write documents"))?;
    Ok(())
}

/// Whether `entry` would replace the document `m` (same id, or the holder of the same
/// external key): that one does not count as its near-duplicate.
fn would_replace(entry: &Entry, m: &Match) -> bool {
    m.id == entry.id || (entry.key.is_some() && m.key == entry.key)
}

impl PgIndex {
    /// Refuses a sketch given to an index that keeps none.
    pub(super) fn check_sketch(&self, entry: &Entry) -> Result<()> {
        if entry.sketch.is_some() && !self.keeps_sketches() {
            return Err(Error::InvalidArgument(format!(
                "document {} comes with a sketch, but the index in {} keeps none: leave the sketch out, or load into a new database with SimhashConfig::with_sketch",
                entry.id, self.database
            )));
        }
        Ok(())
    }

    /// Stores `entries` in one transaction: upserts, applied in order (a later entry for the
    /// same id or key wins), with the rules of [`Store::insert_batch`](crate::Store::insert_batch).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty key or one over 4096 bytes, or a sketch for an
    /// index that keeps none; [`Error::Postgres`]. On error nothing of the batch is written.
    pub async fn insert_batch(&self, entries: impl IntoIterator<Item = Entry>) -> Result<()> {
        let entries = Entries::new(entries, |e| self.check_sketch(e))?;
        let mut conn = connection(&self.pool).await?;
        let tx = begin(&mut conn).await?;
        upsert(&tx, &entries, BlockWrites::Deltas, &ReadBefore::default()).await?;
        tx.commit().await.map_err(pg_error("commit a write"))
    }

    /// [`PgIndex::insert_batch`] for a bulk load of one batch: the same rules and result,
    /// but the block entries are packed into the chunks of the groups they touch by this
    /// process, instead of written as delta rows and folded later. Every group touched is
    /// rewritten whole; a load of many batches goes through a [`PgLoader`](super::PgLoader),
    /// whose batches rewrite only their own recent parts.
    ///
    /// Returns what the batch did.
    ///
    /// # Errors
    /// As [`PgIndex::insert_batch`]; on error nothing of the batch is written.
    pub async fn load_batch(
        &self,
        entries: impl IntoIterator<Item = Entry>,
    ) -> Result<PgLoadSummary> {
        self.load_with(entries, BlockWrites::Pack).await
    }

    /// A batch of a [`PgLoader`](super::PgLoader), its new documents' block entries put
    /// in `tier` ([`super::tiers`]).
    pub(super) async fn load_tier(
        &self,
        entries: impl IntoIterator<Item = Entry>,
        tier: Tier,
    ) -> Result<PgLoadSummary> {
        self.load_with(entries, BlockWrites::Load(tier)).await
    }

    /// Stores `entries` in one transaction, their block entries written as `blocks` says.
    async fn load_with(
        &self,
        entries: impl IntoIterator<Item = Entry>,
        blocks: BlockWrites,
    ) -> Result<PgLoadSummary> {
        let entries = Entries::new(entries, |e| self.check_sketch(e))?;
        let mut conn = connection(&self.pool).await?;
        let tx = begin(&mut conn).await?;
        let summary = upsert(&tx, &entries, blocks, &ReadBefore::default()).await?;
        tx.commit().await.map_err(pg_error("commit a load"))?;
        Ok(summary)
    }

    /// Packs every group's delta rows into its chunks, 4,096 groups per transaction
    /// (each under the writer lock, so writes go on between them). Returns the number of
    /// groups folded. Queries answer the same before and after; they read fewer rows after.
    ///
    /// # Errors
    /// [`Error::Postgres`]; [`Error::Decode`] for a damaged chunk.
    pub async fn fold(&self) -> Result<u64> {
        let mut conn = connection(&self.pool).await?;
        let due = groups::with_deltas(&conn).await?;
        for batch in due.chunks(FOLD_BATCH) {
            let tx = begin(&mut conn).await?;
            groups::fold(&tx, batch).await?;
            tx.commit().await.map_err(pg_error("commit a fold"))?;
        }
        Ok(due.len() as u64)
    }

    /// Stores one entry (upsert): [`PgIndex::insert_batch`] of one.
    ///
    /// # Errors
    /// As [`PgIndex::insert_batch`].
    pub async fn insert_entry(&self, entry: Entry) -> Result<()> {
        self.insert_batch([entry]).await
    }

    /// Stores `entry` unless a stored document is within Hamming distance `k` of it; then
    /// returns those documents and stores nothing, as [`Store::insert_if_new`](crate::Store::insert_if_new).
    /// The check and the insert hold the writer lock together, so two near-duplicates sent
    /// at once, from any processes, are never both stored.
    ///
    /// # Errors
    /// As [`PgIndex::insert_batch`].
    pub async fn insert_if_new(&self, entry: impl Into<Entry>, k: u32) -> Result<InsertOutcome> {
        let mut outcomes = self.insert_batch_if_new([entry.into()], k).await?;
        Ok(outcomes.pop().unwrap_or(InsertOutcome::Inserted))
    }

    /// [`PgIndex::insert_if_new`] of each entry, in order, in one transaction: each entry is
    /// checked against the index and the entries stored before it, as
    /// [`Store::insert_batch_if_new`](crate::Store::insert_batch_if_new). Returns the outcome
    /// of each entry.
    ///
    /// # Errors
    /// As [`PgIndex::insert_batch`]; on error nothing of the batch is written.
    pub async fn insert_batch_if_new(
        &self,
        entries: impl IntoIterator<Item = Entry>,
        k: u32,
    ) -> Result<Vec<InsertOutcome>> {
        let entries = Entries::new(entries, |e| self.check_sketch(e))?;
        let mut conn = connection(&self.pool).await?;
        let tx = begin(&mut conn).await?;
        let keyed = entries.keyed();
        let entries = entries.into_entries();
        let mut outcomes = Vec::with_capacity(entries.len());
        for entry in entries {
            let matches: Vec<Match> = query_on(&tx, &[entry.fingerprint], k)
                .await?
                .pop()
                .unwrap_or_default()
                .into_iter()
                .filter(|m| !would_replace(&entry, m))
                .collect();
            if !matches.is_empty() {
                outcomes.push(InsertOutcome::Duplicate(matches));
                continue;
            }
            let one = Entries::one(entry, keyed);
            upsert(&tx, &one, BlockWrites::Deltas, &ReadBefore::default()).await?;
            outcomes.push(InsertOutcome::Inserted);
        }
        tx.commit().await.map_err(pg_error("commit a write"))?;
        Ok(outcomes)
    }

    /// Removes document `id`, its block entries and its key. Returns whether it was there.
    ///
    /// # Errors
    /// [`Error::Postgres`].
    pub async fn remove(&self, id: u64) -> Result<bool> {
        let mut conn = connection(&self.pool).await?;
        let tx = begin(&mut conn).await?;
        let removed = remove_locked(&tx, id).await?;
        tx.commit().await.map_err(pg_error("commit a removal"))?;
        Ok(removed)
    }

    /// Removes the document stored under external key `key`. Returns its id if there was one.
    ///
    /// # Errors
    /// [`Error::Postgres`].
    pub async fn remove_key(&self, key: &str) -> Result<Option<u64>> {
        let mut conn = connection(&self.pool).await?;
        let tx = begin(&mut conn).await?;
        let owner = tx
            .query_opt(
                "SELECT id FROM simhash_keys WHERE key = $1",
                &[&key.as_bytes()],
            )
            .await
            .map_err(pg_error("read a key"))?
            .map(|r| col::<i64>(&r, 0).map(|id| id as u64))
            .transpose()?;
        if let Some(id) = owner {
            remove_locked(&tx, id).await?;
        }
        tx.commit().await.map_err(pg_error("commit a removal"))?;
        Ok(owner)
    }
}

/// Removes document `id` if stored: its block entries, its document and its key if the key
/// still names it. The caller holds the writer lock.
async fn remove_locked(client: &Transaction<'_>, id: u64) -> Result<bool> {
    let no_adds = Entries::none();
    let snapshot = Snapshot::read_ids(client, &[id]).await?;
    let Some(Some(old)) = upsert::Stored::documents_of(&snapshot, &[id])?.pop() else {
        return Ok(false);
    };
    let mut plan = UpsertPlan {
        block_deletes: vec![(id, old.fingerprint.0)],
        doc_deletes: vec![id],
        removed: 1,
        ..UpsertPlan::default()
    };
    if let Some(key) = old.key {
        if upsert::Stored::owners_of(&snapshot, &[key.as_bytes()])?.pop() == Some(Some(id)) {
            plan.key_writes.push(KeyWrite::Delete(KeyName::Stored(key)));
        }
    }
    let count = plan.count_after(upsert::Stored::count(&snapshot));
    apply(
        client,
        &no_adds,
        &plan,
        &snapshot,
        count,
        BlockWrites::Deltas,
        &ReadBefore::default(),
    )
    .await?;
    Ok(true)
}
