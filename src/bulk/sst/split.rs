//! Cutting a sorted range into pieces for the threads.

use super::*;

/// Into how many files to split a family of `n` entries: `per_thread` files per thread (each
/// file is written by one task), more if files would exceed [`MAX_FILE_ENTRIES`]; one file
/// below [`MIN_PARALLEL_ENTRIES`].
pub(super) fn parts_for(n: usize, per_thread: usize) -> usize {
    if n < MIN_PARALLEL_ENTRIES {
        1
    } else {
        (rayon::current_num_threads() * per_thread)
            .max(n.div_ceil(MAX_FILE_ENTRIES))
            .max(1)
    }
}

/// Splits sorted `puts` into `parts` ranges and sorted `deletes` along the same key bounds:
/// (puts range, deletes range) per part.
pub(super) fn split<T>(
    puts: &[T],
    deletes: &[u128],
    parts: usize,
    key: impl Fn(&T) -> u128,
) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    let n = puts.len();
    let mut out = Vec::with_capacity(parts);
    let mut d_start = 0;
    for p in 0..parts {
        let (start, end) = (n * p / parts, n * (p + 1) / parts);
        let d_end = if p + 1 == parts {
            deletes.len()
        } else {
            match puts.get(end) {
                Some(next) => {
                    let bound = key(next);
                    deletes.partition_point(|&d| d < bound)
                }
                None => deletes.len(),
            }
        };
        out.push((start..end, d_start..d_end));
        d_start = d_end;
    }
    out
}

/// Cuts a block family's sorted `keys` and `deletes` (all of block values below `hi`) into
/// pieces of whole groups, each of about `max` keys at most (more only where one group holds
/// more): (keys range, deletes range) per piece, in order, together covering both.
pub(super) fn pieces(
    keys: &[u128],
    deletes: &[u128],
    hi: usize,
    max: usize,
) -> Vec<(Range<usize>, Range<usize>)> {
    let mut out = Vec::new();
    let (mut k, mut d) = (0, 0);
    while k < keys.len() || out.is_empty() {
        // The piece ends where the group of the key `max` keys on begins or ends.
        let mut end = (k + max.max(1)).min(keys.len());
        if let Some(&next) = keys.get(end) {
            let v = block_value(next);
            end = if block_value(keys[k]) == v {
                // One group longer than `max`: all of it.
                end + keys[end..].partition_point(|&x| block_value(x) == v)
            } else {
                k + keys[k..end].partition_point(|&x| block_value(x) < v)
            };
        }
        let value_hi = keys.get(end).map_or(hi, |&x| block_value(x));
        let d_end = d + deletes[d..].partition_point(|&x| block_value(x) < value_hi);
        out.push((k..end, d..d_end));
        (k, d) = (end, d_end);
    }
    out
}
