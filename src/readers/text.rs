//! Text inputs: one document per file (text or HTML), one document per line, and folders.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{
    gzip, open_file, path_key, read_bounded_line, sorted_entries, stream_error, BadRecord,
    BadRecordKind, Body, Format, LineRead, Location, Position, ReaderOptions, Record, Records,
};

fn body_for(format: Format, bytes: Vec<u8>) -> Body {
    match format {
        Format::Html => Body::Html {
            bytes,
            charset: None,
        },
        _ => Body::Plain(bytes),
    }
}

fn too_large(location: Location, size: u64, max: usize) -> BadRecord {
    BadRecord {
        location,
        kind: BadRecordKind::TooLarge,
        message: format!("the document has {size} bytes, over the limit of {max}: raise --max-doc-bytes to load it"),
    }
}

/// The whole file at `path` as one document (key = the path).
pub(crate) fn whole_file(
    path: Arc<Path>,
    format: Format,
    opts: &ReaderOptions,
) -> Result<Record, BadRecord> {
    let location = Location {
        path: path.clone(),
        position: Position::File,
    };
    let unreadable = |e: std::io::Error| BadRecord {
        location: location.clone(),
        kind: BadRecordKind::Unreadable,
        message: format!("cannot read the file ({e}): check that it exists and is readable"),
    };
    let mut reader = gzip::open(&path, &opts.read_counter).map_err(unreadable)?;
    whole_stream(path, &mut reader, format, opts)
}

/// Everything left in `reader` as one document, at most `opts.max_doc_bytes`.
pub(crate) fn whole_stream(
    path: Arc<Path>,
    reader: &mut dyn BufRead,
    format: Format,
    opts: &ReaderOptions,
) -> Result<Record, BadRecord> {
    let location = Location {
        path: path.clone(),
        position: Position::File,
    };
    let mut bytes = Vec::new();
    let limit = opts.max_doc_bytes as u64 + 1;
    (&mut *reader)
        .take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| BadRecord {
            location: location.clone(),
            kind: BadRecordKind::Truncated,
            message: stream_error(&e),
        })?;
    if bytes.len() > opts.max_doc_bytes {
        let rest = super::skip(reader, u64::MAX).unwrap_or(0);
        return Err(too_large(
            location,
            bytes.len() as u64 + rest,
            opts.max_doc_bytes,
        ));
    }
    Ok(Record {
        key: Some(path_key(&path)),
        id: None,
        location,
        body: body_for(format, bytes),
    })
}

/// One document per non-empty line; key `path:line`.
pub(crate) struct LinesReader {
    path: Arc<Path>,
    reader: Box<dyn BufRead + Send>,
    opts: Arc<ReaderOptions>,
    line: u64,
    buf: Vec<u8>,
    done: bool,
}

impl LinesReader {
    pub(crate) fn new(
        path: Arc<Path>,
        reader: Box<dyn BufRead + Send>,
        opts: Arc<ReaderOptions>,
    ) -> Self {
        LinesReader {
            path,
            reader,
            opts,
            line: 0,
            buf: Vec::new(),
            done: false,
        }
    }
}

impl Iterator for LinesReader {
    type Item = Result<Record, BadRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.line += 1;
            let location = Location {
                path: self.path.clone(),
                position: Position::Line(self.line),
            };
            match read_bounded_line(&mut self.reader, &mut self.buf, self.opts.max_doc_bytes) {
                Ok(LineRead::Eof) => self.done = true,
                Ok(LineRead::TooLong { consumed }) => {
                    return Some(Err(too_large(location, consumed, self.opts.max_doc_bytes)));
                }
                Ok(LineRead::Line { .. }) => {
                    let line = self.buf.strip_suffix(b"\r").unwrap_or(&self.buf);
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let key = format!("{}:{}", self.path.display(), self.line);
                    return Some(Ok(Record {
                        key: Some(key),
                        id: None,
                        location,
                        body: Body::Plain(line.to_vec()),
                    }));
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(BadRecord {
                        location,
                        kind: BadRecordKind::Truncated,
                        message: stream_error(&e),
                    }));
                }
            }
        }
        None
    }
}

/// Every file under a folder, each read with its own format, in path order.
pub(crate) struct DirReader {
    /// Folders and files still to visit, the next one last.
    pending: Vec<PathBuf>,
    current: Option<Records>,
    opts: Arc<ReaderOptions>,
}

impl DirReader {
    pub(crate) fn new(root: PathBuf, opts: Arc<ReaderOptions>) -> Self {
        DirReader {
            pending: vec![root],
            current: None,
            opts,
        }
    }

    fn unreadable(path: &Path, e: &std::io::Error) -> BadRecord {
        BadRecord {
            location: Location {
                path: Arc::from(path),
                position: Position::File,
            },
            kind: BadRecordKind::Unreadable,
            message: format!("cannot read it ({e}): check its permissions"),
        }
    }
}

impl Iterator for DirReader {
    type Item = Result<Record, BadRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(records) = &mut self.current {
                if let Some(item) = records.next() {
                    return Some(item);
                }
                self.current = None;
            }
            let path = self.pending.pop()?;
            let meta = match std::fs::metadata(&path) {
                Ok(m) => m,
                Err(e) => return Some(Err(Self::unreadable(&path, &e))),
            };
            if meta.is_dir() {
                match sorted_entries(&path) {
                    Ok(entries) => self.pending.extend(entries.into_iter().rev()),
                    Err(e) => return Some(Err(Self::unreadable(&path, &e))),
                }
                continue;
            }
            if meta.len() > self.opts.max_doc_bytes as u64 && self.one_doc_per_file(&path) {
                let location = Location {
                    path: Arc::from(path.as_path()),
                    position: Position::File,
                };
                return Some(Err(too_large(
                    location,
                    meta.len(),
                    self.opts.max_doc_bytes,
                )));
            }
            match open_file(&path, self.opts.clone()) {
                Ok(records) => self.current = Some(records),
                Err(e) => return Some(Err(Self::unreadable(&path, &e))),
            }
        }
    }
}

impl DirReader {
    /// Whether `path` is read as one document (so its size can be checked before reading).
    fn one_doc_per_file(&self, path: &Path) -> bool {
        let format = self.opts.format.or_else(|| Format::from_extension(path));
        matches!(format, Some(Format::Html | Format::Text))
            && !path.to_string_lossy().ends_with(".gz")
    }
}
