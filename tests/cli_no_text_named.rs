//! A document that ends with no text to fingerprint is named, with why, in `load`'s summary
//! and in `load --json` (at most 20, with the count of all); binary data and a GBK page behind
//! a false UTF-8 declaration are read as what they are.
#![cfg(feature = "cli")]

mod common;

use std::path::Path;

use common::cli::{ok, run, Result};

const ARTICLE: &str = "Ferries stayed in port for two days as the storm closed the harbour \
and the coast guard warned boats to keep clear of the northern channel until the wind eased.";

fn path(p: &Path) -> Result<&str> {
    Ok(p.to_str().ok_or("path")?)
}

/// Pages and lines with no text, one of each kind, beside documents with text.
fn inputs(dir: &Path) -> Result {
    std::fs::create_dir(dir.join("pages"))?;
    // Only navigation and a footer: main-text extraction drops all of it.
    std::fs::write(
        dir.join("pages/chrome.html"),
        "<html><body><nav><a href=/>Home</a> <a href=/news>News</a></nav>\
         <footer>Example Site, 1 Example Street</footer></body></html>",
    )?;
    std::fs::write(dir.join("pages/blank.html"), "<html><body>  </body></html>")?;
    // The reproduction: the main content inside an `ad-free` wrapper is the text.
    let paragraph = ARTICLE.repeat(2);
    std::fs::write(
        dir.join("pages/kept.html"),
        format!("<html><body><div class=\"ad-free\"><div role=\"main\"><p>{}</p></div></div></body></html>", &paragraph[..220]),
    )?;
    std::fs::write(
        dir.join("lines.txt"),
        format!("{ARTICLE}\n,,, ... !!!\n{ARTICLE} Again.\nthe of and\n"),
    )?;
    Ok(())
}

#[test]
fn documents_with_no_text_are_named() -> Result {
    let dir = tempfile::tempdir()?;
    inputs(dir.path())?;
    let pages = dir.path().join("pages");
    let lines = dir.path().join("lines.txt");
    let store = dir.path().join("store");

    let out = run(&["load", path(&pages)?, "--store", path(&store)?, "--quiet"])?;
    let stdout = ok(&out);
    assert!(
        stdout.contains("1 document") && stdout.contains("2 with no text to fingerprint"),
        "{stdout}"
    );
    let chrome = pages.join("chrome.html");
    assert!(
        stdout.contains(&format!(
            "no text to fingerprint: {}:whole file: main-text extraction dropped all",
            chrome.display()
        )) && stdout.contains("--keep-boilerplate keeps them"),
        "{stdout}"
    );
    let blank = pages.join("blank.html");
    assert!(
        stdout.contains(&format!(
            "no text to fingerprint: {}:whole file: no text",
            blank.display()
        )),
        "{stdout}"
    );

    // Lines with only punctuation or stop words are named by line, in JSON too.
    let out = run(&[
        "load",
        path(&lines)?,
        "--format",
        "lines",
        "--store",
        path(&store)?,
        "--json",
        "--quiet",
    ])?;
    let summary: serde_json::Value = serde_json::from_str(&ok(&out))?;
    assert_eq!(summary["loaded"], 2, "{summary}");
    assert_eq!(summary["empty"], 2, "{summary}");
    let named: Vec<(String, String)> = summary["empty_documents"]
        .as_array()
        .ok_or("empty_documents")?
        .iter()
        .map(|d| {
            (
                d["source"].as_str().unwrap_or_default().to_string(),
                d["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let at = |line: u64| format!("{}:line {line}", lines.display());
    let reason = "only punctuation and stop words".to_string();
    assert_eq!(named, [(at(2), reason.clone()), (at(4), reason)]);

    // `fingerprint` names them on standard error.
    let out = run(&["fingerprint", path(&lines)?, "--format", "lines", "--quiet"])?;
    assert_eq!(ok(&out).lines().count(), 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "no text to fingerprint: {}: only punctuation and stop words",
            at(4)
        )),
        "{stderr}"
    );
    Ok(())
}

#[test]
fn at_most_twenty_are_named_with_the_count_of_all() -> Result {
    let dir = tempfile::tempdir()?;
    let lines = dir.path().join("lines.txt");
    let mut text = String::new();
    for i in 0..25 {
        text.push_str(&format!("{ARTICLE} {i}\n...\n"));
    }
    std::fs::write(&lines, text)?;
    let store = dir.path().join("store");
    let args = [
        "load",
        path(&lines)?,
        "--format",
        "lines",
        "--store",
        path(&store)?,
        "--quiet",
    ];
    let stdout = ok(&run(&args)?);
    let named = stdout
        .lines()
        .filter(|l| l.contains("no text to fingerprint: ") && l.contains(":line "))
        .count();
    assert_eq!(named, 20, "{stdout}");
    assert!(
        stdout.contains("25 with no text to fingerprint")
            && stdout.contains("no text to fingerprint: 5 more (the first 20 are named)"),
        "{stdout}"
    );
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let summary: serde_json::Value = serde_json::from_str(&ok(&run(&json_args)?))?;
    assert_eq!(summary["empty"], 25, "{summary}");
    let named = summary["empty_documents"]
        .as_array()
        .ok_or("empty_documents")?;
    assert_eq!(named.len(), 20, "{summary}");
    assert_eq!(
        named[0]["source"],
        format!("{}:line 2", lines.display()),
        "{summary}"
    );
    Ok(())
}

/// A WARC record and an HTML file that declare UTF-8 for a GBK body are loaded as GBK; a file
/// of bytes 0 to 255 is a `binary` bad record, named, and not a document.
#[test]
fn false_declarations_and_binary_data() -> Result {
    let dir = tempfile::tempdir()?;
    let article =
        "气象台预计，周二上午起城市北部将有大雨，请市民注意出行安全，地铁和公交将增加班次。";
    let gbk = |s: &str| encoding_rs::GBK.encode(s).0.into_owned();
    let input = dir.path().join("in");
    std::fs::create_dir(&input)?;
    std::fs::write(
        input.join("page.html"),
        gbk(&format!(
            "<html><head><meta charset=\"utf-8\"></head><body><p>{article}</p></body></html>"
        )),
    )?;
    let mut http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n".to_vec();
    http.extend(gbk(&format!("<p>{article}</p>")));
    let mut warc = format!(
        "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: https://news.example/rain\r\nContent-Length: {}\r\n\r\n",
        http.len()
    )
    .into_bytes();
    warc.extend(http);
    warc.extend_from_slice(b"\r\n\r\n");
    std::fs::write(input.join("crawl.warc"), warc)?;
    let ramp: Vec<u8> = (0..=255u8).cycle().take(256 * 40).collect();
    std::fs::write(input.join("ramp.txt"), ramp)?;

    let store = dir.path().join("store");
    let out = run(&["load", path(&input)?, "--store", path(&store)?, "--json"])?;
    let summary: serde_json::Value = serde_json::from_str(&ok(&out))?;
    assert_eq!(summary["loaded"], 2, "{summary}");
    assert_eq!(summary["bad_records"]["binary"], 1, "{summary}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "bad record: {}:whole file: binary: binary data, not text",
            input.join("ramp.txt").display()
        )),
        "{stderr}"
    );
    // Both Chinese documents are the same text: one a duplicate of the other.
    let out = run(&[
        "query",
        "--store",
        path(&store)?,
        "--text",
        article,
        "-k",
        "0",
    ])?;
    let hits = ok(&out);
    assert!(
        hits.contains("https://news.example/rain") && hits.contains("page.html"),
        "{hits}"
    );
    Ok(())
}
