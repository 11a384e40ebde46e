//! Split groups (format 9): a group of more entries than `StoreBuilder::split_groups_above` is
//! written as four copies ordered by the 12-bit parts of its remainders, and a query within 3
//! bits reads only its part values' chunks. Queries for every k in 0..=8 and all pairs must
//! still equal a brute-force scan, on skewed data: crowded block values (in several
//! families), templated clusters (pages of a template with 0 to 3 bits flipped), biased bits,
//! planted near-duplicates at every distance 0..=k, ids sharing one fingerprint; written by
//! one bulk run, by a load of many spooled runs, by single writes and folds, and after
//! `compact`.

mod common;

use common::{brute_force, brute_pairs, Rng};
use proptest::prelude::*;
use simhash_store::{BulkOptions, Entry, Fingerprint, Result, Store};

/// Groups of more entries are split: small, so that a test store of a few thousand
/// documents has split groups of every kind.
const SPLIT_ABOVE: usize = 48;

/// Skewed fingerprints: (id, fingerprint) documents and queries.
///
/// - a third share one of two block-0 values, and a tenth of those one block-2 value as well
///   (crowded groups in two families);
/// - templated pages: 12 templates, each with pages at 0 to 3 flipped bits;
/// - the rest with biased bits (each bit 1 with its own probability in 0.2..0.8);
/// - around each query centre, two documents at every distance 0..=8, and three ids that
///   share one fingerprint.
fn skewed(rng: &mut Rng, n: usize, centres: usize) -> (Vec<(u64, u64)>, Vec<u64>) {
    let bias: Vec<u64> = (0..64).map(|_| 20 + rng.below(61)).collect();
    let biased = |rng: &mut Rng| {
        (0..64).fold(0u64, |x, b| {
            x | (u64::from(rng.below(100) < bias[b as usize]) << b)
        })
    };
    let crowded = [0x5eedu64, 0x0f0f];
    let templates: Vec<u64> = (0..12).map(|_| biased(rng)).collect();
    let mut fps = Vec::with_capacity(n + centres * 20);
    for _ in 0..n {
        let fp = match rng.below(10) {
            0..=2 => {
                let mut fp = (biased(rng) & !(0xffff << 48)) | crowded[rng.below(2) as usize] << 48;
                if rng.below(10) == 0 {
                    fp = (fp & !(0xffff << 16)) | 0x1234 << 16;
                }
                fp
            }
            3 => {
                let t = templates[rng.below(templates.len() as u64) as usize];
                let d = rng.below(4) as u32;
                rng.flip(t, d)
            }
            _ => biased(rng),
        };
        fps.push(fp);
    }
    let mut queries = Vec::new();
    for c in 0..centres {
        // Centres in the crowded groups, in templates and elsewhere.
        let centre = match c % 3 {
            0 => (biased(rng) & !(0xffff << 48)) | crowded[c % 2] << 48,
            1 => templates[c % templates.len()],
            _ => biased(rng),
        };
        queries.push(centre);
        for d in 0..=8 {
            for _ in 0..2 {
                fps.push(rng.flip(centre, d));
            }
        }
        let d = rng.below(4) as u32;
        let shared = rng.flip(centre, d);
        fps.extend([shared; 3]);
        // A fresh query near the crowded group, not planted.
        queries.push((biased(rng) & !(0xffff << 48)) | crowded[(c + 1) % 2] << 48);
    }
    (common::numbered(fps), queries)
}

fn open(dir: &std::path::Path) -> Result<Store> {
    Store::builder().split_groups_above(SPLIT_ABOVE).open(dir)
}

/// The store answers every query at every k in 0..=8 as a brute-force scan of `docs` does.
fn check_queries(store: &Store, docs: &[(u64, u64)], queries: &[u64]) -> Result<()> {
    for &q in queries {
        for k in 0..=8 {
            let mut got: Vec<(u32, u64, u64)> = store
                .query(Fingerprint(q), k)?
                .iter()
                .map(|m| (m.distance, m.id, m.fingerprint.0))
                .collect();
            got.sort_unstable();
            assert_eq!(got, brute_force(docs, q, k), "query {q:016x} at k = {k}");
        }
    }
    Ok(())
}

/// How the documents reach the store.
#[derive(Debug, Clone, Copy)]
enum Writes {
    /// One bulk run.
    OneRun,
    /// A load of many runs (spooled, then merged).
    ManyRuns,
    /// A bulk run, then single removals and inserts (deltas, folds), then `compact`.
    RunThenSingleOnes,
}

fn write(store: &Store, docs: &mut Vec<(u64, u64)>, how: Writes, rng: &mut Rng) -> Result<()> {
    let options = match how {
        Writes::ManyRuns => BulkOptions::new().memory_budget(16 << 10),
        _ => BulkOptions::new(),
    };
    let mut loader = store.bulk_loader_with(options)?;
    for &(id, fp) in docs.iter() {
        loader.add(id, Fingerprint(fp))?;
    }
    loader.finish()?;
    if let Writes::RunThenSingleOnes = how {
        // Enough removals and inserts in the crowded groups that some fold (64 deltas).
        let removed: Vec<u64> = docs.iter().step_by(5).map(|&(id, _)| id).collect();
        for &id in &removed {
            store.remove(id)?;
        }
        docs.retain(|(id, _)| !removed.contains(id));
        let next = docs.iter().map(|&(id, _)| id).max().unwrap_or(0) + 1;
        let extra: Vec<(u64, u64)> = (0..300)
            .map(|j| {
                let near = docs[rng.below(docs.len() as u64) as usize].1;
                let d = rng.below(5) as u32;
                (next + j, rng.flip(near, d))
            })
            .collect();
        store.insert_batch(
            extra
                .iter()
                .map(|&(id, fp)| Entry::new(id, Fingerprint(fp))),
        )?;
        docs.extend(extra);
    }
    Ok(())
}

fn check_store(how: Writes, seed: u64, n: usize) -> Result<()> {
    let mut rng = Rng::new(seed);
    let (mut docs, queries) = skewed(&mut rng, n, 6);
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path())?;
    write(&store, &mut docs, how, &mut rng)?;
    check_queries(&store, &docs, &queries)?;
    for k in [0, 3, 4, 6] {
        assert_eq!(
            store.pairs(k).collect()?,
            brute_pairs(&docs, k),
            "pairs at k = {k}"
        );
    }
    let report = store.verify()?;
    assert!(report.is_clean(), "{report}");
    if let Writes::RunThenSingleOnes = how {
        store.compact()?;
        check_queries(&store, &docs, &queries)?;
        assert!(store.verify()?.is_clean());
    }
    drop(store);
    let split = common::raw::split_groups_of(dir.path());
    assert!(
        split.contains(&(0, 0x5eed)) && split.contains(&(0, 0x0f0f)),
        "the crowded groups are split: {split:?}"
    );
    // Read by a build that splits nothing, the answers are the same.
    let store = Store::open(dir.path())?;
    check_queries(&store, &docs, &queries[..4])?;
    drop(store);
    // Read as from disk: positioned reads, each group in one request, part values at once.
    let store = Store::builder()
        .mmap_reads(false)
        .concurrent_reads(true)
        .open(dir.path())?;
    check_queries(&store, &docs, &queries)?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn one_bulk_run_answers_as_brute_force(seed: u64, n in 500usize..2500) {
        check_store(Writes::OneRun, seed, n).unwrap();
    }

    #[test]
    fn a_load_of_many_runs_answers_as_brute_force(seed: u64, n in 500usize..2500) {
        check_store(Writes::ManyRuns, seed, n).unwrap();
    }

    #[test]
    fn single_writes_folds_and_compact_answer_as_brute_force(seed: u64, n in 500usize..2500) {
        check_store(Writes::RunThenSingleOnes, seed, n).unwrap();
    }
}

/// A group written split and then shrunk by removals below the threshold is written whole at
/// its next fold; one grown past it by inserts is split at its fold.
#[test]
fn folds_split_and_join_groups_as_they_grow_and_shrink() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path())?;
    let mut rng = Rng::new(7);
    let crowded = |rng: &mut Rng| (rng.next_u64() & !(0xffff << 48)) | 0x5eed << 48;
    // Grown by single inserts only: deltas, folded every 64.
    let mut docs: Vec<(u64, u64)> = (0..200).map(|id| (id, crowded(&mut rng))).collect();
    store.insert_batch(docs.iter().map(|&(id, fp)| Entry::new(id, Fingerprint(fp))))?;
    store.compact()?;
    drop(store);
    assert!(common::raw::split_groups_of(dir.path()).contains(&(0, 0x5eed)));
    let store = open(dir.path())?;
    let queries: Vec<u64> = docs.iter().take(10).map(|&(_, fp)| fp).collect();
    check_queries(&store, &docs, &queries)?;
    for id in 0..180 {
        store.remove(id)?;
    }
    docs.retain(|&(id, _)| id >= 180);
    store.compact()?;
    check_queries(&store, &docs, &queries)?;
    assert!(store.verify()?.is_clean());
    drop(store);
    assert!(!common::raw::split_groups_of(dir.path()).contains(&(0, 0x5eed)));
    Ok(())
}

/// `verify` checks each copy of a split group's parts against part 0's: one that lost a chunk,
/// or lost all of them.
#[test]
fn verify_finds_a_copy_of_a_part_that_lost_chunks() -> Result<()> {
    for (part, all) in [(2, false), (3, true)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut rng = Rng::new(11);
        let (docs, _) = skewed(&mut rng, 1000, 0);
        {
            let store = open(dir.path())?;
            store.insert_batch(docs.iter().map(|&(id, fp)| Entry::new(id, Fingerprint(fp))))?;
            store.compact()?;
            assert!(store.verify()?.is_clean());
        }
        let (family, value) = common::raw::delete_part_chunks(dir.path(), part, all);
        let report = Store::open(dir.path())?.verify()?;
        assert!(!report.is_clean());
        let text = report.to_string();
        assert!(
            text.contains(&format!("part {part} of a split group")),
            "family {family}, value {value:04x}: {text}"
        );
    }
    Ok(())
}

/// A group is split only where reading it by parts pays: the pages of one template (a few bits
/// apart, equal on most parts) stay whole, a block value shared by unrelated pages is split;
/// both answer as brute force.
#[test]
fn near_copies_of_one_page_stay_whole() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut rng = Rng::new(5);
    let template = rng.next_u64() & !(0xffff << 48) | 0x7e77 << 48;
    let mut docs: Vec<(u64, u64)> = (0..300)
        .map(|id| {
            // Block 0 kept: the template's group of family 0.
            let d = rng.below(4) as u32;
            (id, rng.flip(template, d) & !(0xffff << 48) | 0x7e77 << 48)
        })
        .collect();
    docs.extend((300..600).map(|id| (id, rng.next_u64() & !(0xffff << 48) | 0x5eed << 48)));
    {
        let store = open(dir.path())?;
        let mut loader = store.bulk_loader()?;
        for &(id, fp) in &docs {
            loader.add(id, Fingerprint(fp))?;
        }
        loader.finish()?;
        let queries: Vec<u64> = docs.iter().step_by(37).map(|&(_, fp)| fp).collect();
        check_queries(&store, &docs, &queries)?;
    }
    let split = common::raw::split_groups_of(dir.path());
    assert!(split.contains(&(0, 0x5eed)), "{split:?}");
    assert!(!split.contains(&(0, 0x7e77)), "{split:?}");
    Ok(())
}
