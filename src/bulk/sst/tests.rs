//! Writing runs against what the store reads back.

use super::*;
use crate::postings::GroupWriter;

/// A block family file written with [`Keep::Chunks`] keeps the pages of its chunks in the
/// page cache and not those of their ids; with [`Keep::All`], all of them.
#[cfg(target_os = "linux")]
#[test]
fn keeping_chunks_leaves_their_ids_out_of_the_page_cache() {
    use crate::storage::sst::kept_pages::tests::{keeping_works, resident_map};
    let dir = tempfile::tempdir().unwrap();
    if !keeping_works(dir.path()) {
        return;
    }
    // 64 groups of 3 chunks (4,096, 4,096, 1,000 entries), 40-bit remainders and 32-bit
    // ids: chunks of about 20 KB and ids of about 16 KB, each longer than a block.
    let mut state = 1u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 11
    };
    let groups: Vec<Vec<(u64, u64)>> = (0..64)
        .map(|_| {
            let mut g: Vec<(u64, u64)> = (0..9192)
                .map(|_| (next() & ((1 << 48) - 1), next() & 0xffff_ffff))
                .collect();
            g.sort_unstable();
            g
        })
        .collect();
    for keep in [Keep::Chunks, Keep::All] {
        let path = dir.path().join(format!("{keep:?}.sst"));
        // (whether ids, value) of every key, in file order.
        let mut values: Vec<(bool, Vec<u8>)> = Vec::new();
        let mut writer = GroupWriter::new(usize::MAX);
        write_file(
            BLOCK_FAMILIES[0],
            &path,
            Destination::Bottom,
            1,
            keep,
            |w| {
                for (v, group) in groups.iter().enumerate() {
                    writer.write(v as u16, 1, group, true, |key, value| {
                        values.push((keys::is_ids_key(key), value.to_vec()));
                        w.put(key, value)
                    })?;
                }
                Ok(())
            },
        )
        .unwrap();
        if keep == Keep::All {
            // As the caller does: the tail the writer dropped last.
            crate::storage::files::read_into_page_cache(std::iter::once(path.as_path()));
        }
        // The chunks are read back on a thread of their own.
        crate::storage::sst::kept_pages::wait_for_read_backs();
        let resident = resident_map(&path);
        let bytes = std::fs::read(&path).unwrap();
        let page = 4096;
        let (mut chunk_pages, mut ids_pages) = ((0, 0), (0, 0));
        let mut from = 0;
        for (is_ids, value) in &values {
            // Values are stored as they are, in key order: find each by its first bytes.
            let at = from
                + bytes[from..]
                    .windows(64)
                    .position(|w| w == &value[..64])
                    .expect("a value in the file");
            from = at + value.len();
            // The pages wholly inside the value.
            let count = if *is_ids {
                &mut ids_pages
            } else {
                &mut chunk_pages
            };
            for &kept in &resident[at.div_ceil(page)..(at + value.len()) / page] {
                count.0 += usize::from(kept);
                count.1 += 1;
            }
        }
        assert!(
            chunk_pages.1 > 500 && ids_pages.1 > 300,
            "{chunk_pages:?} {ids_pages:?}"
        );
        assert_eq!(
            chunk_pages.0, chunk_pages.1,
            "{keep:?}: every chunk page kept"
        );
        match keep {
            Keep::Chunks => {
                assert_eq!(ids_pages.0, 0, "no ids page kept: {ids_pages:?}")
            }
            _ => assert_eq!(ids_pages.0, ids_pages.1, "every ids page kept"),
        }
    }
}

#[test]
fn pieces_are_whole_groups_that_cover_everything_once() {
    // Block value v holds v % 7 keys (none for some), and value 40 holds 50.
    let key = |v: usize, j: u128| ((v as u128) << BLOCK_VALUE_SHIFT) | j;
    let mut keys = Vec::new();
    for v in 0..100usize {
        let n = if v == 40 { 50 } else { v % 7 };
        keys.extend((0..n as u128).map(|j| key(v, j)));
    }
    let deletes: Vec<u128> = [0usize, 5, 7, 40, 41, 99]
        .iter()
        .map(|&v| key(v, 9))
        .collect();
    for max in [0, 1, 3, 10, 49, 1000] {
        let pieces = pieces(&keys, &deletes, 100, max);
        let (mut k, mut d) = (0, 0);
        for (i, (kr, dr)) in pieces.iter().enumerate() {
            assert_eq!((kr.start, dr.start), (k, d), "max {max}: contiguous");
            (k, d) = (kr.end, dr.end);
            let group = |at: usize| keys.get(at).map(|&x| block_value(x));
            // Cut only between groups, at most `max` keys unless one group is longer.
            assert!(kr.end == keys.len() || group(kr.end) != group(kr.end - 1));
            assert!(kr.len() <= max.max(1) || group(kr.start) == group(kr.end - 1));
            // Each delete in the piece whose block values it covers.
            let next_value = group(kr.end).unwrap_or(100);
            for &x in &deletes[dr.clone()] {
                assert!(block_value(x) < next_value, "max {max}, piece {i}");
            }
        }
        assert_eq!((k, d), (keys.len(), deletes.len()), "max {max}: everything");
    }
    // Deletes alone: one piece.
    assert_eq!(
        pieces(&[], &deletes, 100, 4),
        vec![(0..0, 0..deletes.len())]
    );
}

#[test]
fn split_covers_everything_once() {
    let puts: Vec<u128> = (0..100).map(|x| x * 10).collect();
    let deletes: Vec<u128> = vec![5, 15, 333, 555, 2000];
    let parts = split(&puts, &deletes, 3, |&k| k);
    assert_eq!(parts.len(), 3);
    assert_eq!(parts.iter().map(|(p, _)| p.len()).sum::<usize>(), 100);
    assert_eq!(parts.iter().map(|(_, d)| d.len()).sum::<usize>(), 5);
    for (p, d) in &parts {
        let lo = puts[p.start];
        let hi = puts.get(p.end).copied().unwrap_or(u128::MAX);
        for &x in &deletes[d.clone()] {
            assert!(
                x < hi && (p.start == 0 || x >= lo),
                "{x} outside {lo}..{hi}"
            );
        }
    }
}

/// The radix sort of every range, concatenated, equals a plain sort of the family.
fn check_radix_sort(buf: &RunBuffer) {
    let survivors: Vec<u32> = (0..buf.len() as u32).collect();
    let starts = block_starts(buf, &survivors);
    let (mut keys, mut scratch) = (Vec::new(), Vec::new());
    #[allow(clippy::needless_range_loop)]
    for i in 0..BLOCKS {
        let mut want: Vec<u128> = buf.recs.iter().map(|r| block_key(i, r.fp, r.id)).collect();
        want.sort_unstable();
        for parts in [1, 2, 3, 7] {
            let ranges = block_ranges(&starts[i], parts);
            assert_eq!(ranges.len(), parts);
            let mut got = Vec::new();
            for &(lo, hi) in &ranges {
                assert!(
                    lo % COARSE == 0 && hi % COARSE == 0 && lo <= hi,
                    "{lo}..{hi}"
                );
                sort_block_range(
                    buf,
                    &survivors,
                    i,
                    &starts[i],
                    (lo, hi),
                    &mut keys,
                    &mut scratch,
                );
                got.extend_from_slice(&keys);
            }
            assert_eq!(got, want, "family {i}, {parts} parts");
        }
    }
}

#[test]
fn radix_sort_equals_a_plain_sort() {
    let mut buf = RunBuffer::new();
    let mut x = 1u64;
    for id in 0..20_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        // Few block values in block 1, so buckets hold many keys (the third-byte pass).
        buf.push(
            id % 700,
            Fingerprint(x & !0x0000_fff0_0000_0000),
            None,
            None,
        );
    }
    check_radix_sort(&buf);
}

#[test]
fn radix_sort_of_equal_fingerprints() {
    // One fingerprint for most documents (as many copies of one text give): a single
    // bucket of every family holds them, ordered by id alone.
    let mut buf = RunBuffer::new();
    for id in (0..5_000u64).rev() {
        let fp = if id % 10 == 0 {
            id.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        } else {
            42
        };
        buf.push(id, Fingerprint(fp), None, None);
    }
    check_radix_sort(&buf);
}

#[test]
fn block_keys_sort_as_bytes() {
    let a = block_key(2, 0x1111_2222_3333_4444, 7);
    assert_eq!(
        a.to_be_bytes(),
        keys::block_key(2, Fingerprint(0x1111_2222_3333_4444), 7)
    );
    assert!(block_key(0, 1, 0) < block_key(0, 2, 0));
}
