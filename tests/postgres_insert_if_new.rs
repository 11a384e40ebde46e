//! insert-if-new on the PostgreSQL index: exact under concurrency (tasks on separate
//! connection pools, as separate service processes would be, racing near-duplicates of the
//! same documents never get two within `k` in), and the same outcomes as a store directory
//! for a batch. Needs the test server: `scripts/postgres-test-server.sh start`.
#![cfg(feature = "postgres")]

mod common;

use std::sync::Arc;

use common::postgres::fresh_database;
use common::{brute_pairs, Rng};
use simhash_store::postgres::PgIndex;
use simhash_store::{Entry, Fingerprint, Result, Store};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_near_duplicates_are_admitted_once() -> Result<()> {
    const K: u32 = 3;
    const CENTRES: usize = 24;
    const TASKS: u64 = 8;
    let url = fresh_database("if_new_race").await;
    // Four indexes, each with its own pool: four "processes".
    let mut indexes = Vec::new();
    for _ in 0..4 {
        indexes.push(Arc::new(PgIndex::open(&url, None).await?));
    }
    let mut rng = Rng::new(11);
    let centres: Vec<u64> = (0..CENTRES).map(|_| rng.next_u64()).collect();
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let index = Arc::clone(&indexes[t as usize % indexes.len()]);
        let centres = centres.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = Rng::new(100 + t);
            let mut order: Vec<usize> = (0..centres.len()).collect();
            rng.shuffle(&mut order);
            let mut admitted = Vec::new();
            for c in order {
                // Within one bit of the centre: any two are within 2 bits of each other.
                let d = rng.below(2) as u32;
                let fp = rng.flip(centres[c], d);
                let id = t * 1000 + c as u64;
                let outcome = index
                    .insert_if_new(
                        Entry::new(id, Fingerprint(fp)).with_key(format!("t{t}/c{c}")),
                        K,
                    )
                    .await?;
                if outcome.is_inserted() {
                    admitted.push((id, fp));
                } else {
                    assert!(outcome.matches().iter().all(|m| m.distance <= K));
                }
            }
            Ok::<_, simhash_store::Error>(admitted)
        }));
    }
    let mut admitted = Vec::new();
    for task in tasks {
        admitted.extend(task.await.expect("a task")?);
    }
    let stored: Vec<(u64, u64)> = indexes[0]
        .documents()
        .await?
        .into_iter()
        .map(|(id, d)| (id, d.fingerprint.0))
        .collect();
    admitted.sort_unstable();
    assert_eq!(stored, admitted, "the index holds what was admitted");
    assert_eq!(stored.len(), CENTRES, "one document per centre");
    assert_eq!(
        brute_pairs(&stored, K),
        Vec::new(),
        "two admitted within {K}"
    );
    let report = indexes[0].verify().await?;
    assert!(report.is_ok(), "{:?}", report.problems);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_outcomes_equal_the_store() -> Result<()> {
    let url = fresh_database("if_new_batch").await;
    let index = PgIndex::open(&url, None).await?;
    let dir = tempfile::tempdir()?;
    let store = Store::open(dir.path())?;
    let mut rng = Rng::new(5);
    let centres: Vec<u64> = (0..6).map(|_| rng.next_u64()).collect();
    for round in 0..6 {
        let entries: Vec<Entry> = (0..20)
            .map(|_| {
                let c = centres[rng.below(centres.len() as u64) as usize];
                let (id, d) = (rng.below(40), rng.below(6) as u32);
                let mut e = Entry::new(id, Fingerprint(rng.flip(c, d)));
                if rng.below(2) == 0 {
                    e.key = Some(format!("k{}", rng.below(10)));
                }
                e
            })
            .collect();
        let k = round % 5;
        let want = store.insert_batch_if_new(entries.clone(), k)?;
        let got = index.insert_batch_if_new(entries, k).await?;
        assert_eq!(got, want, "round {round}");
        // One at a time, too.
        let e = Entry::new(1000 + round as u64, Fingerprint(rng.flip(centres[0], 1)));
        assert_eq!(
            index.insert_if_new(e.clone(), 2).await?,
            store.insert_if_new(e, 2)?
        );
    }
    let stored: Vec<(u64, u64)> = store
        .documents()?
        .map(|d| d.map(|(id, d)| (id, d.fingerprint.0)))
        .collect::<Result<_>>()?;
    let got: Vec<(u64, u64)> = index
        .documents()
        .await?
        .into_iter()
        .map(|(id, d)| (id, d.fingerprint.0))
        .collect();
    assert_eq!(got, stored);
    Ok(())
}
