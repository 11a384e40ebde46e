//! The JSON Lines reader: configurable fields, exported fingerprints, and bad lines reported
//! with their line numbers while the others are read.
#![cfg(feature = "readers")]

use simhash_store::readers::{BadRecordKind, Body, Position, ReaderOptions};
use simhash_store::{read_input, Fingerprint};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

#[test]
fn good_and_bad_lines() -> Result {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("docs.jsonl");
    let mut lines: Vec<Vec<u8>> = vec![
        br#"{"id": 1, "url": "https://a.example/1", "text": "first text"}"#.to_vec(),
        b"".to_vec(),
        br#"{"key": "k2", "text": "second text", "other": [1, 2]}"#.to_vec(),
        br#"["not", "an", "object"]"#.to_vec(),
        br#"{"id": -4, "text": "negative id"}"#.to_vec(),
        br#"{"id": 5, "text": 42}"#.to_vec(),
        br#"{"id": 6, "body": "no text field"}"#.to_vec(),
        br#"{"id": 7, "text": "unterminated"#.to_vec(),
        [
            br#"{"id": 8, "text": ""#.as_slice(),
            &[0xff, 0xfe],
            br#""}"#,
        ]
        .concat(),
        format!(r#"{{"id": 9, "text": "{}"}}"#, "x".repeat(500)).into_bytes(),
        br#"{"id": 10, "key": "https://a.example/10", "fingerprint": "00000000000000ff"}"#.to_vec(),
        br#"{"id": 11, "fingerprint": "not hex"}"#.to_vec(),
    ];
    lines.push(b"".to_vec());
    std::fs::write(&path, lines.join(&b"\n"[..]))?;
    let mut opts = ReaderOptions::default();
    opts.max_doc_bytes = 200;
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for item in read_input(&path, &opts)? {
        match item {
            Ok(r) => good.push(r),
            Err(b) => bad.push(b),
        }
    }
    let summary: Vec<_> = good
        .iter()
        .map(|r| (r.id, r.key.clone(), r.location.position))
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                Some(1),
                Some("https://a.example/1".to_string()),
                Position::Line(1)
            ),
            (None, Some("k2".to_string()), Position::Line(3)),
            (
                Some(10),
                Some("https://a.example/10".to_string()),
                Position::Line(11)
            ),
        ]
    );
    assert_eq!(good[1].text(&opts).unwrap().as_deref(), Some("second text"));
    assert!(
        matches!(&good[2].body, Body::Exported(d) if d.fingerprint == Fingerprint(0xff)),
        "{:?}",
        good[2].body
    );
    let kinds: Vec<_> = bad.iter().map(|b| (b.location.position, b.kind)).collect();
    assert_eq!(
        kinds,
        vec![
            (Position::Line(4), BadRecordKind::WrongJsonType),
            (Position::Line(5), BadRecordKind::WrongJsonType),
            (Position::Line(6), BadRecordKind::WrongJsonType),
            (Position::Line(7), BadRecordKind::WrongJsonType),
            (Position::Line(8), BadRecordKind::MalformedJson),
            (Position::Line(9), BadRecordKind::Undecodable),
            (Position::Line(10), BadRecordKind::TooLarge),
            (Position::Line(12), BadRecordKind::WrongJsonType),
        ]
    );
    assert!(bad[3].message.contains("--text-field"), "{}", bad[3]);
    Ok(())
}

#[test]
fn configured_fields() -> Result {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("docs.ndjson");
    std::fs::write(
        &path,
        "{\"doc_id\": 3, \"link\": \"https://x.example\", \"content\": \"the body\"}\n",
    )?;
    let mut opts = ReaderOptions::default();
    opts.id_field = "doc_id".into();
    opts.key_fields = vec!["link".into()];
    opts.text_field = "content".into();
    let records: Vec<_> = read_input(&path, &opts)?.collect::<std::result::Result<_, _>>()?;
    assert_eq!(records.len(), 1);
    assert_eq!(
        (records[0].id, records[0].key.as_deref()),
        (Some(3), Some("https://x.example"))
    );
    assert_eq!(records[0].text(&opts)?.as_deref(), Some("the body"));
    Ok(())
}
