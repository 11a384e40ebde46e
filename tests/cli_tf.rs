//! `load --tf` records the weighting in a new store, later loads keep it, and a different one
//! is refused; `fingerprint --tf` fingerprints the way such a store would.
#![cfg(feature = "cli")]

mod common;

use std::path::Path;
use std::process::Output;

use common::cli::{ok, recorded_config, run, run_with_stdin, Result};

fn recorded_tf(store: &Path) -> Result<String> {
    Ok(recorded_config(store.to_str().ok_or("path")?)?["tf"]
        .as_str()
        .ok_or("no tf in stats")?
        .to_string())
}

/// A short text whose words repeat unevenly, so that the weighting changes its fingerprint
/// (length-adaptive weighs a count `c` as `c^1.6` in a text this short).
fn text(i: usize) -> String {
    let words = [
        "crawler",
        "index",
        "page",
        "duplicate",
        "store",
        "query",
        "shard",
    ];
    let counts = [6, 3, 2, 1, 1, 1, 1];
    let mut out = Vec::new();
    for (w, &count) in counts.iter().enumerate() {
        for _ in 0..count {
            out.push(words[(w + i) % words.len()]);
        }
    }
    out.join(" ")
}

fn fingerprint(tf: Option<&str>, text: &str) -> Result<String> {
    let mut args = vec!["fingerprint", "-", "--format", "lines", "--quiet"];
    if let Some(tf) = tf {
        args.extend(["--tf", tf]);
    }
    let out = run_with_stdin(&args, &format!("{text}\n"))?;
    ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    Ok(v["fingerprint"]
        .as_str()
        .ok_or("no fingerprint")?
        .to_string())
}

/// The loader fingerprinted with the recorded weighting: what `export` gives is what
/// `fingerprint --tf length-adaptive` computes for `lines`, key by key.
fn assert_stored_fingerprints_are_recomputed(store: &str, lines: &str) -> Result {
    let fingerprints_by_key = |out: &Output| -> Result<Vec<(String, String)>> {
        ok(out);
        let mut v = String::from_utf8_lossy(&out.stdout)
            .lines()
            // Not the header line of `export`.
            .filter(|l| !l.contains("simhash_store_export"))
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l)?;
                Ok((
                    v["key"].as_str().ok_or("key")?.to_string(),
                    v["fingerprint"].as_str().ok_or("fingerprint")?.to_string(),
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        v.sort();
        Ok(v)
    };
    let exported = fingerprints_by_key(&run(&["export", "--store", store])?)?;
    let args = [
        "fingerprint",
        "-",
        "--format",
        "lines",
        "--quiet",
        "--tf",
        "length-adaptive",
    ];
    let computed = fingerprints_by_key(&run_with_stdin(&args, lines)?)?;
    assert_eq!(exported.len(), 20);
    assert_eq!(exported, computed);
    Ok(())
}

#[test]
fn load_records_the_weighting_and_refuses_another() -> Result {
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    let store_s = store.to_str().ok_or("path")?;
    let lines: String = (0..20).map(|i| text(i) + "\n").collect();
    let load = |extra: &[&str]| {
        let mut args = vec![
            "load", "-", "--format", "lines", "--store", store_s, "--quiet",
        ];
        args.extend_from_slice(extra);
        run_with_stdin(&args, &lines)
    };
    ok(&load(&["--tf", "length-adaptive"])?);
    assert_eq!(recorded_tf(&store)?, "LengthAdaptive");
    assert_stored_fingerprints_are_recomputed(store_s, &lines)?;
    // Later loads use what the store recorded, with or without the same --tf.
    ok(&load(&[])?);
    ok(&load(&["--tf", "length-adaptive"])?);
    assert_eq!(recorded_tf(&store)?, "LengthAdaptive");
    assert_stored_fingerprints_are_recomputed(store_s, &lines)?;
    // Another weighting is refused, naming both configurations.
    let out = load(&["--tf", "raw"])?;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("LengthAdaptive") && err.contains("Raw"),
        "{err}"
    );

    // `fingerprint --tf` agrees with the store's configuration, and differs from raw here.
    let t = text(3);
    let adaptive = fingerprint(Some("length-adaptive"), &t)?;
    let out = run_with_stdin(
        &[
            "fingerprint",
            "-",
            "--format",
            "lines",
            "--quiet",
            "--store",
            store_s,
        ],
        &format!("{t}\n"),
    )?;
    ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(v["fingerprint"].as_str(), Some(adaptive.as_str()));
    assert_ne!(adaptive, fingerprint(None, &t)?);
    assert_eq!(fingerprint(Some("raw"), &t)?, fingerprint(None, &t)?);
    Ok(())
}

#[test]
fn a_new_store_without_tf_records_raw() -> Result {
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    let out = run_with_stdin(
        &[
            "load",
            "-",
            "--format",
            "lines",
            "--quiet",
            "--store",
            store.to_str().ok_or("path")?,
        ],
        &(text(1) + "\n"),
    )?;
    ok(&out);
    assert_eq!(recorded_tf(&store)?, "Raw");
    Ok(())
}
