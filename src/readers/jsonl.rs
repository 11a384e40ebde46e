//! JSON Lines: one object per line with configurable id, key and text fields. A line with a
//! `fingerprint` field and no text field is a document line of `simhash-store export`: it is
//! loaded with that fingerprint (and the text length and sketch the line gives), without
//! fingerprinting again; an export's header line (`export.rs`) is yielded as
//! [`Body::ExportHeader`].

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::export::{ExportHeader, ExportedDocument, HEADER_FIELD};
use super::{
    read_bounded_line, stream_error, BadRecord, BadRecordKind, Body, LineRead, Location, Position,
    ReaderOptions, Record,
};
use crate::fingerprint::Fingerprint;

/// The field of an exported fingerprint.
const FINGERPRINT_FIELD: &str = "fingerprint";
/// The field of an exported document's text length.
const TEXT_LEN_FIELD: &str = "text_len";
/// The field of an exported document's sketch.
const SKETCH_FIELD: &str = "sketch";

pub(crate) struct JsonlReader {
    path: Arc<Path>,
    reader: Box<dyn BufRead + Send>,
    opts: Arc<ReaderOptions>,
    line: u64,
    buf: Vec<u8>,
    done: bool,
}

impl JsonlReader {
    pub(crate) fn new(
        path: Arc<Path>,
        reader: Box<dyn BufRead + Send>,
        opts: Arc<ReaderOptions>,
    ) -> Self {
        JsonlReader {
            path,
            reader,
            opts,
            line: 0,
            buf: Vec::new(),
            done: false,
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Turns one parsed line into a record, or says what is wrong with it.
fn record_from(
    value: Value,
    opts: &ReaderOptions,
    location: Location,
) -> Result<Record, BadRecord> {
    let wrong = |message: String| BadRecord {
        location: location.clone(),
        kind: BadRecordKind::WrongJsonType,
        message,
    };
    let Value::Object(mut object) = value else {
        return Err(wrong(format!(
            "expected an object, found {}",
            type_name(&value)
        )));
    };
    if object.len() == 1 {
        if let Some(header) = object.remove(HEADER_FIELD) {
            let header = ExportHeader::from_value(header).map_err(wrong)?;
            return Ok(Record {
                key: None,
                id: None,
                location,
                body: Body::ExportHeader(header),
            });
        }
    }
    let id = match object.get(&opts.id_field) {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64(),
        Some(other) => {
            return Err(wrong(format!(
                "field `{}` must be a non-negative integer id, found {}",
                opts.id_field,
                type_name(other)
            )))
        }
    };
    let mut key = None;
    for field in &opts.key_fields {
        match object.remove(field) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) if !s.is_empty() => {
                key = Some(s);
                break;
            }
            Some(other) => {
                return Err(wrong(format!(
                    "field `{field}` must be a non-empty string key, found {}",
                    type_name(&other)
                )))
            }
        }
    }
    let body = match object.remove(&opts.text_field) {
        Some(Value::String(text)) => Body::Text(text),
        Some(other) => {
            return Err(wrong(format!(
                "field `{}` must be a string, found {}",
                opts.text_field,
                type_name(&other)
            )));
        }
        None => match object.get(FINGERPRINT_FIELD) {
            Some(Value::String(hex)) => {
                let fp: Fingerprint = hex
                    .parse()
                    .map_err(|e: crate::Error| wrong(e.to_string()))?;
                let mut doc = ExportedDocument::new(fp);
                doc.text_len = match object.get(TEXT_LEN_FIELD) {
                    None | Some(Value::Null) => None,
                    Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64(),
                    Some(other) => {
                        return Err(wrong(format!(
                            "field `{TEXT_LEN_FIELD}` must be a non-negative integer, found {}",
                            type_name(other)
                        )))
                    }
                };
                doc.sketch = match object.get(SKETCH_FIELD) {
                    None | Some(Value::Null) => None,
                    Some(Value::String(hex)) => Some(hex.parse().map_err(|e: crate::Error| {
                        wrong(format!("field `{SKETCH_FIELD}`: {e}"))
                    })?),
                    Some(other) => {
                        return Err(wrong(format!(
                            "field `{SKETCH_FIELD}` must be a hex string, found {}",
                            type_name(other)
                        )))
                    }
                };
                Body::Exported(doc)
            }
            Some(other) => {
                return Err(wrong(format!(
                    "field `{FINGERPRINT_FIELD}` must be a hex string, found {}",
                    type_name(other)
                )));
            }
            None => {
                return Err(wrong(format!(
                "no field `{}` (nor `{FINGERPRINT_FIELD}`): name the text field with --text-field",
                opts.text_field
            )))
            }
        },
    };
    Ok(Record {
        key,
        id,
        location,
        body,
    })
}

impl Iterator for JsonlReader {
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
                    return Some(Err(BadRecord {
                        location,
                        kind: BadRecordKind::TooLarge,
                        message: format!(
                            "the line has {consumed} bytes, over the limit of {}: raise --max-doc-bytes to load it",
                            self.opts.max_doc_bytes
                        ),
                    }));
                }
                Ok(LineRead::Line { .. }) => {
                    if self.buf.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    return Some(match serde_json::from_slice::<Value>(&self.buf) {
                        Ok(value) => record_from(value, &self.opts, location),
                        Err(e) => Err(BadRecord {
                            location,
                            kind: if std::str::from_utf8(&self.buf).is_err() {
                                BadRecordKind::Undecodable
                            } else {
                                BadRecordKind::MalformedJson
                            },
                            message: format!(
                                "not a JSON value ({e}): each line must be one JSON object"
                            ),
                        }),
                    });
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
