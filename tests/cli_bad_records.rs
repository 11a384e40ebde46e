//! Bad records are reported with file and line and skipped; `--strict` stops at the first one
//! with exit code 3 and keeps what was loaded before it.
#![cfg(feature = "cli")]

mod common;

use common::cli::{run, Result};

#[test]
fn skipped_or_strict() -> Result {
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("docs.jsonl");
    std::fs::write(
        &input,
        "{\"key\": \"a\", \"text\": \"the first document is about rivers and bridges\"}\n\
         [1, 2]\n\
         {\"key\": \"b\", \"text\": \"the second document is about trains and stations\"}\n\
         {\"key\": \"c\", \"text\": \"!!! ...\"}\n\
         {\"key\": \"d\", \"text\": 17}\n\
         {\"key\": \"e\", \"text\": \"the last document is about gardens and flowers\"}\n",
    )?;
    let input_s = input.to_str().ok_or("path")?;

    let store = dir.path().join("lenient");
    let out = run(&[
        "load",
        input_s,
        "--store",
        store.to_str().ok_or("path")?,
        "--json",
    ])?;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{input_s}:line 2: wrong JSON type")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{input_s}:line 5: wrong JSON type")),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(v["loaded"].as_u64(), Some(3));
    assert_eq!(v["empty"].as_u64(), Some(1));
    assert_eq!(v["bad_records"]["wrong JSON type"].as_u64(), Some(2));

    let store = dir.path().join("strict");
    let out = run(&[
        "load",
        input_s,
        "--store",
        store.to_str().ok_or("path")?,
        "--strict",
    ])?;
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--strict"));
    let out = run(&[
        "get",
        "--store",
        store.to_str().ok_or("path")?,
        "--key",
        "a",
    ])?;
    assert_eq!(
        out.status.code(),
        Some(0),
        "the document before the bad record is loaded"
    );
    let out = run(&[
        "get",
        "--store",
        store.to_str().ok_or("path")?,
        "--key",
        "b",
    ])?;
    assert_eq!(
        out.status.code(),
        Some(1),
        "nothing after the bad record is loaded"
    );
    Ok(())
}
