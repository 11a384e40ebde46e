//! `simhash-store serve`: the store as a JSON-over-HTTP service (API version 1).
//!
//! - `api.rs`: the wire format and request checks; `routes.rs`: the handlers;
//!   `error.rs`: every error as a status and a JSON body.
//! - `state.rs`: what handlers share; `auth.rs`: bearer tokens; `metrics.rs`: `/metrics`.
//! - `pool.rs`: the threads that answer large query batches, round-robin.
//! - `backend.rs`: what handlers read, a store directory or an index in PostgreSQL.
//! - `writer.rs`: the single writer thread and its group commit; `pg_writer.rs`: the same
//!   for PostgreSQL, one transaction per group; `staging.rs`: how a group is staged, ids
//!   included, for both.
//! - Here: opening the store, the accept loop (plain TCP or rustls), per-connection limits,
//!   and graceful shutdown on SIGTERM/SIGINT.

pub mod api;
pub mod auth;
pub mod backend;
pub mod error;
pub mod metrics;
#[cfg(feature = "postgres")]
pub mod pg_writer;
pub mod pool;
pub mod routes;
pub mod staging;
pub mod state;
pub mod writer;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use simhash_store::{Durability, Store};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use auth::Auth;
use metrics::Metrics;
use pool::QueryPool;
use state::{AppState, Limits, StoreSlot};

/// The index a service serves.
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub enum IndexSource {
    /// A store directory.
    Store(PathBuf),
    /// An index in PostgreSQL: the URL writes (and, without `read`, reads) go to, and the
    /// URL queries go to (a hot standby).
    Postgres {
        /// `--postgres`.
        url: String,
        /// `--postgres-read`.
        read: Option<String>,
    },
}

/// Everything `serve` is configured with.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The index served.
    pub index: IndexSource,
    /// Where to listen.
    pub listen: SocketAddr,
    /// Who may call.
    pub auth: Auth,
    /// Open the store read-only (beside a writer) and refresh the view every `refresh`.
    pub read_only: bool,
    /// No lines on standard error about starting and stopping (warnings and errors still).
    pub quiet: bool,
    /// How often a read-only server reopens its view.
    pub refresh: Duration,
    /// The durability of writes.
    pub durability: Durability,
    /// The largest request body, in bytes.
    pub max_body: usize,
    /// The most items in one request.
    pub max_batch: usize,
    /// Write requests that may wait for the writer before new ones get 503.
    pub queue: usize,
    /// The longest a request may take, body included.
    pub request_timeout: Duration,
    /// The longest a client may take to send a request's headers (and a TLS handshake).
    pub header_timeout: Duration,
    /// Open connections at most; more are closed at once.
    pub max_connections: usize,
    /// How long shutdown waits for requests in flight.
    pub shutdown_grace: Duration,
    /// A PEM certificate chain and private key: serve HTTPS.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Threads answering requests, and threads answering large query batches (as many
    /// again); 0: one per core.
    pub threads: usize,
    /// Where `POST /v1/backup` writes backups; `None`: backups are refused.
    pub backup_dir: Option<PathBuf>,
}

/// Runs the server until SIGTERM or SIGINT; then it stops accepting, lets requests in flight
/// finish (up to `shutdown_grace`), commits every queued write, flushes and returns.
///
/// # Errors
/// The store cannot be opened, the address cannot be bound, the TLS files cannot be read.
pub fn run(config: ServeConfig) -> anyhow::Result<()> {
    let tls = config
        .tls
        .as_ref()
        .map(|(cert, key)| tls_acceptor(cert, key))
        .transpose()?;
    match config.index.clone() {
        IndexSource::Store(path) => run_store(config, path, tls),
        #[cfg(feature = "postgres")]
        IndexSource::Postgres { url, read } => run_postgres(config, &url, read.as_deref(), tls),
        #[cfg(not(feature = "postgres"))]
        IndexSource::Postgres { .. } => anyhow::bail!(
            "this simhash-store was built without PostgreSQL support: build it with `--features postgres`"
        ),
    }
}

/// The async runtime of `threads` request threads (0: one per core).
fn runtime(threads: usize) -> anyhow::Result<(tokio::runtime::Runtime, usize)> {
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    // One thread: a current-thread runtime, which answers a request without waking or
    // handing it to another thread.
    let runtime = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(threads);
        builder
    }
    .enable_all()
    .thread_name("simhash-serve")
    .build()
    .context("cannot start the async runtime")?;
    Ok((runtime, threads))
}

/// [`run`] on an index in PostgreSQL: opens it (and the `--postgres-read` one), starts the
/// writer task and serves; on shutdown the writer commits what is queued.
#[cfg(feature = "postgres")]
fn run_postgres(
    config: ServeConfig,
    url: &str,
    read: Option<&str>,
    tls: Option<TlsAcceptor>,
) -> anyhow::Result<()> {
    use simhash_store::postgres::PgIndex;
    if config.read_only || config.backup_dir.is_some() {
        anyhow::bail!(
            "--read-only and --backup-dir are for a store directory: with --postgres, send \
             queries to a hot standby with --postgres-read URL, and back up with PostgreSQL's tools"
        );
    }
    let (runtime, threads) = runtime(config.threads)?;
    let pool = QueryPool::start(threads).context("cannot start the query threads")?;
    let served = runtime.block_on(async {
        let write = Arc::new(
            PgIndex::open(url, None)
                .await
                .context("cannot open the index in PostgreSQL (--postgres)")?,
        );
        let read = match read {
            Some(read) => Arc::new(
                PgIndex::open(read, None)
                    .await
                    .context("cannot open the index in PostgreSQL (--postgres-read)")?,
            ),
            None => Arc::clone(&write),
        };
        let metrics = Arc::new(Metrics::default());
        let (writer, writer_task) =
            pg_writer::start(Arc::clone(&write), config.queue, Arc::clone(&metrics));
        let description = match read.database() == write.database() {
            true => write.database().to_owned(),
            false => format!("{} (queries: {})", write.database(), read.database()),
        };
        let state = AppState::new(
            backend::Backend::Postgres(backend::PgBackend { write, read }),
            Some(writer),
            config.auth.clone(),
            Limits {
                max_batch: config.max_batch,
            },
            metrics,
            pool,
            None,
        );
        let served = serve(&config, state, tls, &description).await;
        // Every handle of the queue is gone with the router: the writer commits what is
        // queued and ends.
        if tokio::time::timeout(config.shutdown_grace, writer_task)
            .await
            .is_err()
        {
            eprintln!(
                "warning: the writer did not finish within {:?}",
                config.shutdown_grace
            );
        }
        served
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    served?;
    if !config.quiet {
        eprintln!("simhash-store serve: stopped");
    }
    Ok(())
}

/// [`run`] on a store directory.
fn run_store(config: ServeConfig, path: PathBuf, tls: Option<TlsAcceptor>) -> anyhow::Result<()> {
    let store = if config.read_only {
        Store::builder().read_only(true).open(&path)
    } else {
        Store::builder().durability(config.durability).open(&path)
    }
    .map_err(|e| match e {
        simhash_store::Error::Locked { .. } if !config.read_only => anyhow::anyhow!(
            "the store at {0} is in use by another process that writes to it (a `simhash-store \
             load`, another `serve`, or a program): to serve queries beside it, run \
             `simhash-store serve --store {0} --read-only` (on a --listen port of its own) and \
             send writes to the process that holds it; or run this again when it has finished",
            path.display()
        ),
        e => anyhow::Error::new(e).context(format!("cannot open the store at {}", path.display())),
    })?;
    let backup_dir = config
        .backup_dir
        .as_deref()
        .map(|dir| backup_dir(dir, store.path()))
        .transpose()?;
    // The server keeps no handle of its own on the store: the writer closes and reopens it
    // after a full disk (`writer.rs`).
    let slot = Arc::new(StoreSlot::new(Arc::new(store)));
    let metrics = Arc::new(Metrics::default());
    let (writer, writer_thread) = if config.read_only {
        (None, None)
    } else {
        let (path, durability) = (path.clone(), config.durability);
        let reopen: writer::Reopen =
            Box::new(move || Store::builder().durability(durability).open(&path));
        let (handle, thread) = writer::start(
            Arc::clone(&slot),
            reopen,
            config.queue,
            Arc::clone(&metrics),
        )?;
        (Some(handle), Some(thread))
    };
    let (runtime, threads) = runtime(config.threads)?;
    let pool = QueryPool::start(threads).context("cannot start the query threads")?;
    let limits = Limits {
        max_batch: config.max_batch,
    };
    let state = AppState::new(
        backend::Backend::Store(Arc::clone(&slot)),
        writer,
        config.auth.clone(),
        limits,
        metrics,
        pool,
        backup_dir,
    );
    let description = format!(
        "{} documents in {}{}",
        slot.get().len(),
        path.display(),
        if config.read_only { " (read-only)" } else { "" }
    );
    let served = runtime.block_on(serve(&config, state, tls, &description));
    // Dropping the runtime drops every task and with them the last handles of the writer's
    // queue: the writer commits what is queued and ends.
    runtime.shutdown_timeout(Duration::from_secs(1));
    if let Some(thread) = writer_thread {
        if thread.join().is_err() {
            anyhow::bail!("the writer thread panicked; the last write group may be lost");
        }
    }
    served?;
    slot.get().flush().context("cannot flush the store")?;
    if !config.quiet {
        eprintln!("simhash-store serve: stopped");
    }
    Ok(())
}

/// The `--backup-dir` of the store at `store`, created if missing: a directory outside the
/// store, as an absolute path.
fn backup_dir(dir: &std::path::Path, store: &std::path::Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the --backup-dir {}", dir.display()))?;
    let resolve = |p: &std::path::Path| {
        p.canonicalize()
            .with_context(|| format!("cannot resolve {}", p.display()))
    };
    let (dir, store) = (resolve(dir)?, resolve(store)?);
    if dir.starts_with(&store) {
        anyhow::bail!(
            "--backup-dir {} lies inside the store {}: give a directory outside it",
            dir.display(),
            store.display()
        );
    }
    Ok(dir)
}

async fn serve(
    config: &ServeConfig,
    state: AppState,
    tls: Option<TlsAcceptor>,
    description: &str,
) -> anyhow::Result<()> {
    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let local = listener.local_addr()?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    // The first line on standard output names the address (with an ephemeral port, the one
    // chosen): scripts and tests read it.
    println!("listening on {scheme}://{local}");
    if !config.quiet {
        eprintln!("simhash-store serve: {description}; listening on {scheme}://{local}");
    }
    if config.read_only {
        state.refresh_every(config.refresh);
    }
    let router = routes::router(state, config.max_body, config.request_timeout);
    let connections = Arc::new(tokio::sync::Semaphore::new(config.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout)
        .keep_alive(true);
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    eprintln!("warning: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
            continue; // over --max-connections: dropping the stream closes it
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let http = http.clone();
        let watcher = graceful.watcher();
        let tls = tls.clone();
        let handshake_timeout = config.header_timeout;
        tokio::spawn(async move {
            match tls {
                None => serve_connection(http, stream, service, watcher).await,
                Some(acceptor) => {
                    let accepted =
                        tokio::time::timeout(handshake_timeout, acceptor.accept(stream)).await;
                    if let Ok(Ok(stream)) = accepted {
                        serve_connection(http, stream, service, watcher).await;
                    }
                }
            }
            drop(permit);
        });
    }
    drop(listener);
    if !config.quiet {
        eprintln!("simhash-store serve: stopping; finishing requests in flight");
    }
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(config.shutdown_grace) => {
            eprintln!("warning: requests still running after {:?}: closing them", config.shutdown_grace);
        }
    }
    Ok(())
}

async fn serve_connection<I>(
    http: hyper::server::conn::http1::Builder,
    io: I,
    service: TowerToHyperService<axum::Router>,
    watcher: hyper_util::server::graceful::Watcher,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let connection = http.serve_connection(TokioIo::new(io), service);
    // Errors here are the client's (reset, header timeout, malformed HTTP): hyper has
    // answered or closed the connection already.
    let _ = watcher.watch(connection).await;
}

/// Resolves on SIGTERM or SIGINT.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(e) => {
                    eprintln!("warning: cannot watch SIGTERM: {e}");
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}

/// A rustls acceptor (the `ring` provider, TLS 1.2 and 1.3) for a PEM certificate chain and
/// private key.
fn tls_acceptor(cert: &std::path::Path, key: &std::path::Path) -> anyhow::Result<TlsAcceptor> {
    let read = |path: &std::path::Path| {
        std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
    };
    let certs = rustls_pemfile::certs(&mut read(cert)?.as_slice())
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("{} is not a PEM certificate chain", cert.display()))?;
    if certs.is_empty() {
        anyhow::bail!("{} holds no PEM certificate", cert.display());
    }
    let key_der = rustls_pemfile::private_key(&mut read(key)?.as_slice())
        .with_context(|| format!("{} is not a PEM private key", key.display()))?
        .with_context(|| format!("{} holds no PEM private key", key.display()))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("cannot set up TLS")?
        .with_no_client_auth()
        .with_single_cert(certs, key_der)
        .context("the TLS certificate and key do not match or are not supported")?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}
