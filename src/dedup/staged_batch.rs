//! [`StagedBatch`]: upserts and check-then-inserts decided one by one, in order, each against
//! the store as the earlier ones leave it, and committed as one atomic write.

use parking_lot::MutexGuard;

use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::query::Match;
use crate::store::{check_key, Entry, PendingAdds, Store};

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
