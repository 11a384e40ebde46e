//! A bulk run's block entries of one family, sorted, written in the packed layout: each block
//! value's removal deltas, then its entries as chunks of the run's segment, or the chunks
//! handed to a spool file.

use super::{chunk, GroupWriter};
use crate::codec::{self, Delta};
use crate::keys;
use crate::storage::FillResult;

/// Where [`write_packed`] writes a run's chunks.
pub(crate) enum ChunkOut<'a> {
    /// The store's layout: chunk keys and values, then their ids keys and values, through
    /// `put(key, value)` ([`GroupWriter`]).
    Store(&'a mut dyn FnMut(&[u8], &[u8]) -> FillResult),
    /// A spool file: each chunk with its ids inline, through `spool(block value, bytes)`.
    Spool(&'a mut dyn FnMut(u16, &[u8]) -> FillResult),
}

/// The chunks a bulk run or a merge writes: of segment `segment`, the last one of each group
/// final if `final_chunks` (nothing of the group can sort after it: the group has no chunks
/// in the store), groups of more than `split_above` entries written split ([`GroupWriter`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segment {
    pub(crate) segment: u32,
    pub(crate) final_chunks: bool,
    pub(crate) split_above: usize,
}

impl Segment {
    /// Chunks of segment `segment` that are never final nor split: those of a spool file
    /// (the merge decides), or none (a run's removal deltas alone).
    pub(crate) fn unsplit(segment: u32) -> Segment {
        Segment {
            segment,
            final_chunks: false,
            split_above: usize::MAX,
        }
    }
}

/// Writes the packed layout of sorted block keys `keys` (as [`keys::block_key_number`]s) of
/// family `i`: for each block value, a removal delta for each of its `deletes` (old entries of
/// replaced documents; the removal hides them in older segments, not in this one) through
/// `delta(key, value)`, then its entries as the chunks that `segment` says through `out`.
pub(crate) fn write_packed(
    i: usize,
    Segment {
        segment,
        final_chunks,
        split_above,
    }: Segment,
    keys: &[u128],
    deletes: &[u128],
    delta: &mut dyn FnMut(&[u8], &[u8]) -> FillResult,
    mut out: ChunkOut<'_>,
) -> FillResult {
    let split = keys::split_block_key_number;
    let block_value = keys::block_value_of_key_number;
    let removal = codec::encode_delta(Delta::Removed { watermark: segment });
    let (mut a, mut d) = (0, 0);
    let mut entries: Vec<(u64, u64)> = Vec::new();
    let mut bytes = Vec::new();
    let mut writer = GroupWriter::new(split_above);
    while a < keys.len() || d < deletes.len() {
        let value = match (keys.get(a), deletes.get(d)) {
            (Some(&k), Some(&dk)) => block_value(k).min(block_value(dk)),
            (Some(&k), None) => block_value(k),
            (None, Some(&dk)) => block_value(dk),
            (None, None) => break,
        };
        // Deltas sort before chunks (`keys`).
        while let Some(&dk) = deletes.get(d).filter(|&&dk| block_value(dk) == value) {
            let (v, rem, id) = split(dk);
            delta(&keys::delta_key(i, keys::join(i, v, rem), id), &removal)?;
            d += 1;
        }
        let end = a + keys[a..].partition_point(|&k| block_value(k) == value);
        entries.clear();
        entries.extend(keys[a..end].iter().map(|&k| {
            let (_, rem, id) = split(k);
            (rem, id)
        }));
        match &mut out {
            ChunkOut::Store(put) => {
                writer.write(value, segment, &entries, final_chunks, |k, v| put(k, v))?
            }
            ChunkOut::Spool(spool) => {
                for part in entries.chunks(chunk::MAX_ENTRIES) {
                    bytes.clear();
                    chunk::encode(part, false, &mut bytes);
                    spool(value, &bytes)?;
                }
            }
        }
        a = end;
    }
    Ok(())
}
