//! Opening a store that cannot be used gives an error that names the problem.

mod common;

use common::families::{ALL_FAMILIES, META_FAMILY};
use rocksdb::{ColumnFamilyDescriptor, Options, DB};
use simhash_store::{Error, Fingerprint, Result, SimhashConfig, Store};

#[test]
fn unknown_format_version_names_both_versions() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    drop(Store::open(dir.path())?);
    {
        let db = DB::open_cf_descriptors(
            &Options::default(),
            dir.path(),
            ALL_FAMILIES
                .iter()
                .map(|n| ColumnFamilyDescriptor::new(*n, Options::default())),
        )
        .expect("raw open");
        let meta = db.cf_handle(META_FAMILY).expect("meta family");
        db.put_cf(meta, b"format_version", 99u32.to_be_bytes())
            .expect("put");
    }
    let err = Store::open(dir.path()).unwrap_err();
    assert!(
        matches!(err, Error::UnsupportedFormat { found: 99, .. }),
        "{err}"
    );
    let msg = err.to_string();
    let supported = format!(
        "{}..={}",
        simhash_store::upgrade::MIN_FORMAT_VERSION,
        simhash_store::upgrade::FORMAT_VERSION
    );
    assert!(msg.contains("99") && msg.contains(&supported), "{msg}");
    Ok(())
}

#[test]
fn config_mismatch_names_both_configs() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = SimhashConfig::default();
    config.seed ^= 1;
    drop(
        Store::builder()
            .simhash_config(config.clone())
            .open(dir.path())?,
    );
    // Without a configuration, the recorded one is used.
    let store = Store::open(dir.path())?;
    assert_eq!(store.simhasher().config(), &config);
    drop(store);
    // The same explicit configuration is fine.
    drop(
        Store::builder()
            .simhash_config(config.clone())
            .open(dir.path())?,
    );
    let err = Store::builder()
        .simhash_config(SimhashConfig::default())
        .open(dir.path())
        .unwrap_err();
    match &err {
        Error::ConfigMismatch {
            stored, requested, ..
        } => assert_ne!(stored, requested),
        other => panic!("expected ConfigMismatch, got {other}"),
    }
    Ok(())
}

#[test]
fn a_directory_of_other_files_is_not_a_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), "hello").expect("write");
    let err = Store::open(dir.path()).unwrap_err();
    assert!(matches!(err, Error::NotAStore { .. }), "{err}");
}

#[test]
fn read_only_cannot_create_or_write() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nothing-here");
    let err = Store::builder().read_only(true).open(&missing).unwrap_err();
    assert!(matches!(err, Error::NotAStore { .. }), "{err}");

    let writer = Store::open(dir.path().join("s"))?;
    writer.insert(1, Fingerprint(1))?;
    writer.flush()?;
    // A read-only open works beside the writer and sees what was flushed.
    let reader = Store::builder()
        .read_only(true)
        .open(dir.path().join("s"))?;
    assert_eq!(reader.get(1)?, Some(Fingerprint(1)));
    assert!(matches!(
        reader.insert(2, Fingerprint(2)),
        Err(Error::ReadOnly { .. })
    ));
    Ok(())
}

#[test]
fn a_second_writer_gets_locked() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let _first = Store::open(dir.path())?;
    let err = Store::open(dir.path()).unwrap_err();
    match &err {
        Error::Locked { path, .. } => assert_eq!(path, dir.path()),
        other => panic!("expected Locked, got {other}"),
    }
    Ok(())
}

/// A read-only open beside a writer that keeps committing batches, flushing (which deletes a
/// write-ahead log each time) and compacting: RocksDB can list, in the MANIFEST the reader
/// opens, files that the writer deletes before the reader opens them, and a plain secondary
/// open skips a log deleted during the open (a hole of one or more whole batches). Every open
/// must succeed and see a prefix of the writer's history: ids exactly `0..n`, the recorded
/// count `n`, every document in all its families.
#[test]
fn read_only_opens_succeed_while_the_writer_compacts() -> Result<()> {
    // 25 opens, 5 on each of 5 fresh stores: a young store opens fast, so the opens race
    // many flushes while the store stays small (on one store that grows to 200,000
    // documents, opening and verifying took seconds each).
    for _ in 0..5 {
        opens_beside_a_busy_writer(5)?;
    }
    Ok(())
}

fn opens_beside_a_busy_writer(opens: usize) -> Result<()> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().expect("tempdir");
    let writer = Store::open(dir.path())?;
    writer.insert(0, Fingerprint(0))?;
    writer.flush()?;
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let churn = {
        let done = done.clone();
        std::thread::spawn(move || -> Result<u64> {
            let mut id = 1u64;
            while !done.load(Ordering::SeqCst) {
                let batch = (id..id + 200).map(|i| {
                    simhash_store::Entry::new(i, Fingerprint(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
                });
                writer.insert_batch(batch)?;
                id += 200;
                writer.flush()?;
                if id % 1000 == 1 {
                    writer.compact()?;
                }
            }
            Ok(id)
        })
    };
    for _ in 0..opens {
        let reader = Store::builder().read_only(true).open(dir.path())?;
        let ids = reader
            .documents()?
            .map(|d| d.map(|(id, _)| id))
            .collect::<Result<Vec<u64>>>()?;
        let gap = ids.iter().enumerate().find(|&(i, &id)| id != i as u64);
        assert_eq!(
            gap,
            None,
            "not a prefix of the writer's history: {} ids, len() {}",
            ids.len(),
            reader.len()
        );
        assert_eq!(reader.len(), ids.len() as u64);
        assert_eq!(reader.get(0)?, Some(Fingerprint(0)));
        let report = reader.verify()?;
        assert!(report.is_clean(), "{report:?}");
    }
    done.store(true, Ordering::SeqCst);
    churn.join().expect("writer panicked")?;
    Ok(())
}
