//! What a single write puts in the block families: deltas of the packed layout (the only
//! one this build writes).

use rocksdb::WriteBatch;

use crate::codec::{self, Delta};
use crate::error::Result;
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::keys;
use crate::store::Store;

impl Store {
    /// Whether the four block families hold no key at all (not even a removal).
    pub(crate) fn block_families_empty(&self) -> Result<bool> {
        for i in 0..BLOCKS {
            let mut it = self.db().raw_iterator_cf(self.block_cf(i)?);
            it.seek_to_first();
            if it.valid() {
                return Ok(false);
            }
            it.status()
                .map_err(|e| self.rocks_err("scan", Some(crate::keys::BLOCK_FAMILIES[i]), e))?;
        }
        Ok(true)
    }

    /// Adds document `id` with fingerprint `fp` to the four block families in `batch`.
    pub(crate) fn put_postings(
        &self,
        batch: &mut WriteBatch,
        fp: Fingerprint,
        id: u64,
    ) -> Result<()> {
        self.packed()?;
        for i in 0..BLOCKS {
            batch.put_cf(
                self.block_cf(i)?,
                keys::delta_key(i, fp, id),
                codec::encode_delta(Delta::Added),
            );
        }
        Ok(())
    }

    /// Removes document `id` with fingerprint `fp` from the four block families in `batch`.
    /// The removal hides the entry in every chunk written so far (the caller holds the write
    /// lock, so no bulk run writes a segment meanwhile).
    pub(crate) fn delete_postings(
        &self,
        batch: &mut WriteBatch,
        fp: Fingerprint,
        id: u64,
    ) -> Result<()> {
        let watermark = self.packed()?.next_segment();
        for i in 0..BLOCKS {
            batch.put_cf(
                self.block_cf(i)?,
                keys::delta_key(i, fp, id),
                codec::encode_delta(Delta::Removed { watermark }),
            );
        }
        Ok(())
    }
}
