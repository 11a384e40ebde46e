//! `export` then `load` gives a store that answers exactly as the original, whatever its
//! settings: the export's first line records them, a new store takes them, and the copy's
//! `export`, queries and pairs are byte-identical to the original's. Fingerprints with no
//! record of their settings go only into a store with the default settings, unless the user
//! vouches for them (`--trust-fingerprints`); an export does not go into a store with other
//! settings.
#![cfg(feature = "cli")]

mod common;

use common::cli::{ok, run, Result};

/// Pages with planted near-duplicates: Chinese and English, repeated words (so that count
/// pieces and TF weightings matter), boilerplate lines, and edited copies.
fn pages() -> Vec<String> {
    let words = [
        "harbour", "ferry", "storm", "library", "concert", "reading", "room", "saturday", "vacuum",
        "index", "tuple", "freeze",
    ];
    let mut pages = Vec::new();
    for i in 0..12 {
        let body: Vec<&str> = (0..80)
            .map(|j| words[(i * 7 + j * j) % words.len()])
            .collect();
        let text = format!(
            "{}\nShare on Facebook\n© 2026 Example News. All rights reserved.",
            body.join(" ")
        );
        pages.push(text.clone());
        // A copy with a changed word and an extra sentence.
        pages.push(format!(
            "{} The ferries stayed in port.",
            text.replacen("storm", "gale", 1)
        ));
    }
    for i in 0..6 {
        let zh = format!(
            "城市图书馆周{}开放，阅览室将举办音乐会。市民可以免费参加，活动持续两个小时，图书馆还将展出{}本新书。",
            ["一", "二", "三", "四", "五", "六"][i],
            100 + i
        );
        pages.push(zh.clone());
        pages.push(format!("{zh}转载请注明出处。"));
    }
    pages
}

struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Result<Case> {
        let dir = tempfile::tempdir()?;
        let lines: Vec<String> = pages()
            .iter()
            .enumerate()
            .map(|(i, text)| {
                serde_json::json!({"url": format!("https://example.com/{i}"), "text": text})
                    .to_string()
            })
            .collect();
        std::fs::write(dir.path().join("pages.jsonl"), lines.join("\n") + "\n")?;
        Ok(Case { dir })
    }

    fn path(&self, name: &str) -> Result<String> {
        Ok(self
            .dir
            .path()
            .join(name)
            .to_str()
            .ok_or("path")?
            .to_string())
    }

    /// `export` of `store` into a file named `name`; its text.
    fn export(&self, store: &str, name: &str) -> Result<String> {
        let path = self.path(name)?;
        ok(&run(&["export", "--store", store, "--output", &path])?);
        Ok(std::fs::read_to_string(path)?)
    }

    /// What `store` answers: `query --json` of some pages (with `--verified` too when it
    /// keeps sketches) and the pairs `dedup` writes.
    fn answers(&self, store: &str, sketch: bool) -> Result<Vec<String>> {
        let mut answers = Vec::new();
        // Pages of both languages, originals and copies.
        for text in pages().iter().step_by(5) {
            let mut args = vec![
                "query", "--store", store, "--text", text, "-k", "6", "--json",
            ];
            answers.push(ok(&run(&args)?));
            if sketch {
                args.push("--verified");
                answers.push(ok(&run(&args)?));
            }
        }
        let out = self.path(&format!("dedup-{}", answers.len()))?;
        let mut args = vec![
            "dedup", "--store", store, "--out", &out, "-k", "6", "--quiet",
        ];
        if sketch {
            args.push("--verified");
        }
        ok(&run(&args)?);
        // Pairs are written in scan order, which the scan's threads decide.
        let pairs = std::fs::read_to_string(std::path::Path::new(&out).join("pairs.jsonl"))?;
        let mut pairs: Vec<&str> = pairs.lines().collect();
        pairs.sort_unstable();
        answers.push(pairs.join("\n"));
        Ok(answers)
    }
}

#[test]
fn every_setting_survives_export_then_load() -> Result {
    let settings: &[&[&str]] = &[
        &[],
        &["--tf", "length-adaptive"],
        &["--tf", "log"],
        &["--tf", "binary"],
        &["--keep-boilerplate-lines"],
        &["--shingles-across-words"],
        &["--count-pieces", "0"],
        &["--count-pieces", "3", "--count-pieces-ratio", "4"],
        &["--sketch"],
        &["--tf", "length-adaptive", "--sketch"],
    ];
    for (n, flags) in settings.iter().enumerate() {
        let case = Case::new()?;
        let original = case.path("original")?;
        let input = case.path("pages.jsonl")?;
        let mut args = vec!["load", &input, "--store", &original, "--quiet"];
        args.extend(flags.iter());
        ok(&run(&args)?);

        let exported = case.export(&original, "export.jsonl")?;
        let header: serde_json::Value =
            serde_json::from_str(exported.lines().next().ok_or("empty export")?)?;
        assert!(
            header["simhash_store_export"]["settings"].is_object(),
            "{flags:?}: {header}"
        );
        let sketch = flags.contains(&"--sketch");
        if sketch {
            assert!(
                exported
                    .lines()
                    .nth(1)
                    .is_some_and(|l| l.contains("\"sketch\":\"")),
                "{flags:?}: the documents carry their sketches"
            );
        }

        // The copy is made from the export alone, with no settings given.
        let copy = case.path("copy")?;
        let export_path = case.path("export.jsonl")?;
        ok(&run(&["load", &export_path, "--store", &copy, "--quiet"])?);
        assert_eq!(
            case.export(&copy, "again.jsonl")?,
            exported,
            "case {n} {flags:?}: the copy's export differs"
        );
        assert_eq!(
            case.answers(&copy, sketch)?,
            case.answers(&original, sketch)?,
            "case {n} {flags:?}: the copy answers differently"
        );
        assert_eq!(run(&["verify", "--store", &copy])?.status.code(), Some(0));

        // The same export also goes from standard input.
        let piped = case.path("piped")?;
        let exported_again = std::process::Command::new(env!("CARGO_BIN_EXE_simhash-store"))
            .args(["load", "-", "--store", &piped, "--quiet"])
            .stdin(std::fs::File::open(&export_path)?)
            .output()?;
        ok(&exported_again);
        assert_eq!(
            case.export(&piped, "piped.jsonl")?,
            exported,
            "{flags:?}: from stdin"
        );
    }
    Ok(())
}

#[test]
fn an_export_does_not_go_into_a_store_with_other_settings() -> Result {
    let case = Case::new()?;
    let input = case.path("pages.jsonl")?;
    let adaptive = case.path("adaptive")?;
    ok(&run(&[
        "load",
        &input,
        "--store",
        &adaptive,
        "--tf",
        "length-adaptive",
        "--quiet",
    ])?);
    case.export(&adaptive, "export.jsonl")?;
    let export = case.path("export.jsonl")?;

    // Into an existing store with the default settings.
    let plain = case.path("plain")?;
    ok(&run(&["load", &input, "--store", &plain, "--quiet"])?);
    let out = run(&["load", &export, "--store", &plain, "--quiet"])?;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("export.jsonl:line 1")
            && err.contains("other fingerprint settings")
            && err.contains("`tf`")
            && err.contains("new store"),
        "{err}"
    );

    // Into a new store with settings flags that disagree with the export's.
    let fresh = case.path("fresh")?;
    let out = run(&["load", &export, "--store", &fresh, "--tf", "log", "--quiet"])?;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("leave out the settings flags"), "{err}");
    Ok(())
}

#[test]
fn fingerprints_without_settings_need_the_users_word() -> Result {
    let case = Case::new()?;
    let input = case.path("pages.jsonl")?;
    let adaptive = case.path("adaptive")?;
    ok(&run(&[
        "load",
        &input,
        "--store",
        &adaptive,
        "--tf",
        "length-adaptive",
        "--quiet",
    ])?);
    // An export without its header line: fingerprints whose settings nobody recorded.
    let exported = case.export(&adaptive, "export.jsonl")?;
    let bare = case.path("bare.jsonl")?;
    std::fs::write(
        &bare,
        exported.lines().skip(1).collect::<Vec<_>>().join("\n"),
    )?;

    // A new store with the default settings takes them (they are taken to be the default's).
    let plain = case.path("plain")?;
    ok(&run(&["load", &bare, "--store", &plain, "--quiet"])?);

    // A store with other settings refuses them, saying what to do.
    let other = case.path("other")?;
    ok(&run(&[
        "load",
        &input,
        "--store",
        &other,
        "--tf",
        "length-adaptive",
        "--quiet",
    ])?);
    let out = run(&["load", &bare, "--store", &other, "--quiet"])?;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("bare.jsonl:line 1")
            && err.contains("no record of the settings")
            && err.contains("--trust-fingerprints"),
        "{err}"
    );
    // ... unless the user vouches for them.
    let out = ok(&run(&[
        "load",
        &bare,
        "--store",
        &other,
        "--trust-fingerprints",
        "--quiet",
    ])?);
    assert!(out.contains("loaded 36 documents"), "{out}");
    Ok(())
}
