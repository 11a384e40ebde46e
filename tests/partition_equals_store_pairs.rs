//! The partition plan's tasks, run one by one as a cluster would, find exactly the pairs of
//! `Store::pairs`, each once, for every k in 0..=8: on random data with planted
//! near-duplicates and a crowd of documents sharing one block value, with chunks small
//! enough that crowded groups are split (into chunks or on sub-blocks).

mod common;

use common::{planted, Rng};
use proptest::prelude::*;
use simhash_store::dedup::partition::{
    add_group_counts, PartitionPlan, RowsRef, TaskPairs, TaskRows, GROUPS,
};
use simhash_store::{Entry, Fingerprint, Pair, Result, Store};

/// Every task's pairs: the documents exploded, the rows sorted by task (the shuffle), and
/// the sorted rows handed to the runner in two parts, as a partition read in batches.
fn task_pairs(docs: &[(u64, u64)], k: u32, chunk: u64) -> Result<Vec<Pair>> {
    let fps: Vec<u64> = docs.iter().map(|d| d.1).collect();
    let mut counts = vec![0u64; GROUPS];
    add_group_counts(&mut counts, &fps)?;
    let plan = PartitionPlan::new(&counts, k, chunk)?;
    let mut rows = TaskRows::default();
    for &(id, fp) in docs {
        plan.explode(id, fp, false, &mut rows)?;
    }
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| rows.task[i]);
    let task: Vec<i64> = order.iter().map(|&i| rows.task[i]).collect();
    let side: Vec<u8> = order.iter().map(|&i| rows.side[i]).collect();
    let fingerprint: Vec<u64> = order.iter().map(|&i| rows.fingerprint[i]).collect();
    let id: Vec<u64> = order.iter().map(|&i| rows.id[i]).collect();
    let part = |r: std::ops::Range<usize>| RowsRef {
        task: &task[r.clone()],
        side: &side[r.clone()],
        fingerprint: &fingerprint[r.clone()],
        id: &id[r],
    };
    let runner = TaskPairs::new(k)?;
    let mut pairs = Vec::new();
    let consumed = runner.run_sorted(
        part(0..task.len() / 2),
        false,
        &mut |p| pairs.push(p),
        &mut |_| {},
    )?;
    runner.run_sorted(
        part(consumed..task.len()),
        true,
        &mut |p| pairs.push(p),
        &mut |_| {},
    )?;
    pairs.sort_unstable();
    Ok(pairs)
}

/// `docs` plus `n` documents sharing block `family` with a random centre, half near it.
fn crowd(rng: &mut Rng, mut docs: Vec<(u64, u64)>, family: u32, n: usize) -> Vec<(u64, u64)> {
    let centre = rng.next_u64();
    let mask = 0xffffu64 << (48 - 16 * family);
    let first = docs.len() as u64 + 1_000_000;
    for (id, i) in (first..).zip(0..n) {
        let fp = if i % 2 == 0 {
            rng.flip(centre, (i % 10) as u32)
        } else {
            rng.next_u64()
        };
        docs.push((id, (centre & mask) | (fp & !mask)));
    }
    docs
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn union_of_tasks_equals_store_pairs(seed: u64, random in 0usize..300, centres in 1usize..6, hot in 0usize..200, chunk in 2u64..40) {
        let mut rng = Rng::new(seed);
        let (docs, _) = planted(&mut rng, random, centres, 8);
        let family = rng.below(4) as u32;
        let docs = crowd(&mut rng, docs, family, hot);
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store
            .insert_batch(docs.iter().map(|&(id, fp)| Entry::new(id, Fingerprint(fp))))
            .unwrap();
        for k in 0..=8 {
            let want = store.pairs(k).collect().unwrap();
            let got = task_pairs(&docs, k, chunk).unwrap();
            prop_assert_eq!(got, want, "k={} chunk={}", k, chunk);
        }
    }
}
