//! A load stopped at each of its phases (with the test-only crash points of
//! `failpoint.rs`, which stop the loader with an error and leave the store as a kill would)
//! is finished by `Store::open`: the store opens `verify()`-clean, with every document of
//! every run whose ingestion began, and queries equal brute force. `tests/bulk_kill.rs` kills
//! a real loading process instead.

use std::collections::BTreeMap;

use crate::bulk::BulkOptions;
use crate::failpoint::{self, Point};
use crate::fingerprint::Fingerprint;
use crate::store::Store;
use crate::upsert::Entry;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn fp(id: u64) -> Fingerprint {
    Fingerprint(id.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// The load's fingerprint of `id`: near `fp(id / 4)`, so groups and near-duplicates are shared.
fn loaded(id: u64) -> Fingerprint {
    Fingerprint(fp(id / 4).0 ^ (1 << (id % 64)))
}

/// Every query of `probes` at k = 3 equals a brute-force scan of `docs`.
fn check_queries(store: &Store, docs: &BTreeMap<u64, Fingerprint>, probes: &[Fingerprint]) {
    for &q in probes {
        let mut got: Vec<u64> = store
            .query(q, 3)
            .expect("query")
            .iter()
            .map(|m| m.id)
            .collect();
        got.sort_unstable();
        let want: Vec<u64> = docs
            .iter()
            .filter(|(_, f)| (f.0 ^ q.0).count_ones() <= 3)
            .map(|(&id, _)| id)
            .collect();
        assert_eq!(got, want, "query {q:?}");
    }
}

/// Loads ids 25..400 (replacing 25..50 of the 50 stored ones if `stored`, and ids 100..150
/// again with other fingerprints at the end), in runs of about 60 adds, stopped at `point`.
/// Returns whether the load stopped: a run's journal lists `docs`, `keys`, and only the block
/// families that get removals, so some points of a run are never reached.
fn stopped_load(
    dir: &std::path::Path,
    stored: bool,
    point: Option<Point>,
) -> Result<bool, Box<dyn std::error::Error>> {
    let store = Store::open(dir)?;
    if stored {
        store.insert_batch(
            (0..50).map(|id| Entry::new(id, Fingerprint(!fp(id).0)).with_key(format!("k{id}"))),
        )?;
    }
    failpoint::arm(point);
    let budget = 60 * crate::bulk::runs::BYTES_PER_ADD + 60 * 4;
    let mut loader = store.bulk_loader_with(BulkOptions::new().memory_budget(budget))?;
    let mut result = Ok(());
    for id in (25..400).chain(100..150) {
        let f = if (100..150).contains(&id) && result.is_ok() {
            loaded(id + 1000)
        } else {
            loaded(id)
        };
        result = loader.add_with_key(id, f, &format!("k{id}"));
        if result.is_err() {
            break;
        }
    }
    let result = result.and_then(|()| loader.finish().map(|_| ()));
    failpoint::arm(None);
    match (point, result) {
        (None, r) => r.map(|()| false).map_err(Into::into),
        (Some(_), Err(e)) => {
            assert!(e.to_string().contains("simulated crash"), "{e}");
            Ok(true)
        }
        (Some(Point::RunIngestion { families, .. }), Ok(())) if families >= 2 => Ok(false),
        (Some(p), Ok(())) => panic!("the load went past {p:?}"),
    }
}

fn expected(stored: bool) -> BTreeMap<u64, Fingerprint> {
    let mut docs = BTreeMap::new();
    if stored {
        for id in 0..25 {
            docs.insert(id, Fingerprint(!fp(id).0));
        }
    }
    for id in 25..400 {
        docs.insert(id, loaded(id));
    }
    for id in 100..150 {
        docs.insert(id, loaded(id + 1000));
    }
    docs
}

#[test]
fn a_load_finishes_with_queries_equal_to_brute_force() -> TestResult {
    for stored in [false, true] {
        let dir = tempfile::tempdir()?;
        stopped_load(dir.path(), stored, None)?;
        let store = Store::open(dir.path())?;
        let docs = expected(stored);
        assert_eq!(store.len(), docs.len() as u64);
        assert!(store.verify()?.is_clean());
        let probes: Vec<Fingerprint> = docs.values().copied().chain((0..60).map(fp)).collect();
        check_queries(&store, &docs, &probes);
        check_compact(&store, !stored)?;
    }
    Ok(())
}

/// Every group holds chunks of one segment only, and no delta other than removals; with
/// `finals`, its last chunk is final.
fn check_compact(store: &Store, finals: bool) -> TestResult {
    use crate::keys::{decode_packed_key, PackedKey};
    use crate::postings::chunk::Chunk;
    for i in 0..crate::fingerprint::BLOCKS {
        let db = store.db();
        let mut it = db.cursor(db.block_handle(i)?, crate::storage::Reading::new());
        it.seek_to_first();
        // (value, segment, whether the last chunk seen is final)
        let mut last: Option<(u16, u32, bool)> = None;
        let mut groups = 0;
        while let (Some(key), Some(value)) = (it.key(), it.value()) {
            if let Some(PackedKey::Chunk {
                value: v, segment, ..
            }) = decode_packed_key(i, key)
            {
                let is_final = Chunk::parse(value)?.is_final();
                match last {
                    Some((lv, ls, lf)) if lv == v => {
                        assert_eq!(ls, segment, "family {i} group {v}: two segments");
                        assert!(!lf, "family {i} group {v}: a chunk after a final one");
                    }
                    Some((lv, _, lf)) => {
                        assert!(lf || !finals, "family {i} group {lv}: no final chunk");
                        groups += 1;
                    }
                    None => groups += 1,
                }
                last = Some((v, segment, is_final));
            }
            it.next();
        }
        assert!(groups > 0);
        assert!(last.is_none_or(|l| l.2 || !finals));
    }
    Ok(())
}

#[test]
fn a_load_stopped_in_any_phase_is_finished_on_open() -> TestResult {
    let mut points: Vec<Point> = Vec::new();
    for run in [0, 1, 3] {
        for families in 0..6 {
            points.push(Point::RunIngestion { run, families });
        }
    }
    points.push(Point::BeforeMerge);
    points.extend((0..4).map(Point::AfterMergeFamily));
    points.extend((0..4).map(Point::MergeIngestion));
    for stored in [false, true] {
        for &point in &points {
            let dir = tempfile::tempdir()?;
            let stopped = stopped_load(dir.path(), stored, Some(point))?;
            let store = Store::open(dir.path())?;
            let report = store.verify()?;
            assert!(
                report.is_clean(),
                "after {point:?} (stored {stored}): {report}"
            );
            // What the store holds is a prefix of the load's runs, applied in order.
            let full = expected(stored);
            let mut docs = BTreeMap::new();
            for id in 0..400 {
                if let Some(f) = store.get(id)? {
                    docs.insert(id, f);
                    assert_eq!(store.id_for_key(&format!("k{id}"))?, Some(id));
                }
            }
            assert_eq!(store.len(), docs.len() as u64, "after {point:?}");
            match point {
                Point::RunIngestion { run, .. } if stopped => {
                    // Runs 0..=run are in (the stopped one rolled forward), about 60 adds each.
                    assert!(
                        docs.len() >= (run as usize + 1) * 50,
                        "after {point:?}: {}",
                        docs.len()
                    );
                }
                _ => assert_eq!(docs, full, "after {point:?}"),
            }
            let probes: Vec<Fingerprint> = full.values().copied().chain((0..60).map(fp)).collect();
            check_queries(&store, &docs, &probes);
            assert!(
                !dir.path().join("bulk-tmp").exists(),
                "temporary files are removed"
            );
            // The loader works again afterwards.
            let mut loader = store.bulk_loader()?;
            loader.add(1000, fp(1000))?;
            loader.finish()?;
            assert_eq!(store.len(), docs.len() as u64 + 1);
            assert!(store.verify()?.is_clean());
        }
    }
    Ok(())
}
