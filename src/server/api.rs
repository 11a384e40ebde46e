//! The wire format of API version 1: request bodies as they are decoded, and the checks every
//! request passes before the library sees it. Serde types and plain functions only (no server
//! types), so the `server_request` fuzz target compiles this file alone.
//!
//! Fingerprints are 16-hex-digit strings in responses; requests also take 1..=16 hex digits
//! with an optional `0x`, or an integer (`Fingerprint`'s own serde rules: a negative one is
//! read as its 64 bits in two's complement, as Spark and Arrow store them).

use serde::{Deserialize, Serialize};
use simhash_store::{external_key_fits, Fingerprint, Match, MAX_DISTANCE, MAX_EXTERNAL_KEY_LEN};

pub use simhash_store::DEFAULT_K;

/// `POST /v1/query`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryRequest {
    /// The fingerprints to query, answered in order.
    pub fingerprints: Vec<Fingerprint>,
    /// The Hamming distance, 0..=64.
    #[serde(default = "default_k")]
    pub k: u32,
}

/// `POST /v1/query-text`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryTextRequest {
    /// The texts to fingerprint with the store's settings and query, answered in order.
    pub texts: Vec<String>,
    /// The Hamming distance, 0..=64 (for `verified`: the candidates' distance).
    #[serde(default)]
    pub k: Option<u32>,
    /// Keep only candidates whose sketches agree (a store that keeps sketches).
    #[serde(default)]
    pub verified: bool,
    /// With `verified`: the smallest sketch similarity accepted, 0..=1.
    #[serde(default)]
    pub min_similarity: Option<f64>,
}

/// One document of `POST /v1/insert` and `POST /v1/insert-if-new`: a text, or a fingerprint.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentIn {
    /// The id; assigned by the server when absent (a stored key keeps its id).
    #[serde(default)]
    pub id: Option<u64>,
    /// The external key (URL, path): unique in the store.
    #[serde(default)]
    pub key: Option<String>,
    /// The text, fingerprinted with the store's settings.
    #[serde(default)]
    pub text: Option<String>,
    /// The fingerprint, when the client computed it.
    #[serde(default)]
    pub fingerprint: Option<Fingerprint>,
}

/// What a document carries to be fingerprinted.
#[derive(Debug)]
pub enum Content<'a> {
    /// A text.
    Text(&'a str),
    /// A fingerprint computed by the client.
    Fingerprint(Fingerprint),
}

impl DocumentIn {
    /// The text or the fingerprint (exactly one must be given), with the key checked.
    ///
    /// # Errors
    /// A message for the client when both or neither are given, or the key is empty or too
    /// long.
    pub fn content(&self) -> Result<Content<'_>, String> {
        if let Some(key) = &self.key {
            if !external_key_fits(key) {
                return Err(format!(
                    "a key must be 1 to {MAX_EXTERNAL_KEY_LEN} bytes, this one is {}",
                    key.len()
                ));
            }
        }
        match (&self.text, self.fingerprint) {
            (Some(text), None) => Ok(Content::Text(text)),
            (None, Some(fp)) => Ok(Content::Fingerprint(fp)),
            (Some(_), Some(_)) => {
                Err("give either \"text\" or \"fingerprint\" in a document, not both".into())
            }
            (None, None) => Err("a document needs \"text\" or \"fingerprint\"".into()),
        }
    }
}

/// `POST /v1/insert`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsertRequest {
    /// The documents, upserted in order (a later one for the same id or key wins).
    pub documents: Vec<DocumentIn>,
}

/// `POST /v1/insert-if-new`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsertIfNewRequest {
    /// The documents, checked and inserted in order.
    pub documents: Vec<DocumentIn>,
    /// The Hamming distance within which a stored document keeps one out.
    #[serde(default = "default_k")]
    pub k: u32,
}

fn default_k() -> u32 {
    DEFAULT_K
}

/// Checks a request's distance.
///
/// # Errors
/// A message for the client when `k` is over [`MAX_DISTANCE`].
pub fn check_k(k: u32) -> Result<u32, String> {
    if k > MAX_DISTANCE {
        return Err(format!("k must be 0 to {MAX_DISTANCE}, got {k}"));
    }
    Ok(k)
}

/// Checks the number of items in one request against the server's `--max-batch`.
///
/// # Errors
/// A message for the client naming both numbers.
pub fn check_batch(items: usize, max_batch: usize) -> Result<(), String> {
    if items > max_batch {
        return Err(format!(
            "{items} items in one request, the server takes at most {max_batch} (--max-batch): split the request"
        ));
    }
    Ok(())
}

/// A match as the API returns it.
#[derive(Debug, Serialize)]
pub struct MatchOut {
    /// The document id.
    pub id: u64,
    /// Its external key.
    pub key: Option<String>,
    /// Its Hamming distance to the query.
    pub distance: u32,
    /// Its fingerprint, 16 hex digits.
    pub fingerprint: Fingerprint,
    /// For verified queries: the sketch similarity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
}

impl From<Match> for MatchOut {
    fn from(m: Match) -> MatchOut {
        MatchOut {
            id: m.id,
            key: m.key,
            distance: m.distance,
            fingerprint: m.fingerprint,
            similarity: None,
        }
    }
}

/// The answer of `POST /v1/query` and `POST /v1/query-text`: one list of matches per query,
/// in order.
#[derive(Debug, Serialize)]
pub struct Results {
    /// The matches of each query.
    pub results: Vec<Vec<MatchOut>>,
}

/// Decodes a request body of type `T` the way every route does (the fuzz target's entry).
///
/// # Errors
/// serde_json's message (a position and what was expected; never server state).
pub fn decode<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, String> {
    serde_json::from_slice(body).map_err(|e| e.to_string())
}

/// The content type of a binary `POST /v1/query` body.
pub const BINARY_CONTENT_TYPE: &str = "application/octet-stream";

/// Decodes a binary `POST /v1/query`: `body` holds the fingerprints as little-endian u64s
/// (8 bytes each, no header), and `query` (the URL's query string) may give `k=K`.
///
/// # Errors
/// A message for the client when the body's length is not a multiple of 8, or the query
/// string has anything but `k` or a `k` that is not a number.
/// The most groups per block family `GET /v1/stats?groups=TOP` lists.
pub const MAX_STATS_GROUPS: usize = 100;

/// The `groups` of `GET /v1/stats?groups=TOP`: how many of the largest groups of each block
/// family to list (1 to [`MAX_STATS_GROUPS`]), or `None` without it.
pub fn stats_groups(query: Option<&str>) -> Result<Option<usize>, String> {
    let mut top = None;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("groups", v)) => match v.parse::<usize>() {
                Ok(n) if (1..=MAX_STATS_GROUPS).contains(&n) => top = Some(n),
                _ => {
                    return Err(format!(
                        "`groups={v}`: give how many of the largest groups of each block family to list, 1 to {MAX_STATS_GROUPS}"
                    ))
                }
            },
            _ => {
                return Err(format!(
                    "`{pair}` in the query string: /v1/stats takes only `groups`"
                ))
            }
        }
    }
    Ok(top)
}

pub fn decode_binary_query(query: Option<&str>, body: &[u8]) -> Result<QueryRequest, String> {
    let mut k = DEFAULT_K;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("k", v)) => {
                k = v
                    .parse()
                    .map_err(|_| format!("`k={v}` in the query string is not a distance"))?;
            }
            _ => {
                return Err(format!(
                    "`{pair}` in the query string: a binary query takes only `k`"
                ))
            }
        }
    }
    if !body.len().is_multiple_of(8) {
        return Err(format!(
            "a binary query body is fingerprints as little-endian u64s: its length must be a multiple of 8 bytes, not {}",
            body.len()
        ));
    }
    let fingerprints = body
        .chunks_exact(8)
        .map(|b| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(b);
            Fingerprint(u64::from_le_bytes(bytes))
        })
        .collect();
    Ok(QueryRequest { fingerprints, k })
}

/// Runs every decoder and check on `body`: none may panic. The entry of the `server_request`
/// fuzz target and of `tests/server_fuzz_corpus.rs`, which compile this file alone.
#[allow(dead_code)]
pub fn check_all(body: &[u8]) {
    if let Ok(q) = decode_binary_query(std::str::from_utf8(body).ok(), body) {
        let _ = check_k(q.k);
    }
    if let Ok(q) = decode::<QueryRequest>(body) {
        let _ = check_k(q.k);
        let _ = check_batch(q.fingerprints.len(), 100_000);
    }
    if let Ok(q) = decode::<QueryTextRequest>(body) {
        let _ = q.k.map(check_k);
    }
    if let Ok(r) = decode::<InsertRequest>(body) {
        for d in &r.documents {
            let _ = d.content();
        }
    }
    if let Ok(r) = decode::<InsertIfNewRequest>(body) {
        let _ = check_k(r.k);
        for d in &r.documents {
            let _ = d.content();
        }
    }
    if let Ok(r) = decode::<BackupRequest>(body) {
        let _ = check_backup_name(&r.name);
    }
}

/// `POST /v1/backup`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackupRequest {
    /// The backup's directory name inside `--backup-dir`: one path component
    /// ([`check_backup_name`]).
    pub name: String,
}

/// The longest backup name, in bytes (a file name's limit on common file systems).
pub const MAX_BACKUP_NAME_BYTES: usize = 255;

/// Checks that `name` is one plain path component inside `--backup-dir`: not empty, not `.`
/// or `..`, not hidden (a name starting with `.` is where unfinished copies are made), no `/`,
/// `\` or NUL, at most [`MAX_BACKUP_NAME_BYTES`] bytes.
///
/// # Errors
/// A message for the client saying what is wrong.
pub fn check_backup_name(name: &str) -> Result<(), String> {
    let problem = if name.is_empty() {
        Some("is empty")
    } else if name.len() > MAX_BACKUP_NAME_BYTES {
        Some("is longer than 255 bytes")
    } else if name.starts_with('.') {
        Some(
            "starts with `.` (`.` and `..` are not names, and hidden names hold unfinished copies)",
        )
    } else if name.contains(['/', '\\', '\0']) {
        Some("holds `/`, `\\` or NUL")
    } else {
        None
    };
    match problem {
        None => Ok(()),
        Some(problem) => {
            // A long name is shown cut: the answer does not echo a whole request body.
            let shown: String = name.chars().take(64).collect();
            let cut = if shown.len() < name.len() { "..." } else { "" };
            Err(format!(
                "the backup name {shown:?}{cut} {problem}: give one directory name, e.g. \"pages-2026-11-29\""
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_as_hex_or_integers() {
        let q: QueryRequest =
            decode(br#"{"fingerprints": ["00000000000000ff", "0xff", 255]}"#).expect("decodes");
        assert_eq!(q.fingerprints, vec![Fingerprint(255); 3]);
        assert_eq!(q.k, DEFAULT_K);
    }

    #[test]
    fn bad_requests_are_messages() {
        assert!(decode::<QueryRequest>(br#"{"fingerprints": ["xyz"]}"#).is_err());
        assert!(decode::<QueryRequest>(br#"{"fingerprints": [1.5]}"#).is_err());
        assert!(decode::<QueryRequest>(br#"{"fingerprints": "ff"}"#).is_err());
        assert!(decode::<QueryRequest>(br#"{"fingerprints": [], "extra": 1}"#).is_err());
        assert!(check_k(65).is_err());
        assert!(check_batch(11, 10).is_err());
        let d: InsertRequest =
            decode(br#"{"documents": [{"text": "a", "fingerprint": 1}, {}, {"key": "", "fingerprint": 1}]}"#)
                .expect("decodes");
        assert!(d.documents.iter().all(|d| d.content().is_err()));
    }

    #[test]
    fn a_backup_name_is_one_plain_path_component() {
        for good in ["pages-2026-11-29", "a", "b.db", "a..b", &"x".repeat(255)] {
            assert_eq!(check_backup_name(good), Ok(()), "{good}");
        }
        let long = "x".repeat(256);
        for bad in [
            "", ".", "..", ".hidden", "a/b", "../x", "/abs", "a\\b", "a\0b", &long,
        ] {
            assert!(check_backup_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn binary_queries_are_little_endian_u64s() {
        let body: Vec<u8> = [255u64, u64::MAX]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let q = decode_binary_query(Some("k=5"), &body).expect("decodes");
        assert_eq!(
            q.fingerprints,
            vec![Fingerprint(255), Fingerprint(u64::MAX)]
        );
        assert_eq!(q.k, 5);
        let q = decode_binary_query(None, &[]).expect("decodes");
        assert!(q.fingerprints.is_empty());
        assert_eq!(q.k, DEFAULT_K);
        assert!(decode_binary_query(None, &body[..7]).is_err());
        assert!(decode_binary_query(Some("k=x"), &body).is_err());
        assert!(decode_binary_query(Some("n=3"), &body).is_err());
    }
}
