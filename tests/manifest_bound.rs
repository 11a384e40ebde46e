//! A writer that keeps flushing does not grow its MANIFEST without bound: every read-only open
//! replays the whole MANIFEST, so under RocksDB's default limit (1 GiB) read-only opens beside
//! a long-running writer get slower and slower. The store rolls it over at 256 KiB.
//!
//! The measurement behind that (`docs/reliability.md`), not part of the normal run:
//! `cargo test --release --test manifest_bound -- --ignored --nocapture`
//! (`MANIFEST_PROBE_FLUSHES`, default 3,000 flushes of 64 documents, then five read-only opens
//! beside the writer).

use std::time::Instant;

use simhash_store::{Entry, Fingerprint, Result, Store};

/// The size of the store's live MANIFEST (the one `CURRENT` names).
fn manifest_bytes(dir: &std::path::Path) -> u64 {
    let current = std::fs::read_to_string(dir.join("CURRENT")).expect("read CURRENT");
    std::fs::metadata(dir.join(current.trim()))
        .expect("stat the MANIFEST")
        .len()
}

/// `flushes` times: a batch of `batch` new documents (ids in order, random fingerprints), then
/// a flush. Returns the largest size the live MANIFEST had after a flush.
fn write_and_flush(store: &Store, flushes: u64, batch: u64) -> Result<u64> {
    let mut largest = 0;
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for f in 0..flushes {
        let entries: Vec<Entry> = (0..batch)
            .map(|i| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                Entry::new(f * batch + i, Fingerprint::from(x))
            })
            .collect();
        store.insert_batch(entries)?;
        // Each flush (and each compaction it triggers) appends its edits to the MANIFEST.
        store.flush()?;
        largest = largest.max(manifest_bytes(store.path()));
    }
    Ok(largest)
}

#[test]
fn the_manifest_of_a_writer_that_keeps_flushing_stays_small() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    // About 0.9 KiB of MANIFEST per flush here: some 900 KiB without a roll-over.
    let largest = write_and_flush(&store, 1_000, 16)?;
    assert!(
        largest < 400 * 1024,
        "the MANIFEST grew to {largest} bytes over 1,000 flushes"
    );
    // A read-only open beside the writer sees every document, and the store is whole.
    let reader = Store::builder().read_only(true).open(dir.path())?;
    assert_eq!(reader.len(), 16_000);
    assert!(reader.verify()?.is_clean());
    Ok(())
}

#[test]
#[ignore = "a measurement (about half a minute); see the file's documentation"]
fn read_only_open_time_beside_a_writer_that_kept_flushing() -> Result<()> {
    let flushes = std::env::var("MANIFEST_PROBE_FLUSHES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3_000u64);
    let dir = tempfile::tempdir().expect("tempdir");
    let writer = Store::open(dir.path())?;
    let largest = write_and_flush(&writer, flushes, 64)?;
    let mut ms = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let reader = Store::builder().read_only(true).open(dir.path())?;
        ms.push(start.elapsed().as_secs_f64() * 1e3);
        assert_eq!(reader.len(), flushes * 64);
    }
    ms.sort_by(f64::total_cmp);
    println!(
        "{flushes} flushes: MANIFEST now {} bytes (largest {largest}); read-only opens \
         {ms:.0?} ms, median {:.0}",
        manifest_bytes(dir.path()),
        ms[2]
    );
    Ok(())
}
