//! Loading the same WARC twice leaves the document count unchanged: a page's URL keeps its id;
//! `compact` then folds the two loads and changes no answer.
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

    // The second load's chunks and removals fold into one segment; nothing else changes.
    let pairs = |name: &str| -> Result<String> {
        let out_dir = dir.path().join(name);
        let out = run(&[
            "dedup",
            "--store",
            store_s,
            "--quiet",
            "--out",
            out_dir.to_str().ok_or("path")?,
        ])?;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The scan runs on all cores: pairs come in any order.
        let mut lines: Vec<String> = std::fs::read_to_string(out_dir.join("pairs.jsonl"))?
            .lines()
            .map(str::to_owned)
            .collect();
        lines.sort();
        Ok(lines.join("\n"))
    };
    let before = pairs("before")?;
    assert!(!before.is_empty());
    let out = run(&["compact", "--store", store_s])?;
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("compacted {first} documents")),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(pairs("after")?, before);
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
