//! A crash between the ingestions of a run's column families (simulated with the
//! crate-private hook [`BulkOptions::simulate_crash_after_ingestions`], which stops after `n`
//! families and leaves the journal as a kill would) is rolled forward by `Store::open`: the
//! store opens `verify()`-clean with every document of the run. `tests/bulk_kill.rs` kills a
//! real loading process instead.

use crate::bulk::BulkOptions;
use crate::fingerprint::Fingerprint;
use crate::store::Entry;
use crate::store::Store;

fn fp(id: u64) -> Fingerprint {
    Fingerprint(id.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

#[test]
fn an_interrupted_ingestion_is_rolled_forward_on_open() -> Result<(), Box<dyn std::error::Error>> {
    // docs, keys and block0..3: 6 families; stop before each of them in turn.
    for families in 0..6 {
        let dir = tempfile::tempdir()?;
        {
            let store = Store::open(dir.path())?;
            // Something stored before, partly replaced by the load.
            store.insert_batch(
                (0..50).map(|id| Entry::new(id, Fingerprint(!fp(id).0)).with_key(format!("k{id}"))),
            )?;
            let mut loader = store
                .bulk_loader_with(BulkOptions::new().simulate_crash_after_ingestions(families))?;
            for id in 25..200 {
                loader.add_with_key(id, fp(id), &format!("k{id}"))?;
            }
            let result = loader.finish();
            assert!(
                matches!(&result, Err(e) if e.to_string().contains("simulated crash")),
                "{result:?}"
            );
            if families > 0 {
                // The families do disagree now: that is what recovery must repair.
                assert!(
                    !store.verify()?.is_clean(),
                    "stopping after {families} families left the store consistent"
                );
            }
        }
        let store = Store::open(dir.path())?;
        let report = store.verify()?;
        assert!(
            report.is_clean(),
            "after recovery from a stop after {families} families: {report}"
        );
        assert_eq!(store.len(), 200);
        for id in 0..200 {
            let want = if id < 25 {
                Fingerprint(!fp(id).0)
            } else {
                fp(id)
            };
            assert_eq!(store.get(id)?, Some(want), "document {id}");
            assert_eq!(store.id_for_key(&format!("k{id}"))?, Some(id));
        }
        assert!(
            !dir.path().join("bulk-tmp").exists(),
            "temporary files are removed"
        );
        // The loader works again afterwards.
        let mut loader = store.bulk_loader()?;
        loader.add(1000, fp(1000))?;
        loader.finish()?;
        assert_eq!(store.len(), 201);
        assert!(store.verify()?.is_clean());
    }
    Ok(())
}
