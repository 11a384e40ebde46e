//! Writes: upserts and removals, each one atomic batch across all column families, planned
//! and applied by the rules of `src/upsert/` (the store is the planner's [`Stored`]).
//!
//! - `staged.rs`: [`StagedBatch`](staged::StagedBatch), writes decided one by one and committed
//!   together, and check-then-insert ([`Store::insert_if_new`] and its variants).

pub(crate) mod staged;

use std::sync::atomic::Ordering;

use super::Store;
use crate::codec::{self, Document};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::keys::{self, DOCS_FAMILY, KEYS_FAMILY, META_FAMILY};
use crate::storage::{BatchSink, Sink};
use crate::upsert::plan::{self, Adds, Stored, UpsertPlan};
use crate::upsert::{apply, Entries, Entry, IdAssigner};

impl Stored for Store {
    fn count(&self) -> u64 {
        self.len()
    }

    fn id_range(&self) -> Result<Option<(u64, u64)>> {
        self.db.docs()?.id_range()
    }

    fn documents_of(&self, ids: &[u64]) -> Result<Vec<Option<Document>>> {
        self.db.docs()?.multi_get(ids, "read documents")
    }

    fn owners_of(&self, keys: &[&[u8]]) -> Result<Vec<Option<u64>>> {
        self.db.owners()?.multi_get(keys)
    }
}

impl Store {
    /// Plans storing `adds`, in order, in this store. The caller holds the write lock until
    /// the plan is written.
    pub(crate) fn plan_upserts<A: Adds + Sync>(&self, adds: &A) -> Result<UpsertPlan> {
        plan::plan(self, adds)
    }
}

impl IdAssigner {
    /// An assigner whose first new id is past every id stored in `store`.
    ///
    /// # Errors
    /// As [`Store::next_id`], except [`Error::NoIdLeft`]: then no new id is left, but
    /// documents that give ids or whose keys are held can still be stored.
    pub fn for_store(store: &Store) -> Result<IdAssigner> {
        match store.next_id() {
            Ok(id) => Ok(IdAssigner::starting_at(Some(id))),
            Err(Error::NoIdLeft { .. }) => Ok(IdAssigner::starting_at(None)),
            Err(e) => Err(e),
        }
    }
}

impl Store {
    /// Stores document `id` with fingerprint `fp`. An upsert: if `id` exists, its old
    /// fingerprint's index entries are removed in the same atomic batch (its external key and
    /// text length are dropped too; use [`Store::insert_entry`] to keep or set them).
    ///
    /// # Errors
    /// [`Error::ReadOnly`](crate::Error::ReadOnly), RocksDB write errors.
    pub fn insert(&self, id: u64, fp: Fingerprint) -> Result<()> {
        self.insert_batch([Entry::new(id, fp)])
    }

    /// Stores one [`Entry`] (upsert). If its external key belongs to another document, that
    /// document is replaced: a key names one document, so loading the same page twice does
    /// not create a second one.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for an empty key or one over
    /// 4096 bytes, [`Error::ReadOnly`](crate::Error::ReadOnly),
    /// RocksDB write errors.
    pub fn insert_entry(&self, entry: Entry) -> Result<()> {
        self.insert_batch([entry])
    }

    /// Fingerprints `text` with [`Store::simhasher`] and stores it under `id` (upsert), with
    /// its sketch in a store that keeps sketches. Returns the fingerprint.
    ///
    /// # Errors
    /// [`Error::NoFeatures`](crate::Error::NoFeatures) for a text with nothing to fingerprint;
    /// see [`Store::insert_entry`].
    pub fn insert_text(&self, id: u64, key: Option<&str>, text: &str) -> Result<Fingerprint> {
        let (fp, sketch) = self.simhasher.fingerprint_and_sketch(text)?;
        let mut entry = Entry::new(id, fp).with_text_len(text.len() as u64);
        entry.key = key.map(str::to_owned);
        entry.sketch = sketch;
        self.insert_entry(entry)?;
        Ok(fp)
    }

    /// Stores many entries in one atomic batch (upserts, applied in order: a later entry for
    /// the same id or key wins).
    ///
    /// # Errors
    /// As [`Store::insert_entry`]; on error nothing of the batch is written.
    pub fn insert_batch(&self, entries: impl IntoIterator<Item = Entry>) -> Result<()> {
        self.check_writable()?;
        let guard = self.lock_writes()?;
        self.insert_batch_locked(&guard, entries)
    }

    /// [`Store::insert_batch`] for a caller that already holds the write lock (from
    /// [`Store::lock_writes`]), e.g. to check and insert atomically.
    pub(crate) fn insert_batch_locked(
        &self,
        _guard: &parking_lot::MutexGuard<'_, ()>,
        entries: impl IntoIterator<Item = Entry>,
    ) -> Result<()> {
        self.check_writable()?;
        let entries = Entries::new(entries, |e| self.check_sketch(e.id, e.sketch.as_ref()))?;
        let plan = self.plan_upserts(&entries)?;
        self.note_keys(&plan);
        let mut batch = BatchSink::new(&self.db);
        let touched = apply::block_deltas(&plan, &entries, self.packed()?, &mut batch)?;
        let Ok(()) = apply::docs(
            &plan,
            &entries,
            &plan.survivors,
            &plan.doc_deletes,
            self.now_micros(),
            &mut Vec::new(),
            &mut batch.family(DOCS_FAMILY)?,
        );
        let Ok(()) = apply::keys(&plan.key_writes, &entries, &mut batch.family(KEYS_FAMILY)?);
        self.commit_batch(batch, plan.count_after(self.len()), &touched)
    }

    /// Removes document `id` and its index entries. Returns whether it was there.
    ///
    /// # Errors
    /// [`Error::ReadOnly`](crate::Error::ReadOnly), RocksDB errors.
    pub fn remove(&self, id: u64) -> Result<bool> {
        self.check_writable()?;
        let _guard = self.lock_writes()?;
        let Some(old) = self.document(id)? else {
            return Ok(false);
        };
        self.remove_document(id, &old)?;
        Ok(true)
    }

    /// Removes the document stored under external key `key`. Returns its id if there was one.
    ///
    /// # Errors
    /// As [`Store::remove`].
    pub fn remove_key(&self, key: &str) -> Result<Option<u64>> {
        self.check_writable()?;
        let _guard = self.lock_writes()?;
        let Some(id) = self.id_for_key(key)? else {
            return Ok(None);
        };
        if let Some(old) = self.document(id)? {
            self.remove_document(id, &old)?;
        }
        Ok(Some(id))
    }

    /// Deletes stored document `id` (`old`), its block entries and its key if the key still
    /// names it. The caller holds the write lock.
    fn remove_document(&self, id: u64, old: &Document) -> Result<()> {
        let mut batch = BatchSink::new(&self.db);
        self.packed()?.delete(&mut batch, old.fingerprint, id)?;
        let Ok(()) = batch.family(DOCS_FAMILY)?.delete(&keys::doc_key(id));
        if let Some(key) = &old.key {
            if self.id_for_key(key)? == Some(id) {
                let Ok(()) = batch.family(KEYS_FAMILY)?.delete(key.as_bytes());
            }
        }
        self.commit_batch(batch, self.len().saturating_sub(1), &[old.fingerprint])
    }

    /// Writes `batch` with the new document count, keeping the query cache exact for the
    /// fingerprints whose block entries it puts or deletes (`touched`), and publishes the
    /// count once the batch is written. The caller holds the write lock.
    fn commit_batch(
        &self,
        mut batch: BatchSink<'_>,
        count: u64,
        touched: &[Fingerprint],
    ) -> Result<()> {
        batch.put(META_FAMILY, keys::META_DOC_COUNT, &codec::encode_u64(count))?;
        // Only a store of the packed layout takes writes (`check_writable`).
        let packed = self.packed()?;
        batch.commit(self.persist(), "write a batch")?;
        self.doc_count.store(count, Ordering::SeqCst);
        let mut due = Vec::new();
        for &fp in touched {
            packed.fold_counters().count(fp, &mut due);
        }
        if !due.is_empty() {
            // The batch is committed: a failed fold leaves the deltas, which read the same.
            packed.fold_due(self.blocks_db(), self.persist(), &mut due)?;
        }
        Ok(())
    }
}
