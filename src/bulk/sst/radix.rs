//! The radix sort of a run's block keys, by block value and the byte after it.

use super::*;

pub(super) fn block_key(i: usize, fp: u64, id: u64) -> u128 {
    keys::block_key_number(i, Fingerprint(fp), id)
}

/// Bit position, in a block key number, of its 16-bit block value and of the byte that
/// follows it: the radix sort's passes.
pub(super) const BLOCK_VALUE_SHIFT: u32 = keys::BLOCK_KEY_NUMBER_VALUE_SHIFT;
pub(super) const NEXT_BYTE_SHIFT: u32 = BLOCK_VALUE_SHIFT - 8;

/// The block value a block key number starts with, as an index.
pub(super) fn block_value(key: u128) -> usize {
    usize::from(keys::block_value_of_key_number(key))
}
/// Block values per bucket of the first radix pass (their high byte is the bucket).
pub(super) const COARSE: usize = 256;
/// Keys of one block value up to which a plain sort beats another radix pass.
pub(super) const SMALL_BUCKET: usize = 48;

/// Start of each block value's keys in each block family's sorted order: `starts[i][b]` keys
/// of family `i` have a block value below `b` (65,537 entries per family). One pass over the
/// survivors, in parallel chunks.
pub(super) fn block_starts(buf: &RunBuffer, survivors: &[u32]) -> Vec<Vec<usize>> {
    let threads = rayon::current_num_threads().max(1);
    let chunk = survivors.len().div_ceil(threads).max(1);
    let counts = survivors
        .par_chunks(chunk)
        .map(|c| {
            let mut h = vec![0usize; BLOCKS * BLOCK_VALUES];
            for r in c.iter().filter_map(|&s| buf.recs.get(s as usize)) {
                for (i, b) in Fingerprint(r.fp).blocks().into_iter().enumerate() {
                    h[i * BLOCK_VALUES + usize::from(b)] += 1;
                }
            }
            h
        })
        .reduce(
            || vec![0usize; BLOCKS * BLOCK_VALUES],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        );
    counts
        .chunks(BLOCK_VALUES)
        .map(|c| {
            let mut starts = Vec::with_capacity(BLOCK_VALUES + 1);
            let mut sum = 0;
            starts.push(0);
            for &x in c {
                sum += x;
                starts.push(sum);
            }
            starts
        })
        .collect()
}

/// Cuts the block values into `parts` ranges `lo..hi` of about equal numbers of keys, with
/// bounds at multiples of [`COARSE`].
pub(super) fn block_ranges(starts: &[usize], parts: usize) -> Vec<(usize, usize)> {
    let n = starts.last().copied().unwrap_or(0);
    let mut out = Vec::with_capacity(parts);
    let mut lo = 0;
    for p in 1..=parts {
        let hi = if p == parts {
            BLOCK_VALUES
        } else {
            let at = starts.partition_point(|&x| x < n * p / parts);
            ((at + COARSE / 2) / COARSE * COARSE).clamp(lo, BLOCK_VALUES)
        };
        out.push((lo, hi));
        lo = hi;
    }
    out
}

/// Sorts `keys` stably by the byte at bit `shift` (a counting sort through `scratch`) and
/// returns where each byte value's keys start (and, last, `keys.len()`).
pub(super) fn sort_by_byte(keys: &mut [u128], scratch: &mut Vec<u128>, shift: u32) -> [usize; 257] {
    let byte = |k: u128| (k >> shift) as usize & 0xff;
    let mut bounds = [0usize; 257];
    for &k in keys.iter() {
        bounds[byte(k) + 1] += 1;
    }
    for j in 0..256 {
        bounds[j + 1] += bounds[j];
    }
    scratch.clear();
    scratch.extend_from_slice(keys);
    let mut next = bounds;
    for &k in scratch.iter() {
        let at = &mut next[byte(k)];
        keys[*at] = k;
        *at += 1;
    }
    bounds
}

/// Fills `keys` with the sorted keys of block family `i` whose block value is in `lo..hi`
/// (multiples of [`COARSE`]; `starts` from [`block_starts`]).
///
/// A most-significant-digit radix sort that keeps its writes local: one pass over the
/// survivors places each key by the high byte of its block value (at most 256 write
/// streams; a key outside the range goes to a spare last slot, so the loop has no
/// unpredictable branch), then each such bucket (about `n / 256` keys, in cache) is sorted by
/// the low byte, and each block value's keys (about `n / 65536`) by the next byte when they
/// are many, then compared. `keys` and `scratch` are reused from task to task, so their
/// pages are faulted in once.
pub(super) fn sort_block_range(
    buf: &RunBuffer,
    survivors: &[u32],
    i: usize,
    starts: &[usize],
    (lo, hi): (usize, usize),
    keys: &mut Vec<u128>,
    scratch: &mut Vec<u128>,
) {
    let base = starts[lo];
    let m = starts[hi] - base;
    keys.clear();
    if keys.capacity() < m + 1 {
        keys.reserve_exact(m + 1);
        // One call faults the new buffer in, cheaper than a fault per page (`prefault.rs`).
        prefault::populate_write(keys.as_ptr() as usize, keys.capacity() * size_of::<u128>());
    }
    keys.resize(m + 1, 0);
    let mut next = [m; COARSE];
    let mut step = [0usize; COARSE];
    for c in lo / COARSE..hi / COARSE {
        next[c] = starts[c * COARSE] - base;
        step[c] = 1;
    }
    for r in survivors.iter().filter_map(|&s| buf.recs.get(s as usize)) {
        let c = usize::from(Fingerprint(r.fp).block(i)) / COARSE;
        keys[next[c]] = block_key(i, r.fp, r.id);
        next[c] += step[c];
    }
    keys.truncate(m);
    for c in lo / COARSE..hi / COARSE {
        let bucket = &mut keys[starts[c * COARSE] - base..starts[(c + 1) * COARSE] - base];
        let fine = sort_by_byte(bucket, scratch, BLOCK_VALUE_SHIFT);
        for j in 0..256 {
            let same_block = &mut bucket[fine[j]..fine[j + 1]];
            if same_block.len() <= SMALL_BUCKET {
                same_block.sort_unstable();
                continue;
            }
            let third = sort_by_byte(same_block, scratch, NEXT_BYTE_SHIFT);
            for t in 0..256 {
                if third[t + 1] - third[t] > 1 {
                    same_block[third[t]..third[t + 1]].sort_unstable();
                }
            }
        }
    }
}
