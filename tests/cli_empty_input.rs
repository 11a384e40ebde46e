//! An input that holds no document (an empty folder, a folder of hidden files, an empty
//! file) is named in a warning on standard error; the load still succeeds with the others.
#![cfg(feature = "cli")]

mod common;

use common::cli::{ok, run, Result};

#[test]
fn empty_inputs_are_named_in_a_warning() -> Result {
    let dir = tempfile::tempdir()?;
    let empty = dir.path().join("crawl");
    std::fs::create_dir(&empty)?;
    std::fs::write(
        empty.join(".hidden.html"),
        "<p>Not read: hidden files are skipped.</p>",
    )?;
    let blank = dir.path().join("blank.jsonl");
    std::fs::write(&blank, "")?;
    let pages = dir.path().join("pages");
    std::fs::create_dir(&pages)?;
    std::fs::write(
        pages.join("a.html"),
        "<html><body><p>Ferries stayed in port for two days as the storm closed the harbour.</p></body></html>",
    )?;
    let store = dir.path().join("store");
    let text = |p: &std::path::Path| p.to_str().map(str::to_owned).ok_or("path");
    let (empty_s, blank_s, pages_s, store_s) =
        (text(&empty)?, text(&blank)?, text(&pages)?, text(&store)?);

    let out = run(&["load", &empty_s, &pages_s, &blank_s, "--store", &store_s])?;
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "warning: no documents found in {empty_s} (a folder"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "warning: no documents found in {blank_s} (an empty input)"
        )),
        "{stderr}"
    );
    assert!(
        !stderr.contains(&format!("no documents found in {pages_s}")),
        "{stderr}"
    );

    // An input with documents alone gives no warning.
    let again = run(&["load", &pages_s, "--store", &store_s])?;
    ok(&again);
    assert!(
        !String::from_utf8_lossy(&again.stderr).contains("warning"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    Ok(())
}
