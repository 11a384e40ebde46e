//! The PostgreSQL index keeps ids and keys by the store's rules: random batches of upserts
//! (ids and keys from small sets, so they collide within and across batches), removals by id
//! and by key, applied to the reference model (`tests/common/id_model.rs`), to a store
//! directory and to the index, agree after every step. Needs the test server:
//! `scripts/postgres-test-server.sh start`.
#![cfg(feature = "postgres")]

mod common;

use common::id_model::{Doc, Model};
use common::postgres::fresh_database;
use common::Rng;
use simhash_store::postgres::PgIndex;
use simhash_store::{Entry, Fingerprint, Result, Store};

/// What the index holds, as a model.
async fn model_of(index: &PgIndex) -> Result<Model> {
    let mut model = Model::default();
    for (id, doc) in index.documents().await? {
        if let Some(key) = &doc.key {
            model.keys.insert(key.clone(), id);
        }
        model.docs.insert(
            id,
            Doc {
                key: doc.key,
                fingerprint: doc.fingerprint.0,
            },
        );
    }
    Ok(model)
}

fn key_of(rng: &mut Rng) -> Option<String> {
    match rng.below(3) {
        0 => None,
        _ => Some(format!("https://example.com/{}", rng.below(8))),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_and_keys_follow_the_model() -> Result<()> {
    for seed in 0..3u64 {
        let url = fresh_database("id_model").await;
        let index = PgIndex::open(&url, None).await?;
        let dir = tempfile::tempdir()?;
        let store = Store::open(dir.path())?;
        let mut model = Model::default();
        let mut rng = Rng::new(seed);
        for step in 0..60 {
            match rng.below(6) {
                0 => {
                    let id = rng.below(16);
                    let want = model.docs.contains_key(&id);
                    assert_eq!(index.remove(id).await?, want, "step {step}: remove {id}");
                    assert_eq!(store.remove(id)?, want);
                    if let Some(doc) = model.docs.remove(&id) {
                        if let Some(key) = doc.key {
                            if model.keys.get(&key) == Some(&id) {
                                model.keys.remove(&key);
                            }
                        }
                    }
                }
                1 => {
                    let key = format!("https://example.com/{}", rng.below(8));
                    let want = model.keys.get(&key).copied();
                    assert_eq!(
                        index.remove_key(&key).await?,
                        want,
                        "step {step}: remove {key}"
                    );
                    assert_eq!(store.remove_key(&key)?, want);
                    if let Some(id) = want {
                        model.keys.remove(&key);
                        model.docs.remove(&id);
                    }
                }
                _ => {
                    let n = 1 + rng.below(8) as usize;
                    let adds: Vec<(u64, Doc)> = (0..n)
                        .map(|_| {
                            (
                                rng.below(16),
                                Doc {
                                    key: key_of(&mut rng),
                                    fingerprint: rng.next_u64(),
                                },
                            )
                        })
                        .collect();
                    let entries: Vec<Entry> = adds
                        .iter()
                        .map(|(id, doc)| {
                            let mut e = Entry::new(*id, Fingerprint(doc.fingerprint))
                                .with_text_len(doc.fingerprint % 1000);
                            e.key = doc.key.clone();
                            e
                        })
                        .collect();
                    index.insert_batch(entries.clone()).await?;
                    store.insert_batch(entries)?;
                    model.apply(&adds);
                }
            }
            let stored = Model::of_store(&store);
            assert_eq!(
                stored, model,
                "seed {seed} step {step}: the store against the model"
            );
            assert_eq!(
                model_of(&index).await?,
                model,
                "seed {seed} step {step}: the index"
            );
            assert_eq!(index.len().await?, model.docs.len() as u64);
            for (key, &id) in &model.keys {
                assert_eq!(index.id_for_key(key).await?, Some(id));
            }
            for (&id, doc) in &model.docs {
                let got = index.document(id).await?.expect("a stored document");
                let want = store.document(id)?.expect("a stored document");
                assert_eq!(
                    (got.fingerprint, &got.key, got.text_len),
                    (want.fingerprint, &want.key, want.text_len)
                );
                assert_eq!(got.fingerprint.0, doc.fingerprint);
            }
        }
        let report = index.verify().await?;
        assert!(report.is_ok(), "{:?}", report.problems);
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_keys_are_refused() -> Result<()> {
    let url = fresh_database("bad_keys").await;
    let index = PgIndex::open(&url, None).await?;
    let empty = index
        .insert_entry(Entry::new(1, Fingerprint(1)).with_key(""))
        .await;
    assert!(
        matches!(empty, Err(simhash_store::Error::InvalidArgument(_))),
        "{empty:?}"
    );
    let long = index
        .insert_entry(Entry::new(1, Fingerprint(1)).with_key("x".repeat(5000)))
        .await;
    assert!(
        matches!(long, Err(simhash_store::Error::InvalidArgument(_))),
        "{long:?}"
    );
    assert_eq!(index.len().await?, 0);
    Ok(())
}
