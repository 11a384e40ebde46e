//! Folders of files, one document per line, and text encodings.
#![cfg(feature = "readers")]

use simhash_store::readers::{BadRecordKind, Format, Position, ReaderOptions};
use simhash_store::{read_input, Record};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

fn key(r: &Record) -> String {
    r.key.clone().unwrap_or_default()
}

#[test]
fn a_folder_is_read_recursively_in_name_order() -> Result {
    let dir = tempfile::tempdir()?;
    let root = dir.path();
    std::fs::create_dir_all(root.join("sub/deeper"))?;
    std::fs::write(root.join("b.txt"), "plain text file")?;
    std::fs::write(
        root.join("a.html"),
        "<html><body><nav><a href=/>Home</a></nav><p>an html file</p></body></html>",
    )?;
    std::fs::write(root.join("sub/deeper/c.htm"), "<p>deep</p>")?;
    std::fs::write(
        root.join("sub/d.jsonl"),
        "{\"key\": \"j1\", \"text\": \"json in a folder\"}\n",
    )?;
    std::fs::write(root.join(".hidden.txt"), "skipped")?;
    let (gbk, _, _) = encoding_rs::GBK.encode("国标编码的纯文本文件");
    std::fs::write(root.join("sub/e.txt"), &gbk[..])?;
    std::fs::write(
        root.join("sub/f.txt"),
        [0x81u8, 0x30, 0xff, 0xff, 0xff, 0x00, 0xfe, 0xfe, 0xff, 0x80],
    )?;
    std::fs::write(root.join("zz-big.txt"), "y".repeat(300))?;

    let mut opts = ReaderOptions::default();
    opts.max_doc_bytes = 200;
    let items: Vec<_> = read_input(root, &opts)?.collect();
    let mut seen = Vec::new();
    for item in &items {
        match item {
            Ok(r) => match r.text(&opts) {
                Ok(t) => seen.push((key(r), t.unwrap_or_default().into_owned())),
                Err(bad) => seen.push((key(r), format!("bad: {}", bad.kind))),
            },
            Err(bad) => seen.push((
                bad.location.path.display().to_string(),
                format!("bad: {}", bad.kind),
            )),
        }
    }
    let p = |rel: &str| root.join(rel).display().to_string();
    assert_eq!(
        seen,
        vec![
            (p("a.html"), "an html file".to_string()),
            (p("b.txt"), "plain text file".to_string()),
            ("j1".to_string(), "json in a folder".to_string()),
            (p("sub/deeper/c.htm"), "deep".to_string()),
            (p("sub/e.txt"), "国标编码的纯文本文件".to_string()),
            (
                p("sub/f.txt"),
                format!("bad: {}", BadRecordKind::Undecodable)
            ),
            (p("zz-big.txt"), format!("bad: {}", BadRecordKind::TooLarge)),
        ]
    );
    Ok(())
}

#[test]
fn one_document_per_line() -> Result {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("titles.txt");
    std::fs::write(&path, "first title\r\n\n   \nsecond title\nthird")?;
    let mut opts = ReaderOptions::default();
    opts.format = Some(Format::Lines);
    let records: Vec<Record> = read_input(&path, &opts)?.collect::<std::result::Result<_, _>>()?;
    let got: Vec<_> = records
        .iter()
        .map(|r| {
            (
                key(r),
                r.location.position,
                r.text(&opts).unwrap().unwrap().into_owned(),
            )
        })
        .collect();
    let k = |n: u64| format!("{}:{n}", path.display());
    assert_eq!(
        got,
        vec![
            (k(1), Position::Line(1), "first title".to_string()),
            (k(4), Position::Line(4), "second title".to_string()),
            (k(5), Position::Line(5), "third".to_string()),
        ]
    );
    Ok(())
}

#[test]
fn a_missing_input_is_an_error_naming_it() -> Result {
    let dir = tempfile::tempdir()?;
    let missing = dir.path().join("nope.warc");
    let err = read_input(&missing, &ReaderOptions::default())
        .err()
        .ok_or("expected an error")?;
    assert!(err.to_string().contains("nope.warc"), "{err}");
    Ok(())
}
