//! Every error the service answers, and how each becomes a status and a JSON body
//! `{"error": {"kind": ..., "message": ...}}`: the one place where library errors, bad
//! requests and the limits of the tower layers are mapped. Bodies carry no path, panic text
//! or internal detail; a server-side failure is logged to standard error and answered with a
//! generic message.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// How many seconds a client told to retry (503) should wait.
pub const RETRY_AFTER_SECONDS: u32 = 1;

/// An error answer: a status, a kind clients can branch on, and a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A stable, machine-readable kind (`bad_request`, `no_features`, `overloaded`, ...).
    pub kind: &'static str,
    /// What went wrong and what to do, without server internals.
    pub message: String,
}

#[derive(Serialize)]
struct Body_<'a> {
    error: Inner<'a>,
}

#[derive(Serialize)]
struct Inner<'a> {
    kind: &'a str,
    message: &'a str,
}

impl ApiError {
    /// An error with this status, kind and message.
    pub fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            kind,
            message: message.into(),
        }
    }

    /// 400: the request is malformed (JSON, types, values).
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 413: more items in one request than `--max-batch`.
    pub fn too_many_items(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_many_items", message)
    }

    /// 404: no such document or key.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 503 with `Retry-After`: the write queue is full.
    pub fn overloaded() -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "overloaded",
            "the write queue is full: retry after the time in Retry-After",
        )
    }

    /// 503 with `Retry-After`: the disk holding the store is full. The write is not
    /// acknowledged; writes resume by themselves once space is freed, and queries go on meanwhile.
    pub fn disk_full() -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "disk_full",
            "the disk holding the store is full: this write is not acknowledged (retry it: a \
             write by id or key replaces, never duplicates), and nothing acknowledged before \
             it is lost; retry after the time in Retry-After (writes resume by themselves once \
             space is freed; queries go on meanwhile)",
        )
    }

    /// Whether this is [`ApiError::disk_full`].
    pub fn is_disk_full(&self) -> bool {
        self.kind == ApiError::disk_full().kind
    }

    /// 503 with `Retry-After`: the database cannot be reached now (connection lost, a
    /// failover, a restart). A write answered so is not acknowledged: it may or may not be
    /// stored, so resend it (by id or key it replaces, never duplicates).
    pub fn unavailable() -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "the database is unavailable for now (a lost connection, a failover or a restart): \
             this request is not acknowledged (a write may or may not be stored: resend it, by \
             id or key it replaces rather than duplicates); retry after the time in Retry-After",
        )
    }

    /// 400: an endpoint that a service on PostgreSQL does not offer.
    #[cfg(feature = "postgres")]
    pub fn not_on_postgres(what: &str) -> ApiError {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "not_on_postgres",
            format!("{what} is not available from a service on PostgreSQL: use the database's own tools"),
        )
    }

    /// 503: the server is shutting down.
    pub fn shutting_down() -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting_down",
            "the server is shutting down: retry on another instance or after it restarts",
        )
    }

    /// 403: a write to a `--read-only` server.
    pub fn read_only() -> ApiError {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "read_only",
            "this server serves the store read-only: send writes to the writing server",
        )
    }

    /// 409: a document without an id, and none is left: the store holds id 2^64-1, or the
    /// request gives it.
    pub fn no_id_left() -> ApiError {
        ApiError::new(
            StatusCode::CONFLICT,
            "no_id_left",
            "no new id is left: the store holds, or the request gives, id 18446744073709551615 (2^64-1), the largest there is; give the documents ids explicitly",
        )
    }

    /// 403: `POST /v1/backup` to a server started without `--backup-dir`.
    pub fn backups_off() -> ApiError {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "backups_off",
            "this server takes no backups: start it with --backup-dir DIR (a directory on the store's file system makes them hard links)",
        )
    }

    /// 409: a backup of this name exists in `--backup-dir`.
    pub fn backup_exists() -> ApiError {
        ApiError::new(
            StatusCode::CONFLICT,
            "backup_exists",
            "a backup of this name exists already: give another name (backups are never written over)",
        )
    }

    /// 500 for a failure the client cannot fix; what it was goes to the server's log only.
    pub fn internal(what: &str, detail: impl std::fmt::Display) -> ApiError {
        eprintln!("error: {what}: {detail}");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the server failed to {what}: see its log"),
        )
    }

    /// The JSON body alone.
    pub fn body(&self) -> Vec<u8> {
        serde_json::to_vec(&Body_ {
            error: Inner {
                kind: self.kind,
                message: &self.message,
            },
        })
        .unwrap_or_else(|_| br#"{"error":{"kind":"internal","message":""}}"#.to_vec())
    }

    /// The error as a per-item value inside a successful batch response.
    pub fn item(&self) -> serde_json::Value {
        serde_json::json!({"error": {"kind": self.kind, "message": self.message}})
    }
}

impl From<simhash_store::Error> for ApiError {
    fn from(e: simhash_store::Error) -> ApiError {
        use simhash_store::Error as E;
        match e {
            E::NoFeatures => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "no_features",
                "the text has no features to fingerprint (empty, or only punctuation, whitespace or stop words)",
            ),
            E::InvalidArgument(message) => {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_argument", message)
            }
            E::ParseFingerprint { input } => ApiError::new(
                StatusCode::BAD_REQUEST,
                "parse_fingerprint",
                format!("`{input}` is not a 64-bit fingerprint: expected up to 16 hex digits"),
            ),
            E::NoSketches { .. } => ApiError::new(
                StatusCode::BAD_REQUEST,
                "no_sketches",
                "this store keeps no sketches, so it cannot verify near-duplicates: ask without \"verified\"",
            ),
            E::ReadOnly { .. } => ApiError::read_only(),
            E::NoIdLeft { .. } => ApiError::no_id_left(),
            E::DiskFull { message, .. } => {
                eprintln!("error: {message}");
                ApiError::disk_full()
            }
            E::DestinationExists { .. } => ApiError::backup_exists(),
            e if e.is_unavailable() => {
                eprintln!("warning: {e}");
                ApiError::unavailable()
            }
            other => ApiError::internal("use the store", other),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, self.body()).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
        }
        response
    }
}

/// An error response made by a layer or by axum itself (body too large, timeout, no such
/// route, method not allowed) with the JSON body every other error has; other responses as
/// they are. (The outermost middleware, `routes::observe`, applies it to every response.)
pub fn with_json_body(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (kind, message) = match status {
        StatusCode::NOT_FOUND => (
            "not_found",
            "no such route: see docs/service.md for the API",
        ),
        StatusCode::METHOD_NOT_ALLOWED => {
            ("method_not_allowed", "this route does not take this method")
        }
        StatusCode::PAYLOAD_TOO_LARGE => (
            "body_too_large",
            "the request body is larger than the server takes (--max-body): split the request",
        ),
        StatusCode::REQUEST_TIMEOUT => (
            "timeout",
            "the request took longer than the server allows (--request-timeout)",
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ("bad_request", "send a JSON body"),
        s if s.is_client_error() => ("bad_request", "the request is malformed"),
        _ => ("internal", "the server failed: see its log"),
    };
    let mut rewritten = ApiError::new(status, kind, message).into_response();
    for name in [header::RETRY_AFTER, header::ALLOW] {
        if let Some(v) = response.headers().get(&name) {
            rewritten.headers_mut().insert(name, v.clone());
        }
    }
    rewritten
}
