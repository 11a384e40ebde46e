//! The WARC/WET reader: record types, gzip members, and every kind of bad record, each
//! reported with its offset while the records around it are still read.
#![cfg(feature = "readers")]

use std::io::Write;
use std::path::Path;

use flate2::write::GzEncoder;
use flate2::Compression;
use simhash_store::readers::{BadRecord, BadRecordKind, Body, Position, ReaderOptions, Skipped};
use simhash_store::{read_input, Record};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

fn record(kind: &str, uri: Option<&str>, content_type: &str, block: &[u8]) -> Vec<u8> {
    let mut r = format!("WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:uuid:1>\r\n");
    if let Some(uri) = uri {
        r.push_str(&format!("WARC-Target-URI: {uri}\r\n"));
    }
    r.push_str(&format!(
        "Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        block.len()
    ));
    let mut bytes = r.into_bytes();
    bytes.extend_from_slice(block);
    bytes.extend_from_slice(b"\r\n\r\n");
    bytes
}

fn response(uri: &str, status: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut http =
        format!("HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n\r\n").into_bytes();
    http.extend_from_slice(body);
    record(
        "response",
        Some(uri),
        "application/http; msgtype=response",
        &http,
    )
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// The documents and bad records of `path`; records that hold no document are left out.
fn read_all(path: &Path, opts: &ReaderOptions) -> Result<(Vec<Record>, Vec<BadRecord>)> {
    let (good, bad, _) = read_with_skipped(path, opts)?;
    Ok((good, bad))
}

/// The documents, bad records and (key, reason) of the records that hold no document.
/// The records read, the bad ones, and the skipped ones with their keys.
type ReadOutcome = (Vec<Record>, Vec<BadRecord>, Vec<(String, Skipped)>);

fn read_with_skipped(path: &Path, opts: &ReaderOptions) -> Result<ReadOutcome> {
    let (mut good, mut bad, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
    for item in read_input(path, opts)? {
        match item {
            Ok(Record {
                body: Body::Skipped(why),
                key,
                ..
            }) => skipped.push((key.unwrap_or_default(), why)),
            Ok(r) => good.push(r),
            Err(b) => bad.push(b),
        }
    }
    Ok((good, bad, skipped))
}

fn texts(records: &[Record], opts: &ReaderOptions) -> Vec<(String, String)> {
    records
        .iter()
        .map(|r| {
            (
                r.key.clone().unwrap_or_default(),
                r.text(opts).unwrap().unwrap_or_default().into_owned(),
            )
        })
        .collect()
}

/// A crawl's usual records: only the 2xx HTML responses and WET conversions are documents.
fn sample() -> Vec<Vec<u8>> {
    vec![
        record(
            "warcinfo",
            None,
            "application/warc-fields",
            b"software: test\r\n",
        ),
        record(
            "request",
            Some("https://a.example/1"),
            "application/http; msgtype=request",
            b"GET /1 HTTP/1.1\r\n\r\n",
        ),
        response(
            "https://a.example/1",
            "200 OK",
            "text/html; charset=utf-8",
            b"<html><body><nav><a href=/>Home</a></nav><p>First page text.</p></body></html>",
        ),
        response(
            "https://a.example/old",
            "301 Moved Permanently",
            "text/html",
            b"<a href=/>moved</a>",
        ),
        response(
            "https://a.example/logo.png",
            "200 OK",
            "image/png",
            b"\x89PNG\r\n",
        ),
        record(
            "conversion",
            Some("https://b.example/2"),
            "text/plain",
            "Second page, 纯文本.".as_bytes(),
        ),
        record(
            "metadata",
            Some("https://a.example/1"),
            "application/warc-fields",
            b"fetchTimeMs: 12\r\n",
        ),
    ]
}

#[test]
fn plain_and_multi_member_gzip_read_the_same() -> Result {
    let dir = tempfile::tempdir()?;
    let opts = ReaderOptions::default();
    let plain = dir.path().join("crawl.warc");
    std::fs::write(&plain, sample().concat())?;
    let gzipped = dir.path().join("crawl.warc.gz");
    std::fs::write(
        &gzipped,
        sample().iter().map(|r| gz(r)).collect::<Vec<_>>().concat(),
    )?;
    let expected = vec![
        (
            "https://a.example/1".to_string(),
            "First page text.".to_string(),
        ),
        (
            "https://b.example/2".to_string(),
            "Second page, 纯文本.".to_string(),
        ),
    ];
    for path in [&plain, &gzipped] {
        let (good, bad) = read_all(path, &opts)?;
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(texts(&good, &opts), expected, "{}", path.display());
    }
    // A gzipped file is recognised by its magic bytes whatever its name.
    let renamed = dir.path().join("crawl.bin");
    std::fs::copy(&gzipped, &renamed)?;
    assert_eq!(texts(&read_all(&renamed, &opts)?.0, &opts), expected);
    Ok(())
}

#[test]
fn truncated_gzip_keeps_the_records_before_it() -> Result {
    let dir = tempfile::tempdir()?;
    let opts = ReaderOptions::default();
    let mut bytes: Vec<u8> = sample().iter().map(|r| gz(r)).collect::<Vec<_>>().concat();
    let big = "<p>".to_string() + &"long text ".repeat(5000) + "</p>";
    bytes.extend(gz(&response(
        "https://c.example/3",
        "200 OK",
        "text/html",
        big.as_bytes(),
    )));
    bytes.truncate(bytes.len() - 20);
    let path = dir.path().join("cut.warc.gz");
    std::fs::write(&path, bytes)?;
    let (good, bad) = read_all(&path, &opts)?;
    assert_eq!(good.len(), 2);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert_eq!(bad[0].kind, BadRecordKind::Truncated);
    assert_eq!(bad[0].location.path.as_ref(), path.as_path());
    Ok(())
}

#[test]
fn truncated_plain_file_names_the_record_offset() -> Result {
    let dir = tempfile::tempdir()?;
    let opts = ReaderOptions::default();
    let records = sample();
    let offset: usize = records.iter().map(Vec::len).sum();
    let mut bytes = records.concat();
    let last = response(
        "https://c.example/3",
        "200 OK",
        "text/html",
        b"<p>cut short</p>",
    );
    bytes.extend_from_slice(&last[..last.len() - 10]);
    let path = dir.path().join("cut.warc");
    std::fs::write(&path, bytes)?;
    let (good, bad) = read_all(&path, &opts)?;
    assert_eq!(good.len(), 2);
    assert_eq!(bad.len(), 1);
    assert_eq!(
        (bad[0].kind, bad[0].location.position),
        (BadRecordKind::Truncated, Position::Offset(offset as u64))
    );
    assert!(
        bad[0].to_string().contains(&format!("offset {offset}")),
        "{}",
        bad[0]
    );
    Ok(())
}

#[test]
fn malformed_headers_are_skipped_and_reading_resumes() -> Result {
    let dir = tempfile::tempdir()?;
    let opts = ReaderOptions::default();
    let first = response("https://a.example/1", "200 OK", "text/html", b"<p>one</p>");
    let no_length =
        b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://x\r\n\r\n<p>lost</p>\r\n\r\n"
            .to_vec();
    let garbage = b"this is not a WARC record\r\nnor this\r\n".to_vec();
    let no_colon = b"WARC/1.0\r\nWARC-Type response\r\n\r\n".to_vec();
    let bad_http = record(
        "response",
        Some("https://y"),
        "application/http",
        b"<p>no status line</p>",
    );
    let last = response("https://a.example/2", "200 OK", "text/html", b"<p>two</p>");
    let parts = [first, no_length, garbage, no_colon, bad_http, last];
    let offsets: Vec<u64> = parts
        .iter()
        .scan(0u64, |at, p| {
            let start = *at;
            *at += p.len() as u64;
            Some(start)
        })
        .collect();
    let path = dir.path().join("bad.warc");
    std::fs::write(&path, parts.concat())?;
    let (good, bad) = read_all(&path, &opts)?;
    assert_eq!(
        texts(&good, &opts),
        vec![
            ("https://a.example/1".into(), "one".into()),
            ("https://a.example/2".into(), "two".into())
        ]
    );
    let found: Vec<(BadRecordKind, Position)> =
        bad.iter().map(|b| (b.kind, b.location.position)).collect();
    assert_eq!(
        found,
        vec![
            (BadRecordKind::MalformedHeader, Position::Offset(offsets[1])),
            (BadRecordKind::MalformedHeader, Position::Offset(offsets[3])),
            (BadRecordKind::MalformedHeader, Position::Offset(offsets[4])),
        ]
    );
    Ok(())
}

#[test]
fn oversized_records_are_skipped_without_loading_them() -> Result {
    let dir = tempfile::tempdir()?;
    let mut opts = ReaderOptions::default();
    opts.max_doc_bytes = 1000;
    let big = "<p>".to_string() + &"x".repeat(2000) + "</p>";
    let parts = [
        response(
            "https://a.example/big",
            "200 OK",
            "text/html",
            big.as_bytes(),
        ),
        response(
            "https://a.example/small",
            "200 OK",
            "text/html",
            b"<p>small page</p>",
        ),
    ];
    let path = dir.path().join("big.warc");
    std::fs::write(&path, parts.concat())?;
    let (good, bad) = read_all(&path, &opts)?;
    assert_eq!(
        texts(&good, &opts),
        vec![("https://a.example/small".into(), "small page".into())]
    );
    assert_eq!(bad.len(), 1);
    assert_eq!(
        (bad[0].kind, bad[0].location.position),
        (BadRecordKind::TooLarge, Position::Offset(0))
    );
    Ok(())
}

#[test]
fn declared_charsets_are_honoured() -> Result {
    let dir = tempfile::tempdir()?;
    let opts = ReaderOptions::default();
    let (gbk, _, _) =
        encoding_rs::GBK.encode("<html><body><p>近似重复网页检测用于搜索引擎。</p></body></html>");
    let (meta_only, _, _) = encoding_rs::GB18030.encode("<html><head><meta charset=\"gb18030\"></head><body><p>元标签声明的编码。</p></body></html>");
    let (latin, _, _) = encoding_rs::WINDOWS_1252.encode("<p>Café crème brûlée</p>");
    let undecodable: Vec<u8> = [b"<p>".as_slice(), &[0xff; 50], b"</p>"].concat();
    let parts = [
        response(
            "https://zh.example/1",
            "200 OK",
            "text/html; charset=GBK",
            &gbk,
        ),
        response("https://zh.example/2", "200 OK", "text/html", &meta_only),
        response(
            "https://fr.example/3",
            "200 OK",
            "text/html; charset=iso-8859-1",
            &latin,
        ),
        response(
            "https://bad.example/4",
            "200 OK",
            "text/html; charset=utf-8",
            &undecodable,
        ),
    ];
    let path = dir.path().join("charsets.warc");
    std::fs::write(&path, parts.concat())?;
    let (good, bad) = read_all(&path, &opts)?;
    assert!(bad.is_empty());
    let decoded: Vec<_> = good
        .iter()
        .take(3)
        .map(|r| r.text(&opts).unwrap().unwrap().into_owned())
        .collect();
    assert_eq!(
        decoded,
        [
            "近似重复网页检测用于搜索引擎。",
            "元标签声明的编码。",
            "Café crème brûlée"
        ]
    );
    // Undecodable text is found when the text is extracted, with the record's offset.
    let err = good[3].text(&opts).unwrap_err();
    assert_eq!(err.kind, BadRecordKind::Undecodable);
    let offset: usize = parts[..3].iter().map(Vec::len).sum();
    assert_eq!(err.location.position, Position::Offset(offset as u64));
    Ok(())
}

#[test]
fn responses_that_are_not_documents_are_yielded_with_their_reason() -> Result {
    let dir = tempfile::tempdir()?;
    let opts = ReaderOptions::default();
    let mut parts = sample();
    parts.push(response(
        "https://a.example/missing",
        "404 Not Found",
        "text/html",
        b"<p>not here</p>",
    ));
    parts.push(record(
        "resource",
        Some("https://a.example/report.pdf"),
        "application/pdf",
        b"%PDF-1.4",
    ));
    let path = dir.path().join("crawl.warc");
    std::fs::write(&path, parts.concat())?;
    let (good, bad, skipped) = read_with_skipped(&path, &opts)?;
    assert!(bad.is_empty(), "{bad:?}");
    assert_eq!(good.len(), 2);
    assert_eq!(
        skipped,
        vec![
            (
                "https://a.example/old".to_string(),
                Skipped::HttpStatus(301)
            ),
            (
                "https://a.example/logo.png".to_string(),
                Skipped::NotText {
                    content_type: "image/png".into()
                }
            ),
            (
                "https://a.example/missing".to_string(),
                Skipped::HttpStatus(404)
            ),
            (
                "https://a.example/report.pdf".to_string(),
                Skipped::NotText {
                    content_type: "application/pdf".into()
                }
            ),
        ]
    );
    Ok(())
}

/// `load` counts the responses that are not documents, by reason, in its summary.
#[cfg(feature = "cli")]
#[test]
fn load_summary_counts_responses_that_are_not_documents() -> Result {
    let dir = tempfile::tempdir()?;
    let mut parts = sample();
    parts.push(response(
        "https://a.example/missing",
        "404 Not Found",
        "text/html",
        b"<p>not here</p>",
    ));
    let input = dir.path().join("crawl.warc");
    std::fs::write(&input, parts.concat())?;
    let store = dir.path().join("store");
    let load = |json: bool| -> Result<std::process::Output> {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_simhash-store"));
        cmd.arg("load")
            .arg(&input)
            .arg("--store")
            .arg(&store)
            .arg("-q");
        if json {
            cmd.arg("--json");
        }
        Ok(cmd.output()?)
    };
    let out = load(true)?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(v["loaded"].as_u64(), Some(2), "{v}");
    assert_eq!(
        v["not_documents"],
        serde_json::json!({"not HTML": 1, "HTTP status not 2xx": 2}),
        "{v}"
    );
    let out = load(false)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "3 WARC responses that are not documents (2 HTTP status not 2xx, 1 not HTML)"
        ),
        "{stdout}"
    );
    Ok(())
}
