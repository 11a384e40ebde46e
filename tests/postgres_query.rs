//! The PostgreSQL index's query equals a brute-force scan over the same fingerprints, for
//! every k in 0..=8 (and 12, 64), on random data with planted near-duplicates at every
//! distance, ids sharing one fingerprint, and crowded block values whose groups span several
//! packed chunks; after inserts (delta rows and folds), upserts and removals. Needs the test
//! server: `scripts/postgres-test-server.sh start`.
#![cfg(feature = "postgres")]

mod common;

use common::postgres::fresh_database;
use common::{brute_force, planted, Rng};
use simhash_store::postgres::PgIndex;
use simhash_store::{Entry, Fingerprint, Result};

const KS: [u32; 11] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 64];

async fn insert(index: &PgIndex, docs: &[(u64, u64)]) -> Result<()> {
    index
        .insert_batch(docs.iter().map(|&(id, fp)| Entry::new(id, Fingerprint(fp))))
        .await
}

async fn check(index: &PgIndex, docs: &[(u64, u64)], queries: &[u64], ks: &[u32]) -> Result<()> {
    for &k in ks {
        let fps: Vec<Fingerprint> = queries.iter().map(|&q| Fingerprint(q)).collect();
        let many = index.query_many(&fps, k).await?;
        assert_eq!(many.len(), queries.len());
        for (&q, got) in queries.iter().zip(many) {
            let want = brute_force(docs, q, k);
            let got: Vec<(u32, u64, u64)> = got
                .into_iter()
                .map(|m| (m.distance, m.id, m.fingerprint.0))
                .collect();
            assert_eq!(got, want, "query {q:016x} k={k} (query_many)");
        }
    }
    // Single queries answer the same.
    for &q in queries.iter().take(4) {
        let got: Vec<(u32, u64, u64)> = index
            .query(Fingerprint(q), 3)
            .await?
            .into_iter()
            .map(|m| (m.distance, m.id, m.fingerprint.0))
            .collect();
        assert_eq!(got, brute_force(docs, q, 3), "query {q:016x} k=3");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_equals_brute_force_planted() -> Result<()> {
    for seed in 0..4u64 {
        let url = fresh_database("query_planted").await;
        let index = PgIndex::open(&url, None).await?;
        let (mut docs, queries) = planted(&mut Rng::new(seed), 200, 5, 8);
        // In several batches, so that some groups fold and some keep delta rows.
        for batch in docs.chunks(37) {
            insert(&index, batch).await?;
        }
        check(&index, &docs, &queries, &KS).await?;

        // Upserts: every fifth document moves by a few bits; every seventh is removed.
        let mut rng = Rng::new(seed ^ 0xabc);
        let moved: Vec<(u64, u64)> = docs
            .iter()
            .step_by(5)
            .map(|&(id, fp)| (id, rng.flip(fp, (id % 4) as u32 + 1)))
            .collect();
        insert(&index, &moved).await?;
        for &(id, fp) in &moved {
            if let Some(d) = docs.iter_mut().find(|d| d.0 == id) {
                d.1 = fp;
            }
        }
        let removed: Vec<u64> = docs.iter().step_by(7).map(|&(id, _)| id).collect();
        for &id in &removed {
            assert!(index.remove(id).await?, "document {id} was stored");
        }
        assert!(!index.remove(removed[0]).await?, "removed twice");
        docs.retain(|(id, _)| !removed.contains(id));
        check(&index, &docs, &queries, &KS).await?;
        assert_eq!(index.len().await?, docs.len() as u64);
        let report = index.verify().await?;
        assert!(report.is_ok(), "{:?}", report.problems);
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_equals_brute_force_crowded_groups() -> Result<()> {
    let url = fresh_database("query_crowded").await;
    let index = PgIndex::open(&url, None).await?;
    let mut rng = Rng::new(7);
    // 9,000 documents share block 0 (more than two chunks of 4,096), 3,000 share block 2,
    // the rest are random; planted copies around a crowded centre.
    let centre = rng.next_u64();
    let mut fps = Vec::new();
    for _ in 0..9000 {
        fps.push((centre & 0xffff_0000_0000_0000) | (rng.next_u64() >> 16));
    }
    for _ in 0..3000 {
        fps.push((centre & 0x0000_0000_ffff_0000) | (rng.next_u64() & 0xffff_ffff_0000_ffff));
    }
    for d in 0..=8 {
        fps.push(rng.flip(centre, d));
        fps.push(rng.flip(centre, d));
    }
    for _ in 0..500 {
        fps.push(rng.next_u64());
    }
    let mut docs = common::numbered(fps);
    for batch in docs.chunks(2500) {
        insert(&index, batch).await?;
    }
    let mut queries = vec![centre, rng.flip(centre, 2), rng.next_u64()];
    queries.push((centre & 0xffff_0000_0000_0000) | 0x1234);
    check(&index, &docs, &queries, &KS).await?;

    // Single writes on top of the packed chunks: removals and moves as delta rows.
    for &(id, _) in docs.iter().step_by(97) {
        index.remove(id).await?;
    }
    docs.retain(|&(id, _)| id % 97 != 0);
    let moved: Vec<(u64, u64)> = docs
        .iter()
        .step_by(101)
        .map(|&(id, _)| (id, rng.flip(centre, (id % 6) as u32)))
        .collect();
    for &(id, fp) in &moved {
        index.insert_entry(Entry::new(id, Fingerprint(fp))).await?;
        if let Some(d) = docs.iter_mut().find(|d| d.0 == id) {
            d.1 = fp;
        }
    }
    check(&index, &docs, &queries, &KS).await?;
    let report = index.verify().await?;
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.documents, docs.len() as u64);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loaded_and_folded_groups_answer_the_same() -> Result<()> {
    let url = fresh_database("query_load_fold").await;
    let index = PgIndex::open(&url, None).await?;
    let (mut docs, queries) = planted(&mut Rng::new(21), 3000, 8, 8);
    // Bulk batches pack the groups in this process; a batch with ids already stored
    // replaces them by the same rules.
    let (first, rest) = docs.split_at(2000);
    index
        .load_batch(
            first
                .iter()
                .map(|&(id, fp)| Entry::new(id, Fingerprint(fp))),
        )
        .await?;
    insert(&index, &rest[..100]).await?;
    let mut rng = Rng::new(22);
    let moved: Vec<(u64, u64)> = docs
        .iter()
        .step_by(3)
        .map(|&(id, fp)| (id, rng.flip(fp, 2)))
        .collect();
    index
        .load_batch(
            rest[100..]
                .iter()
                .chain(&moved)
                .map(|&(id, fp)| Entry::new(id, Fingerprint(fp))),
        )
        .await?;
    for &(id, fp) in &moved {
        if let Some(d) = docs.iter_mut().find(|d| d.0 == id) {
            d.1 = fp;
        }
    }
    check(&index, &docs, &queries, &KS).await?;
    for &(id, _) in docs.iter().step_by(11) {
        index.remove(id).await?;
    }
    docs.retain(|&(id, _)| id % 11 != 0);
    check(&index, &docs, &queries, &KS).await?;
    assert!(index.fold().await? > 0, "removals left delta rows to fold");
    assert_eq!(index.fold().await?, 0, "nothing left to fold");
    check(&index, &docs, &queries, &KS).await?;
    let report = index.verify().await?;
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.entries, [docs.len() as u64; 4]);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_load_of_many_batches_answers_the_same() -> Result<()> {
    use simhash_store::postgres::PgLoader;
    let url = fresh_database("query_load_tiers").await;
    let index = PgIndex::open(&url, None).await?;
    let mut rng = Rng::new(31);
    // Planted near-duplicates, and 6,000 documents sharing block 1 (a group of two chunks
    // once the load's parts merge), loaded in batches of 250: 40 batches, tiers up to 5.
    let (planted_docs, mut queries) = planted(&mut rng, 3000, 8, 8);
    let centre = rng.next_u64();
    let mut fps: Vec<u64> = planted_docs.iter().map(|&(_, fp)| fp).collect();
    for _ in 0..6000 {
        fps.push((centre & 0x0000_ffff_0000_0000) | (rng.next_u64() & 0xffff_0000_ffff_ffff));
    }
    queries.push(centre);
    queries.push(rng.flip(centre, 3));
    let mut docs = common::numbered(fps);
    // Before the load: documents inserted one batch at a time (delta rows, then folds), so
    // that the load meets groups with delta rows and stored ids it replaces.
    let (early, rest) = docs.split_at(500);
    let (early, rest) = (early.to_vec(), rest.to_vec());
    insert(&index, &early).await?;
    let mut loader = PgLoader::new(&index, 250);
    let moved: Vec<(u64, u64)> = docs[..800]
        .iter()
        .step_by(7)
        .map(|&(id, fp)| (id, rng.flip(fp, 3)))
        .collect();
    // Ids loaded twice in the load (a later batch replaces an earlier one), and ids
    // inserted before it replaced.
    let entries = rest
        .iter()
        .chain(&moved)
        .map(|&(id, fp)| Entry::new(id, Fingerprint(fp)).with_key(format!("doc-{id}")));
    loader.add_all(entries).await?;
    // A removal between batches leaves delta rows in the groups a later batch touches.
    index.remove(docs[600].0).await?;
    let tail: Vec<(u64, u64)> = (0..300)
        .map(|i| (100_000 + i, rng.flip(centre, (i % 5) as u32)))
        .collect();
    loader
        .add_all(tail.iter().map(|&(id, fp)| Entry::new(id, Fingerprint(fp))))
        .await?;
    let summary = loader.finish().await?;
    let removed = docs[600].0;
    docs.retain(|&(id, _)| id != removed);
    for &(id, fp) in &moved {
        match docs.iter_mut().find(|d| d.0 == id) {
            Some(d) => d.1 = fp,
            None => docs.push((id, fp)),
        }
    }
    docs.extend(&tail);
    assert_eq!(
        summary.added + summary.replaced + summary.superseded,
        (rest.len() + moved.len() + tail.len()) as u64
    );
    check(&index, &docs, &queries, &KS).await?;
    let report = index.verify().await?;
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.documents, docs.len() as u64);
    assert_eq!(report.entries, [docs.len() as u64; 4]);
    // The load's parts (numbered below zero) hold entries, a few to a group.
    let client = common::postgres::connect(&url).await;
    let row = client
        .query_one(
            "SELECT (SELECT count(*) FROM simhash_groups WHERE part < 0),
                    (SELECT max(n) FROM (SELECT count(*) AS n FROM simhash_groups GROUP BY grp) c)",
            &[],
        )
        .await
        .expect("count parts");
    let (tiered, most): (i64, i64) = (row.get(0), row.get(1));
    assert!(tiered > 0, "the load wrote no tiered part");
    assert!(most <= 8, "a group holds {most} parts");
    // Folding and loading again (every id replaces itself) answer the same.
    index.fold().await?;
    let mut again = PgLoader::new(&index, 1000);
    again
        .add_all(docs.iter().map(|&(id, fp)| Entry::new(id, Fingerprint(fp))))
        .await?;
    let summary = again.finish().await?;
    assert_eq!(summary.added, 0);
    assert_eq!(summary.replaced, docs.len() as u64);
    check(&index, &docs, &queries, &[0, 3, 8]).await?;
    let report = index.verify().await?;
    assert!(report.is_ok(), "{:?}", report.problems);
    Ok(())
}
