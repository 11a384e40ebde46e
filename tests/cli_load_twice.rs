//! Loading the same WARC twice leaves the document count unchanged: a page's URL keeps its id.
#![cfg(feature = "cli")]

mod common;

use std::path::Path;

use common::cli::{run, Result};

fn documents(store: &Path) -> Result<u64> {
    let out = run(&["stats", "--json", "--store", store.to_str().ok_or("path")?])?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    v["documents"]
        .as_u64()
        .ok_or_else(|| "no document count".into())
}

#[test]
fn second_load_replaces_in_place() -> Result {
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    let store_s = store.to_str().ok_or("path")?;
    // The demo writes a gzipped WARC with planted near-duplicates and loads it.
    let out = run(&[
        "demo",
        "--pages",
        "200",
        "--store",
        store_s,
        "--out",
        dir.path().to_str().ok_or("path")?,
    ])?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let warc = dir.path().join("demo-crawl.warc.gz");
    let first = documents(&store)?;
    assert!(first >= 200, "{first}");

    let out = run(&[
        "load",
        warc.to_str().ok_or("path")?,
        "--store",
        store_s,
        "--json",
    ])?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(summary["loaded"].as_u64(), Some(first));
    assert_eq!(summary["replaced"].as_u64(), Some(first));
    assert_eq!(documents(&store)?, first);

    let out = run(&["verify", "--store", store_s])?;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    Ok(())
}
