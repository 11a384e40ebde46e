//! The partition planner against the store's pair scan and brute force.

use super::*;
use crate::pigeonhole::block_mask;
use proptest::prelude::*;

fn brute(docs: &[(u64, u64, bool)], k: u32) -> Vec<Pair> {
    let mut pairs = Vec::new();
    for (i, &(x, fx, ox)) in docs.iter().enumerate() {
        for &(y, fy, oy) in &docs[i + 1..] {
            let d = (fx ^ fy).count_ones();
            if d <= k && !(ox && oy) {
                pairs.push(Pair::new(x, y, d));
            }
        }
    }
    pairs.sort_unstable();
    pairs
}

fn counts_of(docs: &[(u64, u64, bool)], only_new: bool) -> Vec<u64> {
    let fps: Vec<u64> = docs
        .iter()
        .filter(|d| !(only_new && d.2))
        .map(|d| d.1)
        .collect();
    let mut counts = vec![0; GROUPS];
    add_group_counts(&mut counts, &fps).unwrap();
    counts
}

/// Every task's pairs, by exploding all documents and grouping the rows by task (in
/// shuffled order, as an engine would hand them over).
fn all_task_pairs(plan: &PartitionPlan, docs: &[(u64, u64, bool)]) -> (Vec<Pair>, usize) {
    let mut rows = TaskRows::default();
    for &(id, fp, old) in docs {
        plan.explode(id, fp, old, &mut rows).unwrap();
    }
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| (rows.task[i], mix(i as u64)));
    let col = |f: &dyn Fn(usize) -> u64| order.iter().map(|&i| f(i)).collect::<Vec<u64>>();
    let task: Vec<i64> = order.iter().map(|&i| rows.task[i]).collect();
    let side: Vec<u8> = order.iter().map(|&i| rows.side[i]).collect();
    let fingerprint = col(&|i| rows.fingerprint[i]);
    let id = col(&|i| rows.id[i]);
    let runner = TaskPairs::new(plan.k).unwrap();
    let mut pairs = Vec::new();
    // In two parts, the first not last: the straddling task waits for the rest.
    let cut = task.len() / 2;
    let part = |r: std::ops::Range<usize>| RowsRef {
        task: &task[r.clone()],
        side: &side[r.clone()],
        fingerprint: &fingerprint[r.clone()],
        id: &id[r],
    };
    let consumed = runner
        .run_sorted(part(0..cut), false, &mut |p| pairs.push(p), &mut |_| {})
        .unwrap();
    runner
        .run_sorted(
            part(consumed..task.len()),
            true,
            &mut |p| pairs.push(p),
            &mut |_| {},
        )
        .unwrap();
    pairs.sort_unstable();
    (pairs, rows.len())
}

/// `fp` with `d` distinct bits flipped, drawn from `r`.
fn flip(fp: u64, d: u32, r: &mut impl FnMut() -> u64) -> u64 {
    let (mut fp, mut left, mut used) = (fp, d, 0u64);
    while left > 0 {
        let b = r() % 64;
        if used & (1 << b) == 0 {
            used |= 1 << b;
            fp ^= 1 << b;
            left -= 1;
        }
    }
    fp
}

/// Random fingerprints with planted near-duplicates at every distance 0..=max_d, and
/// `hot` documents sharing block `family`'s value (some near each other).
fn skewed(seed: u64, n: usize, hot: usize, max_d: u32, old_share: u64) -> Vec<(u64, u64, bool)> {
    let mut s = seed;
    let mut next = move || {
        s = s.wrapping_add(1);
        mix(s)
    };
    let mut fps: Vec<u64> = Vec::with_capacity(n + hot);
    for i in 0..n {
        let fp = if i >= 2 && i % 2 == 0 {
            let src = fps[(next() % i as u64) as usize];
            flip(src, (i as u32 / 2) % (max_d + 2), &mut next)
        } else {
            next()
        };
        fps.push(fp);
    }
    let family = (next() % 4) as usize;
    let centre = next();
    for i in 0..hot {
        let fp = if i % 2 == 0 {
            flip(centre, i as u32 % (max_d + 2), &mut next)
        } else {
            next()
        };
        fps.push((centre & block_mask(family)) | (fp & !block_mask(family)));
    }
    fps.into_iter()
        .enumerate()
        .map(|(i, fp)| {
            (
                mix(i as u64 ^ seed) >> 8,
                fp,
                old_share > 0 && next() % 100 < old_share,
            )
        })
        .collect()
}

#[test]
fn task_keys_round_trip() {
    let tasks = [
        Task::Whole { group: 0 },
        Task::Whole { group: GROUPS - 1 },
        Task::Home {
            group: 7,
            x: 3,
            y: MAX_CHUNKS - 1,
        },
        Task::Guest {
            group: GROUPS - 1,
            x: MAX_CHUNKS - 1,
            y: 0,
        },
        Task::SubBlock {
            group: 65536 * 3 + 5,
            t: 11,
            bucket: BUCKET_MASK,
        },
    ];
    for task in tasks {
        assert_eq!(Task::from_key(task.key()).unwrap(), task);
    }
    assert!(Task::from_key(-1).is_err());
}

#[test]
fn sub_blocks_partition_the_other_48_bits() {
    for k in 0..MAX_SUB_BLOCKS {
        for family in 0..BLOCKS {
            let masks = sub_block_masks(k, family);
            assert_eq!(masks.len(), k as usize + 1);
            let union = masks.iter().fold(0u64, |u, &m| {
                assert_eq!(u & m, 0, "sub-blocks overlap");
                assert_ne!(m, 0, "an empty sub-block");
                u | m
            });
            assert_eq!(union, !block_mask(family));
        }
    }
}

#[test]
fn five_percent_in_one_block_value_costs_few_extra_rows() {
    // 5% of the documents share a block value: 100M at scale, 400k here with groups of
    // about the same share of the chunk size.
    let n = 400_000u64;
    let chunk = 20_000 * n / 100_000_000 + 1;
    let rows_of = |hot: u64, k: u32| {
        let fps: Vec<u64> = (0..n)
            .map(|i| {
                let fp = mix(i);
                if i < hot {
                    (fp & !block_mask(0)) | (0xbeef << 48)
                } else {
                    fp
                }
            })
            .collect();
        let mut counts = vec![0; GROUPS];
        add_group_counts(&mut counts, &fps).unwrap();
        let plan = PartitionPlan::new(&counts, k, chunk).unwrap();
        let mut rows = TaskRows::default();
        for (i, &fp) in fps.iter().enumerate() {
            plan.explode(i as u64, fp, false, &mut rows).unwrap();
        }
        rows.len() as f64
    };
    for k in [3, 6] {
        let (even, skewed) = (rows_of(0, k), rows_of(n / 20, k));
        assert!(skewed <= 1.5 * even, "k={k}: {skewed} rows against {even}");
    }
}

#[test]
fn a_plan_for_other_documents_is_an_error() {
    let counts = vec![0; GROUPS];
    let plan = PartitionPlan::new(&counts, 3, 10).unwrap();
    let mut rows = TaskRows::default();
    assert!(matches!(
        plan.explode(1, 2, false, &mut rows),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        plan.explode(1, 2, true, &mut rows),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        PartitionPlan::new(&counts[1..], 3, 10),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        PartitionPlan::new(&counts, 65, 10),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn unsorted_rows_and_repeated_ids_are_errors() {
    let runner = TaskPairs::new(3).unwrap();
    let rows = RowsRef {
        task: &[5, 3],
        side: &[1, 1],
        fingerprint: &[0, 0],
        id: &[1, 2],
    };
    assert!(matches!(
        runner.run_sorted(rows, true, &mut |_| {}, &mut |_| {}),
        Err(Error::InvalidArgument(_))
    ));
    let got = runner.run(0, &[1, 1], &[7, 7], &[4, 4], &mut |_| {});
    assert!(matches!(got, Err(Error::InvalidArgument(_))));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Whole, chunked and sub-block groups: every pair within k exactly once, as brute
    /// force finds them, for k in 0..=8 (and 12, beyond the sub-block limit).
    #[test]
    fn union_of_tasks_equals_brute_force(seed: u64, n in 0usize..300, hot in 0usize..120, chunk in 1u64..40, old_share in prop::sample::select(vec![0u64, 30])) {
        let docs = skewed(seed, n, hot, 8, old_share);
        let counts = counts_of(&docs, false);
        for k in (0..=8).chain([12]) {
            let want = brute(&docs, k);
            for rule in [SplitRule::Cheaper, SplitRule::NeverSubBlocks, SplitRule::AlwaysSubBlocks] {
                let mut plan = PartitionPlan::with_rule(&counts, k, chunk, rule).unwrap();
                if old_share > 0 {
                    let against = PartitionPlan::against(&counts, &counts_of(&docs, true), k, chunk).unwrap();
                    plan.old = against.old;
                }
                let (got, _) = all_task_pairs(&plan, &docs);
                prop_assert_eq!(&got, &want, "k={} rule={:?} chunk={}", k, rule, chunk);
            }
        }
    }
}
