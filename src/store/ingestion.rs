//! [`Ingestion`]: how the bulk loader writes to the store. The loader sorts and writes a run's
//! SST files itself (`src/bulk/`); everything it needs from the store goes through this one
//! type, which holds the store's write lock: the state a run is planned against, the upsert
//! plan, and the run's ingestion under the journal (begin, ingest, commit), or the merge of a
//! load's spooled runs.

use std::sync::atomic::Ordering;

use parking_lot::MutexGuard;

use super::{Durability, HeldWrites, Store};
use crate::error::{Error, Result};
use crate::postings::{self, spool};
use crate::storage::{journal, Journal, LoadRecord};

use crate::upsert::plan::{Adds, UpsertPlan};

/// The store's write lock, held for one run or for a whole load.
enum Lock<'a> {
    Run(#[allow(dead_code)] MutexGuard<'a, ()>),
    Load(#[allow(dead_code)] HeldWrites<'a>),
}

/// A bulk run's (or a whole load's) access to the store, under its write lock: other writers
/// wait until it is dropped; readers do not.
pub(crate) struct Ingestion<'a> {
    store: &'a Store,
    _lock: Lock<'a>,
}

impl Store {
    /// Takes the write lock for one run.
    ///
    /// # Errors
    /// [`crate::Error::BulkLoadInProgress`] on the thread of a load holding it.
    pub(crate) fn ingest_run(&self) -> Result<Ingestion<'_>> {
        Ok(Ingestion {
            store: self,
            _lock: Lock::Run(self.lock_writes()?),
        })
    }

    /// Takes the write lock for a whole load of spooled runs, until the merge is ingested: a
    /// write from this thread meanwhile fails with [`crate::Error::BulkLoadInProgress`]
    /// instead of waiting for itself.
    pub(crate) fn ingest_load(&self) -> Result<Ingestion<'_>> {
        Ok(Ingestion {
            store: self,
            _lock: Lock::Load(self.hold_writes()?),
        })
    }
}

impl Ingestion<'_> {
    /// Makes the writes of a store opened with [`Durability::NoWal`] durable: a journal's
    /// count includes them, so recovery must never count documents a crash lost.
    pub(crate) fn flush_unlogged(&self) -> Result<()> {
        if self.store.durability() == Durability::NoWal {
            self.store.flush()?;
        }
        Ok(())
    }

    /// The number of documents now.
    pub(crate) fn doc_count(&self) -> u64 {
        self.store.len()
    }

    /// The segment the next run writes its chunks in.
    pub(crate) fn next_segment(&self) -> Result<u32> {
        Ok(self.store.packed()?.next_segment())
    }

    /// Entries of one group above which a run writes it split.
    pub(crate) fn split_above(&self) -> Result<usize> {
        Ok(self.store.packed()?.split_above())
    }

    /// Whether the block families hold nothing: a run's chunks can then be final.
    pub(crate) fn block_families_empty(&self) -> Result<bool> {
        postings::block_families_empty(self.store.blocks_db())
    }

    /// Whether a stored document may have an external key (queries then read `docs`).
    pub(crate) fn may_have_keys(&self) -> bool {
        self.store.may_have_keys()
    }

    /// The largest stored document id, if any.
    pub(crate) fn last_id(&self) -> Result<Option<u64>> {
        // A last key that is not an id counts as no document (`Store::next_id` refuses it).
        match self.store.db().docs()?.last_id() {
            Err(Error::Decode { .. }) => Ok(None),
            found => found,
        }
    }

    /// The `added` time of a document stored now.
    pub(crate) fn now_micros(&self) -> u64 {
        self.store.now_micros()
    }

    /// Plans storing `adds`, in order, against the store as it is now: the same upserts as
    /// [`Store::insert_batch`].
    pub(crate) fn plan<A: Adds + Sync>(&self, adds: &A) -> Result<UpsertPlan> {
        let plan = self.store.plan_upserts(adds)?;
        self.store.note_keys(&plan);
        Ok(plan)
    }

    /// Records a load's spooled runs, synced (before the run's journal).
    pub(crate) fn save_record(&self, record: &LoadRecord) -> Result<()> {
        record.save(self.store.db())
    }

    /// Ingests a run's files under `journal`: records it, with the segment the next run
    /// writes in, ingests its files family by family and commits the new count. After an
    /// error the journal stays, and the next open finishes the run.
    pub(crate) fn apply(&self, journal: &Journal, next_segment: u32) -> Result<()> {
        let store = self.store;
        let db = store.db();
        store
            .postings()
            .begin_ingestion(db, journal, next_segment)?;
        store.postings().ingest(db, journal)?;
        journal::commit(db, journal.doc_count)?;
        store.doc_count.store(journal.doc_count, Ordering::SeqCst);
        Ok(())
    }

    /// Merges a load's spooled runs (see `src/postings/spool/`); the bytes of SST files it
    /// wrote. `on_family` is called after each block family.
    pub(crate) fn merge(
        &self,
        record: LoadRecord,
        on_family: impl FnMut(usize) -> Result<()>,
    ) -> Result<u64> {
        let store = self.store;
        spool::merge(store.db(), store.postings(), store.len(), record, on_family)
    }
}
