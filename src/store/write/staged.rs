//! [`StagedBatch`]: upserts and check-then-inserts decided one by one, in order, each against
//! the store as the earlier ones leave it, and committed as one atomic write; and check then
//! insert ([`Store::insert_if_new`] and its variants): store a document only if nothing stored
//! is a near-duplicate of it, atomically against other writers of the store.

use parking_lot::MutexGuard;

use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::query::Match;
use crate::store::Store;
use crate::upsert::plan::PendingAdds;
use crate::upsert::{check_key, Entry};

/// Who holds an external key once a [`StagedBatch`]'s entries are committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyHolder {
    /// Stored document `id`, which the staged entries leave in place.
    Stored(u64),
    /// Document `id`, as the staged entry number `at` (counted from 0 in staging order)
    /// stores it.
    Staged {
        /// The document id.
        id: u64,
        /// The entry's position among the staged ones.
        at: usize,
    },
}

impl KeyHolder {
    /// The holder's document id.
    pub fn id(&self) -> u64 {
        match *self {
            KeyHolder::Stored(id) | KeyHolder::Staged { id, .. } => id,
        }
    }
}

/// Writes decided one by one and committed together: [`StagedBatch::insert`] stages an upsert,
/// [`StagedBatch::insert_if_new`] a check-then-insert decided against the store as the
/// entries staged before leave it, and [`StagedBatch::commit`] writes them all as one atomic
/// [`Store::insert_batch`]. The batch holds the store's write lock from
/// [`Store::staged_batch`] until it is committed or dropped, so nothing is written in
/// between; dropping it writes nothing. Another write to the store from the thread that
/// holds a staged batch would wait for itself.
///
/// ```
/// use simhash_store::{Entry, Fingerprint, KeyHolder, Store};
/// let dir = tempfile::tempdir()?;
/// let store = Store::open(dir.path())?;
/// store.insert_entry(Entry::new(1, Fingerprint(0xff00)).with_key("https://a.example/"))?;
///
/// let mut batch = store.staged_batch()?;
/// // Document 2 takes the key: once committed, document 1 is gone.
/// batch.insert(Entry::new(2, Fingerprint(0x00ff)).with_key("https://a.example/"))?;
/// assert_eq!(batch.key_holder("https://a.example/")?, Some(KeyHolder::Staged { id: 2, at: 0 }));
/// // Near what document 1 was, but that one will be gone: stored.
/// assert!(batch.insert_if_new(Entry::new(3, Fingerprint(0xff01)), 1)?.is_inserted());
/// // Near document 3, staged just before: not stored.
/// assert!(!batch.insert_if_new(Entry::new(4, Fingerprint(0xff03)), 1)?.is_inserted());
/// batch.commit()?;
/// assert_eq!((store.get(1)?, store.get(3)?, store.get(4)?), (None, Some(Fingerprint(0xff01)), None));
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// ```
pub struct StagedBatch<'a> {
    store: &'a Store,
    guard: MutexGuard<'a, ()>,
    pending: PendingAdds,
}

impl std::fmt::Debug for StagedBatch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagedBatch")
            .field("store", &self.store.path())
            .field("staged", &self.pending.len())
            .finish()
    }
}

impl Store {
    /// Starts a [`StagedBatch`], taking the write lock.
    ///
    /// # Errors
    /// [`crate::Error::ReadOnly`]; [`crate::Error::BulkLoadInProgress`] on the thread of a
    /// bulk load that holds the write lock.
    pub fn staged_batch(&self) -> Result<StagedBatch<'_>> {
        self.check_writable()?;
        let guard = self.lock_writes()?;
        Ok(StagedBatch {
            store: self,
            guard,
            pending: PendingAdds::default(),
        })
    }
}

impl<'a> StagedBatch<'a> {
    /// The store the batch writes to.
    pub fn store(&self) -> &'a Store {
        self.store
    }

    /// The number of entries staged.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Whether no entry is staged.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Stages `entry`: an upsert, as [`Store::insert_entry`].
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] for an empty key or one over
    /// [`MAX_EXTERNAL_KEY_LEN`](crate::MAX_EXTERNAL_KEY_LEN) bytes, or a sketch the store does
    /// not keep; nothing is staged then.
    pub fn insert(&mut self, entry: Entry) -> Result<()> {
        self.store.check_sketch(entry.id, entry.sketch.as_ref())?;
        if let Some(key) = &entry.key {
            check_key(entry.id, key)?;
        }
        self.pending.push(entry);
        Ok(())
    }

    /// Who holds `key` once the staged entries are committed.
    ///
    /// # Errors
    /// As [`Store::id_for_key`].
    pub fn key_holder(&self, key: &str) -> Result<Option<KeyHolder>> {
        if let Some(owner) = self.pending.owner_of_key(key) {
            return Ok(owner.map(|(at, id)| KeyHolder::Staged { id, at }));
        }
        Ok(self
            .store
            .id_for_key(key)?
            .filter(|&id| !self.pending.displace(id, None))
            .map(KeyHolder::Stored))
    }

    /// The documents within `k` of `fp` once the staged entries are committed, sorted by
    /// distance, then id.
    ///
    /// # Errors
    /// As [`Store::query`].
    pub fn query(&self, fp: Fingerprint, k: u32) -> Result<Vec<Match>> {
        let mut matches: Vec<Match> = self
            .store
            .query(fp, k)?
            .into_iter()
            .filter(|m| !self.pending.displace(m.id, m.key.as_deref()))
            .collect();
        let staged = self.pending.within(fp, k).map(|(_, e, distance)| Match {
            id: e.id,
            fingerprint: e.fingerprint,
            distance,
            key: e.key.clone(),
        });
        let before = matches.len();
        matches.extend(staged);
        if matches.len() > before {
            matches.sort_by_key(|m| (m.distance, m.id));
        }
        Ok(matches)
    }

    /// Writes the staged entries as one atomic [`Store::insert_batch`] and releases the write
    /// lock. Nothing is written when nothing is staged.
    ///
    /// # Errors
    /// As [`Store::insert_batch`]; then nothing of the batch is written.
    pub fn commit(self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.store
            .insert_batch_locked(&self.guard, self.pending.into_entries())
    }
}

/// What [`Store::insert_if_new`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InsertOutcome {
    /// Nothing stored was within the distance: the document was stored.
    Inserted,
    /// These stored documents are within the distance (sorted by distance, then id): the
    /// document was not stored.
    Duplicate(Vec<Match>),
}

impl InsertOutcome {
    /// Whether the document was stored.
    pub fn is_inserted(&self) -> bool {
        matches!(self, InsertOutcome::Inserted)
    }

    /// The near-duplicates that kept it out (empty if it was stored).
    pub fn matches(&self) -> &[Match] {
        match self {
            InsertOutcome::Inserted => &[],
            InsertOutcome::Duplicate(m) => m,
        }
    }

    /// The near-duplicates that kept it out (empty if it was stored), taken out.
    pub fn into_matches(self) -> Vec<Match> {
        match self {
            InsertOutcome::Inserted => Vec::new(),
            InsertOutcome::Duplicate(m) => m,
        }
    }
}

impl From<(u64, Fingerprint)> for Entry {
    fn from((id, fingerprint): (u64, Fingerprint)) -> Entry {
        Entry::new(id, fingerprint)
    }
}

/// Whether `entry` would replace the document `m` (same id, or the holder of the same
/// external key): that one does not count as its near-duplicate.
fn would_replace(entry: &Entry, m: &Match) -> bool {
    m.id == entry.id || (entry.key.is_some() && m.key == entry.key)
}

impl StagedBatch<'_> {
    /// Stages `entry` unless a document is within Hamming distance `k` of it as the store
    /// will be once the entries staged before are committed; then returns those documents
    /// and stages nothing. The document `entry` would replace does not count, as for
    /// [`Store::insert_if_new`].
    ///
    /// # Errors
    /// As [`StagedBatch::query`] and [`StagedBatch::insert`].
    pub fn insert_if_new(&mut self, entry: Entry, k: u32) -> Result<InsertOutcome> {
        let matches: Vec<Match> = self
            .query(entry.fingerprint, k)?
            .into_iter()
            .filter(|m| !would_replace(&entry, m))
            .collect();
        if !matches.is_empty() {
            return Ok(InsertOutcome::Duplicate(matches));
        }
        self.insert(entry)?;
        Ok(InsertOutcome::Inserted)
    }
}

impl Store {
    /// Stores `entry` unless a stored document is within Hamming distance `k` of it; then
    /// returns those documents and stores nothing. The query and the insert hold the store's
    /// write lock together, so two threads inserting near-duplicates of each other at the same
    /// time cannot both get in: the second sees the first.
    ///
    /// The document `entry` would replace — the same id, or the holder of the same external
    /// key — does not count as a near-duplicate of it: re-crawling a page updates it.
    ///
    /// ```
    /// use simhash_store::{Fingerprint, Store};
    /// let dir = tempfile::tempdir()?;
    /// let store = Store::open(dir.path())?;
    /// assert!(store.insert_if_new((1, Fingerprint(0xff00)), 3)?.is_inserted());
    /// let outcome = store.insert_if_new((2, Fingerprint(0xff01)), 3)?;
    /// assert_eq!(outcome.matches().iter().map(|m| m.id).collect::<Vec<_>>(), [1]);
    /// assert_eq!(store.get(2)?, None);
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`crate::Error::ReadOnly`]; as [`Store::query`] and [`Store::insert_entry`].
    pub fn insert_if_new(&self, entry: impl Into<Entry>, k: u32) -> Result<InsertOutcome> {
        Ok(self.insert_batch_if_new([entry.into()], k)?.remove(0))
    }

    /// [`Store::insert_if_new`] of each entry, in order, committed as one atomic batch: each
    /// entry is checked against the store and against the entries stored earlier in the
    /// batch, exactly as if each were inserted alone with [`Store::insert_if_new`] (a later
    /// entry of the same id or key replaces an earlier one, and the document an entry would
    /// replace does not count as its near-duplicate). Returns the outcome of each entry.
    ///
    /// ```
    /// use simhash_store::{Entry, Fingerprint, Store};
    /// let dir = tempfile::tempdir()?;
    /// let store = Store::open(dir.path())?;
    /// store.insert(1, Fingerprint(0xff00))?;
    /// let outcomes = store.insert_batch_if_new(
    ///     [
    ///         Entry::new(2, Fingerprint(0xff01)),          // near stored document 1
    ///         Entry::new(3, Fingerprint(0x00ff)),          // new
    ///         Entry::new(4, Fingerprint(0x01ff)),          // near document 3, just before
    ///         Entry::new(1, Fingerprint(0xff03)),          // replaces document 1: stored
    ///     ],
    ///     1,
    /// )?;
    /// let inserted: Vec<bool> = outcomes.iter().map(|o| o.is_inserted()).collect();
    /// assert_eq!(inserted, [false, true, false, true]);
    /// assert_eq!(outcomes[2].matches()[0].id, 3);
    /// assert_eq!(store.get(1)?, Some(Fingerprint(0xff03)));
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`Store::insert_if_new`]; on error nothing of the batch is written.
    pub fn insert_batch_if_new(
        &self,
        entries: impl IntoIterator<Item = Entry>,
        k: u32,
    ) -> Result<Vec<InsertOutcome>> {
        let mut batch = self.staged_batch()?;
        let outcomes = entries
            .into_iter()
            .map(|entry| batch.insert_if_new(entry, k))
            .collect::<Result<Vec<_>>>()?;
        batch.commit()?;
        Ok(outcomes)
    }

    /// Fingerprints `text` with [`Store::simhasher`], then [`Store::insert_if_new`] it under
    /// `id` and the optional external `key`, recording its length. Returns the fingerprint
    /// with the outcome.
    ///
    /// ```
    /// use simhash_store::Store;
    /// let dir = tempfile::tempdir()?;
    /// let store = Store::open(dir.path())?;
    /// let page = "Near-duplicate detection finds pages that are almost the same: one article \
    ///             under two addresses, a copy with another advert, a reposted story.";
    /// let (_, first) = store.insert_text_if_new(1, Some("https://a.example/1"), page, 3)?;
    /// assert!(first.is_inserted());
    /// let (_, copy) = store.insert_text_if_new(2, Some("https://b.example/1"), page, 3)?;
    /// assert_eq!(copy.matches()[0].key.as_deref(), Some("https://a.example/1"));
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`crate::Error::NoFeatures`] for a text with nothing to fingerprint; as
    /// [`Store::insert_if_new`].
    pub fn insert_text_if_new(
        &self,
        id: u64,
        key: Option<&str>,
        text: &str,
        k: u32,
    ) -> Result<(Fingerprint, InsertOutcome)> {
        let (fp, sketch) = self.simhasher().fingerprint_and_sketch(text)?;
        let mut entry = Entry::new(id, fp).with_text_len(text.len() as u64);
        entry.key = key.map(str::to_owned);
        entry.sketch = sketch;
        Ok((fp, self.insert_if_new(entry, k)?))
    }
}
