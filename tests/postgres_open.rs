//! Opening the index in PostgreSQL: an empty database gets the tables (once, when several
//! processes open it at once), the recorded settings are used and other ones refused, tables
//! of another schema version are refused with what to do, ids past 2^63 round-trip, and an
//! unreachable server is an error. Needs the test server: `scripts/postgres-test-server.sh start`.
#![cfg(feature = "postgres")]

mod common;

use common::postgres::{connect, fresh_database};
use simhash_store::postgres::{PgIndex, SCHEMA_VERSION};
use simhash_store::{Entry, Error, Fingerprint, Result, SimhashConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_empty_database_gets_the_tables_once() -> Result<()> {
    let url = fresh_database("open_race").await;
    let opens: Vec<_> = (0..6)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move { PgIndex::open(&url, None).await })
        })
        .collect();
    for open in opens {
        let index = open.await.expect("a task")?;
        assert!(index.is_empty().await?);
    }
    let client = connect(&url).await;
    let rows = client
        .query("SELECT version FROM simhash_meta", &[])
        .await
        .expect("the meta row");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get::<_, i32>(0), SCHEMA_VERSION);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_settings_are_refused() -> Result<()> {
    let url = fresh_database("open_settings").await;
    let config = SimhashConfig::default().with_seed(42);
    let index = PgIndex::open(&url, Some(config.clone())).await?;
    let fp = index
        .simhasher()
        .fingerprint("a text recorded with seed 42, fingerprinted so")?;
    drop(index);
    // Without a configuration, the recorded one is used.
    let index = PgIndex::open(&url, None).await?;
    assert_eq!(index.simhasher().config(), &config);
    assert_eq!(
        index
            .simhasher()
            .fingerprint("a text recorded with seed 42, fingerprinted so")?,
        fp
    );
    drop(index);
    drop(PgIndex::open(&url, Some(config)).await?);
    let err = PgIndex::open(&url, Some(SimhashConfig::default()))
        .await
        .unwrap_err();
    match &err {
        Error::ConfigMismatch {
            stored, requested, ..
        } => assert_ne!(stored, requested),
        other => panic!("expected ConfigMismatch, got {other}"),
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_schema_version_is_refused() -> Result<()> {
    let url = fresh_database("open_version").await;
    drop(PgIndex::open(&url, None).await?);
    let client = connect(&url).await;
    for (found, advice) in [(SCHEMA_VERSION + 1, "upgrade simhash-store"), (0, "export")] {
        client
            .execute("UPDATE simhash_meta SET version = $1", &[&found])
            .await
            .expect("set the version");
        let err = PgIndex::open(&url, None).await.unwrap_err();
        match &err {
            Error::SchemaVersion {
                found: f,
                supported,
                ..
            } => assert_eq!((*f, *supported), (found, SCHEMA_VERSION)),
            other => panic!("expected SchemaVersion, got {other}"),
        }
        assert!(err.to_string().contains(advice), "{err}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_ids_and_fingerprints_round_trip() -> Result<()> {
    let url = fresh_database("open_large_ids").await;
    let index = PgIndex::open(&url, None).await?;
    let ids = [0, 1 << 63, u64::MAX - 1, u64::MAX];
    let fps = [u64::MAX, 1 << 63, 0, 0x8000_0000_0000_0001];
    index
        .insert_batch(
            ids.iter()
                .zip(fps)
                .map(|(&id, fp)| Entry::new(id, Fingerprint(fp)).with_key(format!("k{id}"))),
        )
        .await?;
    for (&id, fp) in ids.iter().zip(fps) {
        assert_eq!(index.get(id).await?, Some(Fingerprint(fp)));
        assert_eq!(index.id_for_key(&format!("k{id}")).await?, Some(id));
        let found = index.query(Fingerprint(fp), 0).await?;
        assert_eq!(found.iter().map(|m| m.id).collect::<Vec<_>>(), [id]);
    }
    assert!(index.remove(u64::MAX).await?);
    assert_eq!(index.len().await?, 3);
    let report = index.verify().await?;
    assert!(report.is_ok(), "{:?}", report.problems);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_an_error() {
    // Port 1 on loopback: nothing listens there.
    let err = PgIndex::open("postgres://nobody@127.0.0.1:1/none", None)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Postgres { .. }), "{err}");
    let err = PgIndex::open("postgres://[not a url", None)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
}
