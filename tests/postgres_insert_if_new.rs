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

/// Staged batches (the service's group commits) into one crowded group: the commit counts the
/// group's delta rows from what the batch read ahead and folds it on time, and every outcome
/// and every answer equals a store directory's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn staged_batches_fold_a_crowded_group_on_time() -> Result<()> {
    let url = fresh_database("if_new_staged_fold").await;
    let index = PgIndex::open(&url, None).await?;
    let dir = tempfile::tempdir()?;
    let store = Store::open(dir.path())?;
    let mut rng = Rng::new(11);
    // Every document has block 0 of `centre`: all go into one group of family 0.
    let centre = rng.next_u64();
    let crowded = |rng: &mut Rng| (centre & 0xffff_0000_0000_0000) | (rng.next_u64() >> 16);
    let mut next_id = 0u64;
    for round in 0..12 {
        let mut entries = Vec::new();
        for i in 0..30 {
            let fp = match i % 5 {
                // A near-duplicate of a document of this round or an earlier one.
                0 if next_id > 0 => {
                    let of = rng.below(next_id);
                    let stored = store.get(of)?.map(|f| f.0);
                    let d = rng.below(5) as u32;
                    rng.flip(stored.unwrap_or(centre), d)
                }
                _ => crowded(&mut rng),
            };
            let mut e = Entry::new(next_id, Fingerprint(fp));
            next_id += 1;
            // Keys that come back replace their holder, which may sit in another group.
            if rng.below(3) == 0 {
                e.key = Some(format!("k{}", rng.below(40)));
            }
            entries.push(e);
        }
        let fps: Vec<Fingerprint> = entries.iter().map(|e| e.fingerprint).collect();
        let keys: Vec<&str> = entries.iter().filter_map(|e| e.key.as_deref()).collect();
        let mut conn = index.connection().await?;
        let mut batch = index.staged_batch(&mut conn).await?;
        batch.read_ahead(&fps, &keys, 3).await?;
        let mut want_batch = store.staged_batch()?;
        for e in entries.clone() {
            let want = want_batch.insert_if_new(e.clone(), 3)?;
            let got = batch.insert_if_new(e, 3)?;
            assert_eq!(got, want, "round {round}");
        }
        want_batch.commit()?;
        batch.commit().await?;
        drop(conn);

        let group = (centre >> 48) as i32;
        let admin = common::postgres::connect(&url).await;
        let deltas: i64 = admin
            .query_one(
                "SELECT count(*) FROM simhash_deltas WHERE grp = $1",
                &[&group],
            )
            .await
            .expect("count delta rows")
            .get(0);
        assert!(
            deltas < 64,
            "round {round}: {deltas} delta rows in the crowded group"
        );
        for &q in fps.iter().take(5) {
            for k in [0, 3, 7] {
                assert_eq!(
                    index.query(q, k).await?,
                    store.query(q, k)?,
                    "round {round}"
                );
            }
        }
    }
    let report = index.verify().await?;
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.documents, store.len());
    Ok(())
}
