//! A bulk load of several runs holds the store's write lock from its first run to the end of
//! its merge. A write from another thread waits for it; a write from the loading thread itself
//! would wait forever, so it is refused with an error that says what to do.

use simhash_store::{BulkOptions, Error, Fingerprint, Result, Store};

fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[test]
fn writes_during_a_load_of_several_runs() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(dir.path())?;
    // About 50 bytes a document: a run every ~1,300 documents.
    let mut loader = store.bulk_loader_with(BulkOptions::new().memory_budget(64 * 1024))?;
    for i in 0..10_000u64 {
        loader.add(i, Fingerprint(mix(i)))?;
    }
    let refused = store.insert(1_000_000, Fingerprint(5));
    assert!(
        matches!(&refused, Err(Error::BulkLoadInProgress)),
        "{refused:?}"
    );
    std::thread::scope(|s| -> Result<()> {
        let other = s.spawn(|| store.insert(2_000_000, Fingerprint(6)));
        let summary = loader.finish()?;
        assert!(summary.runs > 1, "{summary}");
        other.join().map_err(|_| Error::Cancelled)??;
        Ok(())
    })?;
    // After `finish` the loading thread writes again.
    store.insert(1_000_000, Fingerprint(5))?;
    assert_eq!(store.len(), 10_002);
    assert!(store.verify()?.is_clean());
    Ok(())
}
