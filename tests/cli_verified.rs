//! `load --sketch`, then `query --verified` and `dedup --verified`: verified answers keep the
//! edited copy and carry its similarity; a store loaded without `--sketch` refuses with a
//! message naming the fix; `--verified` with a bare fingerprint is a usage error.
#![cfg(feature = "cli")]

mod common;

use common::cli::{ok, run, Result};

const ARTICLE: &str = "The city council approved a new budget for the river bridge on Monday after a long debate \
    about traffic, taxes and the cost of steel. Engineers said the old bridge could carry trains for another ten years \
    but that repairs would close the road every summer. The mayor promised that the market square would stay open \
    during the work and that local companies would get a share of the contracts.";
const OTHER: &str = "Scientists at the university laboratory reported that a new rice variety survived a dry summer \
    with half the usual water, and farmers in three villages will plant it next spring to test the harvest.";

fn write_input(dir: &std::path::Path) -> Result<String> {
    let input = dir.join("docs.jsonl");
    let lines = [
        serde_json::json!({"url": "https://a.example/1", "text": ARTICLE}),
        serde_json::json!({"url": "https://b.example/copy", "text": format!("{ARTICLE} Share this story with your friends.")}),
        serde_json::json!({"url": "https://c.example/other", "text": OTHER}),
    ];
    std::fs::write(
        &input,
        lines
            .iter()
            .map(|l| l.to_string() + "\n")
            .collect::<String>(),
    )?;
    Ok(input.to_str().ok_or("path")?.to_owned())
}

#[test]
fn load_with_sketches_then_verified_query_and_dedup() -> Result {
    let dir = tempfile::tempdir()?;
    let input = write_input(dir.path())?;
    let store = dir.path().join("store");
    let s = store.to_str().ok_or("path")?;
    ok(&run(&["load", &input, "--store", s, "--sketch"])?);
    assert_eq!(common::cli::recorded_config(s)?["sketch"], "MinHash");

    let out = ok(&run(&[
        "query",
        "--store",
        s,
        "--text",
        ARTICLE,
        "--verified",
        "--json",
    ])?);
    let v: serde_json::Value = serde_json::from_str(&out)?;
    let matches = v["matches"].as_array().ok_or("matches")?;
    let keys: Vec<&str> = matches.iter().filter_map(|m| m["key"].as_str()).collect();
    assert_eq!(
        keys,
        ["https://a.example/1", "https://b.example/copy"],
        "{out}"
    );
    assert_eq!(matches[0]["similarity"], 1.0);
    assert!(matches[1]["similarity"].as_f64().ok_or("similarity")? > 0.5);
    assert_eq!(v["max_distance"], 8);

    // By key: the stored document's own sketch; it is left out of its matches.
    let out = ok(&run(&[
        "query",
        "--store",
        s,
        "--key",
        "https://a.example/1",
        "--verified",
    ])?);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    // distance, id, fingerprint, key, then the similarity last.
    let columns: Vec<&str> = lines[0].split('\t').collect();
    assert_eq!(columns.len(), 5, "{out}");
    assert_eq!(columns[3], "https://b.example/copy", "{out}");
    let similarity: f64 = columns[4].parse()?;
    assert!(similarity > 0.5 && similarity < 1.0, "{out}");

    // A threshold no copy reaches.
    let out = ok(&run(&[
        "query",
        "--store",
        s,
        "--key",
        "https://a.example/1",
        "--verified",
        "--min-similarity",
        "1",
    ])?);
    assert!(out.is_empty(), "{out}");

    let out_dir = dir.path().join("dedup");
    let o = out_dir.to_str().ok_or("path")?;
    let summary = ok(&run(&[
        "dedup",
        "--store",
        s,
        "--out",
        o,
        "--verified",
        "-q",
    ])?);
    assert!(summary.contains("verified:"), "{summary}");
    let pairs = std::fs::read_to_string(out_dir.join("pairs.jsonl"))?;
    assert_eq!(pairs.lines().count(), 1, "{pairs}");
    let pair: serde_json::Value = serde_json::from_str(pairs.trim())?;
    assert!(
        pair["similarity"]
            .as_f64()
            .is_some_and(|s| s > 0.5 && s < 1.0),
        "the verified pair carries its similarity: {pairs}"
    );
    assert!(pair.get("key_a").is_none(), "{pairs}");

    // With --with-keys, in both formats.
    for (format, file) in [("jsonl", "pairs.jsonl"), ("csv", "pairs.csv")] {
        ok(&run(&[
            "dedup",
            "--store",
            s,
            "--out",
            o,
            "--verified",
            "--with-keys",
            "--format",
            format,
            "-q",
        ])?);
        let pairs = std::fs::read_to_string(out_dir.join(file))?;
        match format {
            "jsonl" => {
                let pair: serde_json::Value = serde_json::from_str(pairs.trim())?;
                assert_eq!(pair["key_a"], "https://a.example/1", "{pairs}");
                assert_eq!(pair["key_b"], "https://b.example/copy", "{pairs}");
            }
            _ => {
                let lines: Vec<&str> = pairs.lines().collect();
                assert_eq!(lines[0], "a,b,distance,similarity,key_a,key_b", "{pairs}");
                assert!(
                    lines[1].ends_with(",https://a.example/1,https://b.example/copy"),
                    "{pairs}"
                );
            }
        }
    }

    // A bare fingerprint has no sketch to verify with.
    let out = run(&["query", "--store", s, "--fingerprint", "0123", "--verified"])?;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("sketch"));
    // --min-similarity needs --verified.
    let out = run(&[
        "query",
        "--store",
        s,
        "--text",
        ARTICLE,
        "--min-similarity",
        "0.5",
    ])?;
    assert_eq!(out.status.code(), Some(2));
    Ok(())
}

#[test]
fn a_store_without_sketches_names_the_fix() -> Result {
    let dir = tempfile::tempdir()?;
    let input = write_input(dir.path())?;
    let store = dir.path().join("store");
    let s = store.to_str().ok_or("path")?;
    ok(&run(&["load", &input, "--store", s])?);
    let out_dir = dir.path().join("dedup");
    let o = out_dir.to_str().ok_or("path")?;
    for args in [
        vec!["query", "--store", s, "--text", ARTICLE, "--verified"],
        vec!["dedup", "--store", s, "--out", o, "--verified", "-q"],
    ] {
        let out = run(&args)?;
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("keeps no sketches")
                && err.contains("simhash-store load --sketch")
                && !err.contains("SimhashConfig"),
            "{err}"
        );
    }
    assert!(!out_dir.exists());
    // Loading into it with --sketch does not add sketches to an existing store.
    let out = run(&["load", &input, "--store", s, "--sketch"])?;
    assert_eq!(out.status.code(), Some(1));
    Ok(())
}
