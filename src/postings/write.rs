//! What a single write puts in the block families: deltas of the packed layout (the only
//! one this build writes).

use rocksdb::{ReadOptions, WriteBatch};

use super::{in_key_order, Db, Packed};
use crate::codec::{self, Delta};
use crate::error::Result;
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::keys::{self, BLOCK_FAMILIES};

/// Whether the four block families of `db` hold no key at all (not even a removal).
pub(crate) fn block_families_empty(db: Db<'_>) -> Result<bool> {
    for (i, &family) in BLOCK_FAMILIES.iter().enumerate() {
        let options = in_key_order(ReadOptions::default());
        let mut it = db.rocks().raw_iterator_cf_opt(db.family(i)?, options);
        it.seek_to_first();
        if it.valid() {
            return Ok(false);
        }
        it.status().map_err(|e| db.error("scan", Some(family), e))?;
    }
    Ok(true)
}

impl Packed {
    /// Adds document `id` with fingerprint `fp` to the four block families in `batch`.
    pub(crate) fn put(
        &self,
        db: Db<'_>,
        batch: &mut WriteBatch,
        fp: Fingerprint,
        id: u64,
    ) -> Result<()> {
        for i in 0..BLOCKS {
            batch.put_cf(
                db.family(i)?,
                keys::delta_key(i, fp, id),
                codec::encode_delta(Delta::Added),
            );
        }
        Ok(())
    }

    /// Removes document `id` with fingerprint `fp` from the four block families in `batch`.
    /// The removal hides the entry in every chunk written so far (the caller holds the write
    /// lock, so no bulk run writes a segment meanwhile).
    pub(crate) fn delete(
        &self,
        db: Db<'_>,
        batch: &mut WriteBatch,
        fp: Fingerprint,
        id: u64,
    ) -> Result<()> {
        let watermark = self.next_segment();
        for i in 0..BLOCKS {
            batch.put_cf(
                db.family(i)?,
                keys::delta_key(i, fp, id),
                codec::encode_delta(Delta::Removed { watermark }),
            );
        }
        Ok(())
    }
}
