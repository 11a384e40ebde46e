//! The lines of `simhash-store export`, written there and read back by the JSON Lines reader.
//!
//! The first line is a header naming how the store fingerprints texts:
//!
//! ```text
//! {"simhash_store_export":{"version":1,"store_format":7,"settings":{"normalize":true,...}}}
//! ```
//!
//! then one line per document, in id order:
//!
//! ```text
//! {"fingerprint":"3f2a9c0e11d4b788","id":42,"key":"https://example.com/a","text_len":5120}
//! ```
//!
//! with `"sketch"` (128 hex digits) before `text_len` for a store that keeps sketches. Loading such a file
//! gives a store that answers exactly as the exported one: same settings, ids, keys,
//! fingerprints, text lengths and sketches.

use serde::Serialize;
use serde_json::Value;

use crate::fingerprint::Fingerprint;
use crate::simhash::SimhashConfig;
use crate::sketch::Sketch;

/// The one field of a header line.
pub(crate) const HEADER_FIELD: &str = "simhash_store_export";
/// The version of the export lines this build writes and reads.
const EXPORT_VERSION: u64 = 1;

/// The first line of an export: the settings the exported fingerprints were made with.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExportHeader {
    /// How the exported store fingerprints texts, sketches included.
    pub settings: SimhashConfig,
    /// The store format of the exported store (informative: loading writes the current one).
    pub store_format: u32,
}

impl ExportHeader {
    /// A header for a store with `settings`, written in `store_format`.
    pub fn new(settings: SimhashConfig, store_format: u32) -> ExportHeader {
        ExportHeader {
            settings,
            store_format,
        }
    }

    /// The header as one JSON line (no newline).
    pub fn to_line(&self) -> String {
        #[derive(Serialize)]
        struct Fields<'a> {
            version: u64,
            store_format: u32,
            settings: &'a SimhashConfig,
        }
        #[derive(Serialize)]
        struct Line<'a> {
            simhash_store_export: Fields<'a>,
        }
        serde_json::to_string(&Line {
            simhash_store_export: Fields {
                version: EXPORT_VERSION,
                store_format: self.store_format,
                settings: &self.settings,
            },
        })
        .unwrap_or_default()
    }

    /// Reads the value of a header line's [`HEADER_FIELD`]; the message says what is wrong.
    pub(crate) fn from_value(value: Value) -> Result<ExportHeader, String> {
        let Value::Object(mut fields) = value else {
            return Err(format!("`{HEADER_FIELD}` must be an object"));
        };
        match fields.get("version").and_then(Value::as_u64) {
            Some(EXPORT_VERSION) => {}
            Some(v) => {
                return Err(format!(
                    "an export of version {v}; this build reads version {EXPORT_VERSION}: load it with a newer simhash-store"
                ))
            }
            None => return Err("the export header has no `version`".into()),
        }
        let store_format = fields
            .get("store_format")
            .and_then(Value::as_u64)
            .and_then(|v| u32::try_from(v).ok())
            .ok_or("the export header has no `store_format`")?;
        let settings = fields
            .remove("settings")
            .ok_or("the export header has no `settings`")?;
        let settings: SimhashConfig = serde_json::from_value(settings)
            .map_err(|e| format!("the export header's settings cannot be read: {e}"))?;
        Ok(ExportHeader {
            settings,
            store_format,
        })
    }
}

/// A document line of an export: a fingerprint computed before, and what the store kept
/// beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportedDocument {
    /// The fingerprint.
    pub fingerprint: Fingerprint,
    /// The length in bytes of the text it was made from, when known.
    pub text_len: Option<u64>,
    /// Its sketch, in an export of a store that keeps sketches.
    pub sketch: Option<Sketch>,
}

impl ExportedDocument {
    /// A document with `fingerprint` and nothing else.
    pub fn new(fingerprint: Fingerprint) -> ExportedDocument {
        ExportedDocument {
            fingerprint,
            text_len: None,
            sketch: None,
        }
    }

    /// The document line of document `id` with `key` (no newline). The fields are written in
    /// a fixed order: `fingerprint`, `id`, `key`, `sketch` (only when there is one),
    /// `text_len`.
    pub fn to_line(&self, id: u64, key: Option<&str>) -> String {
        #[derive(Serialize)]
        struct Line<'a> {
            fingerprint: String,
            id: u64,
            key: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            sketch: Option<String>,
            text_len: Option<u64>,
        }
        serde_json::to_string(&Line {
            fingerprint: self.fingerprint.to_string(),
            id,
            key,
            sketch: self.sketch.as_ref().map(Sketch::to_string),
            text_len: self.text_len,
        })
        .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::SketchKind;

    #[test]
    fn header_round_trips() {
        let settings = SimhashConfig {
            sketch: SketchKind::MinHash,
            latin_count_pieces: 0,
            ..SimhashConfig::default()
        };
        let header = ExportHeader::new(settings, 7);
        let value: Value = serde_json::from_str(&header.to_line()).unwrap();
        let Value::Object(mut fields) = value else {
            panic!("not an object")
        };
        let read = ExportHeader::from_value(fields.remove(HEADER_FIELD).unwrap()).unwrap();
        assert_eq!(read, header);
    }

    #[test]
    fn newer_versions_are_refused_with_advice() {
        let err = ExportHeader::from_value(
            serde_json::json!({"version": 2, "store_format": 9, "settings": {}}),
        )
        .unwrap_err();
        assert!(err.contains("newer simhash-store"), "{err}");
    }

    #[test]
    fn document_lines_have_a_fixed_field_order() {
        let mut doc = ExportedDocument::new(Fingerprint(0xff));
        doc.text_len = Some(12);
        assert_eq!(
            doc.to_line(3, Some("k")),
            r#"{"fingerprint":"00000000000000ff","id":3,"key":"k","text_len":12}"#
        );
        doc.sketch = Some(Sketch::from_bytes([1; crate::sketch::SKETCH_BYTES]));
        assert_eq!(
            doc.to_line(3, None),
            format!(
                r#"{{"fingerprint":"00000000000000ff","id":3,"key":null,"sketch":"{}","text_len":12}}"#,
                "01".repeat(crate::sketch::SKETCH_BYTES)
            )
        );
    }
}
