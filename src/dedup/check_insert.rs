//! Check then insert: store a document only if nothing stored is a near-duplicate of it,
//! atomically against other writers of the store; one document, a batch of them, or one entry
//! of a [`StagedBatch`].

use super::StagedBatch;
use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::query::Match;
use crate::store::{Entry, Store};

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
