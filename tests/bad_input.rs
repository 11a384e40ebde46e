//! Bad input: a 200 MB document, 5 MB lines without spaces, NUL bytes, invalid UTF-8,
//! deeply nested and malformed HTML, and garbage in the store's own column families. Each
//! gives a fingerprint or a clear per-record error naming the record, never a panic, and
//! memory stays bounded: the large cases run in a child process whose peak resident memory
//! (`wait4`'s `ru_maxrss`) is checked.
//!
//! All data is generated here. Bounds are on memory, never on time.
#![cfg(feature = "cli")]

mod common;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::families::{ALL_FAMILIES, BLOCK_FAMILIES, DOCS_FAMILY, KEYS_FAMILY, META_FAMILY};
use common::Rng;
use simhash_store::readers::{html_to_text, BadRecordKind, Format, ReaderOptions};
use simhash_store::{read_input, Error, Fingerprint, Simhasher, Store};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

const MB: u64 = 1024 * 1024;
/// The size of the "200 MB document".
const HUGE: u64 = 200 * MB;
/// Set in a child process to the job it runs instead of its test.
const CHILD: &str = "SIMHASH_BAD_INPUT_CHILD";

// ---- generated text ----

/// A vocabulary of 4,000 made-up Latin words and one of Chinese characters.
fn latin_words() -> Vec<String> {
    let syllables = [
        "ka", "lo", "mi", "ter", "sun", "ba", "re", "dos", "vi", "nu", "pra", "el", "ost", "qui",
        "ran", "zel", "mo", "fa", "ti", "gor",
    ];
    let mut rng = Rng::new(1);
    (0..4000)
        .map(|_| {
            let n = 1 + rng.below(3) as usize;
            (0..n)
                .map(|_| syllables[rng.below(syllables.len() as u64) as usize])
                .collect()
        })
        .collect()
}

const HANZI: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可也\
    你能而子那得于着下自之年过发后作里用道行所然家种事成方多经么去法学如都同现当没动面起看定天\
    分还进好小部其些主样理心她本前开但因只从想实日军者意无力它与长把机十民第公此已工使情明性知全\
    三又关点正业外将两高间由问很最重并物手应战向头文体政美相见被利什二等产或新己制身果加西斯月话";

/// Writes about `bytes` bytes of text to `out`: words separated by spaces, with a Chinese
/// sentence every tenth word when `chinese`, and a newline only where `newlines` says.
fn write_text(out: &mut impl Write, bytes: u64, chinese: bool, newlines: bool) -> Result<u64> {
    let words = latin_words();
    let hanzi: Vec<char> = HANZI.chars().filter(|c| !c.is_whitespace()).collect();
    let mut rng = Rng::new(2);
    let mut written = 0u64;
    let mut chunk = String::with_capacity(1 << 16);
    while written < bytes {
        chunk.clear();
        for i in 0..1000 {
            if chinese && i % 10 == 9 {
                for _ in 0..12 {
                    chunk.push(hanzi[rng.below(hanzi.len() as u64) as usize]);
                }
                chunk.push('。');
            } else {
                chunk.push_str(&words[rng.below(words.len() as u64) as usize]);
                chunk.push(if newlines && i == 999 { '\n' } else { ' ' });
            }
        }
        out.write_all(chunk.as_bytes())?;
        written += chunk.len() as u64;
    }
    Ok(written)
}

fn text_of(bytes: u64, chinese: bool) -> Result<String> {
    let mut buf = Vec::with_capacity(bytes as usize + (1 << 16));
    write_text(&mut buf, bytes, chinese, false)?;
    Ok(String::from_utf8(buf)?)
}

// ---- child processes and their peak memory ----

/// What a child process did.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// Peak resident memory in MiB.
    peak_mib: u64,
}

/// Runs `cmd` to its end and measures its peak resident memory with `wait4`.
fn run_measured(cmd: &mut Command, dir: &Path) -> Result<Run> {
    let out_path = dir.join("child.stdout");
    let err_path = dir.join("child.stderr");
    let child = cmd
        .stdin(Stdio::null())
        .stdout(File::create(&out_path)?)
        .stderr(File::create(&err_path)?)
        .spawn()?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data, and `pid` is our own child, not yet waited for.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if waited != pid {
        return Err(format!("wait4 failed: {}", std::io::Error::last_os_error()).into());
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Ok(Run {
        code,
        stdout: std::fs::read_to_string(&out_path)?,
        stderr: std::fs::read_to_string(&err_path)?,
        // Linux reports kilobytes.
        peak_mib: usage.ru_maxrss as u64 / 1024,
    })
}

fn cli() -> Command {
    Command::new(env!("CARGO_BIN_EXE_simhash-store"))
}

/// Re-runs this test binary as a child that runs `job` (see [`child_job`]) in test `test`.
fn child(test: &str, job: &str) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, job);
    cmd
}

/// In a child process: runs the job named in [`CHILD`], prints its result and returns true.
fn child_job() -> Result<bool> {
    let Ok(job) = std::env::var(CHILD) else {
        return Ok(false);
    };
    let hasher = Simhasher::default();
    let text = match job.as_str() {
        "huge-mixed" => text_of(HUGE, true)?,
        "long-latin-word" => "abcdefghij".repeat(512 * 1024),
        "long-hanzi-run" => HANZI
            .chars()
            .filter(|c| !c.is_whitespace())
            .cycle()
            .take(5 * 1024 * 1024 / 3)
            .collect(),
        other => return Err(format!("unknown child job {other}").into()),
    };
    let (fp, features) = hasher.fingerprint_with_count(&text)?;
    println!("fingerprint {fp} features {features} bytes {}", text.len());
    Ok(true)
}

fn parse_child(run: &Run) -> Result<(String, u64)> {
    let at = run
        .stdout
        .find("fingerprint ")
        .ok_or_else(|| format!("no result from the child: {}{}", run.stdout, run.stderr))?;
    let parts: Vec<&str> = run.stdout[at..].split_whitespace().take(4).collect();
    Ok((parts[1].to_string(), parts[3].parse()?))
}

// ---- a 200 MB document ----

/// Fingerprinting a 200 MB text directly (no reader limit applies) works, and the process
/// peaks at the text plus a bounded amount: the fingerprinter works through the text one
/// piece at a time.
#[test]
fn simhasher_fingerprints_a_200_mb_document_in_bounded_memory() -> Result {
    if child_job()? {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let run = run_measured(
        &mut child(
            "simhasher_fingerprints_a_200_mb_document_in_bounded_memory",
            "huge-mixed",
        ),
        dir.path(),
    )?;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let (_, features) = parse_child(&run)?;
    assert!(features > 10_000_000, "{features} features");
    eprintln!("200 MB document: peak {} MiB", run.peak_mib);
    // Measured: 245 MiB, the text (200 MiB) and about 45 MiB for the process, jieba's
    // dictionary and the work on one piece (it was 4.4 GiB, 22 times the text, when a token
    // list, a feature map and a hash list were sized from the whole text). Any memory that
    // grows with the text breaks this bound.
    assert!(
        run.peak_mib < HUGE / MB + 100,
        "fingerprinting 200 MB peaked at {} MiB",
        run.peak_mib
    );
    Ok(())
}

fn json_summary(run: &Run) -> Result<serde_json::Value> {
    serde_json::from_str(&run.stdout)
        .map_err(|e| format!("not a JSON summary ({e}): {}\n{}", run.stdout, run.stderr).into())
}

/// `load` of a 200 MB text file, and of a JSON Lines file whose first record is 200 MB:
/// the big record is a "too large" bad record naming the file (and line), the others load,
/// and the process never holds the big record (peak far below 200 MB).
#[test]
fn load_skips_a_200_mb_record_without_holding_it() -> Result {
    let dir = tempfile::tempdir()?;
    let text_path = dir.path().join("huge.txt");
    let mut out = BufWriter::new(File::create(&text_path)?);
    write_text(&mut out, HUGE, true, true)?;
    out.flush()?;
    drop(out);

    let jsonl_path = dir.path().join("huge.jsonl");
    let mut out = BufWriter::new(File::create(&jsonl_path)?);
    out.write_all(b"{\"key\": \"huge\", \"text\": \"")?;
    write_text(&mut out, HUGE, true, false)?;
    out.write_all(
        b"\"}\n{\"key\": \"small\", \"text\": \"a small document after the huge one\"}\n",
    )?;
    out.flush()?;
    drop(out);

    for (input, position, loaded) in [(&text_path, "whole file", 0), (&jsonl_path, "line 1", 1)] {
        let store = dir.path().join(format!("store-{loaded}"));
        let run = run_measured(
            cli()
                .arg("load")
                .arg(input)
                .arg("--store")
                .arg(&store)
                .args(["--json", "-q"]),
            dir.path(),
        )?;
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let v = json_summary(&run)?;
        assert_eq!(v["loaded"].as_u64(), Some(loaded), "{v}");
        assert_eq!(v["bad_records"]["too large"].as_u64(), Some(1), "{v}");
        let expected = format!("{}:{position}: too large", input.display());
        assert!(run.stderr.contains(&expected), "{}", run.stderr);
        assert!(run.stderr.contains("--max-doc-bytes"), "{}", run.stderr);
        eprintln!("load {}: peak {} MiB", input.display(), run.peak_mib);
        assert!(
            run.peak_mib < 150,
            "loading {} peaked at {} MiB",
            input.display(),
            run.peak_mib
        );
    }
    Ok(())
}

// ---- 5 MB lines without spaces ----

/// One 5 MB Latin "word" and one 5 MB run of Chinese characters without punctuation: each
/// is fingerprinted, directly and through `load --format lines`, in bounded memory.
#[test]
fn five_mb_lines_without_spaces_are_fingerprinted() -> Result {
    if child_job()? {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let test = "five_mb_lines_without_spaces_are_fingerprinted";
    for job in ["long-latin-word", "long-hanzi-run"] {
        let run = run_measured(&mut child(test, job), dir.path())?;
        assert_eq!(run.code, Some(0), "{job}: {}", run.stderr);
        let (_, features) = parse_child(&run)?;
        assert!(features >= 1, "{job}: {features} features");
        eprintln!("{job}: peak {} MiB", run.peak_mib);
        assert!(run.peak_mib < 500, "{job} peaked at {} MiB", run.peak_mib);
    }

    let input = dir.path().join("long-lines.txt");
    let latin = "abcdefghij".repeat(512 * 1024);
    let hanzi: String = HANZI
        .chars()
        .filter(|c| !c.is_whitespace())
        .cycle()
        .take(5 * 1024 * 1024 / 3)
        .collect();
    std::fs::write(&input, format!("{latin}\n{hanzi}\n"))?;
    let store = dir.path().join("store");
    let run = run_measured(
        cli()
            .args(["load", "--format", "lines", "--json", "-q", "--store"])
            .arg(&store)
            .arg(&input),
        dir.path(),
    )?;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(json_summary(&run)?["loaded"].as_u64(), Some(2));
    eprintln!("load of two 5 MB lines: peak {} MiB", run.peak_mib);
    assert!(run.peak_mib < 600, "peaked at {} MiB", run.peak_mib);
    Ok(())
}

// ---- NUL bytes and invalid UTF-8 ----

/// The documents and the (kind, message) of the bad records of `path`.
/// The texts read and the bad records (kind, message).
type TextsAndBad = (Vec<String>, Vec<(BadRecordKind, String)>);

fn read_path(path: &Path, opts: &ReaderOptions) -> Result<TextsAndBad> {
    let (mut texts, mut bad) = (Vec::new(), Vec::new());
    for item in read_input(path, opts)? {
        match item.and_then(|r| r.text(opts).map(|t| t.map(|t| t.into_owned()))) {
            Ok(Some(text)) => texts.push(text),
            Ok(None) => {}
            Err(b) => bad.push((b.kind, b.to_string())),
        }
    }
    Ok((texts, bad))
}

#[test]
fn nul_bytes_are_separators_or_clear_errors() -> Result {
    let dir = tempfile::tempdir()?;
    let opts = ReaderOptions::default();
    let hasher = Simhasher::default();

    // Text: NUL separates words like any control character.
    let path = dir.path().join("nul.txt");
    std::fs::write(&path, b"rivers\0and\0bridges of the north\0")?;
    let (texts, bad) = read_path(&path, &opts)?;
    assert!(bad.is_empty(), "{bad:?}");
    assert_eq!(
        hasher.fingerprint(&texts[0])?,
        hasher.fingerprint("rivers and bridges of the north")?
    );

    // HTML: the parser drops NUL in text; in a tag name it is a replacement character.
    assert_eq!(
        html_to_text(
            b"<p>riv\0ers and\0 bridges</p><d\0iv>north</d\0iv>",
            None,
            false
        )?,
        "rivers and bridges\nnorth"
    );

    // JSON Lines: a raw NUL in a string is not JSON (reported with its line); an escaped one
    // is a character of the text.
    let path = dir.path().join("nul.jsonl");
    std::fs::write(
        &path,
        b"{\"text\": \"raw \0 nul\"}\n{\"text\": \"escaped \\u0000 nul\"}\n\0\0\0\n{\"text\": \"after\"}\n",
    )?;
    let (texts, bad) = read_path(&path, &opts)?;
    assert_eq!(texts, ["escaped \0 nul", "after"]);
    let kinds: Vec<_> = bad
        .iter()
        .map(|(k, m)| (*k, m.contains(":line ")))
        .collect();
    assert_eq!(
        kinds,
        [
            (BadRecordKind::MalformedJson, true),
            (BadRecordKind::MalformedJson, true)
        ],
        "{bad:?}"
    );

    // WARC: a run of NUL bytes between records is reported once, with its offset, and the
    // records around it are read; NUL in a header value and in the page are kept and dropped.
    let page = |uri: &str, body: &[u8]| -> Vec<u8> {
        let mut http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n".to_vec();
        http.extend_from_slice(body);
        let mut r = format!(
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\nContent-Length: {}\r\n\r\n",
            http.len()
        )
        .into_bytes();
        r.extend(http);
        r.extend_from_slice(b"\r\n\r\n");
        r
    };
    let first = page("https://a.example/1\0x", b"<p>first\0 page</p>");
    let garbage = vec![0u8; 5000];
    let last = page("https://a.example/2", b"<p>last page</p>");
    let path = dir.path().join("nul.warc");
    std::fs::write(&path, [first.clone(), garbage, last].concat())?;
    let (texts, bad) = read_path(&path, &opts)?;
    assert_eq!(texts, ["first page", "last page"]);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert_eq!(bad[0].0, BadRecordKind::MalformedHeader);
    assert!(
        bad[0].1.contains(&format!("offset {}", first.len())),
        "{}",
        bad[0].1
    );
    Ok(())
}

#[test]
fn invalid_utf8_is_decoded_or_reported_per_record() -> Result {
    let dir = tempfile::tempdir()?;
    // One document per line: the undecodable line is a bad record with its line number.
    let input = dir.path().join("mixed.txt");
    let mut bytes = b"a first line about rivers and bridges\n".to_vec();
    bytes.extend([0x80, 0xff, 0xfe, 0x81, 0xff, 0x80, b'\n']);
    bytes.extend(b"a last line about gardens and flowers\n");
    std::fs::write(&input, &bytes)?;
    let store = dir.path().join("store");
    let run = run_measured(
        cli()
            .args(["load", "--format", "lines", "--json", "-q", "--store"])
            .arg(&store)
            .arg(&input),
        dir.path(),
    )?;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let v = json_summary(&run)?;
    assert_eq!(v["loaded"].as_u64(), Some(2), "{v}");
    assert_eq!(v["bad_records"]["undecodable"].as_u64(), Some(1), "{v}");
    assert!(
        run.stderr
            .contains(&format!("{}:line 2: undecodable", input.display())),
        "{}",
        run.stderr
    );

    // A WARC header with invalid UTF-8: the record is read, the key decoded lossily.
    let mut warc =
        b"WARC/1.1\r\nWARC-Type: conversion\r\nWARC-Target-URI: https://a.example/\xff\xfe\r\n"
            .to_vec();
    warc.extend(b"Content-Length: 11\r\n\r\nhello world\r\n\r\n");
    let path = dir.path().join("bad-header.warc");
    std::fs::write(&path, warc)?;
    let records: Vec<_> = read_input(&path, &ReaderOptions::default())?.collect();
    assert_eq!(records.len(), 1);
    let record = records[0].as_ref().map_err(|b| b.to_string())?;
    assert_eq!(
        record.key.as_deref(),
        Some("https://a.example/\u{fffd}\u{fffd}")
    );
    Ok(())
}

// ---- hostile HTML ----

fn nested(depth: usize, inner: &str) -> String {
    format!("{}{inner}{}", "<div>".repeat(depth), "</div>".repeat(depth))
}

/// 100,000 nested `<div>`s, formatting elements that every paragraph leaves open, and
/// malformed markup: each gives its text.
#[test]
fn deep_and_malformed_html_give_their_text() -> Result {
    let article = "<p>Heavy rain is expected in the north of the city tomorrow.</p>";
    for main_text in [true, false] {
        assert_eq!(
            html_to_text(nested(100_000, article).as_bytes(), None, main_text)?,
            "Heavy rain is expected in the north of the city tomorrow."
        );
    }
    let reopened: String = (0..20_000)
        .map(|i| format!("<p>paragraph number {i} of the page<b id={i}></p>"))
        .collect();
    let text = html_to_text(reopened.as_bytes(), None, true)?;
    assert_eq!(text.lines().count(), 20_000);
    assert!(
        text.ends_with("paragraph number 19999 of the page"),
        "{}",
        &text[text.len() - 80..]
    );

    let cases: [(&str, &str); 7] = [
        (
            "<p>unclosed <b>bold <i>italic <p>next",
            "unclosed bold italic\nnext",
        ),
        ("<p class=\"x>broken attribute</p><p>after", ""),
        (
            "<a href=>empty</a> <img src=\"x\" alt=y z='\"'>text",
            "empty text",
        ),
        ("<div <div>odd name</div>", "odd name"),
        ("<p>before</p><script>var x = '<p>never closed", "before"),
        ("<p>before</p><!-- never closed <p>hidden", "before"),
        ("</p></div></span>stray ends<//>", "stray ends"),
    ];
    for (page, want) in cases {
        assert_eq!(html_to_text(page.as_bytes(), None, false)?, want, "{page}");
    }
    Ok(())
}

/// The same pages as files through `load`: every one is read, none is a bad record.
#[test]
fn load_reads_hostile_html_files() -> Result {
    let dir = tempfile::tempdir()?;
    let pages = dir.path().join("pages");
    std::fs::create_dir(&pages)?;
    let body =
        "<p>Trains in the north ran an hour late on Monday after a storm brought down trees.</p>";
    std::fs::write(pages.join("deep.html"), nested(100_000, body))?;
    std::fs::write(
        pages.join("unclosed.html"),
        format!(
            "{}{body}",
            "<div><span><b><ul><li><table><tr><td>".repeat(5_000)
        ),
    )?;
    std::fs::write(
        pages.join("script.html"),
        format!("{body}<script>document.write('<div>')"),
    )?;
    std::fs::write(
        pages.join("attributes.html"),
        format!("<div class='a b=\"c\" {body}"),
    )?;
    let store = dir.path().join("store");
    let run = run_measured(
        cli()
            .args(["load", "--json", "-q", "--store"])
            .arg(&store)
            .arg(&pages),
        dir.path(),
    )?;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let v = json_summary(&run)?;
    // The unterminated attribute swallows the page: no text, counted as empty.
    assert_eq!(
        (v["loaded"].as_u64(), v["empty"].as_u64()),
        (Some(3), Some(1)),
        "{v}"
    );
    assert_eq!(v["bad_records"], serde_json::json!({}), "{v}");
    let store = Store::open(&store)?;
    let deep = store
        .id_for_key(&pages.join("deep.html").display().to_string())?
        .ok_or("deep.html not loaded")?;
    let script = store
        .id_for_key(&pages.join("script.html").display().to_string())?
        .ok_or("script.html not loaded")?;
    assert_eq!(
        store.get(deep)?,
        store.get(script)?,
        "same text, same fingerprint"
    );
    Ok(())
}

// ---- garbage in the store's own families ----

/// A store with three documents (ids 1..=3, keys `k1..k3`), closed; returns its path.
fn small_store(dir: &Path) -> Result<(PathBuf, Vec<Fingerprint>)> {
    let path = dir.join("store");
    let store = Store::open(&path)?;
    let fps: Vec<Fingerprint> = [
        0x0123_4567_89ab_cdefu64,
        0x0123_4567_89ab_cdee,
        0xfedc_ba98_7654_3210,
    ]
    .map(Fingerprint)
    .to_vec();
    for (i, fp) in fps.iter().enumerate() {
        let id = i as u64 + 1;
        store.insert_entry(simhash_store::Entry::new(id, *fp).with_key(format!("k{id}")))?;
    }
    drop(store);
    Ok((path, fps))
}

/// Writes `value` under `key` in `family` with RocksDB directly, as a damaged or hostile
/// store would hold it.
fn poke(path: &Path, family: &str, key: &[u8], value: &[u8]) -> Result {
    let db = rocksdb::DB::open_cf(&rocksdb::Options::default(), path, ALL_FAMILIES)?;
    let cf = db.cf_handle(family).ok_or("no such family")?;
    db.put_cf(cf, key, value)?;
    db.flush_cf(cf)?;
    Ok(())
}

fn is_decode(e: &Error, family: &str) -> bool {
    matches!(e, Error::Decode { column_family, .. } if *column_family == family)
}

/// A hostile document value: a key length prefix of 2^40 bytes.
fn hostile_document() -> Vec<u8> {
    let mut bytes = vec![0u8, 1, 253];
    bytes.extend_from_slice(&(1u64 << 40).to_le_bytes());
    bytes
}

#[test]
fn garbage_documents_give_decode_errors_not_panics() -> Result {
    for (name, value) in [
        (
            "random bytes",
            vec![
                0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ],
        ),
        ("a 2^40-byte length prefix", hostile_document()),
        ("empty", Vec::new()),
    ] {
        let dir = tempfile::tempdir()?;
        let (path, fps) = small_store(dir.path())?;
        poke(&path, DOCS_FAMILY, &1u64.to_be_bytes(), &value)?;
        let store = Store::open(&path)?;
        let e = store.get(1).expect_err(name);
        assert!(is_decode(&e, DOCS_FAMILY), "{name}: {e}");
        assert!(e.to_string().contains("0000000000000001"), "{name}: {e}");
        // A query that matches document 1 reads its key: the same error.
        let e = store.query(fps[0], 3).expect_err(name);
        assert!(is_decode(&e, DOCS_FAMILY), "{name}: {e}");
        // Others are unaffected.
        assert_eq!(store.get(3)?, Some(fps[2]), "{name}");
        assert!(store.documents()?.any(|d| d.is_err()), "{name}");
        let report = store.verify()?;
        assert!(!report.is_clean(), "{name}: {report:?}");
        assert!(report.to_string().contains("docs"), "{name}: {report}");
        drop(store);

        // The command line reports it and exits 1 (an error), not 101 (a panic).
        let out = cli()
            .args(["get", "--store"])
            .arg(&path)
            .arg("1")
            .output()?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains("column family `docs`"), "{name}: {stderr}");
        let out = cli().args(["export", "--store"]).arg(&path).output()?;
        assert_eq!(
            out.status.code(),
            Some(1),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

#[test]
fn garbage_keys_and_block_entries_give_decode_errors_not_panics() -> Result {
    // A `keys` value that is not an 8-byte id.
    let dir = tempfile::tempdir()?;
    let (path, _) = small_store(dir.path())?;
    poke(&path, KEYS_FAMILY, b"k2", b"\x01\x02\x03")?;
    let store = Store::open(&path)?;
    let e = store.id_for_key("k2").expect_err("bad keys value");
    assert!(is_decode(&e, KEYS_FAMILY), "{e}");
    assert!(!store.verify()?.is_clean());
    drop(store);

    // A block key that is not 16 bytes, in the range a query scans.
    let dir = tempfile::tempdir()?;
    let (path, fps) = small_store(dir.path())?;
    poke(&path, BLOCK_FAMILIES[0], &[0x01, 0x23, 0x45], b"")?;
    let store = Store::open(&path)?;
    let e = store.query(fps[0], 3).expect_err("bad block key");
    assert!(is_decode(&e, BLOCK_FAMILIES[0]), "{e}");
    assert!(e.to_string().contains("012345"), "{e}");
    // Document 3 lies in another range: its query is unaffected.
    assert_eq!(store.query(fps[2], 3)?.len(), 1);
    assert!(!store.verify()?.is_clean());
    drop(store);

    // A document key that is not an 8-byte id, sorting after every id.
    let dir = tempfile::tempdir()?;
    let (path, _) = small_store(dir.path())?;
    poke(&path, DOCS_FAMILY, &[0xff; 9], &[0; 4])?;
    let store = Store::open(&path)?;
    let e = store
        .next_id()
        .expect_err("a loader must not start from a garbage key");
    assert!(is_decode(&e, DOCS_FAMILY), "{e}");
    assert!(store.documents()?.any(|d| d.is_err()));
    assert!(!store.verify()?.is_clean());
    Ok(())
}

#[test]
fn garbage_metadata_fails_open_with_a_clear_error() -> Result {
    // A store records its settings by name (format 6); these use no built-in word list, so
    // only `validate` can refuse them.
    let mut hostile_config = simhash_store::SimhashConfig::default()
        .with_stop_words(false)
        .with_drop_boilerplate(false);
    hostile_config.word_shingles = 255;
    let hostile_config = serde_json::to_vec(&serde_json::json!({ "settings": hostile_config }))?;
    let missing_sst = bincode::serde::encode_to_vec(
        (
            7u64,
            vec![("docs".to_string(), "/nonexistent/000001.sst".to_string())],
        ),
        bincode::config::standard(),
    )?;
    let unknown_family = bincode::serde::encode_to_vec(
        (
            3u64,
            vec![("nope".to_string(), "/nonexistent/000001.sst".to_string())],
        ),
        bincode::config::standard(),
    )?;
    let cases: [(&str, &[u8], Vec<u8>, &str); 7] = [
        ("format_version", b"format_version", vec![1, 2, 3], "u32"),
        ("simhasher", b"simhasher", vec![0xff; 40], "settings record"),
        ("simhasher", b"simhasher", hostile_config, "shingle"),
        ("doc_count", b"doc_count", vec![7], "u64"),
        (
            "bulk_journal",
            b"bulk_journal",
            vec![0xff; 12],
            "bulk load journal",
        ),
        (
            "bulk_journal",
            b"bulk_journal",
            hostile_document(),
            "bulk load journal",
        ),
        (
            "bulk_journal",
            b"bulk_journal",
            unknown_family,
            "unknown column family `nope`",
        ),
    ];
    for (name, key, value, expected) in cases {
        let dir = tempfile::tempdir()?;
        let (path, _) = small_store(dir.path())?;
        poke(&path, META_FAMILY, key, &value)?;
        let e = Store::open(&path).expect_err(name);
        assert!(e.to_string().contains(expected), "{name}: {e}");
        let input = dir.path().join("one.jsonl");
        std::fs::write(&input, "{\"text\": \"one more document\"}\n")?;
        let out = cli()
            .args(["load", "-q", "--store"])
            .arg(&path)
            .arg(&input)
            .output()?;
        assert_eq!(
            out.status.code(),
            Some(1),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // A journal that names files that are gone opens (recovery skips ingested files) with
    // the count it records; `verify` reports the difference.
    let dir = tempfile::tempdir()?;
    let (path, _) = small_store(dir.path())?;
    poke(&path, META_FAMILY, b"bulk_journal", &missing_sst)?;
    let store = Store::open(&path)?;
    let report = store.verify()?;
    assert!(!report.is_clean(), "{report:?}");
    Ok(())
}

/// Format detection and the readers on a file of random bytes: bad records or documents,
/// never a panic, whatever format is forced.
#[test]
fn random_bytes_in_every_format() -> Result {
    let dir = tempfile::tempdir()?;
    let mut rng = Rng::new(9);
    let bytes: Vec<u8> = (0..200_000).map(|_| rng.next_u64() as u8).collect();
    let path = dir.path().join("random.bin");
    std::fs::write(&path, &bytes)?;
    for format in [
        None,
        Some(Format::Warc),
        Some(Format::Jsonl),
        Some(Format::Html),
        Some(Format::Text),
        Some(Format::Lines),
    ] {
        let mut opts = ReaderOptions::default();
        opts.format = format;
        let (texts, bad) = read_path(&path, &opts)?;
        assert!(
            !texts.is_empty() || !bad.is_empty(),
            "{format:?}: nothing read and nothing reported"
        );
    }
    Ok(())
}
