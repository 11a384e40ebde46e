//! The `docs` family read as documents ([`Docs`]): one by id in a view, many by sorted
//! multi-gets, the first and last ids, every document in id order. Byte layouts are
//! `src/keys.rs`'s (the key) and `src/codec.rs`'s (the value).

use rocksdb::IteratorMode;

use super::cursor::{Cursor, FamilyRef, Reading};
use super::{Database, View};
use crate::codec::{self, Document};
use crate::error::{Error, Result};
use crate::keys::{self, DOCS_FAMILY};

/// The `docs` family of a store's database ([`Database::docs`]).
#[derive(Clone, Copy)]
pub(crate) struct Docs<'a> {
    db: &'a Database,
    family: FamilyRef<'a>,
}

impl Database {
    /// The `docs` family, read as documents.
    #[inline]
    pub(crate) fn docs(&self) -> Result<Docs<'_>> {
        Ok(Docs {
            db: self,
            family: self.handle(DOCS_FAMILY)?,
        })
    }
}

/// The error for a key of `docs` that is not an id.
fn not_an_id(key: &[u8]) -> Error {
    Error::Decode {
        column_family: DOCS_FAMILY,
        key: keys::hex(key),
        what: "document id",
        message: format!("expected an 8-byte key, found {} bytes", key.len()),
    }
}

impl<'a> Docs<'a> {
    /// Document `id` in `view`, if stored: one point read, decoded in place.
    ///
    /// # Errors
    /// A read error; [`Error::Decode`] for a damaged document.
    #[inline]
    pub(crate) fn get(self, view: &View<'_>, id: u64) -> Result<Option<Document>> {
        let key = keys::doc_key(id);
        match view.get(self.family, key)? {
            Some(bytes) => codec::decode_document(&bytes, &key).map(Some),
            None => Ok(None),
        }
    }

    /// The stored documents of `ids` as the database is now, aligned with them: sorted
    /// multi-gets (the ids need not be sorted; sorted ones are read faster). `operation`
    /// names a read error.
    ///
    /// # Errors
    /// A read error; [`Error::Decode`] for a damaged document.
    pub(crate) fn multi_get(
        self,
        ids: &[u64],
        operation: &'static str,
    ) -> Result<Vec<Option<Document>>> {
        let doc_keys: Vec<[u8; keys::DOC_KEY_LEN]> =
            ids.iter().map(|&id| keys::doc_key(id)).collect();
        let sorted = ids.windows(2).all(|w| w[0] <= w[1]);
        let found = self
            .db
            .rocks()
            .batched_multi_get_cf(self.family.handle, &doc_keys, sorted);
        found
            .into_iter()
            .zip(&doc_keys)
            .map(|(r, key)| match r {
                Ok(Some(v)) => codec::decode_document(&v, key).map(Some),
                Ok(None) => Ok(None),
                Err(e) => Err(self.family.error(operation, e)),
            })
            .collect()
    }

    /// The smallest and largest stored ids as the database is now, if any (a key that is
    /// not an id counts as none).
    pub(crate) fn id_range(self) -> Result<Option<(u64, u64)>> {
        let mut it = self.db.cursor(self.family, Reading::new());
        it.seek_to_first();
        let first = it.key().and_then(keys::decode_doc_key);
        it.seek_to_last();
        let last = it.key().and_then(keys::decode_doc_key);
        it.status_of("read the id range")?;
        Ok(first.zip(last))
    }

    /// The largest stored id as the database is now, if any.
    ///
    /// # Errors
    /// A read error; [`Error::Decode`] if the last key is not an id.
    pub(crate) fn last_id(self) -> Result<Option<u64>> {
        let mut it = self.db.cursor(self.family, Reading::new());
        it.seek_to_last();
        it.status_of("read the last document")?;
        it.key()
            .map(|key| keys::decode_doc_key(key).ok_or_else(|| not_an_id(key)))
            .transpose()
    }

    /// A cursor over the family's raw entries in `view`.
    #[inline]
    pub(crate) fn cursor<'v>(self, view: &'v View<'_>) -> Cursor<'v>
    where
        'a: 'v,
    {
        view.cursor(self.family, Reading::new())
    }

    /// Every document in id order, from a consistent state taken now.
    ///
    /// # Errors
    /// Each item is an error if a read fails or a key or value does not decode.
    pub(crate) fn all(self) -> impl Iterator<Item = Result<(u64, Document)>> + 'a {
        let family = self.family;
        self.db
            .rocks()
            .iterator_cf(family.handle, IteratorMode::Start)
            .map(move |item| {
                let (key, value) = item.map_err(|e| family.error("iterate documents", e))?;
                let id = keys::decode_doc_key(&key).ok_or_else(|| not_an_id(&key))?;
                Ok((id, codec::decode_document(&value, &key)?))
            })
    }
}
