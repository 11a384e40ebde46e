//! WARC (ISO 28500, 1.0 and 1.1) and WET files, read as a stream of records.
//!
//! A streaming parser of its own rather than the `warc` crate: that one reads a header block
//! and each body line by line without a size bound, reports no byte offsets and cannot resume
//! after a malformed record, and each of those is needed here (bounded memory, errors that
//! name the offset, a bad record skipped rather than ending the file).
//!
//! Read: `response` records (the HTTP response is parsed; only 2xx HTML responses are
//! documents, dechunked and un-gzipped when the crawler kept those encodings), `conversion`
//! records of WET files (plain text), and `resource` records of HTML or plain text. The key is
//! `WARC-Target-URI`. Responses that are not 2xx HTML, and resources that are neither HTML nor
//! plain text, are yielded as [`Body::Skipped`] records (with the reason, for the load summary);
//! other records (`warcinfo`, `request`, `metadata`, …) hold no documents and are passed over.
//!
//! After a malformed header the reader skips line by line to the next `WARC/` version line.
//! A record cut short (the input ends, or the gzip stream is truncated or corrupt) ends the
//! file: nothing after it can be trusted.

use std::io::{BufRead, Read};
use std::path::Path;
use std::sync::Arc;

use flate2::read::{MultiGzDecoder, ZlibDecoder};

use super::{
    read_bounded_line, read_exact_or_count, skip, stream_error, BadRecord, BadRecordKind, Body,
    LineRead, Location, Position, ReaderOptions, Record, Skipped,
};

/// The longest header line accepted.
const MAX_HEADER_LINE: usize = 16 * 1024;
/// The largest header block accepted.
const MAX_HEADER_BYTES: u64 = 256 * 1024;

pub(crate) struct WarcReader {
    path: Arc<Path>,
    reader: Box<dyn BufRead + Send>,
    opts: Arc<ReaderOptions>,
    /// Bytes consumed from the (decompressed) stream.
    offset: u64,
    line: Vec<u8>,
    /// Skipping to the next version line after a malformed record (reported once).
    resync: bool,
    /// The offset of a version line found at the end of a line of garbage, to be returned
    /// after the garbage is reported.
    pending_version: Option<u64>,
    done: bool,
}

/// What went wrong in one record: its kind and message.
type Problem = (BadRecordKind, String);

impl WarcReader {
    pub(crate) fn new(
        path: Arc<Path>,
        reader: Box<dyn BufRead + Send>,
        opts: Arc<ReaderOptions>,
    ) -> Self {
        WarcReader {
            path,
            reader,
            opts,
            offset: 0,
            line: Vec::new(),
            resync: false,
            pending_version: None,
            done: false,
        }
    }

    fn bad(&self, start: u64, (kind, message): Problem) -> BadRecord {
        BadRecord {
            location: Location {
                path: self.path.clone(),
                position: Position::Offset(start),
            },
            kind,
            message,
        }
    }

    /// Reads one line; `None` at the end of the input.
    fn read_line(&mut self) -> Result<Option<bool>, Problem> {
        match read_bounded_line(&mut self.reader, &mut self.line, MAX_HEADER_LINE) {
            Ok(LineRead::Eof) => Ok(None),
            Ok(LineRead::Line { consumed }) => {
                self.offset += consumed;
                if self.line.last() == Some(&b'\r') {
                    self.line.pop();
                }
                Ok(Some(true))
            }
            Ok(LineRead::TooLong { consumed }) => {
                self.offset += consumed;
                self.line.clear();
                Ok(Some(false))
            }
            Err(e) => Err((BadRecordKind::Truncated, stream_error(&e))),
        }
    }

    /// Finds the next version line; returns its offset, or `None` at the end. A version
    /// line glued to the end of garbage (a block of zeros a crash left before a record) counts
    /// too: the garbage is reported, then the record is read.
    fn next_version_line(&mut self) -> Result<Option<u64>, BadRecord> {
        if let Some(at) = self.pending_version.take() {
            return Ok(Some(at));
        }
        loop {
            let start = self.offset;
            let fits = match self.read_line() {
                Ok(None) => return Ok(None),
                Ok(Some(fits)) => fits,
                Err(p) => {
                    self.done = true;
                    return Err(self.bad(start, p));
                }
            };
            if fits && self.line.starts_with(b"WARC/") {
                self.resync = false;
                return Ok(Some(start));
            }
            let glued = [b"WARC/1.0".as_slice(), b"WARC/1.1"]
                .iter()
                .any(|v| fits && self.line.ends_with(v));
            if glued {
                let was_resyncing = std::mem::replace(&mut self.resync, false);
                let at = start + (self.line.len() - b"WARC/1.0".len()) as u64;
                if was_resyncing {
                    return Ok(Some(at));
                }
                self.pending_version = Some(at);
            } else if (fits && self.line.iter().all(u8::is_ascii_whitespace)) || self.resync {
                continue;
            } else {
                self.resync = true;
            }
            return Err(self.bad(
                start,
                (
                    BadRecordKind::MalformedHeader,
                    "expected a `WARC/1.0` or `WARC/1.1` version line: the previous record's Content-Length is \
                     wrong or this is not a WARC file; skipping to the next record"
                        .into(),
                ),
            ));
        }
    }

    /// Reads the header block after the version line.
    fn headers(&mut self, start: u64) -> Result<Vec<(String, String)>, Problem> {
        let mut headers: Vec<(String, String)> = Vec::new();
        loop {
            let fits = self.read_line()?.ok_or_else(|| {
                (
                    BadRecordKind::Truncated,
                    "the input ends inside the record's headers".to_string(),
                )
            })?;
            if !fits {
                return Err((
                    BadRecordKind::MalformedHeader,
                    format!("a header line over {MAX_HEADER_LINE} bytes"),
                ));
            }
            if self.offset - start > MAX_HEADER_BYTES {
                return Err((
                    BadRecordKind::MalformedHeader,
                    format!("headers over {MAX_HEADER_BYTES} bytes"),
                ));
            }
            if self.line.is_empty() {
                return Ok(headers);
            }
            let line = String::from_utf8_lossy(&self.line);
            if line.starts_with([' ', '\t']) {
                if let Some((_, value)) = headers.last_mut() {
                    value.push(' ');
                    value.push_str(line.trim());
                    continue;
                }
            }
            let Some((name, value)) = line.split_once(':') else {
                return Err((
                    BadRecordKind::MalformedHeader,
                    format!(
                        "header line without a colon: {:?}",
                        line.chars().take(80).collect::<String>()
                    ),
                ));
            };
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// The `charset` parameter of a `Content-Type` value.
fn charset_of(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        (name.trim().eq_ignore_ascii_case("charset"))
            .then(|| value.trim().trim_matches(['"', '\'']).to_string())
    })
}

fn is_html(content_type: &str) -> bool {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    mime == "text/html" || mime == "application/xhtml+xml"
}

impl Iterator for WarcReader {
    type Item = Result<Record, BadRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let start = match self.next_version_line() {
                Ok(Some(start)) => start,
                Ok(None) => {
                    self.done = true;
                    return None;
                }
                Err(bad) => return Some(Err(bad)),
            };
            let headers = match self.headers(start) {
                Ok(h) => h,
                Err(p) => {
                    self.resync = true;
                    self.done = p.0 == BadRecordKind::Truncated;
                    return Some(Err(self.bad(start, p)));
                }
            };
            let Some(length) =
                header(&headers, "content-length").and_then(|v| v.parse::<u64>().ok())
            else {
                self.resync = true;
                return Some(Err(self.bad(
                    start,
                    (
                        BadRecordKind::MalformedHeader,
                        "no valid Content-Length header: skipping to the next record".into(),
                    ),
                )));
            };
            let kind = header(&headers, "warc-type")
                .unwrap_or_default()
                .to_ascii_lowercase();
            let wanted = matches!(kind.as_str(), "response" | "conversion" | "resource");
            if !wanted || length > self.opts.max_doc_bytes as u64 {
                match skip(&mut self.reader, length) {
                    Ok(n) if n == length => self.offset += n,
                    Ok(n) => {
                        self.done = true;
                        return Some(Err(self.bad(start, truncated(length, n))));
                    }
                    Err(e) => {
                        self.done = true;
                        return Some(Err(
                            self.bad(start, (BadRecordKind::Truncated, stream_error(&e)))
                        ));
                    }
                }
                if wanted {
                    let message = format!(
                        "the record has {length} bytes, over the limit of {}: raise --max-doc-bytes to load it",
                        self.opts.max_doc_bytes
                    );
                    return Some(Err(self.bad(start, (BadRecordKind::TooLarge, message))));
                }
                continue;
            }
            let body = match read_exact_or_count(&mut self.reader, length as usize) {
                Ok(Ok(body)) => body,
                Ok(Err(got)) => {
                    self.done = true;
                    return Some(Err(self.bad(start, truncated(length, got))));
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(
                        self.bad(start, (BadRecordKind::Truncated, stream_error(&e)))
                    ));
                }
            };
            self.offset += length;
            let Some(uri) = header(&headers, "warc-target-uri") else {
                let message = format!("a `{kind}` record without WARC-Target-URI");
                return Some(Err(
                    self.bad(start, (BadRecordKind::MalformedHeader, message))
                ));
            };
            let key = uri
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_string();
            let body = match kind.as_str() {
                "conversion" => Body::Plain(body),
                "resource" => {
                    let content_type = header(&headers, "content-type").unwrap_or_default();
                    if is_html(content_type) {
                        Body::Html {
                            bytes: body,
                            charset: charset_of(content_type),
                        }
                    } else if content_type.starts_with("text/plain") {
                        Body::Plain(body)
                    } else {
                        Body::Skipped(Skipped::NotText {
                            content_type: content_type.to_string(),
                        })
                    }
                }
                _ => match http_payload(body, self.opts.max_doc_bytes) {
                    Ok(Ok((bytes, charset))) => Body::Html { bytes, charset },
                    Ok(Err(skipped)) => Body::Skipped(skipped),
                    Err(p) => return Some(Err(self.bad(start, p))),
                },
            };
            let location = Location {
                path: self.path.clone(),
                position: Position::Offset(start),
            };
            return Some(Ok(Record {
                key: Some(key),
                id: None,
                location,
                body,
            }));
        }
        None
    }
}

fn truncated(length: u64, got: u64) -> Problem {
    (
        BadRecordKind::Truncated,
        format!(
            "the record declares {length} bytes but the input ends after {got}: the file is cut short; \
             the records before this one were read"
        ),
    )
}

/// An HTML payload and the charset its response declared.
type Payload = (Vec<u8>, Option<String>);

/// The HTML payload of an HTTP response and its declared charset, or why the response is
/// not a document (not 2xx, not HTML).
fn http_payload(body: Vec<u8>, max: usize) -> Result<Result<Payload, Skipped>, Problem> {
    let malformed = |m: String| (BadRecordKind::MalformedHeader, m);
    let (head_len, sep_len) = match body.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(i) => (i, 4),
        None => match body.windows(2).position(|w| w == b"\n\n") {
            Some(i) => (i, 2),
            None => {
                return Err(malformed(
                    "an HTTP response without the blank line that ends its headers".into(),
                ))
            }
        },
    };
    let head = String::from_utf8_lossy(&body[..head_len]);
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or_default();
    if !status_line.starts_with("HTTP/") {
        return Err(malformed(format!(
            "not an HTTP response: the status line is {:?}",
            status_line.chars().take(80).collect::<String>()
        )));
    }
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            malformed(format!(
                "no status code in {:?}",
                status_line.chars().take(80).collect::<String>()
            ))
        })?;
    if !(200..300).contains(&status) {
        return Ok(Err(Skipped::HttpStatus(status)));
    }
    let mut content_type = None;
    let mut chunked = false;
    let mut encoding = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-type" => content_type = Some(value.to_string()),
            "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
            "content-encoding" => encoding = Some(value.to_ascii_lowercase()),
            _ => {}
        }
    }
    if let Some(ct) = content_type.as_deref().filter(|ct| !is_html(ct)) {
        return Ok(Err(Skipped::NotText {
            content_type: ct.to_string(),
        }));
    }
    let charset = content_type.as_deref().and_then(charset_of);
    let mut payload = body;
    payload.drain(..head_len + sep_len);
    if chunked {
        // Many crawlers store the payload already dechunked while keeping the header.
        if let Some(plain) = dechunk(&payload) {
            payload = plain;
        }
    }
    match encoding.as_deref() {
        Some("gzip" | "x-gzip") if payload.starts_with(&[0x1f, 0x8b]) => {
            payload = inflate(MultiGzDecoder::new(payload.as_slice()), max)?;
        }
        Some("deflate") if payload.first().is_some_and(|b| b & 0x0f == 8) => {
            payload = inflate(ZlibDecoder::new(payload.as_slice()), max)?;
        }
        _ => {}
    }
    Ok(Ok((payload, charset)))
}

fn inflate(reader: impl Read, max: usize) -> Result<Vec<u8>, Problem> {
    let mut out = Vec::new();
    reader
        .take(max as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| {
            (
                BadRecordKind::Undecodable,
                format!("the compressed HTTP payload does not decompress: {e}"),
            )
        })?;
    if out.len() > max {
        return Err((
            BadRecordKind::TooLarge,
            format!("the decompressed page is over the limit of {max} bytes: raise --max-doc-bytes to load it"),
        ));
    }
    Ok(out)
}

/// Decodes HTTP chunked transfer coding; `None` if `data` is not well-formed chunks.
fn dechunk(data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len());
    let mut at = 0;
    loop {
        let line_end = at + data.get(at..)?.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&data[at..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        at = line_end + 2;
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(at..at.checked_add(size)?)?);
        at += size + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charset_parameter() {
        assert_eq!(charset_of("text/html; charset=GBK").as_deref(), Some("GBK"));
        assert_eq!(
            charset_of("text/html;charset=\"utf-8\"").as_deref(),
            Some("utf-8")
        );
        assert_eq!(charset_of("text/html"), None);
    }

    #[test]
    fn chunks() {
        assert_eq!(
            dechunk(b"4\r\nWiki\r\n5;x=y\r\npedia\r\n0\r\n\r\n").as_deref(),
            Some(&b"Wikipedia"[..])
        );
        assert_eq!(dechunk(b"<html>"), None);
    }

    #[test]
    fn http_responses() {
        let ok =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=gbk\r\n\r\n<p>x</p>".to_vec();
        assert_eq!(
            http_payload(ok, 100).unwrap(),
            Ok((b"<p>x</p>".to_vec(), Some("gbk".into())))
        );
        let redirect = b"HTTP/1.1 301 Moved\r\nLocation: /\r\n\r\n".to_vec();
        assert_eq!(
            http_payload(redirect, 100).unwrap(),
            Err(Skipped::HttpStatus(301))
        );
        let image = b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG".to_vec();
        assert_eq!(
            http_payload(image, 100).unwrap(),
            Err(Skipped::NotText {
                content_type: "image/png".into()
            })
        );
        let bad = http_payload(b"garbage".to_vec(), 100).unwrap_err();
        assert_eq!(bad.0, BadRecordKind::MalformedHeader);
    }
}
