//! `load --shingles-across-words`, `--count-pieces` and `--count-pieces-ratio` are recorded
//! by a new store (the settings of stores before 0.4 and 0.5), later loads keep them, other
//! values are refused, and `fingerprint` with the same settings computes what such a store
//! stored.
#![cfg(feature = "cli")]

mod common;

use common::cli::{ok, recorded_config, run, run_with_stdin, Result};

/// Pages whose Latin words repeat well beyond 8 times, so that count pieces and their ratio
/// change them.
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
    assert_eq!(config["latin_count_pieces_ratio"], 0);
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
        let recorded = r#""latin_count_pieces":0,"latin_count_pieces_ratio":0}"#;
        assert!(err.contains(recorded), "{err}");
        let asked = format!(
            r#""latin_count_pieces":{},"latin_count_pieces_ratio":2}}"#,
            other[1]
        );
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
    assert_eq!(config["latin_count_pieces_ratio"], 2);

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

#[test]
fn the_0_4_ratio_is_recorded_kept_and_checked() -> Result {
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("pages.txt");
    std::fs::write(&input, pages())?;
    let input = input.to_str().ok_or("path")?;
    let store = dir.path().join("store");
    let store = store.to_str().ok_or("path")?;
    let old = ["--count-pieces-ratio", "0"];

    // 0.4's pieces (4-15, 16-63) and 0.5's (4-7, 8-15, 16-31) differ on these pages.
    let default = fingerprints(&[])?;
    let before_0_5 = fingerprints(&old)?;
    let differ = default
        .iter()
        .zip(&before_0_5)
        .filter(|(a, b)| a != b)
        .count();
    assert!(differ >= 4, "{differ} of 6");
    assert_eq!(fingerprints(&["--count-pieces-ratio", "2"])?, default);
    assert_eq!(
        fingerprints(&["--count-pieces", "4", "--count-pieces-ratio", "4"])?,
        before_0_5
    );

    let load = |extra: &[&str]| {
        let mut args = vec![
            "load", input, "--format", "lines", "--store", store, "--quiet",
        ];
        args.extend(extra);
        run(&args)
    };
    ok(&load(&old)?);
    let config = recorded_config(store)?;
    assert_eq!(config["latin_count_pieces"], 4);
    assert_eq!(config["latin_count_pieces_ratio"], 0);
    let mut stored = fingerprints_in(&ok(&run(&["export", "--store", store])?))?;
    let mut expected = before_0_5.clone();
    stored.sort();
    expected.sort();
    assert_eq!(stored, expected);
    // And `fingerprint --store` computes them the same way.
    let out = run(&[
        "fingerprint",
        input,
        "--format",
        "lines",
        "--store",
        store,
        "--quiet",
    ])?;
    assert_eq!(fingerprints_in(&ok(&out))?, before_0_5);

    ok(&load(&[])?);
    ok(&load(&old)?);
    ok(&load(&["--count-pieces", "4"])?);
    for other in [
        &["--count-pieces-ratio", "2"][..],
        &["--count-pieces-ratio", "3"][..],
    ] {
        let out = load(other)?;
        assert_eq!(out.status.code(), Some(1), "{other:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(r#""latin_count_pieces_ratio":0}"#), "{err}");
        let asked = format!(r#""latin_count_pieces_ratio":{}}}"#, other[1]);
        assert!(err.contains(&asked), "{err}");
    }
    let out = run(&[
        "fingerprint",
        input,
        "--store",
        store,
        "--count-pieces-ratio",
        "2",
    ])?;
    assert_eq!(out.status.code(), Some(2));
    let out = run_with_stdin(
        &[
            "fingerprint",
            "-",
            "--format",
            "lines",
            "--count-pieces-ratio",
            "17",
        ],
        "text\n",
    )?;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("latin_count_pieces_ratio is 17"));
    Ok(())
}
