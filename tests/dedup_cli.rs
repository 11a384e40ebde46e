//! `simhash-store dedup` on a small store: exit code, the files it writes, and the summary.
#![cfg(feature = "cli")]

mod common;

use std::process::Command;

use common::{planted, Rng};
use simhash_store::{Entry, Fingerprint, Result, Store};

#[test]
fn writes_pairs_clusters_drop_list_and_picture() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store_dir = dir.path().join("store");
    let (docs, _) = planted(&mut Rng::new(3), 500, 10, 3);
    {
        let store = Store::open(&store_dir)?;
        store.insert_batch(docs.iter().map(|&(id, fp)| Entry::new(id, Fingerprint(fp))))?;
    }
    let want_pairs = {
        let store = Store::open(&store_dir)?;
        store.pairs(3).collect()?.len()
    };
    let out = dir.path().join("out");
    let output = Command::new(env!("CARGO_BIN_EXE_simhash-store"))
        .args([
            "dedup",
            "-q",
            "-k",
            "3",
            "--format",
            "csv",
            "--representative",
            "longest",
            "--store",
        ])
        .arg(&store_dir)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run simhash-store");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains(&format!("pairs within k = 3:  {want_pairs}")),
        "{stdout}"
    );

    let pairs = std::fs::read_to_string(out.join("pairs.csv")).expect("pairs.csv");
    assert_eq!(pairs.lines().count(), want_pairs + 1);
    let drop = std::fs::read_to_string(out.join("drop.csv")).expect("drop.csv");
    assert!(drop.starts_with("id,representative,key\n"));
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("summary.json")).expect("summary.json"),
    )
    .expect("json");
    assert_eq!(summary["pairs"], want_pairs as u64);
    assert_eq!(summary["documents"], docs.len() as u64);
    assert_eq!(summary["dropped"], drop.lines().count() as u64 - 1);
    let svg = std::fs::read_to_string(out.join("summary.svg")).expect("summary.svg");
    assert!(svg.starts_with("<svg") && svg.contains("pairs per Hamming distance"));
    Ok(())
}

#[test]
fn missing_store_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = Command::new(env!("CARGO_BIN_EXE_simhash-store"))
        .args(["dedup", "-q", "--store"])
        .arg(dir.path().join("nothing"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .expect("run simhash-store");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("there is no store"));
}
