//! `load` from JSON Lines, then `query` by text, file, key and fingerprint, with usage and
//! missing-store errors and their exit codes.
#![cfg(feature = "cli")]

mod common;

use common::cli::{run, run_with_stdin, Result};

const ARTICLE: &str = "The city council approved a new budget for the river bridge on Monday after a long debate \
    about traffic, taxes and the cost of steel. Engineers said the old bridge could carry trains for another ten years \
    but that repairs would close the road every summer. The mayor promised that the market square would stay open \
    during the work and that local companies would get a share of the contracts.";
const OTHER: &str = "Scientists at the university laboratory reported that a new rice variety survived a dry summer \
    with half the usual water, and farmers in three villages will plant it next spring to test the harvest.";

#[test]
fn query_every_way() -> Result {
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    let s = store.to_str().ok_or("path")?;
    let input = dir.path().join("docs.jsonl");
    let lines = [
        serde_json::json!({"url": "https://a.example/1", "text": ARTICLE}),
        serde_json::json!({"url": "https://b.example/copy", "text": format!("{ARTICLE} Share this story.")}),
        serde_json::json!({"url": "https://c.example/other", "text": OTHER}),
    ];
    std::fs::write(
        &input,
        lines
            .iter()
            .map(|l| l.to_string() + "\n")
            .collect::<String>(),
    )?;
    let out = run(&["load", input.to_str().ok_or("path")?, "--store", s])?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("loaded 3 documents"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // By text, as JSON.
    let out = run(&["query", "--store", s, "--text", ARTICLE, "--json"])?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let keys: Vec<&str> = v["matches"]
        .as_array()
        .ok_or("matches")?
        .iter()
        .filter_map(|m| m["key"].as_str())
        .collect();
    assert_eq!(keys, ["https://a.example/1", "https://b.example/copy"]);
    let fp = v["query"].as_str().ok_or("query")?.to_string();

    // By key: the document itself is left out.
    let out = run(&["query", "--store", s, "--key", "https://a.example/1"])?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("https://b.example/copy") && !stdout.contains("https://a.example/1"),
        "{stdout}"
    );

    // By fingerprint, and by file.
    let out = run(&["query", "--store", s, "--fingerprint", &fp, "-k", "0"])?;
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("0\t"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let file = dir.path().join("page.html");
    std::fs::write(
        &file,
        format!("<html><body><nav><a href=/>Home</a></nav><p>{OTHER}</p></body></html>"),
    )?;
    let out = run(&[
        "query",
        "--store",
        s,
        "--file",
        file.to_str().ok_or("path")?,
    ])?;
    assert!(String::from_utf8_lossy(&out.stdout).contains("https://c.example/other"));

    // Usage errors exit with 2, other errors with 1 and say what to do.
    let out = run(&["query", "--store", s, "--fingerprint", "xyz"])?;
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["query", "--store", s])?;
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["query", "--store", s, "--key", "https://missing.example"])?;
    assert_eq!(out.status.code(), Some(1));
    let missing = dir.path().join("nowhere");
    let out = run(&[
        "query",
        "--store",
        missing.to_str().ok_or("path")?,
        "--text",
        "x",
    ])?;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("simhash-store load"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // fingerprint from standard input, one document per line.
    let out = run_with_stdin(
        &["fingerprint", "-", "--format", "lines"],
        &format!("{ARTICLE}\n\n{OTHER}\n"),
    )?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(serde_json::from_str)
        .collect::<std::result::Result<_, _>>()?;
    assert_eq!(printed.len(), 2);
    assert_eq!(printed[0]["fingerprint"].as_str(), Some(fp.as_str()));
    assert_eq!(printed[1]["key"].as_str(), Some("-:3"));
    assert!(printed[0]["features"].as_u64().is_some_and(|n| n > 20));
    Ok(())
}
