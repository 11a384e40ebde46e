//! What the upsert planner reads of the index, read ahead inside the writer's transaction.
//!
//! The planner ([`crate::upsert::plan::plan`]) asks for the documents of the ids the adds
//! name, the owners of the keys they name, the documents of those owners and the owners of
//! those documents' keys, in batches, synchronously. [`Snapshot::read`] reads exactly that
//! set, in four statements, and answers the planner from memory; a question outside it is an
//! error (never a guess), so the plan follows the store's rules exactly.

use std::collections::{BTreeSet, HashMap};

use deadpool_postgres::GenericClient;

use super::{col, document_from_row, pg_error, DOC_COLUMNS};
use crate::codec::Document;
use crate::error::{Error, Result};
use crate::upsert::plan::{Adds, Stored};

/// The stored documents and key owners that planning some adds reads.
pub(crate) struct Snapshot {
    count: u64,
    /// Every id read (sorted, distinct; a bulk load reads a million, so no map of them).
    ids_read: Vec<u64>,
    /// The stored documents among them.
    documents: HashMap<u64, Document>,
    /// Every key read.
    keys_read: BTreeSet<Vec<u8>>,
    /// The owners of those that a document holds.
    owners: HashMap<Vec<u8>, u64>,
}

impl Snapshot {
    /// Reads what planning `adds` reads; the holders of the keys in `owners` (read before
    /// under the same lock) are taken from there. The caller holds the writer lock.
    pub(crate) async fn read(
        client: &impl GenericClient,
        adds: &impl Adds,
        owners: &HashMap<Vec<u8>, Option<u64>>,
    ) -> Result<Snapshot> {
        let n = adds.len() as u32;
        let mut ids: Vec<u64> = (0..n).map(|s| adds.id(s)).collect();
        if !adds.ids_ascending() {
            ids.sort_unstable();
            ids.dedup();
        }
        let keys: BTreeSet<Vec<u8>> = (0..n)
            .filter_map(|s| adds.key(s))
            .map(<[u8]>::to_vec)
            .collect();
        Snapshot::read_named(client, ids, keys, owners).await
    }

    /// Reads the documents of `ids` and the owners of their keys. The caller holds the
    /// writer lock.
    pub(crate) async fn read_ids(client: &impl GenericClient, ids: &[u64]) -> Result<Snapshot> {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        Snapshot::read_named(client, ids, BTreeSet::new(), &HashMap::new()).await
    }

    /// Reads the documents of `ids`, the owners of `keys` (those in `known` from there), the
    /// documents of those owners and the owners of the keys of every document read.
    async fn read_named(
        client: &impl GenericClient,
        ids: Vec<u64>,
        mut keys: BTreeSet<Vec<u8>>,
        known: &HashMap<Vec<u8>, Option<u64>>,
    ) -> Result<Snapshot> {
        let count: i64 = client
            .query_one("SELECT documents FROM simhash_meta", &[])
            .await
            .map_err(pg_error("read the document count"))?
            .try_get(0)
            .map_err(pg_error("read the document count"))?;
        let mut snapshot = Snapshot {
            count: count as u64,
            ids_read: Vec::new(),
            documents: HashMap::new(),
            keys_read: BTreeSet::new(),
            owners: HashMap::new(),
        };
        // The adds' ids and keys, then the documents of the keys' owners, then the owners of
        // the keys of every document read.
        let mut doc_keys = snapshot.read_documents(client, ids).await?;
        let mut owners = Vec::new();
        keys.retain(|key| match known.get(key) {
            Some(owner) => {
                if let Some(id) = *owner {
                    owners.push(id);
                    snapshot.owners.insert(key.clone(), id);
                }
                snapshot.keys_read.insert(key.clone());
                false
            }
            None => true,
        });
        owners.extend(snapshot.read_owners(client, keys).await?);
        let mut owners: Vec<u64> = owners
            .into_iter()
            .filter(|id| !snapshot.was_read(*id))
            .collect();
        owners.sort_unstable();
        owners.dedup();
        doc_keys.extend(snapshot.read_documents(client, owners).await?);
        let doc_keys: BTreeSet<Vec<u8>> = doc_keys
            .into_iter()
            .filter(|k| !snapshot.keys_read.contains(k))
            .collect();
        snapshot.read_owners(client, doc_keys).await?;
        Ok(snapshot)
    }

    /// Whether document `id` was read (stored or not).
    fn was_read(&self, id: u64) -> bool {
        self.ids_read.binary_search(&id).is_ok()
    }

    /// Reads the documents of `ids` (sorted, distinct, none read before); returns their
    /// keys.
    async fn read_documents(
        &mut self,
        client: &impl GenericClient,
        ids: Vec<u64>,
    ) -> Result<Vec<Vec<u8>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let wanted: Vec<i64> = ids.iter().map(|&id| id as i64).collect();
        self.ids_read.extend(ids);
        self.ids_read.sort_unstable();
        // One index probe first: a bulk load's new ids lie past every stored one, and
        // looking each up would cost a million probes per million documents.
        let (lo, hi) = (wanted.iter().min(), wanted.iter().max());
        if !any_between(client, "simhash_docs", "id", &lo, &hi).await? {
            return Ok(Vec::new());
        }
        let rows = client
            .query(
                &format!("SELECT {DOC_COLUMNS} FROM simhash_docs WHERE id = ANY($1)"),
                &[&wanted],
            )
            .await
            .map_err(pg_error("read documents"))?;
        let mut keys = Vec::new();
        for row in rows {
            let (id, doc) = document_from_row(&row)?;
            if let Some(key) = &doc.key {
                keys.push(key.as_bytes().to_vec());
            }
            self.documents.insert(id, doc);
        }
        Ok(keys)
    }

    /// Reads the owners of `keys`; returns them.
    async fn read_owners(
        &mut self,
        client: &impl GenericClient,
        keys: BTreeSet<Vec<u8>>,
    ) -> Result<Vec<u64>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let wanted: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let (lo, hi) = (wanted.first(), wanted.last());
        if !any_between(client, "simhash_keys", "key", &lo, &hi).await? {
            self.keys_read.extend(keys);
            return Ok(Vec::new());
        }
        let rows = client
            .query(
                "SELECT key, id FROM simhash_keys WHERE key = ANY($1)",
                &[&wanted],
            )
            .await
            .map_err(pg_error("read keys"))?;
        let mut owners = Vec::new();
        for row in rows {
            let (key, id): (Vec<u8>, i64) = (col(&row, 0)?, col(&row, 1)?);
            owners.push(id as u64);
            self.owners.insert(key, id as u64);
        }
        self.keys_read.extend(keys);
        Ok(owners)
    }
}

impl Snapshot {
    /// Whether key `key` was read and no document holds it.
    pub(crate) fn key_is_free(&self, key: &[u8]) -> bool {
        self.keys_read.contains(key) && !self.owners.contains_key(key)
    }

    /// Whether document `id` was read and is stored.
    pub(crate) fn holds(&self, id: u64) -> bool {
        self.documents.contains_key(&id)
    }
}

/// Whether `table` has a row whose `column` lies in `lo..=hi` (one index probe).
async fn any_between<T: tokio_postgres::types::ToSql + Sync>(
    client: &impl GenericClient,
    table: &'static str,
    column: &'static str,
    lo: &T,
    hi: &T,
) -> Result<bool> {
    let stmt = client
        .prepare_cached(&format!(
            "SELECT EXISTS (SELECT 1 FROM {table} WHERE {column} BETWEEN $1 AND $2)"
        ))
        .await
        .map_err(pg_error("prepare a range probe"))?;
    col(
        &client
            .query_one(&stmt, &[lo, hi])
            .await
            .map_err(pg_error("probe a range"))?,
        0,
    )
}

/// A question the read-ahead did not foresee: a defect, reported rather than guessed.
fn unforeseen(what: &str) -> Error {
    Error::Postgres {
        operation: "plan the writes",
        message: format!("the planner asked for {what} that was not read ahead"),
        code: None,
    }
}

impl Stored for Snapshot {
    fn count(&self) -> u64 {
        self.count
    }

    fn id_range(&self) -> Result<Option<(u64, u64)>> {
        // Every id the planner looks up is read ahead, so no range need rule any out.
        Ok((self.count > 0).then_some((0, u64::MAX)))
    }

    fn documents_of(&self, ids: &[u64]) -> Result<Vec<Option<Document>>> {
        ids.iter()
            .map(|id| match self.documents.get(id) {
                Some(doc) => Ok(Some(doc.clone())),
                None if self.was_read(*id) => Ok(None),
                None => Err(unforeseen("a document")),
            })
            .collect()
    }

    fn owners_of(&self, keys: &[&[u8]]) -> Result<Vec<Option<u64>>> {
        keys.iter()
            .map(|key| match self.owners.get(*key) {
                Some(&owner) => Ok(Some(owner)),
                None if self.keys_read.contains(*key) => Ok(None),
                None => Err(unforeseen("a key")),
            })
            .collect()
    }
}
