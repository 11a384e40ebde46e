//! What the command says when something is wrong, or about what it did, is true and says
//! what to do in the command's own terms (flags and subcommands, never Rust calls).
#![cfg(feature = "cli")]

mod common;

use common::cli::{ok, run, Result};
use simhash_store::Store;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_directory_that_is_not_a_store() -> Result {
    let dir = tempfile::tempdir()?;
    let other = dir.path().join("photos");
    std::fs::create_dir(&other)?;
    std::fs::write(other.join("cat.jpg"), b"not a store")?;
    let o = other.to_str().ok_or("path")?;
    let input = dir.path().join("pages.txt");
    std::fs::write(&input, "one page about rivers and bridges of the north\n")?;
    let i = input.to_str().ok_or("path")?;
    for args in [
        vec!["stats", "--store", o],
        vec!["load", i, "--store", o, "--quiet"],
    ] {
        let out = run(&args)?;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("holds other files but no store")
                && err.contains("new or empty directory")
                && !err.contains("create one with"),
            "{args:?}: {err}"
        );
    }
    Ok(())
}

#[test]
fn a_file_given_as_the_store() -> Result {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("pages.db");
    std::fs::write(&file, b"")?;
    let f = file.to_str().ok_or("path")?;
    let input = dir.path().join("pages.txt");
    std::fs::write(&input, "one page about rivers and bridges of the north\n")?;
    for args in [
        vec!["stats", "--store", f],
        vec![
            "load",
            input.to_str().ok_or("path")?,
            "--store",
            f,
            "--quiet",
        ],
    ] {
        let out = run(&args)?;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("is a file, not a store") && !err.contains("Os {"),
            "{args:?}: {err}"
        );
    }
    // The library says it too, without a raw I/O error.
    let err = Store::open(&file).err().ok_or("opened a file")?.to_string();
    assert!(err.contains("it is a file"), "{err}");
    Ok(())
}

#[test]
fn a_store_in_use_by_a_writer() -> Result {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("store");
    let s = path.to_str().ok_or("path")?;
    let input = dir.path().join("pages.txt");
    std::fs::write(&input, "one page about rivers and bridges of the north\n")?;
    let i = input.to_str().ok_or("path")?;
    ok(&run(&["load", i, "--store", s, "--quiet"])?);
    let writer = Store::open(&path)?;
    let out = run(&["load", i, "--store", s, "--quiet"])?;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("in use by another process")
            && err.contains("run this again")
            && !err.contains("open this one read-only"),
        "{err}"
    );
    // A running `serve` holds the store for as long as it runs: writes go to the service.
    assert!(
        err.contains("`simhash-store serve`")
            && err.contains("send the writes to the service")
            && err.contains("`serve --read-only` read beside a writer"),
        "{err}"
    );
    // Reading beside the writer works, as the message says.
    ok(&run(&["stats", "--store", s])?);
    drop(writer);
    Ok(())
}

#[test]
fn a_missing_query_file_is_named_once() -> Result {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("store");
    let s = path.to_str().ok_or("path")?;
    let input = dir.path().join("pages.txt");
    std::fs::write(&input, "one page about rivers and bridges of the north\n")?;
    ok(&run(&[
        "load",
        input.to_str().ok_or("path")?,
        "--store",
        s,
        "--quiet",
    ])?);
    let out = run(&["query", "--store", s, "--file", "nosuch.html"])?;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
    assert!(err.contains("nosuch.html"), "{err}");
    Ok(())
}

#[test]
fn counts_and_bad_json_are_reported_as_they_are() -> Result {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("store");
    let s = path.to_str().ok_or("path")?;
    let input = dir.path().join("docs.jsonl");
    std::fs::write(
        &input,
        "{\"text\": \"one page about rivers and bridges of the north\"}\n{\"text\": \"broken\n",
    )?;
    let i = input.to_str().ok_or("path")?;
    let out = run(&["load", i, "--store", s, "--quiet"])?;
    let (stdout, err) = (ok(&out), stderr(&out));
    assert!(stdout.contains("loaded 1 document in "), "{stdout}");
    assert!(stdout.contains("holds 1 document (was 0)"), "{stdout}");
    assert!(stdout.contains("1 malformed JSON"), "{stdout}");
    assert!(
        err.contains("docs.jsonl:line 2") && err.contains("not a JSON value"),
        "{err}"
    );

    // A limit says how many matched and how many are shown.
    let out = run(&[
        "query",
        "--store",
        s,
        "--text",
        "one page about rivers and bridges of the north",
        "-k",
        "64",
        "--limit",
        "0",
    ])?;
    assert!(ok(&out).is_empty());
    let err = stderr(&out);
    assert!(
        err.contains("1 match within distance 64 (showing the first 0)"),
        "{err}"
    );
    Ok(())
}

/// 1,000 random fingerprints are not "skewed": `stats` compares the most crowded block value
/// with what random fingerprints of as many documents give.
#[test]
fn stats_of_random_fingerprints_show_no_skew() -> Result {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("store");
    let s = path.to_str().ok_or("path")?;
    let input = dir.path().join("fps.jsonl");
    let mut state = 7u64;
    let lines: Vec<String> = (0..1000)
        .map(|id| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            format!("{{\"id\": {id}, \"fingerprint\": \"{z:016x}\"}}")
        })
        .collect();
    std::fs::write(&input, lines.join("\n"))?;
    ok(&run(&[
        "load",
        input.to_str().ok_or("path")?,
        "--store",
        s,
        "--quiet",
    ])?);
    let out = ok(&run(&["stats", "--store", s, "--json"])?);
    let v: serde_json::Value = serde_json::from_str(&out)?;
    for block in v["blocks"].as_array().ok_or("blocks")? {
        let skew = block["skew"].as_f64().ok_or("skew")?;
        assert!(skew <= 2.0, "{block}");
        assert_eq!(block["random_max"], 2, "{block}");
    }
    Ok(())
}

/// Copies the store of format `version` kept under `tests/fixtures/` to `to`.
fn fixture(version: u32, to: &std::path::Path) -> Result {
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/fixtures/format-v{version}"));
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        std::fs::copy(entry.path(), to.join(entry.file_name()))?;
    }
    Ok(())
}

/// The command lines between backticks in `message` that start with `simhash-store upgrade`,
/// split into arguments (after the command's name).
fn upgrade_commands(message: &str) -> Vec<Vec<String>> {
    message
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|quoted| quoted.strip_prefix("simhash-store "))
        .filter(|args| args.starts_with("upgrade "))
        .map(|args| args.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// A write to a store of an older format names the `upgrade` command lines that convert it,
/// and each of them, run as given, works.
#[test]
fn a_write_to_an_old_format_store_names_upgrade_commands_that_work() -> Result {
    let dir = tempfile::tempdir()?;
    let old = dir.path().join("v8.db");
    fixture(8, &old)?;
    let o = old.to_str().ok_or("path")?;
    let out = run(&["remove", "--store", o, "1"])?;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("Store::upgrade"), "{err}");
    let commands = upgrade_commands(&err);
    assert_eq!(commands.len(), 2, "{err}");
    // The library's message names the same commands.
    let store = Store::open(&old)?;
    let library = store
        .remove(1)
        .err()
        .ok_or("removed from a store of format 8")?;
    assert_eq!(
        upgrade_commands(&library.to_string()),
        commands,
        "{library}"
    );
    drop(store);
    for args in commands {
        // A fresh copy for each, the new store's directory where the message says NEW_DIR.
        let copy = dir.path().join("copy.db");
        let _ = std::fs::remove_dir_all(&copy);
        fixture(8, &copy)?;
        let new = dir.path().join("new.db");
        let _ = std::fs::remove_dir_all(&new);
        let args: Vec<String> = args
            .iter()
            .map(|a| match a.as_str() {
                "NEW_DIR" => new.display().to_string(),
                _ if a == o => copy.display().to_string(),
                _ => a.clone(),
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&args)?;
        ok(&out);
        let upgraded = if args.contains(&"--in-place") {
            &copy
        } else {
            &new
        };
        assert_eq!(
            Store::open(upgraded)?.format_version(),
            simhash_store::upgrade::FORMAT_VERSION,
            "{args:?}"
        );
    }
    Ok(())
}
