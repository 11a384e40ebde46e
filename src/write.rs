//! Writes: upserts and removals, each one atomic `WriteBatch` across all column families.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use rocksdb::WriteBatch;

use crate::codec::{self, Document};
use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::keys::{self, DOCS_FAMILY, KEYS_FAMILY, MAX_EXTERNAL_KEY_LEN, META_FAMILY};
use crate::sketch::Sketch;
use crate::store::Store;

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

/// The state of ids and keys as a batch being built will leave them: the store's state with
/// the batch's earlier changes on top.
struct Overlay<'a> {
    store: &'a Store,
    docs: HashMap<u64, Option<Document>>,
    keys: HashMap<String, Option<u64>>,
    count: u64,
    /// Fingerprints whose block-family entries the batch puts or deletes.
    touched: Vec<Fingerprint>,
}

impl<'a> Overlay<'a> {
    fn new(store: &'a Store) -> Self {
        Overlay {
            store,
            docs: HashMap::new(),
            keys: HashMap::new(),
            count: store.doc_count.load(Ordering::SeqCst),
            touched: Vec::new(),
        }
    }

    fn doc(&mut self, id: u64) -> Result<Option<Document>> {
        if let Some(d) = self.docs.get(&id) {
            return Ok(d.clone());
        }
        let d = self.store.document(id)?;
        self.docs.insert(id, d.clone());
        Ok(d)
    }

    fn key_owner(&mut self, key: &str) -> Result<Option<u64>> {
        if let Some(id) = self.keys.get(key) {
            return Ok(*id);
        }
        let id = self.store.id_for_key(key)?;
        self.keys.insert(key.to_owned(), id);
        Ok(id)
    }

    /// Adds to `batch` the deletion of document `id` and all its index entries.
    fn remove(&mut self, batch: &mut WriteBatch, id: u64) -> Result<Option<Document>> {
        let Some(old) = self.doc(id)? else {
            return Ok(None);
        };
        for i in 0..BLOCKS {
            batch.delete_cf(
                self.store.block_cf(i)?,
                keys::block_key(i, old.fingerprint, id),
            );
        }
        self.touched.push(old.fingerprint);
        batch.delete_cf(self.store.cf(DOCS_FAMILY)?, keys::doc_key(id));
        if let Some(key) = &old.key {
            if self.key_owner(key)? == Some(id) {
                batch.delete_cf(self.store.cf(KEYS_FAMILY)?, key.as_bytes());
                self.keys.insert(key.clone(), None);
            }
        }
        self.docs.insert(id, None);
        self.count -= 1;
        Ok(Some(old))
    }

    /// Adds to `batch` the upsert of `entry`.
    fn insert(&mut self, batch: &mut WriteBatch, entry: &Entry, added: u64) -> Result<()> {
        self.store.check_sketch(entry.id, entry.sketch.as_ref())?;
        if let Some(key) = &entry.key {
            if key.is_empty() || key.len() > MAX_EXTERNAL_KEY_LEN {
                return Err(Error::InvalidArgument(format!(
                    "document {}: an external key must have 1..={MAX_EXTERNAL_KEY_LEN} bytes, this one has {}",
                    entry.id,
                    key.len()
                )));
            }
            // A key names one document: another document holding it is replaced.
            if let Some(other) = self.key_owner(key)? {
                if other != entry.id {
                    self.remove(batch, other)?;
                }
            }
        }
        let old = self.doc(entry.id)?;
        if let Some(old) = &old {
            if old.fingerprint != entry.fingerprint {
                for i in 0..BLOCKS {
                    batch.delete_cf(
                        self.store.block_cf(i)?,
                        keys::block_key(i, old.fingerprint, entry.id),
                    );
                }
                self.touched.push(old.fingerprint);
            }
            if let Some(old_key) = &old.key {
                if entry.key.as_ref() != Some(old_key) && self.key_owner(old_key)? == Some(entry.id)
                {
                    batch.delete_cf(self.store.cf(KEYS_FAMILY)?, old_key.as_bytes());
                    self.keys.insert(old_key.clone(), None);
                }
            }
        } else {
            self.count += 1;
        }
        for i in 0..BLOCKS {
            batch.put_cf(
                self.store.block_cf(i)?,
                keys::block_key(i, entry.fingerprint, entry.id),
                [],
            );
        }
        self.touched.push(entry.fingerprint);
        let doc = Document {
            fingerprint: entry.fingerprint,
            key: entry.key.clone(),
            text_len: entry.text_len,
            added: old.as_ref().map_or(added, |o| o.added),
            sketch: entry.sketch,
        };
        batch.put_cf(
            self.store.cf(DOCS_FAMILY)?,
            keys::doc_key(entry.id),
            codec::encode_document(&doc),
        );
        if let Some(key) = &entry.key {
            batch.put_cf(
                self.store.cf(KEYS_FAMILY)?,
                key.as_bytes(),
                keys::id_value(entry.id),
            );
            self.keys.insert(key.clone(), Some(entry.id));
        }
        self.docs.insert(entry.id, Some(doc));
        Ok(())
    }

    /// Writes `batch` with the new count, and publishes the count once it is durable.
    fn commit(self, mut batch: WriteBatch) -> Result<()> {
        let store = self.store;
        batch.put_cf(
            store.cf(META_FAMILY)?,
            keys::META_DOC_COUNT,
            codec::encode_u64(self.count),
        );
        if let Some(cache) = &store.postings {
            cache.begin_write(&self.touched);
        }
        let written = store
            .db
            .write_opt(batch, &store.write_options())
            .map_err(|e| store.rocks_err("write a batch", None, e));
        if let Some(cache) = &store.postings {
            cache.end_write(&self.touched, store.db.latest_sequence_number());
        }
        written?;
        store.doc_count.store(self.count, Ordering::SeqCst);
        Ok(())
    }
}

impl Store {
    /// Stores document `id` with fingerprint `fp`. An upsert: if `id` exists, its old
    /// fingerprint's index entries are removed in the same atomic batch (its external key and
    /// text length are dropped too; use [`Store::insert_entry`] to keep or set them).
    ///
    /// # Errors
    /// [`Error::ReadOnly`], RocksDB write errors.
    pub fn insert(&self, id: u64, fp: Fingerprint) -> Result<()> {
        self.insert_batch([Entry::new(id, fp)])
    }

    /// Stores one [`Entry`] (upsert). If its external key belongs to another document, that
    /// document is replaced: a key names one document, so loading the same page twice does
    /// not create a second one.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty key or one over 4096 bytes, [`Error::ReadOnly`],
    /// RocksDB write errors.
    pub fn insert_entry(&self, entry: Entry) -> Result<()> {
        self.insert_batch([entry])
    }

    /// Fingerprints `text` with [`Store::simhasher`] and stores it under `id` (upsert), with
    /// its sketch in a store that keeps sketches. Returns the fingerprint.
    ///
    /// # Errors
    /// [`Error::NoFeatures`] for a text with nothing to fingerprint; see [`Store::insert_entry`].
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
        let guard = self.lock_writes();
        self.insert_batch_locked(&guard, entries)
    }

    /// [`Store::insert_batch`] for a caller that already holds the write lock (from
    /// [`Store::lock_writes`]), e.g. to check and insert atomically.
    pub(crate) fn insert_batch_locked(
        &self,
        _guard: &std::sync::MutexGuard<'_, ()>,
        entries: impl IntoIterator<Item = Entry>,
    ) -> Result<()> {
        self.check_writable()?;
        let mut overlay = Overlay::new(self);
        let mut batch = WriteBatch::default();
        let added = Store::now_micros();
        for entry in entries {
            overlay.insert(&mut batch, &entry, added)?;
        }
        overlay.commit(batch)
    }

    /// Removes document `id` and its index entries. Returns whether it was there.
    ///
    /// # Errors
    /// [`Error::ReadOnly`], RocksDB errors.
    pub fn remove(&self, id: u64) -> Result<bool> {
        self.check_writable()?;
        let _guard = self.lock_writes();
        let mut overlay = Overlay::new(self);
        let mut batch = WriteBatch::default();
        let removed = overlay.remove(&mut batch, id)?.is_some();
        if removed {
            overlay.commit(batch)?;
        }
        Ok(removed)
    }

    /// Removes the document stored under external key `key`. Returns its id if there was one.
    ///
    /// # Errors
    /// As [`Store::remove`].
    pub fn remove_key(&self, key: &str) -> Result<Option<u64>> {
        self.check_writable()?;
        let _guard = self.lock_writes();
        let mut overlay = Overlay::new(self);
        let Some(id) = overlay.key_owner(key)? else {
            return Ok(None);
        };
        let mut batch = WriteBatch::default();
        overlay.remove(&mut batch, id)?;
        overlay.commit(batch)?;
        Ok(Some(id))
    }
}
