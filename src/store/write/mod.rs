//! Writes: upserts and removals, each one atomic batch across all column families.
//!
//! - `plan/`: the upsert planner, which inserts, the bulk loader and staged batches share;
//! - `apply.rs`: a plan's writes, into a write batch or a bulk run's SST files;
//! - `ids.rs`: [`IdAssigner`](ids::IdAssigner), the ids of documents that give none;
//! - `staged.rs`: [`StagedBatch`](staged::StagedBatch), writes decided one by one and committed
//!   together, and check-then-insert ([`Store::insert_if_new`] and its variants).

pub(crate) mod apply;
pub(crate) mod ids;
pub(crate) mod plan;
pub(crate) mod staged;

use std::sync::atomic::Ordering;

use super::Store;
use crate::codec::{self, Document, DocumentRef};
use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::keys::{self, DOCS_FAMILY, KEYS_FAMILY, META_FAMILY};
use crate::sketch::Sketch;
use crate::storage::{BatchSink, Sink};
use apply::Documents;
use plan::{check_key, Adds};

/// A document to store: its id, fingerprint and optional external key, text length and
/// [`Sketch`] (kept only by a store that keeps sketches).
///
/// ```
/// use simhash_store::{Entry, Fingerprint};
/// let e = Entry::new(7, Fingerprint(0xabc)).with_key("https://example.com/a").with_text_len(1234);
/// assert_eq!(e.key.as_deref(), Some("https://example.com/a"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The document id, chosen by the caller.
    pub id: u64,
    /// Its fingerprint.
    pub fingerprint: Fingerprint,
    /// Its external key (URL, file path): unique in the store.
    pub key: Option<String>,
    /// The length in bytes of its text, when known.
    pub text_len: Option<u64>,
    /// Its sketch, for a store that keeps them ([`Simhasher::sketch`](crate::Simhasher::sketch)).
    pub sketch: Option<Sketch>,
}

impl Entry {
    /// An entry with no key.
    pub fn new(id: u64, fingerprint: Fingerprint) -> Entry {
        Entry {
            id,
            fingerprint,
            key: None,
            text_len: None,
            sketch: None,
        }
    }

    /// Sets the external key.
    pub fn with_key(mut self, key: impl Into<String>) -> Entry {
        self.key = Some(key.into());
        self
    }

    /// Sets the text length.
    pub fn with_text_len(mut self, len: u64) -> Entry {
        self.text_len = Some(len);
        self
    }

    /// Sets the sketch.
    pub fn with_sketch(mut self, sketch: Sketch) -> Entry {
        self.sketch = Some(sketch);
        self
    }
}

/// The entries of one batch, as the upsert planner reads them.
struct Entries {
    entries: Vec<Entry>,
    ascending: bool,
    keyed: bool,
}

impl Entries {
    /// Collects `entries`, checking their keys.
    fn new(store: &Store, entries: impl IntoIterator<Item = Entry>) -> Result<Entries> {
        let entries: Vec<Entry> = entries.into_iter().collect();
        let mut keyed = false;
        for e in &entries {
            store.check_sketch(e.id, e.sketch.as_ref())?;
            if let Some(key) = &e.key {
                check_key(e.id, key)?;
                keyed = true;
            }
        }
        let ascending = entries.windows(2).all(|w| w[0].id < w[1].id);
        Ok(Entries {
            entries,
            ascending,
            keyed,
        })
    }
}

impl Adds for Entries {
    fn len(&self) -> usize {
        self.entries.len()
    }

    fn id(&self, seq: u32) -> u64 {
        self.entries[seq as usize].id
    }

    fn fingerprint(&self, seq: u32) -> u64 {
        self.entries[seq as usize].fingerprint.0
    }

    fn key(&self, seq: u32) -> Option<&[u8]> {
        self.entries
            .get(seq as usize)
            .and_then(|e| e.key.as_deref())
            .map(str::as_bytes)
    }

    fn ids_ascending(&self) -> bool {
        self.ascending
    }

    fn has_keys(&self) -> bool {
        self.keyed
    }
}

impl Documents for Entries {
    fn document(&self, seq: u32, added: u64) -> Option<(u64, DocumentRef<'_>)> {
        let entry = self.entries.get(seq as usize)?;
        let doc = DocumentRef {
            fingerprint: entry.fingerprint,
            key: entry.key.as_deref(),
            text_len: entry.text_len,
            added,
            sketch: entry.sketch.as_ref(),
        };
        Some((entry.id, doc))
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
        let entries = Entries::new(self, entries)?;
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
