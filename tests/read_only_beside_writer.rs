//! A measurement, not part of the normal run: how often a read-only open beside a writer that
//! commits and flushes batches of 200 sequential ids (and compacts every fifth batch) sees a
//! view that is not a prefix of the writer's history (whole batches missing before newer
//! ones), for a bare RocksDB secondary open and for `Store`'s read-only open, alternately.
//!
//! `cargo test --release --test read_only_beside_writer -- --ignored --nocapture`
//! (about a minute). `READ_ONLY_PROBE_STORES` (default 20) fresh stores,
//! `READ_ONLY_PROBE_OPENS` (default 5) opens of each kind per store;
//! `READ_ONLY_PROBE_REOPEN_EVERY=N` makes the writer close and reopen the store every N
//! batches (a new MANIFEST each time).

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::families::{ALL_FAMILIES, DOCS_FAMILY};
use rocksdb::{ColumnFamilyDescriptor, Options, DB};
use simhash_store::{Entry, Fingerprint, Result, Store};

const BATCH: u64 = 200;

/// The first gap in `ids` (sorted), as `(first missing, first present after it)`, or `None`
/// when `ids` is exactly `0..ids.len()`.
fn first_gap(ids: &[u64]) -> Option<(u64, u64)> {
    ids.iter()
        .enumerate()
        .find(|&(i, &id)| id != i as u64)
        .map(|(i, &id)| (i as u64, id))
}

/// The ids a bare RocksDB secondary instance sees, opened the way `Store` opened it before
/// the open was checked against the writer's log deletions.
/// `None` when the open fails (the writer switched MANIFEST under it).
fn ids_of_bare_secondary(path: &std::path::Path) -> Option<Vec<u64>> {
    let secondary = tempfile::tempdir().expect("tempdir");
    let mut opts = Options::default();
    opts.set_max_open_files(-1);
    let db = DB::open_cf_descriptors_as_secondary(
        &opts,
        path,
        secondary.path(),
        ALL_FAMILIES
            .iter()
            .map(|name| ColumnFamilyDescriptor::new(*name, Options::default())),
    )
    .inspect_err(|e| println!("bare secondary open failed: {e}"))
    .ok()?;
    let docs = db.cf_handle(DOCS_FAMILY).expect("docs family");
    let ids = db
        .iterator_cf(docs, rocksdb::IteratorMode::Start)
        .map(|item| {
            let (key, _) = item.expect("iterate docs");
            u64::from_be_bytes(key[..8].try_into().expect("8-byte doc key"))
        })
        .collect();
    Some(ids)
}

/// Opens on `stores` fresh stores, `opens` of each kind per store (a young store opens fast,
/// and its opens race the writer's flushes most often).
#[test]
#[ignore = "a measurement (about a minute); see the file's documentation"]
fn read_only_views_are_prefixes_of_the_writers_history() -> Result<()> {
    let env = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (stores, opens) = (
        env("READ_ONLY_PROBE_STORES", 20),
        env("READ_ONLY_PROBE_OPENS", 5),
    );
    let mut totals = Totals::default();
    for store in 0..stores {
        probe_one_store(store, opens, &mut totals)?;
    }
    let n = (stores * opens) as f64;
    println!(
        "{stores} stores x {opens} opens of each kind: bare secondary {} with a hole, {} \
         failed ({:.1} ms per open); Store read-only {} with a hole, {} not verify-clean or \
         len() != ids ({:.1} ms per open); writer at {} ids in all",
        totals.bare_holes,
        totals.bare_failed,
        totals.bare_time.as_secs_f64() * 1e3 / n,
        totals.store_holes,
        totals.store_unclean,
        totals.store_time.as_secs_f64() * 1e3 / n,
        totals.written,
    );
    assert_eq!((totals.store_holes, totals.store_unclean), (0, 0));
    Ok(())
}

#[derive(Default)]
struct Totals {
    bare_holes: usize,
    bare_failed: usize,
    store_holes: usize,
    store_unclean: usize,
    bare_time: Duration,
    store_time: Duration,
    written: u64,
}

fn probe_one_store(store: usize, opens: usize, totals: &mut Totals) -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut writer = Store::open(dir.path())?;
    writer.insert(0, Fingerprint(0))?;
    writer.flush()?;
    let done = Arc::new(AtomicBool::new(false));
    let reopen_every: u64 = std::env::var("READ_ONLY_PROBE_REOPEN_EVERY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let churn = {
        let done = done.clone();
        std::thread::spawn(move || -> Result<u64> {
            let mut id = 1u64;
            while !done.load(Ordering::SeqCst) {
                if reopen_every > 0 && (id / BATCH).is_multiple_of(reopen_every) {
                    // Close and reopen: the writer starts a new MANIFEST and deletes its logs.
                    let path = writer.path().to_path_buf();
                    drop(writer);
                    writer = Store::open(&path)?;
                }
                writer
                    .insert_batch((id..id + BATCH).map(|i| {
                        Entry::new(i, Fingerprint(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
                    }))?;
                id += BATCH;
                writer.flush()?;
                if id % 1000 == 1 {
                    writer.compact()?;
                }
            }
            Ok(id)
        })
    };

    for round in 0..opens {
        let start = Instant::now();
        let ids = ids_of_bare_secondary(dir.path());
        totals.bare_time += start.elapsed();
        let Some(ids) = ids else {
            totals.bare_failed += 1;
            continue;
        };
        if let Some((missing, present)) = first_gap(&ids) {
            totals.bare_holes += 1;
            println!(
                "store {store} round {round}: bare secondary: {} ids, {missing}..{present} missing",
                ids.len()
            );
        }

        let start = Instant::now();
        let reader = Store::builder().read_only(true).open(dir.path())?;
        totals.store_time += start.elapsed();
        let ids = reader
            .documents()?
            .map(|d| d.map(|(id, _)| id))
            .collect::<Result<Vec<u64>>>()?;
        if let Some((missing, present)) = first_gap(&ids) {
            totals.store_holes += 1;
            println!(
                "store {store} round {round}: Store read-only: {} ids, {missing}..{present} \
                 missing, len() {}",
                ids.len(),
                reader.len()
            );
        }
        let report = reader.verify()?;
        if !report.is_clean() || reader.len() != ids.len() as u64 {
            totals.store_unclean += 1;
            println!(
                "store {store} round {round}: Store read-only: len() {}, {} ids, {:?}",
                reader.len(),
                ids.len(),
                report.problems
            );
        }
    }
    done.store(true, Ordering::SeqCst);
    totals.written += churn.join().expect("writer panicked")?;
    Ok(())
}
