//! The query's read of the packed layout: the groups of the query's block values, their chunks
//! scanned in place ([`Chunk::scan`]) without decoding the entries that do not match.

use rocksdb::ReadOptions;

use super::chunk::Chunk;
use crate::codec::{self, Delta};
use crate::error::Result;
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::keys::{self, PackedKey, BLOCK_FAMILIES};
use crate::store::{Store, View};

use super::groups::malformed_error;

/// A candidate of one group: (remainder, id, distance).
type Candidate = (u64, u64, u32);

impl Store {
    /// Pushes (id, fingerprint, distance) of every document within `k` of `q` onto `found`,
    /// probing in family `i` each block value `q.block(i) ^ m` for `m` in `masks` (the caller
    /// passes them sorted by value); only documents whose first block within `radius` of the
    /// query's is block `i` (so each document comes from one family). Packed layout only.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn probe_packed(
        &self,
        view: &View<'_>,
        i: usize,
        q: Fingerprint,
        k: u32,
        radius: u32,
        values: &[u16],
        found: &mut Vec<(u64, Fingerprint, u32)>,
    ) -> Result<()> {
        let family = BLOCK_FAMILIES[i];
        let qb = q.blocks();
        let (q_value, q_rem) = keys::split(i, q);
        let first_family = |fp: Fingerprint| {
            let b = fp.blocks();
            (0..BLOCKS).find(|&j| (b[j] ^ qb[j]).count_ones() <= radius)
        };
        let mut it = view.raw_iterator_cf_opt(self.block_cf(i)?, ReadOptions::default());
        let mut candidates: Vec<Candidate> = Vec::new();
        let mut removals: Vec<(u64, u64, u32)> = Vec::new();
        for &v in values {
            let outside = (v ^ q_value).count_ones();
            if outside > k {
                continue;
            }
            let budget = k - outside;
            candidates.clear();
            removals.clear();
            let prefix = keys::block_prefix(v);
            it.seek(prefix);
            // The group's deltas come first (so its removals are known before its chunks are
            // scanned), then its chunks; a final chunk is the group's last key.
            while let (Some(key), Some(value)) = (it.key(), it.value()) {
                if !key.starts_with(&prefix) {
                    break;
                }
                match keys::decode_packed_key(i, key) {
                    Some(PackedKey::Chunk { segment, .. }) => match Chunk::parse(value) {
                        Ok(chunk) => {
                            chunk.scan(q_rem, budget, |rem, id, d| {
                                // Removals are in key order: sorted by (remainder, id).
                                let hidden = !removals.is_empty()
                                    && removals
                                        .binary_search_by(|r| (r.0, r.1).cmp(&(rem, id)))
                                        .is_ok_and(|at| segment < removals[at].2);
                                if !hidden {
                                    candidates.push((rem, id, d + outside));
                                }
                            });
                            if chunk.is_final() {
                                break;
                            }
                        }
                        Err(message) => malformed_error(family, key, format!("chunk: {message}"))?,
                    },
                    Some(PackedKey::Delta { fingerprint, id }) => {
                        let (_, rem) = keys::split(i, fingerprint);
                        match codec::decode_delta(value) {
                            Some(Delta::Added) => {
                                let d = fingerprint.distance(q);
                                if d <= k {
                                    candidates.push((rem, id, d));
                                }
                            }
                            Some(Delta::Removed { watermark }) => {
                                removals.push((rem, id, watermark));
                            }
                            None => malformed_error(
                                family,
                                key,
                                format!("a {}-byte delta", value.len()),
                            )?,
                        }
                    }
                    None => malformed_error(family, key, "neither a chunk nor a delta key".into())?,
                }
                it.next();
            }
            it.status()
                .map_err(|e| self.rocks_err("scan", Some(family), e))?;
            for &(rem, id, d) in &candidates {
                let fp = keys::join(i, v, rem);
                if first_family(fp) == Some(i) {
                    found.push((id, fp, d));
                }
            }
        }
        Ok(())
    }
}
