//! A reference model of a store's ids and keys, for the tests that drive `simhash-store load`
//! and the service's `insert` and check that every document is stored or reported.
//!
//! Writes are sequential upserts (the rule of `Store::insert_batch`, which the bulk loader
//! and the service follow): a document replaces the stored one with its id (dropping that
//! one's key), and removes the stored document that holds its key under another id.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

/// A document as the model stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doc {
    pub key: Option<String>,
    pub fingerprint: u64,
}

/// What a load or request did, as `BulkSummary` counts it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub added: u64,
    pub replaced: u64,
    pub removed: u64,
    pub superseded: u64,
}

/// Ids to documents, and keys to ids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Model {
    pub docs: BTreeMap<u64, Doc>,
    pub keys: BTreeMap<String, u64>,
}

impl Model {
    /// What `store` holds, as a model.
    pub fn of_store(store: &simhash_store::Store) -> Model {
        let mut model = Model::default();
        for doc in store.documents().expect("documents") {
            let (id, doc) = doc.expect("a document");
            if let Some(key) = &doc.key {
                model.keys.insert(key.clone(), id);
            }
            model.docs.insert(
                id,
                Doc {
                    key: doc.key,
                    fingerprint: doc.fingerprint.0,
                },
            );
        }
        model
    }

    /// One more than the largest id; `None` when the largest is 2^64-1 (no id left), and
    /// `Some(0)` when empty.
    pub fn next_id(&self) -> Option<u64> {
        match self.docs.keys().next_back() {
            None => Some(0),
            Some(&id) => id.checked_add(1),
        }
    }

    fn upsert(&mut self, id: u64, doc: Doc, written: &mut BTreeSet<u64>) {
        if let Some(old) = self.docs.remove(&id) {
            if let Some(old_key) = old.key {
                if self.keys.get(&old_key) == Some(&id) {
                    self.keys.remove(&old_key);
                }
            }
        }
        if let Some(key) = &doc.key {
            if let Some(holder) = self.keys.insert(key.clone(), id) {
                if holder != id {
                    self.docs.remove(&holder);
                    written.remove(&holder);
                }
            }
        }
        self.docs.insert(id, doc);
        written.insert(id);
    }

    /// Applies `adds` in order, as one load or batch, and counts what they did.
    pub fn apply(&mut self, adds: &[(u64, Doc)]) -> Counts {
        let before: BTreeSet<u64> = self.docs.keys().copied().collect();
        let mut written = BTreeSet::new();
        for (id, doc) in adds {
            self.upsert(*id, doc.clone(), &mut written);
        }
        let survivors = written.len() as u64;
        let replaced = written.intersection(&before).count() as u64;
        Counts {
            added: survivors - replaced,
            replaced,
            removed: before
                .iter()
                .filter(|id| !self.docs.contains_key(id))
                .count() as u64,
            superseded: adds.len() as u64 - survivors,
        }
    }
}

/// A document of an input: the id and key it gives, and its fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputDoc {
    pub id: Option<u64>,
    pub key: Option<String>,
    pub fingerprint: u64,
}

/// How ids are assigned to documents that give none: the rules of `simhash-store load`
/// (`per_request: false`: one load is one sequence, and a given id that the load already
/// gave a document without one stops it) and of the service's `insert` (`per_request: true`:
/// new ids come after every id the request gives).
#[derive(Clone)]
pub struct Assigner {
    next: Option<u64>,
    keys: BTreeMap<String, u64>,
    given: BTreeSet<u64>,
    new_ids: BTreeSet<u64>,
    /// The service's: ids the request replaces, by id or by taking their key.
    displaced: BTreeSet<u64>,
}

/// The ids of a load: all of them, or those before the document that stopped it.
#[derive(Debug, PartialEq, Eq)]
pub enum Assigned {
    All(Vec<u64>),
    /// Stopped at document `at` (its id was given a document without one); `ids` holds the
    /// ids of the documents before it.
    StoppedAt {
        at: usize,
        ids: Vec<u64>,
    },
    /// No id was left for document `at`.
    NoIdLeft {
        at: usize,
        ids: Vec<u64>,
    },
}

impl Assigner {
    /// Ids after those of `model`.
    pub fn new(model: &Model) -> Assigner {
        Assigner {
            next: model.next_id(),
            keys: BTreeMap::new(),
            given: BTreeSet::new(),
            new_ids: BTreeSet::new(),
            displaced: BTreeSet::new(),
        }
    }

    fn give(&mut self, id: u64) {
        self.given.insert(id);
        self.next = match (self.next, id.checked_add(1)) {
            (Some(next), Some(after)) => Some(next.max(after)),
            _ => None,
        };
    }

    /// The ids of `docs` written into `model`: one load (`per_request: false`), or one
    /// request of a service that keeps the assigner from request to request (`true`).
    pub fn assign(&mut self, model: &Model, docs: &[InputDoc], per_request: bool) -> Assigned {
        if per_request {
            self.keys.clear();
            self.given.clear();
            self.displaced.clear();
            for doc in docs {
                if let Some(id) = doc.id {
                    self.give(id);
                }
            }
        }
        let mut ids = Vec::new();
        for (at, doc) in docs.iter().enumerate() {
            let id = if let Some(id) = doc.id {
                if !per_request && self.new_ids.contains(&id) {
                    return Assigned::StoppedAt { at, ids };
                }
                self.give(id);
                id
            } else if let Some(id) = doc.key.as_ref().and_then(|k| self.keys.get(k)) {
                *id
            } else if let Some(id) = doc
                .key
                .as_ref()
                .and_then(|k| model.keys.get(k))
                .filter(|id| !self.given.contains(id) && !self.displaced.contains(id))
            {
                *id
            } else {
                let Some(id) = self.next else {
                    return Assigned::NoIdLeft { at, ids };
                };
                self.next = id.checked_add(1);
                self.new_ids.insert(id);
                id
            };
            if per_request {
                // The service's group follows sequential upserts: this add replaces its id
                // (dropping the key it held) and the holder of its key.
                self.keys
                    .retain(|k, held| *held != id || doc.key.as_ref() == Some(k));
                self.displaced.insert(id);
                if let Some(key) = &doc.key {
                    let holder = self.keys.get(key).or_else(|| model.keys.get(key));
                    if let Some(&holder) = holder.filter(|&&h| h != id) {
                        self.displaced.insert(holder);
                    }
                }
            }
            if let Some(key) = &doc.key {
                self.keys.insert(key.clone(), id);
            }
            ids.push(id);
        }
        Assigned::All(ids)
    }
}

/// The adds of `docs` under `ids` (as many as there are ids).
pub fn adds(docs: &[InputDoc], ids: &[u64]) -> Vec<(u64, Doc)> {
    ids.iter()
        .zip(docs)
        .map(|(&id, d)| {
            (
                id,
                Doc {
                    key: d.key.clone(),
                    fingerprint: d.fingerprint,
                },
            )
        })
        .collect()
}

/// Fails unless each of `adds` is stored in `model` (its id holds its fingerprint) or was
/// superseded by a later add of the same id or key: nothing is lost without a reason.
pub fn each_stored_or_superseded(model: &Model, adds: &[(u64, Doc)]) {
    for (i, (id, doc)) in adds.iter().enumerate() {
        if model.docs.get(id) == Some(doc) {
            continue;
        }
        let later = &adds[i + 1..];
        let superseded = later
            .iter()
            .any(|(j, d)| j == id || (doc.key.is_some() && d.key == doc.key));
        assert!(
            superseded,
            "add {i} (id {id}, {doc:?}) is neither stored nor superseded by a later add"
        );
    }
}
