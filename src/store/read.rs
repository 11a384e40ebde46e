//! Reading documents: by id, by external key, all of them in id order.

use super::Store;
use crate::codec::{self, Document};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::keys::{self, DOCS_FAMILY, KEYS_FAMILY};

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
        let key = keys::doc_key(id);
        self.get_raw(DOCS_FAMILY, &key)?
            .map(|bytes| codec::decode_document(&bytes, &key))
            .transpose()
    }

    /// The id of the document stored under external key `key` (a URL, a path), if any.
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`] for a damaged value.
    pub fn id_for_key(&self, key: &str) -> Result<Option<u64>> {
        match self.get_raw(KEYS_FAMILY, key.as_bytes())? {
            None => Ok(None),
            Some(v) => keys::decode_id_value(&v)
                .map(Some)
                .ok_or_else(|| Error::Decode {
                    column_family: KEYS_FAMILY,
                    key: keys::hex(key.as_bytes()),
                    what: "document id",
                    message: format!("expected 8 bytes, found {}", v.len()),
                }),
        }
    }

    /// The smallest id greater than every stored id (0 for an empty store): where a loader
    /// that assigns ids can start.
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`] if the last key of `docs` is not an id (ids
    /// counted from 0 would overwrite stored documents); [`Error::NoIdLeft`] if the store
    /// holds id 2^64-1, after which there is none (ids never wrap to a stored one).
    pub fn next_id(&self) -> Result<u64> {
        let mut it = self.db.rocks().raw_iterator_cf(self.cf(DOCS_FAMILY)?);
        it.seek_to_last();
        it.status()
            .map_err(|e| self.rocks_err("read the last document", Some(DOCS_FAMILY), e))?;
        let Some(key) = it.key() else {
            return Ok(0);
        };
        let id = keys::decode_doc_key(key).ok_or_else(|| Error::Decode {
            column_family: DOCS_FAMILY,
            key: keys::hex(key),
            what: "document id",
            message: format!("expected an 8-byte key, found {} bytes", key.len()),
        })?;
        id.checked_add(1).ok_or_else(|| Error::NoIdLeft {
            path: self.path().to_path_buf(),
        })
    }

    /// Every document, in id order. Reads a consistent snapshot.
    ///
    /// # Errors
    /// Each item is an error if RocksDB fails or a value does not decode.
    pub fn documents(&self) -> Result<impl Iterator<Item = Result<(u64, Document)>> + '_> {
        let iter = self.raw_iter(DOCS_FAMILY)?;
        Ok(iter.map(move |item| {
            let (key, value) =
                item.map_err(|e| self.rocks_err("iterate documents", Some(DOCS_FAMILY), e))?;
            let id = keys::decode_doc_key(&key).ok_or_else(|| Error::Decode {
                column_family: DOCS_FAMILY,
                key: keys::hex(&key),
                what: "document id",
                message: format!("expected an 8-byte key, found {} bytes", key.len()),
            })?;
            Ok((id, codec::decode_document(&value, &key)?))
        }))
    }
}
