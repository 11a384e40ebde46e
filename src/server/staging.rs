//! How a group of write requests is staged, whatever the backend: ids for the documents that
//! give none (the library's [`IdAssigner`]), then each document, in queue order, as an upsert
//! or a check-then-insert of the backend's staged batch ([`Staging`]), which decides it
//! against the index as the earlier documents of the group leave it.

use std::collections::HashSet;

use simhash_store::{Entry, IdAssigner, InsertOutcome, KeyHolder, StagedBatch};
use tokio::sync::oneshot;

use super::error::ApiError;
use super::writer::{IfNew, Prepared, WriteOp};

/// An insert request of a group, its reply split off.
pub enum Request {
    /// Upserts.
    Insert(Vec<Prepared>),
    /// Check-then-inserts at this distance.
    IfNew(Vec<Prepared>, u32),
}

impl Request {
    /// The request's documents.
    pub fn docs(&self) -> &[Prepared] {
        match self {
            Request::Insert(docs) | Request::IfNew(docs, _) => docs,
        }
    }
}

/// Where a request's answer goes.
pub enum Reply {
    /// The ids of an insert.
    Insert(oneshot::Sender<Result<Vec<u64>, ApiError>>),
    /// The outcomes of an insert-if-new.
    IfNew(oneshot::Sender<Result<Vec<IfNew>, ApiError>>),
}

/// A request's answer, decided before the commit and sent after it.
pub enum Decided {
    /// Each document's id.
    Ids(Vec<u64>),
    /// Each document's outcome.
    IfNew(Vec<IfNew>),
}

impl Reply {
    /// Sends `answer` (a client that went away no longer waits for it: nothing to do).
    pub fn send(self, answer: Result<Decided, ApiError>) {
        match (self, answer) {
            (Reply::Insert(r), Ok(Decided::Ids(ids))) => drop(r.send(Ok(ids))),
            (Reply::IfNew(r), Ok(Decided::IfNew(outcomes))) => drop(r.send(Ok(outcomes))),
            (Reply::Insert(r), Err(e)) => drop(r.send(Err(e))),
            (Reply::IfNew(r), Err(e)) => drop(r.send(Err(e))),
            (Reply::Insert(r), Ok(_)) => drop(r.send(Err(mixed_up()))),
            (Reply::IfNew(r), Ok(_)) => drop(r.send(Err(mixed_up()))),
        }
    }
}

fn mixed_up() -> ApiError {
    ApiError::internal("match a write with its reply", "a reply of the other kind")
}

/// A write request of a group, in queue order: inserts are staged together, a removal
/// commits on its own between them.
pub enum Step {
    /// An insert or insert-if-new.
    Insert(Request, Reply),
    /// A removal.
    Remove(u64, oneshot::Sender<Result<bool, ApiError>>),
}

impl From<WriteOp> for Step {
    fn from(op: WriteOp) -> Step {
        match op {
            WriteOp::Insert { docs, reply } => {
                Step::Insert(Request::Insert(docs), Reply::Insert(reply))
            }
            WriteOp::InsertIfNew { docs, k, reply } => {
                Step::Insert(Request::IfNew(docs, k), Reply::IfNew(reply))
            }
            WriteOp::Remove { id, reply } => Step::Remove(id, reply),
        }
    }
}

/// A backend's staged batch: the store's [`StagedBatch`] or PostgreSQL's `PgStagedBatch`.
pub trait Staging {
    /// The number of entries staged.
    fn len(&self) -> usize;
    /// Who holds `key` once the staged entries are committed.
    fn key_holder(&self, key: &str) -> simhash_store::Result<Option<KeyHolder>>;
    /// Stages an upsert.
    fn insert(&mut self, entry: Entry) -> simhash_store::Result<()>;
    /// Stages a check-then-insert.
    fn insert_if_new(&mut self, entry: Entry, k: u32) -> simhash_store::Result<InsertOutcome>;
}

impl Staging for StagedBatch<'_> {
    fn len(&self) -> usize {
        StagedBatch::len(self)
    }
    fn key_holder(&self, key: &str) -> simhash_store::Result<Option<KeyHolder>> {
        StagedBatch::key_holder(self, key)
    }
    fn insert(&mut self, entry: Entry) -> simhash_store::Result<()> {
        StagedBatch::insert(self, entry)
    }
    fn insert_if_new(&mut self, entry: Entry, k: u32) -> simhash_store::Result<InsertOutcome> {
        StagedBatch::insert_if_new(self, entry, k)
    }
}

#[cfg(feature = "postgres")]
impl Staging for simhash_store::postgres::PgStagedBatch<'_> {
    fn len(&self) -> usize {
        simhash_store::postgres::PgStagedBatch::len(self)
    }
    fn key_holder(&self, key: &str) -> simhash_store::Result<Option<KeyHolder>> {
        simhash_store::postgres::PgStagedBatch::key_holder(self, key)
    }
    fn insert(&mut self, entry: Entry) -> simhash_store::Result<()> {
        simhash_store::postgres::PgStagedBatch::insert(self, entry)
    }
    fn insert_if_new(&mut self, entry: Entry, k: u32) -> simhash_store::Result<InsertOutcome> {
        simhash_store::postgres::PgStagedBatch::insert_if_new(self, entry, k)
    }
}

/// Stages every document of `requests` in order, with its id, in `batch`; the library
/// decides insert-if-new. Returns each request's answer.
pub fn stage(
    ids: &mut IdAssigner,
    batch: &mut impl Staging,
    requests: &[Request],
) -> Result<Vec<Decided>, ApiError> {
    let mut decided = Vec::with_capacity(requests.len());
    for request in requests {
        let given = reserve_given_ids(ids, request.docs());
        let start = batch.len();
        match request {
            Request::Insert(docs) => {
                let mut out = Vec::with_capacity(docs.len());
                for doc in docs {
                    let entry = entry(ids, batch, start, &given, doc)?;
                    out.push(entry.id);
                    batch.insert(entry)?;
                }
                decided.push(Decided::Ids(out));
            }
            Request::IfNew(docs, k) => {
                let mut outcomes = Vec::with_capacity(docs.len());
                for doc in docs {
                    let entry = entry(ids, batch, start, &given, doc)?;
                    let id = entry.id;
                    let outcome = batch.insert_if_new(entry, *k)?;
                    outcomes.push(if outcome.is_inserted() {
                        IfNew::Inserted(id)
                    } else {
                        IfNew::Duplicate(outcome.into_matches())
                    });
                }
                decided.push(Decided::IfNew(outcomes));
            }
        }
    }
    Ok(decided)
}

/// Moves the next free id past every id `docs` give, before any of them gets a new one:
/// a new id never takes an id given in the same request. Returns the ids given.
fn reserve_given_ids(ids: &mut IdAssigner, docs: &[Prepared]) -> HashSet<u64> {
    let given: HashSet<u64> = docs.iter().filter_map(|d| d.id).collect();
    for &id in &given {
        ids.give(id);
    }
    given
}

/// The entry of `doc`, a document of the request whose first document is staged entry
/// `start` of `batch`, with the id it is stored under, as `simhash-store load` assigns
/// it: the one given; else the id of the document holding its key once the entries
/// staged before are stored, unless the request gives that id to another document (a
/// holder staged by this request keeps its id); else a new one.
fn entry(
    ids: &mut IdAssigner,
    batch: &impl Staging,
    start: usize,
    given: &HashSet<u64>,
    doc: &Prepared,
) -> Result<Entry, ApiError> {
    let id = match (doc.id, &doc.key) {
        (Some(id), _) => id,
        (None, Some(key)) => match batch.key_holder(key)? {
            Some(KeyHolder::Staged { id, at }) if at >= start => id,
            // A holder whose id the request gives to another document is replaced by it.
            holder => new_id(ids, holder.map(|h| h.id()), given)?,
        },
        (None, None) => new_id(ids, None, given)?,
    };
    Ok(Entry {
        id,
        fingerprint: doc.fingerprint,
        key: doc.key.clone(),
        text_len: doc.text_len,
        sketch: doc.sketch,
    })
}

/// The id of a document whose key `holder` holds, unless the request gives that id to
/// another document; else a new one. Fails once no new id is left.
fn new_id(
    ids: &mut IdAssigner,
    holder: Option<u64>,
    given: &HashSet<u64>,
) -> Result<u64, ApiError> {
    ids.for_key(holder, |id| given.contains(&id))
        .ok_or_else(ApiError::no_id_left)
}
