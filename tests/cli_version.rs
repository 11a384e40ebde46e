//! `simhash-store --version` names the version, the commit and the store formats;
//! `simhash-store completions` writes a script for each shell that knows the subcommands.
#![cfg(feature = "cli")]

mod common;

use common::cli::{ok, run, Result};
use simhash_store::upgrade::{FORMAT_VERSION, MIN_FORMAT_VERSION};

#[test]
fn version_names_the_commit_and_the_store_format() -> Result {
    let out = ok(&run(&["--version"])?);
    let line = out.trim();
    assert!(
        line.starts_with(&format!(
            "simhash-store {} (commit ",
            env!("CARGO_PKG_VERSION")
        )),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "writes store format {FORMAT_VERSION}, reads formats {MIN_FORMAT_VERSION}-{FORMAT_VERSION})"
        )),
        "{line}"
    );
    let commit = line
        .split("(commit ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .ok_or("no commit")?;
    assert!(
        commit == "unknown"
            || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
        "{commit}"
    );
    Ok(())
}

#[test]
fn completions_cover_the_subcommands() -> Result {
    // fish names a long option `-l store`, the others `--store`.
    for (shell, option) in [
        ("bash", "--store"),
        ("zsh", "--store"),
        ("fish", "-l store"),
    ] {
        let script = ok(&run(&["completions", shell])?);
        for word in ["simhash-store", "load", "query", "dedup", option] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
    }
    let bad = run(&["completions", "tcsh"])?;
    assert_eq!(bad.status.code(), Some(2));
    Ok(())
}
