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
