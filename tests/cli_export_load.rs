//! `export` then `load` rebuilds a store with the same ids, keys and fingerprints without
//! fingerprinting again; `get`, `remove`, `verify` and `stats` on the way.
#![cfg(feature = "cli")]

mod common;

use common::cli::{ok, run, Result};

#[test]
fn export_load_round_trip() -> Result {
    let dir = tempfile::tempdir()?;
    let pages = dir.path().join("pages");
    std::fs::create_dir(&pages)?;
    for (name, text) in [
        (
            "a.txt",
            "storms closed the harbour and the ferries stayed in port for two days",
        ),
        (
            "b.txt",
            "the new library opens on Saturday with a concert in the reading room",
        ),
        (
            "c.html",
            "<html><body><p>城市图书馆周六开放，阅览室将举办音乐会。</p></body></html>",
        ),
    ] {
        std::fs::write(pages.join(name), text)?;
    }
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    let (a_s, b_s) = (a.to_str().ok_or("path")?, b.to_str().ok_or("path")?);
    ok(&run(&[
        "load",
        pages.to_str().ok_or("path")?,
        "--store",
        a_s,
    ])?);
    let export = dir.path().join("export.jsonl");
    ok(&run(&[
        "export",
        "--store",
        a_s,
        "--output",
        export.to_str().ok_or("path")?,
    ])?);
    let exported = std::fs::read_to_string(&export)?;
    // The header line, then one line per document.
    assert_eq!(exported.lines().count(), 4);

    ok(&run(&[
        "load",
        export.to_str().ok_or("path")?,
        "--store",
        b_s,
    ])?);
    let again = ok(&run(&["export", "--store", b_s])?);
    let strip = |s: &str| -> Vec<(u64, String, String)> {
        s.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .map(|v| {
                (
                    v["id"].as_u64().unwrap_or(u64::MAX),
                    v["key"].to_string(),
                    v["fingerprint"].to_string(),
                )
            })
            .collect()
    };
    assert_eq!(strip(&again), strip(&exported));

    let key = pages.join("a.txt").display().to_string();
    let got = ok(&run(&["get", "--store", b_s, "--key", &key])?);
    assert!(got.contains("\"fingerprint\""), "{got}");
    let removed = ok(&run(&["remove", "--store", b_s, "--key", &key])?);
    assert!(removed.contains("removed 1 document;"), "{removed}");
    assert_eq!(
        run(&["get", "--store", b_s, "--key", &key])?.status.code(),
        Some(1)
    );
    assert_eq!(run(&["verify", "--store", b_s])?.status.code(), Some(0));
    let stats = ok(&run(&["stats", "--store", b_s])?);
    assert!(
        stats.contains("documents    2") && stats.contains("block3"),
        "{stats}"
    );
    Ok(())
}
