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

/// A temporary folder with `pages()` in a file and the path of a store to create.
struct Case {
    dir: tempfile::TempDir,
    input: String,
    store: String,
}

impl Case {
    fn new() -> Result<Case> {
        let dir = tempfile::tempdir()?;
        let input = dir.path().join("pages.txt");
        std::fs::write(&input, pages())?;
        let input = input.to_str().ok_or("path")?.to_string();
        let store = dir.path().join("store");
        let store = store.to_str().ok_or("path")?.to_string();
        Ok(Case { dir, input, store })
    }

    /// `load` of the pages into the store, with `extra` settings.
    fn load(&self, extra: &[&str]) -> Result<std::process::Output> {
        let mut args = vec![
            "load",
            &self.input,
            "--format",
            "lines",
            "--store",
            &self.store,
            "--quiet",
        ];
        args.extend(extra);
        run(&args)
    }

    /// The store holds `expected` (in any order).
    fn assert_stored(&self, expected: &[String]) -> Result {
        let exported = ok(&run(&["export", "--store", &self.store])?);
        // The first line is the header: the store's settings.
        let documents: String = exported.lines().skip(1).map(|l| format!("{l}\n")).collect();
        let mut stored = fingerprints_in(&documents)?;
        let mut expected = expected.to_vec();
        stored.sort();
        expected.sort();
        assert_eq!(stored, expected);
        Ok(())
    }

    /// `fingerprint --store` with the setting `flag value` is a usage error (exit 2), and
    /// `fingerprint` with `flag bad` fails with `message`.
    fn assert_refused(&self, flag: &str, value: &str, bad: &str, message: &str) -> Result {
        let store = [
            "fingerprint",
            &self.input,
            "--store",
            &self.store,
            flag,
            value,
        ];
        assert_eq!(run(&store)?.status.code(), Some(2));
        let args = ["fingerprint", "-", "--format", "lines", flag, bad];
        let out = run_with_stdin(&args, "text\n")?;
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{err}");
        Ok(())
    }
}

#[test]
fn the_0_3_settings_are_recorded_kept_and_checked() -> Result {
    let case = Case::new()?;
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

    ok(&case.load(&old)?);
    let config = recorded_config(&case.store)?;
    assert_eq!(config["word_char_shingles_within_words"], false);
    assert_eq!(config["latin_count_pieces"], 0);
    assert_eq!(config["latin_count_pieces_ratio"], 0);
    // What the store holds is what `fingerprint` computes with the same settings.
    case.assert_stored(&before_0_4)?;

    // Later loads keep the store's settings, with or without repeating them.
    ok(&case.load(&[])?);
    ok(&case.load(&["--count-pieces", "0"])?);
    // Other values are refused, naming both configurations.
    for other in [&["--count-pieces", "4"][..], &["--count-pieces", "8"][..]] {
        let out = case.load(other)?;
        assert_eq!(out.status.code(), Some(1), "{other:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let recorded = r#""latin_count_pieces":0,"latin_count_pieces_ratio":0,"sketch":"None"}"#;
        assert!(err.contains(recorded), "{err}");
        let asked = format!(
            r#""latin_count_pieces":{},"latin_count_pieces_ratio":2,"sketch":"None"}}"#,
            other[1]
        );
        assert!(err.contains(&asked), "{err}");
        // And name each setting that differs, with both values.
        let differs = format!(
            "`latin_count_pieces` is 0 in the store, {} requested",
            other[1]
        );
        assert!(err.contains(&differs), "{err}");
        assert!(
            err.contains("`latin_count_pieces_ratio` is 0 in the store, 2 requested"),
            "{err}"
        );
    }
    // A new store gets the defaults.
    let fresh = case.dir.path().join("fresh");
    let fresh = fresh.to_str().ok_or("path")?;
    ok(&run(&[
        "load",
        &case.input,
        "--format",
        "lines",
        "--store",
        fresh,
        "--quiet",
    ])?);
    let config = recorded_config(fresh)?;
    assert_eq!(config["word_char_shingles_within_words"], true);
    assert_eq!(config["latin_count_pieces"], 4);
    assert_eq!(config["latin_count_pieces_ratio"], 2);

    // `fingerprint --store` takes the store's settings, and no others; a base out of range
    // is a clear error.
    case.assert_refused("--count-pieces", "0", "1", "latin_count_pieces is 1")
}

#[test]
fn the_0_4_ratio_is_recorded_kept_and_checked() -> Result {
    let case = Case::new()?;
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

    ok(&case.load(&old)?);
    let config = recorded_config(&case.store)?;
    assert_eq!(config["latin_count_pieces"], 4);
    assert_eq!(config["latin_count_pieces_ratio"], 0);
    case.assert_stored(&before_0_5)?;
    // And `fingerprint --store` computes them the same way.
    let out = run(&[
        "fingerprint",
        &case.input,
        "--format",
        "lines",
        "--store",
        &case.store,
        "--quiet",
    ])?;
    assert_eq!(fingerprints_in(&ok(&out))?, before_0_5);

    ok(&case.load(&[])?);
    ok(&case.load(&old)?);
    ok(&case.load(&["--count-pieces", "4"])?);
    for other in [
        &["--count-pieces-ratio", "2"][..],
        &["--count-pieces-ratio", "3"][..],
    ] {
        let out = case.load(other)?;
        assert_eq!(out.status.code(), Some(1), "{other:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(r#""latin_count_pieces_ratio":0,"sketch":"None"}"#),
            "{err}"
        );
        let asked = format!(
            r#""latin_count_pieces_ratio":{},"sketch":"None"}}"#,
            other[1]
        );
        assert!(err.contains(&asked), "{err}");
        let differs = format!(
            "(`latin_count_pieces_ratio` is 0 in the store, {} requested)",
            other[1]
        );
        assert!(err.contains(&differs), "{err}");
    }
    case.assert_refused(
        "--count-pieces-ratio",
        "2",
        "17",
        "latin_count_pieces_ratio is 17",
    )
}
