//! The `keys` family read as the owners of external keys ([`Owners`]): the id stored under a
//! key, one in a view or many by sorted multi-gets. Byte layouts are `src/keys.rs`'s.

use super::cursor::{Cursor, FamilyRef, Reading};
use super::{Database, View};
use crate::error::{Error, Result};
use crate::keys::{self, KEYS_FAMILY};

/// The `keys` family of a store's database ([`Database::owners`]).
#[derive(Clone, Copy)]
pub(crate) struct Owners<'a> {
    db: &'a Database,
    family: FamilyRef<'a>,
}

impl Database {
    /// The `keys` family, read as the owners of external keys.
    #[inline]
    pub(crate) fn owners(&self) -> Result<Owners<'_>> {
        Ok(Owners {
            db: self,
            family: self.handle(KEYS_FAMILY)?,
        })
    }
}

/// The owner stored under `key`, decoded.
fn decode(key: &[u8], value: &[u8]) -> Result<u64> {
    keys::decode_id_value(value).ok_or_else(|| Error::Decode {
        column_family: KEYS_FAMILY,
        key: keys::hex(key),
        what: "document id",
        message: format!("expected 8 bytes, found {}", value.len()),
    })
}

impl<'a> Owners<'a> {
    /// The id stored under external key `key` in `view`, if any.
    ///
    /// # Errors
    /// A read error; [`Error::Decode`] for a value that is not an id.
    #[inline]
    pub(crate) fn owner_of(self, view: &View<'_>, key: &[u8]) -> Result<Option<u64>> {
        view.get(self.family, key)?
            .map(|value| decode(key, &value))
            .transpose()
    }

    /// The ids stored under `keys` as the database is now, aligned with them: sorted
    /// multi-gets (the keys need not be sorted; sorted ones are read faster).
    ///
    /// # Errors
    /// A read error; [`Error::Decode`] for a value that is not an id.
    pub(crate) fn multi_get(self, keys: &[&[u8]]) -> Result<Vec<Option<u64>>> {
        let sorted = keys.windows(2).all(|w| w[0] <= w[1]);
        let found = self
            .db
            .rocks()
            .batched_multi_get_cf(self.family.handle, keys, sorted);
        found
            .into_iter()
            .zip(keys)
            .map(|(r, key)| match r {
                Ok(Some(v)) => decode(key, &v).map(Some),
                Ok(None) => Ok(None),
                Err(e) => Err(self.family.error("read keys", e)),
            })
            .collect()
    }

    /// A cursor over the family's raw entries (key, id value) in `view`.
    #[inline]
    pub(crate) fn cursor<'v>(self, view: &'v View<'_>) -> Cursor<'v>
    where
        'a: 'v,
    {
        view.cursor(self.family, Reading::new())
    }
}
