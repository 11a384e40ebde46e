//! Readers of what crawlers and data pipelines write: WARC and WET files (plain or gzipped),
//! HTML files, JSON Lines, text files and folders of them, and standard input.
//!
//! Every reader streams: memory stays bounded by the largest accepted document
//! ([`ReaderOptions::max_doc_bytes`]), whatever the size of the input. Each yields
//! `Result<Record, BadRecord>`: a bad record (an undecodable text, a malformed header, a
//! truncated gzip stream, a JSON value of the wrong type, a document over the size limit) names
//! the file and the line or byte offset, and the caller decides whether to count it and go on
//! or to stop. A record that holds no document (a WARC redirect, an image) comes as
//! [`Body::Skipped`] with the reason, so that it can be counted too.
//!
//! A [`Record`] keeps its content as read ([`Body`]); [`Record::text`] decodes it and, for
//! HTML, extracts the main text (see [`html_to_text`]). That split lets a caller read
//! sequentially and extract on all cores.
//!
//! ```
//! use simhash_store::read_input;
//! use simhash_store::readers::ReaderOptions;
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("docs.jsonl");
//! std::fs::write(&path, "{\"id\": 7, \"url\": \"https://example.com/a\", \"text\": \"hello world\"}\n[1]\n")?;
//! let opts = ReaderOptions::default();
//! let mut records = read_input(&path, &opts)?;
//! let first = records.next().unwrap().unwrap();
//! assert_eq!((first.id, first.key.as_deref()), (Some(7), Some("https://example.com/a")));
//! assert_eq!(first.text(&opts).unwrap().as_deref(), Some("hello world"));
//! let bad = records.next().unwrap().unwrap_err();
//! assert_eq!(bad.to_string(), format!("{}:line 2: wrong JSON type: expected an object, found an array", path.display()));
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! ```

mod export;
mod gzip;
mod html;
mod jsonl;
mod open_elements;
mod text;
mod warc;

use std::borrow::Cow;
use std::fmt;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};

pub use export::{ExportHeader, ExportedDocument};
pub use html::{decode_text, html_to_text};

/// The records of one input, in file order.
pub type Records = Box<dyn Iterator<Item = std::result::Result<Record, BadRecord>> + Send>;

/// One document read from an input.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Record {
    /// The external key: the `WARC-Target-URI`, the file path, `path:line` for one document
    /// per line, or the JSON key field.
    pub key: Option<String>,
    /// The id given by the input (JSON Lines only).
    pub id: Option<u64>,
    /// Where the record starts.
    pub location: Location,
    /// The content, as read.
    pub body: Body,
}

/// The content of a [`Record`] as read, before decoding and text extraction.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Body {
    /// Text that is already decoded (a JSON string).
    Text(String),
    /// Plain text in an undeclared encoding: UTF-8, or GB18030 when it is not UTF-8.
    Plain(Vec<u8>),
    /// An HTML page and the charset declared outside it (HTTP `Content-Type`), if any.
    Html {
        /// The raw page.
        bytes: Vec<u8>,
        /// The declared charset label, e.g. `gbk`.
        charset: Option<String>,
    },
    /// A document line of `simhash-store export`: a fingerprint computed before, with the
    /// text length and sketch the store kept; no text.
    Exported(ExportedDocument),
    /// The first line of `simhash-store export`: the settings the fingerprints after it were
    /// made with. It holds no document.
    ExportHeader(ExportHeader),
    /// A record of the input that holds no document, and why: a WARC response that is not
    /// HTML or not 2xx. It is yielded, without its content, so that a caller can count what
    /// was passed over; [`Record::text`] gives `None` for it.
    Skipped(Skipped),
}

/// Why a [`Body::Skipped`] record holds no document.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Skipped {
    /// A WARC response (or resource) whose content type is neither HTML nor, for a
    /// resource, plain text: an image, a PDF, a script.
    NotText {
        /// The declared content type, e.g. `image/png`.
        content_type: String,
    },
    /// A WARC response whose HTTP status is not 2xx: a redirect, a missing or failed page.
    HttpStatus(u16),
}

impl Skipped {
    /// A short name of the reason for summaries: `not HTML`, `HTTP status not 2xx`.
    pub fn reason(&self) -> &'static str {
        match self {
            Skipped::NotText { .. } => "not HTML",
            Skipped::HttpStatus(_) => "HTTP status not 2xx",
        }
    }
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skipped::NotText { content_type } => {
                write!(f, "content type `{content_type}` is not HTML")
            }
            Skipped::HttpStatus(status) => write!(f, "HTTP status {status}"),
        }
    }
}

impl Body {
    /// The size of the content in bytes (0 for a fingerprint or a skipped record).
    pub fn len(&self) -> usize {
        match self {
            Body::Text(s) => s.len(),
            Body::Plain(b) | Body::Html { bytes: b, .. } => b.len(),
            Body::Exported(_) | Body::ExportHeader(_) | Body::Skipped(_) => 0,
        }
    }

    /// Whether the content is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Record {
    /// The text to fingerprint: decoded, and for HTML the main text with boilerplate removed
    /// (unless [`ReaderOptions::extract_main_text`] is off). `None` for a record that carries a
    /// fingerprint instead of a text, and for a [`Body::Skipped`] one.
    ///
    /// # Errors
    /// A [`BadRecordKind::Undecodable`] record when the bytes do not decode in the declared
    /// charset, UTF-8 or GB18030; a [`BadRecordKind::Binary`] one when they are binary data
    /// rather than text.
    pub fn text(
        &self,
        opts: &ReaderOptions,
    ) -> std::result::Result<Option<Cow<'_, str>>, BadRecord> {
        let bad = |(kind, message): html::NotText| BadRecord {
            location: self.location.clone(),
            kind,
            message,
        };
        match &self.body {
            Body::Text(s) => Ok(Some(Cow::Borrowed(s.as_str()))),
            Body::Plain(bytes) => html::decode_plain(bytes).map(Some).map_err(bad),
            Body::Html { bytes, charset } => {
                html::page_text(bytes, charset.as_deref(), opts.extract_main_text)
                    .map(|s| Some(Cow::Owned(s)))
                    .map_err(bad)
            }
            Body::Exported(_) | Body::ExportHeader(_) | Body::Skipped(_) => Ok(None),
        }
    }
}

/// Where a record is: the input file and the position in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The input file (`-` for standard input).
    pub path: Arc<Path>,
    /// The line or byte offset.
    pub position: Position,
}

/// A position in an input file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Position {
    /// A line, counted from 1.
    Line(u64),
    /// A byte offset from the start of the file. For gzipped files it is the offset in the
    /// decompressed stream (`zcat FILE | tail -c +$((N+1))` shows the record).
    Offset(u64),
    /// The whole file (one document per file).
    File,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Line(n) => write!(f, "line {n}"),
            Position::Offset(n) => write!(f, "offset {n}"),
            Position::File => f.write_str("whole file"),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.path.display(), self.position)
    }
}

/// Why a record was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum BadRecordKind {
    /// The bytes do not decode in the declared charset, or in UTF-8 or GB18030 when none is
    /// declared.
    Undecodable,
    /// A WARC or HTTP header that cannot be parsed.
    MalformedHeader,
    /// A JSON Lines line that is not JSON.
    MalformedJson,
    /// The input ends inside a record, or its gzip stream is truncated or corrupt. Nothing of
    /// the input after this point can be read.
    Truncated,
    /// A JSON line of the wrong type: not an object, or a field of the wrong type or missing.
    WrongJsonType,
    /// A document (or line) over [`ReaderOptions::max_doc_bytes`].
    TooLarge,
    /// A file that could not be opened or read.
    Unreadable,
    /// Binary data, not text: bytes that decode, but to mostly control characters (an image,
    /// an executable, an archive given as a text or HTML file).
    Binary,
}

impl BadRecordKind {
    /// A short name for summaries: `undecodable`, `malformed header`, `malformed JSON`, `truncated`,
    /// `wrong JSON type`, `too large`, `unreadable`, `binary`.
    pub fn as_str(self) -> &'static str {
        match self {
            BadRecordKind::Undecodable => "undecodable",
            BadRecordKind::MalformedHeader => "malformed header",
            BadRecordKind::MalformedJson => "malformed JSON",
            BadRecordKind::Truncated => "truncated",
            BadRecordKind::WrongJsonType => "wrong JSON type",
            BadRecordKind::TooLarge => "too large",
            BadRecordKind::Unreadable => "unreadable",
            BadRecordKind::Binary => "binary",
        }
    }
}

impl fmt::Display for BadRecordKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A record that could not be read: where it is, why, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRecord {
    /// The file and position.
    pub location: Location,
    /// The kind of problem.
    pub kind: BadRecordKind,
    /// The details.
    pub message: String,
}

impl fmt::Display for BadRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.location, self.kind, self.message)
    }
}

impl std::error::Error for BadRecord {}

impl From<BadRecord> for Error {
    fn from(b: BadRecord) -> Error {
        Error::BadRecord {
            path: b.location.path.to_path_buf(),
            location: b.location.position.to_string(),
            message: format!("{}: {}", b.kind, b.message),
        }
    }
}

/// The input formats. [`Format::detect`] picks one from the file name and first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// WARC or WET (`.warc`, `.wet`, optionally `.gz`): `response` records with HTML,
    /// `conversion` records of WET, `resource` records of HTML or plain text.
    Warc,
    /// JSON Lines (`.jsonl`, `.ndjson`, `.json`): one object per line.
    Jsonl,
    /// One HTML page per file (`.html`, `.htm`, `.xhtml`).
    Html,
    /// One text document per file (`.txt` and anything not recognised).
    Text,
    /// One text document per line.
    Lines,
}

impl Format {
    /// The format of the file at `path`: from its extension (ignoring `.gz`), else from its
    /// first bytes (`WARC/`, `{`, `<`), else [`Format::Text`]. Standard input (`-`) defaults
    /// to [`Format::Lines`] unless its first bytes say WARC or JSON.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be opened or read.
    pub fn detect(path: &Path) -> Result<Format> {
        if let Some(f) = Format::from_extension(path) {
            return Ok(f);
        }
        let mut reader =
            gzip::open(path, &ReadCounter::new()).map_err(|e| Error::io("opening", path, e))?;
        let head = reader
            .fill_buf()
            .map_err(|e| Error::io("reading", path, e))?;
        Ok(Format::sniff(head).unwrap_or(Format::Text))
    }

    /// The format named by the extension of `path` (`.gz` is looked through), if any.
    pub fn from_extension(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        let ext = name.rsplit_once('.')?.1;
        Some(match ext {
            "warc" | "wet" => Format::Warc,
            "jsonl" | "ndjson" | "json" => Format::Jsonl,
            "html" | "htm" | "xhtml" | "shtml" => Format::Html,
            "txt" | "text" | "md" => Format::Text,
            _ => return None,
        })
    }

    /// The format the first bytes of a (decompressed) stream suggest, if they suggest one.
    fn sniff(head: &[u8]) -> Option<Format> {
        let trimmed = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
        let start = trimmed
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(trimmed.len());
        let trimmed = &trimmed[start..];
        if trimmed.starts_with(b"WARC/") {
            Some(Format::Warc)
        } else if trimmed.starts_with(b"{") {
            Some(Format::Jsonl)
        } else if trimmed.starts_with(b"<") {
            Some(Format::Html)
        } else {
            None
        }
    }

    /// Parses a format name: `warc` (or `wet`), `jsonl`, `html`, `text`, `lines`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for another name.
    pub fn from_name(name: &str) -> Result<Format> {
        Ok(match name.to_ascii_lowercase().as_str() {
            "warc" | "wet" => Format::Warc,
            "jsonl" | "json" | "ndjson" => Format::Jsonl,
            "html" => Format::Html,
            "text" | "txt" => Format::Text,
            "lines" => Format::Lines,
            other => {
                return Err(Error::InvalidArgument(format!(
                    "unknown input format `{other}`: use warc, jsonl, html, text or lines"
                )))
            }
        })
    }
}

/// How inputs are read.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReaderOptions {
    /// The format of every input, or `None` to detect each one. Default: `None`.
    pub format: Option<Format>,
    /// The largest document (or line) accepted, in bytes; larger ones are bad records of kind
    /// [`BadRecordKind::TooLarge`] and are skipped without being held in memory.
    /// Default: 16 MiB.
    pub max_doc_bytes: usize,
    /// The JSON field holding the id (a non-negative integer). Default: `id`.
    pub id_field: String,
    /// The JSON fields holding the external key, the first present wins. Default: `key`, `url`.
    pub key_fields: Vec<String>,
    /// The JSON field holding the text. Default: `text`.
    pub text_field: String,
    /// Extract the main text of HTML (drop navigation, headers, footers, link lists and other
    /// boilerplate); when off, all visible text is kept. Default: `true`.
    pub extract_main_text: bool,
    /// Counts the bytes read from input files (as stored: compressed for gzipped files), so
    /// that a progress display can compare them with the inputs' sizes. Clones share the
    /// count. Default: a new counter.
    pub read_counter: ReadCounter,
}

/// A count of bytes read from input files, shared by its clones
/// ([`ReaderOptions::read_counter`]).
#[derive(Debug, Clone, Default)]
pub struct ReadCounter(Arc<AtomicU64>);

impl ReadCounter {
    /// A new count at 0.
    pub fn new() -> ReadCounter {
        ReadCounter::default()
    }

    /// The bytes read so far.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            format: None,
            max_doc_bytes: /* 16 MiB */ 16 * 1024 * 1024,
            id_field: "id".into(),
            key_fields: vec!["key".into(), "url".into()],
            text_field: "text".into(),
            extract_main_text: true,
            read_counter: ReadCounter::new(),
        }
    }
}

/// Reads one input: a file (its format from `opts.format` or [`Format::detect`]), a folder
/// (every file in it and its subfolders, in name order, hidden ones skipped, each detected on
/// its own), or `-` for standard input.
///
/// # Errors
/// [`Error::Io`] when the input does not exist or cannot be opened. Problems inside it are
/// bad records in the iterator.
pub fn read_input(input: &Path, opts: &ReaderOptions) -> Result<Records> {
    let opts = Arc::new(opts.clone());
    if input == Path::new("-") {
        let stdin = std::io::BufReader::with_capacity(gzip::BUFFER, std::io::stdin());
        let reader = gzip::wrap(Box::new(stdin)).map_err(|e| Error::io("reading", input, e))?;
        return Ok(open_stream(input, reader, opts, true));
    }
    let meta = std::fs::metadata(input).map_err(|e| Error::io("reading", input, e))?;
    if meta.is_dir() {
        return Ok(Box::new(text::DirReader::new(input.to_path_buf(), opts)));
    }
    open_file(input, opts).map_err(|e| Error::io("reading", input, e))
}

/// Opens one file with the format of `opts` or the detected one.
fn open_file(path: &Path, opts: Arc<ReaderOptions>) -> std::io::Result<Records> {
    let format = match opts.format.or_else(|| Format::from_extension(path)) {
        Some(f) => f,
        None => {
            let reader = gzip::open(path, &opts.read_counter)?;
            return Ok(open_stream(path, reader, opts, false));
        }
    };
    let shared: Arc<Path> = Arc::from(path);
    Ok(match format {
        Format::Html | Format::Text => {
            Box::new(std::iter::once(text::whole_file(shared, format, &opts)))
        }
        Format::Warc => {
            let reader = gzip::open(path, &opts.read_counter)?;
            Box::new(warc::WarcReader::new(shared, reader, opts))
        }
        Format::Jsonl => {
            let reader = gzip::open(path, &opts.read_counter)?;
            Box::new(jsonl::JsonlReader::new(shared, reader, opts))
        }
        Format::Lines => {
            let reader = gzip::open(path, &opts.read_counter)?;
            Box::new(text::LinesReader::new(shared, reader, opts))
        }
    })
}

/// A stream whose format is given or sniffed from its first bytes. `default_lines`: whether an
/// unrecognised stream holds one document per line (standard input) or is one document.
fn open_stream(
    path: &Path,
    mut reader: Box<dyn BufRead + Send>,
    opts: Arc<ReaderOptions>,
    default_lines: bool,
) -> Records {
    let shared: Arc<Path> = Arc::from(path);
    let format = opts
        .format
        .or_else(|| Format::sniff(reader.fill_buf().unwrap_or_default()))
        .unwrap_or(if default_lines {
            Format::Lines
        } else {
            Format::Text
        });
    match format {
        Format::Warc => Box::new(warc::WarcReader::new(shared, reader, opts)),
        Format::Jsonl => Box::new(jsonl::JsonlReader::new(shared, reader, opts)),
        Format::Lines => Box::new(text::LinesReader::new(shared, reader, opts)),
        Format::Html | Format::Text => {
            let record = text::whole_stream(shared, &mut reader, format, &opts);
            Box::new(std::iter::once(record))
        }
    }
}

/// What [`read_bounded_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LineRead {
    /// The end of the input: nothing was read.
    Eof,
    /// A line (without its `\n`, with any `\r`) is in the buffer; `consumed` bytes were read.
    Line { consumed: u64 },
    /// The line was longer than the limit: it was read past and dropped.
    TooLong { consumed: u64 },
}

/// Reads one line into `buf` (cleared first), holding at most `max` bytes of it: a longer
/// line is consumed to its end without being kept, so memory stays bounded.
pub(crate) fn read_bounded_line(
    reader: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<LineRead> {
    buf.clear();
    let mut consumed = 0u64;
    let mut too_long = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            break;
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let content = if done {
            &chunk[..take - 1]
        } else {
            &chunk[..take]
        };
        if !too_long {
            if buf.len() + content.len() > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(content);
            }
        }
        reader.consume(take);
        consumed += take as u64;
        if done {
            break;
        }
    }
    Ok(match (consumed, too_long) {
        (0, _) => LineRead::Eof,
        (consumed, true) => LineRead::TooLong { consumed },
        (consumed, false) => LineRead::Line { consumed },
    })
}

/// Reads exactly `len` bytes, or reports how many there were before the end.
pub(crate) fn read_exact_or_count(
    reader: &mut dyn BufRead,
    len: usize,
) -> std::io::Result<std::result::Result<Vec<u8>, u64>> {
    let mut body = Vec::with_capacity(len.min(1 << 20));
    let got = (&mut *reader).take(len as u64).read_to_end(&mut body)?;
    if got < len {
        return Ok(Err(got as u64));
    }
    Ok(Ok(body))
}

/// Skips `len` bytes; returns how many there were.
pub(crate) fn skip(reader: &mut dyn BufRead, len: u64) -> std::io::Result<u64> {
    std::io::copy(&mut (&mut *reader).take(len), &mut std::io::sink())
}

/// Describes an I/O error met in the middle of an input.
pub(crate) fn stream_error(e: &std::io::Error) -> String {
    format!(
        "the input could not be read further ({e}): a gzip file cut short or damaged? \
         The records before this point were read; re-download or re-compress the file"
    )
}

/// `path` relative to nothing: how a key is built from a file path.
pub(crate) fn path_key(path: &Path) -> String {
    path.display().to_string()
}

/// The paths of `dir`'s entries, sorted, hidden ones left out.
pub(crate) fn sorted_entries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        paths.push(entry.path());
    }
    paths.sort();
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn bounded_lines() {
        let mut r = Cursor::new(b"abc\r\ntoolongline\nxy".to_vec());
        let mut buf = Vec::new();
        assert_eq!(
            read_bounded_line(&mut r, &mut buf, 5).unwrap(),
            LineRead::Line { consumed: 5 }
        );
        assert_eq!(buf, b"abc\r");
        assert_eq!(
            read_bounded_line(&mut r, &mut buf, 5).unwrap(),
            LineRead::TooLong { consumed: 12 }
        );
        assert_eq!(
            read_bounded_line(&mut r, &mut buf, 5).unwrap(),
            LineRead::Line { consumed: 2 }
        );
        assert_eq!(buf, b"xy");
        assert_eq!(
            read_bounded_line(&mut r, &mut buf, 5).unwrap(),
            LineRead::Eof
        );
    }

    #[test]
    fn extensions_and_sniffing() {
        assert_eq!(
            Format::from_extension(Path::new("a/CC-MAIN-1.warc.gz")),
            Some(Format::Warc)
        );
        assert_eq!(
            Format::from_extension(Path::new("x.wet.gz")),
            Some(Format::Warc)
        );
        assert_eq!(
            Format::from_extension(Path::new("x.JSONL")),
            Some(Format::Jsonl)
        );
        assert_eq!(
            Format::from_extension(Path::new("page.htm")),
            Some(Format::Html)
        );
        assert_eq!(Format::from_extension(Path::new("README")), None);
        assert_eq!(
            Format::sniff(b"\xef\xbb\xbf WARC/1.1\r\n"),
            Some(Format::Warc)
        );
        assert_eq!(Format::sniff(b"\n{\"a\":1}"), Some(Format::Jsonl));
        assert_eq!(Format::sniff(b"<!doctype html>"), Some(Format::Html));
        assert_eq!(Format::sniff(b"plain words"), None);
        assert!(matches!(
            Format::from_name("csv"),
            Err(Error::InvalidArgument(_))
        ));
    }
}
