//! `fingerprint` and `load` leave boilerplate lines out by default;
//! `--keep-boilerplate-lines` keeps them, is recorded by a new store, and is refused by a
//! store that drops them.
#![cfg(feature = "cli")]

mod common;

use std::path::Path;

use common::cli::{ok, recorded_config, run, Result};

const ARTICLE: &str = "The crawler fetches every page of the site once a day and stores \
its text.\nPages that changed only in their banners are near-duplicates of the stored copy, \
and the index answers which stored pages are within three bits of a new fingerprint.\n\
Operators read the duplicate clusters and drop all but one page of each.\n";

/// Two pages in `dir`: the article, and the article between boilerplate lines.
fn pages(dir: &Path) -> Result {
    std::fs::write(dir.join("plain.txt"), ARTICLE)?;
    std::fs::write(
        dir.join("wrapped.txt"),
        format!(
            "Home > Blog > Crawling\n{ARTICLE}Share on Facebook | Tweet | Email\n\
             Copyright © 2026 Example Inc. All rights reserved.\n"
        ),
    )?;
    Ok(())
}

/// `fingerprint DIR [extra]`: the fingerprints of plain.txt and wrapped.txt.
fn fingerprints(dir: &Path, extra: &[&str]) -> Result<(String, String)> {
    let mut args = vec!["fingerprint", dir.to_str().ok_or("path")?, "--quiet"];
    args.extend_from_slice(extra);
    let out = run(&args)?;
    ok(&out);
    let (mut plain, mut wrapped) = (None, None);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        let fp = v["fingerprint"].as_str().ok_or("fingerprint")?.to_string();
        let key = v["key"].as_str().ok_or("key")?;
        if key.ends_with("plain.txt") {
            plain = Some(fp);
        } else if key.ends_with("wrapped.txt") {
            wrapped = Some(fp);
        }
    }
    Ok((plain.ok_or("plain.txt")?, wrapped.ok_or("wrapped.txt")?))
}

fn recorded_drop_boilerplate(store: &str) -> Result<bool> {
    Ok(recorded_config(store)?["drop_boilerplate"]
        .as_bool()
        .ok_or("no drop_boilerplate in stats")?)
}

#[test]
fn boilerplate_lines_are_dropped_unless_kept() -> Result {
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("pages");
    std::fs::create_dir(&input)?;
    pages(&input)?;
    let (plain, wrapped) = fingerprints(&input, &[])?;
    assert_eq!(plain, wrapped);
    let (plain_kept, wrapped_kept) = fingerprints(&input, &["--keep-boilerplate-lines"])?;
    assert_eq!(plain_kept, plain, "the article has no boilerplate line");
    assert_ne!(wrapped_kept, wrapped);

    let input_s = input.to_str().ok_or("path")?;
    let store = dir.path().join("default.db");
    let store_s = store.to_str().ok_or("path")?;
    ok(&run(&["load", input_s, "--store", store_s, "--quiet"])?);
    assert!(recorded_drop_boilerplate(store_s)?);
    // One document per page, and they are duplicates at distance 0.
    let out = run(&["query", "--store", store_s, "--text", ARTICLE, "-k", "0"])?;
    ok(&out);
    let hits = String::from_utf8_lossy(&out.stdout);
    assert!(
        hits.contains("plain.txt") && hits.contains("wrapped.txt"),
        "{hits}"
    );
    // A store that drops boilerplate refuses to load with it kept, naming both settings.
    let out = run(&[
        "load",
        input_s,
        "--store",
        store_s,
        "--quiet",
        "--keep-boilerplate-lines",
    ])?;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"drop_boilerplate\":true"), "{err}");
    assert!(err.contains("\"drop_boilerplate\":false"), "{err}");

    // --keep-boilerplate-lines is recorded by a new store, and later loads keep it.
    let kept = dir.path().join("kept.db");
    let kept_s = kept.to_str().ok_or("path")?;
    let load_kept = |extra: &[&str]| {
        let mut args = vec!["load", input_s, "--store", kept_s, "--quiet"];
        args.extend_from_slice(extra);
        run(&args)
    };
    ok(&load_kept(&["--keep-boilerplate-lines"])?);
    assert!(!recorded_drop_boilerplate(kept_s)?);
    ok(&load_kept(&[])?);
    assert!(!recorded_drop_boilerplate(kept_s)?);
    // Only the settings given must agree with the store: --tf raw alone is fine on both
    // (as on a store of 0.2, which kept boilerplate lines), another --tf is not.
    ok(&load_kept(&["--tf", "raw"])?);
    ok(&run(&[
        "load", input_s, "--store", store_s, "--quiet", "--tf", "raw",
    ])?);
    assert!(!recorded_drop_boilerplate(kept_s)?);
    assert!(recorded_drop_boilerplate(store_s)?);
    let out = load_kept(&["--tf", "length-adaptive"])?;
    assert!(!out.status.success());
    let out = run(&["query", "--store", kept_s, "--text", ARTICLE, "-k", "0"])?;
    ok(&out);
    let hits = String::from_utf8_lossy(&out.stdout);
    assert!(
        hits.contains("plain.txt") && !hits.contains("wrapped.txt"),
        "{hits}"
    );
    Ok(())
}
