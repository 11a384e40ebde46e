//! The merge's kernels on one block value: each run's entries as `u128` keys
//! ([`entry_key`]), the entries a later run's removal hides dropped ([`drop_hidden`]), and the
//! runs merged into one sorted sequence ([`merge_runs`]).

/// An entry (remainder, id) as one number whose order is the entries' order.
pub(super) fn entry_key(rem: u64, id: u64) -> u128 {
    (u128::from(rem) << 64) | u128::from(id)
}

/// The (remainder, id) of an [`entry_key`].
pub(super) fn split_entry_key(key: u128) -> (u64, u64) {
    ((key >> 64) as u64, key as u64)
}

/// Removes from each run's entries (`entries[bounds[r]..bounds[r + 1]]`, of segment
/// `segment(r)`) those hidden by one of `removals` (remainder, id, watermark; sorted): a
/// removal hides the document's entries in segments below its watermark. `bounds` follows.
pub(super) fn drop_hidden(
    entries: &mut Vec<u128>,
    bounds: &mut [usize],
    removals: &[(u64, u64, u32)],
    segment: impl Fn(usize) -> u32,
) {
    let mut kept = 0;
    for run in 0..bounds.len().saturating_sub(1) {
        let (from, to) = (bounds[run], bounds[run + 1]);
        bounds[run] = kept;
        let seg = segment(run);
        for at in from..to {
            let key = entries[at];
            let (rem, id) = split_entry_key(key);
            let hidden = removals
                .binary_search_by(|r| (r.0, r.1).cmp(&(rem, id)))
                .is_ok_and(|j| seg < removals[j].2);
            if !hidden {
                entries[kept] = key;
                kept += 1;
            }
        }
    }
    if let Some(last) = bounds.last_mut() {
        *last = kept;
    }
    entries.truncate(kept);
}

/// Merges the sorted runs `entries[bounds[r]..bounds[r + 1]]` into one sorted sequence, in
/// passes that merge neighbouring runs pairwise (⌈log2 runs⌉ passes through `scratch`, one
/// comparison per entry and pass). `bounds` is left as `[0, entries.len()]`.
pub(super) fn merge_runs(
    entries: &mut Vec<u128>,
    bounds: &mut Vec<usize>,
    scratch: &mut Vec<u128>,
) {
    bounds.dedup();
    while bounds.len() > 2 {
        scratch.clear();
        scratch.reserve(entries.len());
        let mut r = 0;
        while r + 1 < bounds.len() {
            let (lo, mid) = (bounds[r], bounds[r + 1]);
            match bounds.get(r + 2) {
                Some(&hi) => {
                    merge_two(&entries[lo..mid], &entries[mid..hi], scratch);
                    r += 2;
                }
                None => {
                    scratch.extend_from_slice(&entries[lo..mid]);
                    r += 1;
                }
            }
        }
        std::mem::swap(entries, scratch);
        // The merged runs start where the first of each pair did.
        let mut at = 0;
        bounds.retain(|_| {
            at += 1;
            at % 2 == 1
        });
        if bounds.last() != Some(&entries.len()) {
            bounds.push(entries.len());
        }
    }
}

/// Appends the merge of sorted `a` and `b` to `out`.
fn merge_two(a: &[u128], b: &[u128], out: &mut Vec<u128>) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        // One of the two advances: written without a branch on the comparison.
        let take_a = a[i] <= b[j];
        out.push(if take_a { a[i] } else { b[j] });
        i += usize::from(take_a);
        j += usize::from(!take_a);
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Hidden entries dropped, then the runs merged, equal the old way: every run's
        /// entries with their segment, sorted, and filtered one by one.
        #[test]
        fn merging_runs_equals_sorting_them(
            runs in proptest::collection::vec(
                proptest::collection::vec((0u64..40, 0u64..6), 0..60), 0..9),
            removals in proptest::collection::vec((0u64..40, 0u64..6, 0u32..12), 0..20),
        ) {
            let mut removals = removals;
            removals.sort_unstable();
            removals.dedup_by_key(|r| (r.0, r.1));
            let segment = |run: usize| 2 * run as u32 + 1;
            let mut entries = Vec::new();
            let mut bounds = Vec::new();
            let mut old_way = Vec::new();
            for (r, run) in runs.iter().enumerate() {
                let mut run = run.clone();
                run.sort_unstable();
                run.dedup();
                bounds.push(entries.len());
                entries.extend(run.iter().map(|&(rem, id)| entry_key(rem, id)));
                old_way.extend(run.iter().map(|&(rem, id)| (rem, id, segment(r))));
            }
            bounds.push(entries.len());
            old_way.sort_by_key(|&(rem, id, _)| (rem, id));
            let mut want: Vec<(u64, u64)> = Vec::new();
            for &(rem, id, seg) in &old_way {
                let hidden = removals
                    .binary_search_by(|r| (r.0, r.1).cmp(&(rem, id)))
                    .is_ok_and(|at| seg < removals[at].2);
                if !hidden && want.last() != Some(&(rem, id)) {
                    want.push((rem, id));
                }
            }
            drop_hidden(&mut entries, &mut bounds, &removals, segment);
            merge_runs(&mut entries, &mut bounds, &mut Vec::new());
            let mut got: Vec<(u64, u64)> = entries.iter().map(|&k| split_entry_key(k)).collect();
            got.dedup();
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert_eq!(bounds.len().min(2), entries.len().min(1) + 1);
        }
    }
}
