//! Reading documents: by id, by external key, all of them in id order.

use super::Store;
use crate::codec::Document;
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;

impl Store {
    /// The fingerprint of document `id`, if it is stored.
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`] for a damaged value.
    pub fn get(&self, id: u64) -> Result<Option<Fingerprint>> {
        Ok(self.document(id)?.map(|d| d.fingerprint))
    }

    /// Everything stored about document `id`.
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`] for a damaged value.
    pub fn document(&self, id: u64) -> Result<Option<Document>> {
        self.db.docs()?.get(&self.db.latest(), id)
    }

    /// The id of the document stored under external key `key` (a URL, a path), if any.
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`] for a damaged value.
    pub fn id_for_key(&self, key: &str) -> Result<Option<u64>> {
        self.db
            .owners()?
            .owner_of(&self.db.latest(), key.as_bytes())
    }

    /// The smallest id greater than every stored id (0 for an empty store): where a loader
    /// that assigns ids can start.
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`] if the last key of `docs` is not an id (ids
    /// counted from 0 would overwrite stored documents); [`Error::NoIdLeft`] if the store
    /// holds id 2^64-1, after which there is none (ids never wrap to a stored one).
    pub fn next_id(&self) -> Result<u64> {
        let Some(id) = self.db.docs()?.last_id()? else {
            return Ok(0);
        };
        id.checked_add(1).ok_or_else(|| Error::NoIdLeft {
            path: self.path().to_path_buf(),
        })
    }

    /// Every document, in id order. Reads a consistent snapshot.
    ///
    /// # Errors
    /// Each item is an error if RocksDB fails or a value does not decode.
    pub fn documents(&self) -> Result<impl Iterator<Item = Result<(u64, Document)>> + '_> {
        Ok(self.db.docs()?.all())
    }
}
