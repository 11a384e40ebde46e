//! `load --shingles-across-words` and `--count-pieces` are recorded by a new store (the
//! settings of stores before 0.4), later loads keep them, other values are refused, and
//! `fingerprint` with the same settings computes what such a store stored.
#![cfg(feature = "cli")]

mod common;

use common::cli::{ok, recorded_config, run, run_with_stdin, Result};

/// Pages whose Latin words repeat well beyond 4 times, so that count pieces change them.
fn pages() -> String {
    (0..6)
        .map(|i| {
            let words = ["vacuum", "table", "index", "page", "tuple", "freeze"];
            (0..40)
                .map(|j| words[(i + j * j) % words.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The fingerprints `fingerprint` computes for `pages()` with `settings`, in order.
fn fingerprints(settings: &[&str]) -> Result<Vec<String>> {
    let mut args = vec!["fingerprint", "-", "--format", "lines", "--quiet"];
    args.extend(settings);
    let out = run_with_stdin(&args, &format!("{}\n", pages()))?;
    fingerprints_in(&ok(&out))
}

/// The `fingerprint` field of each JSON line of `output`.
fn fingerprints_in(output: &str) -> Result<Vec<String>> {
    output
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line)?;
            Ok(v["fingerprint"]
                .as_str()
                .ok_or("no fingerprint")?
                .to_string())
        })
        .collect()
}

#[test]
fn the_0_3_settings_are_recorded_kept_and_checked() -> Result {
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("pages.txt");
    std::fs::write(&input, pages())?;
    let input = input.to_str().ok_or("path")?;
    let store = dir.path().join("store");
    let store = store.to_str().ok_or("path")?;
    let old = ["--shingles-across-words", "--count-pieces", "0"];

    // The settings change the fingerprints: the test would pass on a no-op otherwise.
    let default = fingerprints(&[])?;
    let before_0_4 = fingerprints(&old)?;
    assert_eq!(default.len(), 6);
    assert!(
        default
            .iter()
            .zip(&before_0_4)
            .filter(|(a, b)| a != b)
            .count()
            >= 5
    );
    assert_ne!(fingerprints(&["--count-pieces", "0"])?, default);
    assert_ne!(fingerprints(&["--shingles-across-words"])?, default);

    let load = |extra: &[&str]| {
        let mut args = vec![
            "load", input, "--format", "lines", "--store", store, "--quiet",
        ];
        args.extend(extra);
        run(&args)
    };
    ok(&load(&old)?);
    let config = recorded_config(store)?;
    assert_eq!(config["word_char_shingles_within_words"], false);
    assert_eq!(config["latin_count_pieces"], 0);
    // What the store holds is what `fingerprint` computes with the same settings.
    let mut stored = fingerprints_in(&ok(&run(&["export", "--store", store])?))?;
    let mut expected = before_0_4.clone();
    stored.sort();
    expected.sort();
    assert_eq!(stored, expected);

    // Later loads keep the store's settings, with or without repeating them.
    ok(&load(&[])?);
    ok(&load(&["--count-pieces", "0"])?);
    // Other values are refused, naming both configurations.
    for other in [&["--count-pieces", "4"][..], &["--count-pieces", "8"][..]] {
        let out = load(other)?;
        assert_eq!(out.status.code(), Some(1), "{other:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(r#""latin_count_pieces":0}"#), "{err}");
        let asked = format!(r#""latin_count_pieces":{}}}"#, other[1]);
        assert!(err.contains(&asked), "{err}");
    }
    // A new store gets the defaults.
    let fresh = dir.path().join("fresh");
    let fresh = fresh.to_str().ok_or("path")?;
    ok(&run(&[
        "load", input, "--format", "lines", "--store", fresh, "--quiet",
    ])?);
    let config = recorded_config(fresh)?;
    assert_eq!(config["word_char_shingles_within_words"], true);
    assert_eq!(config["latin_count_pieces"], 4);

    // `fingerprint --store` takes the store's settings, and no others.
    let out = run(&[
        "fingerprint",
        input,
        "--store",
        store,
        "--count-pieces",
        "0",
    ])?;
    assert_eq!(out.status.code(), Some(2));
    // A base out of range is a clear error.
    let out = run_with_stdin(
        &[
            "fingerprint",
            "-",
            "--format",
            "lines",
            "--count-pieces",
            "1",
        ],
        "text\n",
    )?;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("latin_count_pieces is 1"));
    Ok(())
}
