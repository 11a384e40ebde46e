//! The routes of API version 1 and their handlers. Each handler parses its request, calls the
//! library (reads directly on the shared `Store`, writes through the writer's queue) and
//! returns JSON; errors become responses in `error.rs`.

use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{FromRequest, MatchedPath, Path, RawQuery, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use simhash_store::groups::BlockGroups;
use simhash_store::verified::{Verification, DEFAULT_MIN_SIMILARITY, DEFAULT_VERIFIED_K};
use simhash_store::Match;
use tokio::sync::oneshot;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;

use super::api::{self, Content, DocumentIn, MatchOut};
use super::auth::require_token;
use super::backend::Fingerprinter;
use super::error::{with_json_body, ApiError};
use super::metrics::Gauges;
use super::state::AppState;
use super::writer::{IfNew, Prepared, WriteOp};

/// The service: every route, with auth, limits, timeouts, metrics and JSON errors.
pub fn router(state: AppState, max_body: usize, request_timeout: Duration) -> Router {
    let api = Router::new()
        .route("/v1/query", post(query))
        .route("/v1/query-text", post(query_text))
        .route("/v1/insert", post(insert))
        .route("/v1/insert-if-new", post(insert_if_new))
        .route("/v1/documents/{id}", get(document).delete(remove))
        .route("/v1/keys/{*key}", get(by_key))
        .route("/v1/stats", get(stats))
        .route("/v1/backup", post(backup))
        .route("/metrics", get(metrics))
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token));
    Router::new()
        .route("/healthz", get(|| async { Json(json!({"status": "ok"})) }))
        .merge(api)
        .fallback(|| async {
            ApiError::not_found("no such route: see docs/service.md for the API")
        })
        .layer(axum::extract::DefaultBodyLimit::disable())
        .layer(RequestBodyLimitLayer::new(max_body))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            request_timeout,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), observe))
        .with_state(state)
}

/// The outermost middleware (one layer, not two, on every request's path): gives error
/// responses of the layers and of axum the JSON error body ([`with_json_body`]), and counts
/// each request by route and status, with its latency.
async fn observe(State(state): State<AppState>, request: Request, next: Next) -> Response {
    // MatchedPath holds an `Arc<str>`: cloned, not copied.
    let route = request.extensions().get::<MatchedPath>().cloned();
    let started = Instant::now();
    let response = with_json_body(next.run(request).await);
    state.metrics.observe(
        route.as_ref().map_or("unmatched", MatchedPath::as_str),
        response.status().as_u16(),
        started.elapsed(),
    );
    response
}

/// A JSON body decoded into `T`; a bad body is a 400 (413 when over `--max-body`) with the
/// JSON error body. Any content type is read as JSON.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = read_body(request, state).await?;
        api::decode(&bytes)
            .map(ApiJson)
            .map_err(|m| ApiError::bad_request(format!("invalid request body: {m}")))
    }
}

/// The whole request body; 413 when over `--max-body`.
async fn read_body<S: Send + Sync>(request: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(request, state).await.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                "the request body is larger than the server takes (--max-body): split the request",
            )
        } else {
            ApiError::bad_request("the request body could not be read")
        }
    })
}

/// The body of `POST /v1/query`: JSON, or with `Content-Type: application/octet-stream` the
/// fingerprints as little-endian u64s and `k` in the query string (`?k=3`).
pub struct QueryBody(pub api::QueryRequest);

impl<S: Send + Sync> FromRequest<S> for QueryBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let binary = request
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .is_some_and(|v| {
                v.as_bytes()
                    .starts_with(api::BINARY_CONTENT_TYPE.as_bytes())
            });
        if !binary {
            let ApiJson(q) = ApiJson::from_request(request, state).await?;
            return Ok(QueryBody(q));
        }
        let query = request.uri().query().map(str::to_owned);
        let bytes = read_body(request, state).await?;
        api::decode_binary_query(query.as_deref(), &bytes)
            .map(QueryBody)
            .map_err(|m| ApiError::bad_request(format!("invalid request: {m}")))
    }
}

fn check_batch(state: &AppState, items: usize) -> Result<(), ApiError> {
    api::check_batch(items, state.limits.max_batch).map_err(ApiError::too_many_items)
}

fn check_k(k: u32) -> Result<u32, ApiError> {
    api::check_k(k).map_err(ApiError::bad_request)
}

/// Runs `f` on the blocking pool (texts: fingerprinting a long one takes a while).
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal("run a request", e))?
}

fn results(lists: Vec<Vec<MatchOut>>) -> Json<api::Results> {
    Json(api::Results { results: lists })
}

fn out(matches: Vec<Match>) -> Vec<MatchOut> {
    matches.into_iter().map(MatchOut::from).collect()
}

async fn query(
    State(state): State<AppState>,
    QueryBody(request): QueryBody,
) -> Result<Json<api::Results>, ApiError> {
    check_batch(&state, request.fingerprints.len())?;
    let k = check_k(request.k)?;
    let lists = state
        .backend
        .query(&state.pool, request.fingerprints, k)
        .await?;
    Ok(results(lists.into_iter().map(out).collect()))
}

async fn query_text(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<api::QueryTextRequest>,
) -> Result<Json<api::Results>, ApiError> {
    check_batch(&state, request.texts.len())?;
    let verified = request.verified;
    let verification = if verified {
        Some(
            Verification::new(
                check_k(request.k.unwrap_or(DEFAULT_VERIFIED_K))?,
                request.min_similarity.unwrap_or(DEFAULT_MIN_SIMILARITY),
            )
            .map_err(ApiError::from)?,
        )
    } else {
        if request.min_similarity.is_some() {
            return Err(ApiError::bad_request(
                "\"min_similarity\" needs \"verified\": true",
            ));
        }
        None
    };
    let k = check_k(request.k.unwrap_or(api::DEFAULT_K))?;
    let texts = request.texts;
    if verification.is_none() {
        let fingerprinter = state.backend.fingerprinter();
        let fps = blocking(move || {
            texts
                .iter()
                .map(|text| Ok(fingerprinter.simhasher().fingerprint(text)?))
                .collect::<Result<Vec<_>, ApiError>>()
        })
        .await?;
        let lists = state.backend.query(&state.pool, fps, k).await?;
        return Ok(results(lists.into_iter().map(out).collect()));
    }
    let store = state.backend.store("a verified query")?;
    let lists = blocking(move || {
        texts
            .iter()
            .map(|text| match verification {
                Some(v) => Ok(store
                    .query_text_verified(text, v)?
                    .into_iter()
                    .map(|m| MatchOut {
                        id: m.id,
                        key: m.key,
                        distance: m.distance,
                        fingerprint: m.fingerprint,
                        similarity: Some(m.similarity),
                    })
                    .collect()),
                None => Ok(out(store.query_text(text, k)?)),
            })
            .collect::<Result<Vec<_>, ApiError>>()
    })
    .await?;
    Ok(results(lists))
}

/// Fingerprints each document (on the blocking pool: texts can be long): a document that
/// cannot be is an error of its own, the others go on.
async fn prepare(
    fingerprinter: Fingerprinter,
    documents: Vec<DocumentIn>,
) -> Result<Vec<Result<Prepared, ApiError>>, ApiError> {
    blocking(move || {
        Ok(documents
            .into_iter()
            .map(|doc| {
                let (fingerprint, text_len, sketch) =
                    match doc.content().map_err(ApiError::bad_request)? {
                        Content::Fingerprint(fp) => (fp, None, None),
                        Content::Text(text) => {
                            let (fp, sketch) =
                                fingerprinter.simhasher().fingerprint_and_sketch(text)?;
                            (fp, Some(text.len() as u64), sketch)
                        }
                    };
                Ok(Prepared {
                    id: doc.id,
                    key: doc.key,
                    fingerprint,
                    text_len,
                    sketch,
                })
            })
            .collect())
    })
    .await
}

/// Splits prepared documents into those to send and the per-item errors by position.
fn split(prepared: Vec<Result<Prepared, ApiError>>) -> (Vec<Prepared>, Vec<Option<ApiError>>) {
    let mut ok = Vec::with_capacity(prepared.len());
    let errors = prepared
        .into_iter()
        .map(|p| match p {
            Ok(doc) => {
                ok.push(doc);
                None
            }
            Err(e) => Some(e),
        })
        .collect();
    (ok, errors)
}

fn writer(state: &AppState) -> Result<&super::writer::WriterHandle, ApiError> {
    state.writer.as_ref().ok_or_else(ApiError::read_only)
}

async fn answer<T>(rx: oneshot::Receiver<Result<T, ApiError>>) -> Result<T, ApiError> {
    rx.await.map_err(|_| ApiError::shutting_down())?
}

async fn insert(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<api::InsertRequest>,
) -> Result<Json<Value>, ApiError> {
    check_batch(&state, request.documents.len())?;
    let writer = writer(&state)?;
    let (docs, errors) = split(prepare(state.backend.fingerprinter(), request.documents).await?);
    let mut fingerprints = docs
        .iter()
        .map(|d| d.fingerprint)
        .collect::<Vec<_>>()
        .into_iter();
    let mut ids = Vec::new().into_iter();
    if !docs.is_empty() {
        let (reply, rx) = oneshot::channel();
        writer.submit(WriteOp::Insert { docs, reply }, &state.metrics)?;
        ids = answer(rx).await?.into_iter();
    }
    let mut out_ids = Vec::with_capacity(errors.len());
    let mut out_fps = Vec::with_capacity(errors.len());
    let mut failed = Vec::new();
    for (index, e) in errors.into_iter().enumerate() {
        match e {
            Some(e) => {
                out_ids.push(Value::Null);
                out_fps.push(Value::Null);
                failed.push(json!({"index": index, "error": e.item()["error"]}));
            }
            None => {
                out_ids.push(ids.next().map_or(Value::Null, |id| json!(id)));
                out_fps.push(fingerprints.next().map_or(Value::Null, |fp| json!(fp)));
            }
        }
    }
    let mut body = json!({ "ids": out_ids, "fingerprints": out_fps });
    if !failed.is_empty() {
        body["errors"] = json!(failed);
    }
    Ok(Json(body))
}

async fn insert_if_new(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<api::InsertIfNewRequest>,
) -> Result<Json<Value>, ApiError> {
    check_batch(&state, request.documents.len())?;
    let k = check_k(request.k)?;
    let writer = writer(&state)?;
    let (docs, errors) = split(prepare(state.backend.fingerprinter(), request.documents).await?);
    let mut outcomes = Vec::new().into_iter();
    if !docs.is_empty() {
        let (reply, rx) = oneshot::channel();
        writer.submit(WriteOp::InsertIfNew { docs, k, reply }, &state.metrics)?;
        outcomes = answer(rx).await?.into_iter();
    }
    let items: Vec<Value> = errors
        .into_iter()
        .map(|e| match e {
            Some(e) => e.item(),
            None => match outcomes.next() {
                Some(IfNew::Inserted(id)) => json!({"inserted": true, "id": id}),
                Some(IfNew::Duplicate(matches)) => {
                    json!({"inserted": false, "matches": out(matches)})
                }
                None => Value::Null,
            },
        })
        .collect();
    Ok(Json(json!({ "results": items })))
}

fn parse_id(id: &str) -> Result<u64, ApiError> {
    id.parse().map_err(|_| {
        ApiError::bad_request(format!(
            "`{id}` is not a document id (a non-negative integer)"
        ))
    })
}

fn document_json(id: u64, doc: simhash_store::Document) -> Value {
    json!({
        "id": id,
        "key": doc.key,
        "fingerprint": doc.fingerprint,
        "text_len": doc.text_len,
        "added_micros": doc.added,
    })
}

async fn document(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = parse_id(&id)?;
    match state.backend.document(id).await? {
        Some(doc) => Ok(Json(document_json(id, doc))),
        None => Err(ApiError::not_found(format!("no document {id}"))),
    }
}

async fn by_key(
    State(state): State<AppState>,
    Path(key): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let found = state.backend.by_key(&key).await?;
    found
        .map(|(id, doc)| Json(document_json(id, doc)))
        .ok_or_else(|| ApiError::not_found("no document has this key"))
}

async fn remove(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = parse_id(&id)?;
    let (reply, rx) = oneshot::channel();
    writer(&state)?.submit(WriteOp::Remove { id, reply }, &state.metrics)?;
    let removed = answer(rx).await?;
    Ok(Json(json!({ "removed": removed })))
}

/// `POST /v1/backup`: a consistent copy of the store in `--backup-dir`, answered once it is
/// complete (on the blocking pool; writes wait only while the store's files are linked).
async fn backup(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<api::BackupRequest>,
) -> Result<Json<Value>, ApiError> {
    let store = state.backend.store("POST /v1/backup")?;
    let dir = state.backup_dir.clone().ok_or_else(ApiError::backups_off)?;
    api::check_backup_name(&request.name).map_err(ApiError::bad_request)?;
    let dest = dir.join(&request.name);
    let made = blocking(move || Ok(store.backup(&dest)?)).await?;
    Ok(Json(json!({
        "name": request.name,
        "path": made.path.display().to_string(),
        "documents": made.documents,
    })))
}

/// `GET /v1/stats`; with `?groups=TOP`, also how the documents spread over the block values
/// and what that costs a query (one pass over the documents, on the blocking pool).
async fn stats(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let top = api::stats_groups(query.as_deref()).map_err(ApiError::bad_request)?;
    let mut body = json!({
        "documents": state.backend.len().await?,
        "disk_bytes": state.backend.disk_bytes()?,
        "read_only": state.writer.is_none(),
        "sketches": state.backend.fingerprinter().simhasher().config().sketch != simhash_store::sketch::SketchKind::None,
        "queued_writes": state.writer.as_ref().map_or(0, |w| w.queued()),
    });
    match state.backend.store("") {
        Ok(store) => body["format_version"] = json!(store.format_version()),
        Err(_) => body["backend"] = json!("postgres"),
    }
    if let Some(top) = top {
        let store = state.backend.store("\"groups\" in GET /v1/stats")?;
        let groups = blocking(move || Ok(BlockGroups::of_store(&store)?)).await?;
        body["groups"] = groups_json(&groups, top);
    }
    Ok(Json(body))
}

/// The spread of documents over block values, as `simhash-store stats` and Python's
/// `Store.stats` give it: per block family its `top` largest groups (the block value in hex,
/// as `stats` prints it, and the documents), the largest one's share, the shared-block factor
/// and the entries a query drawn like the documents scans.
fn groups_json(groups: &BlockGroups, top: usize) -> Value {
    let blocks: Vec<Value> = (0..simhash_store::BLOCKS)
        .map(|b| {
            json!({
                "family": format!("block{b}"),
                "largest": groups
                    .largest(b, top)
                    .into_iter()
                    .map(|(value, documents)| json!([format!("{value:04x}"), documents]))
                    .collect::<Vec<_>>(),
                "max_share": groups.largest_share(b),
                "shared_block_factor": groups.shared_block_factor(b),
                "expected_scan": groups.expected_scan(b),
                "split_groups": groups.split_groups(b),
            })
        })
        .collect();
    let scan = groups.expected_scan_per_query();
    let uniform = groups.uniform_scan_per_query();
    json!({
        "blocks": blocks,
        "expected_scan_per_query": scan,
        "uniform_scan_per_query": uniform,
        "scan_vs_uniform": if uniform > 0.0 { scan / uniform } else { 0.0 },
    })
}

async fn metrics(State(state): State<AppState>) -> Result<Response, ApiError> {
    let gauges = Gauges {
        documents: state.backend.len().await?,
        disk_bytes: state.backend.disk_bytes()?,
        queued_writes: state.writer.as_ref().map_or(0, |w| w.queued()),
    };
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        state.metrics.render(&gauges),
    )
        .into_response())
}
