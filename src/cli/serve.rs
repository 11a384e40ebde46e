//! `simhash-store serve`: the store as a JSON-over-HTTP service (see docs/service.md).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use simhash_store::Durability;

use super::{usage, QuietArg, EXIT_OK};
use crate::server::auth::Auth;
use crate::server::{IndexSource, ServeConfig};

/// The examples at the end of `serve --help`.
const EXAMPLES: &str = "\
Examples:
  simhash-store serve --store pages.db
  curl -s localhost:7700/v1/query -d '{\"fingerprints\": [\"3f2a9c0e11d4b788\"], \"k\": 3}'
  simhash-store serve --store pages.db --listen 0.0.0.0:7700 --token-file /etc/simhash/tokens
  simhash-store serve --store pages.db --read-only --listen 127.0.0.1:7701   # beside a writer
  simhash-store serve --store pages.db --backup-dir backups
  curl -s localhost:7700/v1/backup -d '{\"name\": \"pages-2026-11-29\"}'
  simhash-store serve --postgres 'postgresql://app:PW@db1,db2,db3/dedup?target_session_attrs=read-write'
  simhash-store serve --postgres postgresql://app:PW@primary/dedup --postgres-read postgresql://app:PW@standby/dedup

The first line on standard output is `listening on http://ADDR` (the port chosen, with :0).
SIGTERM or SIGINT: stop accepting, finish requests in flight, commit queued writes, exit 0.";

/// `--durability`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurabilityArg {
    /// fsync the write-ahead log before answering: nothing acknowledged is lost, even on
    /// power loss (one fsync per write group).
    Sync,
    /// Write the log to the operating system: a killed server loses nothing acknowledged,
    /// power loss the last seconds.
    Buffered,
    /// No log: a crash loses every write since the last flush (shutdown flushes).
    NoWal,
}

/// Serve the store over HTTP (JSON API v1).
#[derive(clap::Args, Debug)]
#[command(after_long_help = EXAMPLES)]
pub struct Args {
    /// The store directory (created if there is none, unless --read-only).
    #[arg(
        long,
        short = 's',
        value_name = "DIR",
        env = "SIMHASH_STORE",
        required_unless_present = "postgres",
        conflicts_with = "postgres"
    )]
    store: Option<PathBuf>,

    /// Serve the index in the PostgreSQL database URL names instead of a store directory
    /// (its tables are made in an empty database; build with `--features postgres`). The
    /// URL may name several hosts with `target_session_attrs=read-write`: after a failover
    /// the service finds the new primary by itself. Any number of service processes may
    /// serve one database; their writes are ordered by the index's writer lock. While the
    /// database is unreachable, requests are answered 503 `unavailable` with Retry-After.
    /// TLS: add `?sslmode=verify-full` (the server's certificate is verified against the
    /// system's roots, or `&sslrootcert=CA.pem`'s); without it, plain TCP.
    #[arg(long, value_name = "URL", env = "SIMHASH_POSTGRES")]
    postgres: Option<String>,

    /// With --postgres: send queries and document reads to this database (a hot standby of
    /// the --postgres one); writes still go to --postgres. A standby replays the primary's
    /// writes with a delay: a client may not see its own write in a query sent right after
    /// it (insert-if-new always decides on the primary, so it never admits a near-duplicate
    /// the standby has not seen yet).
    #[arg(long, value_name = "URL", requires = "postgres")]
    postgres_read: Option<String>,

    #[command(flatten)]
    quiet: QuietArg,

    /// The address to listen on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:7700", value_name = "ADDR")]
    listen: SocketAddr,

    /// A file of bearer tokens, one per line (16 characters at least; blank lines and lines
    /// starting with # are ignored): requests must send `Authorization: Bearer TOKEN`.
    /// Required to listen on a non-loopback address.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,

    /// Listen on a non-loopback address without tokens (a private network you trust).
    #[arg(long)]
    insecure_no_auth: bool,

    /// Open the store read-only, beside a process that writes it; writes are refused.
    #[arg(long)]
    read_only: bool,

    /// With --read-only: reopen the view this often, in milliseconds, to see the writer's
    /// commits.
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    refresh_ms: u64,

    /// What an acknowledged write has reached, and so what a crash loses.
    #[arg(long, value_enum, default_value = "buffered")]
    durability: DurabilityArg,

    /// The largest request body, in bytes (default 64 MiB).
    #[arg(long, default_value_t = 64 * 1024 * 1024, value_name = "BYTES")]
    max_body: usize,

    /// The most fingerprints, texts or documents in one request.
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    max_batch: usize,

    /// Write requests waiting for the writer at most; more are answered 503 with Retry-After.
    #[arg(long, default_value_t = 4096, value_name = "N")]
    queue: usize,

    /// The longest a request may take, its body included, in seconds (then 408).
    #[arg(long, default_value_t = 60, value_name = "SECONDS")]
    request_timeout: u64,

    /// The longest a client may take to send a request's headers (or a TLS handshake), in
    /// seconds; then the connection is closed.
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    header_timeout: u64,

    /// Open connections at most; more are closed at once.
    #[arg(long, default_value_t = 4096, value_name = "N")]
    max_connections: usize,

    /// A PEM certificate chain: serve HTTPS (with --tls-key).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,

    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,

    /// Threads answering requests, and as many again answering large query batches
    /// (0: one per core).
    #[arg(long, default_value_t = 0, value_name = "N")]
    threads: usize,

    /// Take backups: `POST /v1/backup {"name": NAME}` writes a consistent copy of the store
    /// to DIR/NAME while writes go on (hard links when DIR is on the store's file system).
    /// Created if missing.
    #[arg(long, value_name = "DIR", conflicts_with = "read_only")]
    backup_dir: Option<PathBuf>,
}

/// Runs `simhash-store serve`.
///
/// # Errors
/// A non-loopback address without tokens, no store, an unreadable token or TLS file, an
/// address in use.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let auth = match &args.token_file {
        Some(path) => Auth::from_file(path)?,
        None if args.listen.ip().is_loopback() || args.insecure_no_auth => Auth::Open,
        None => {
            return Err(usage(format!(
                "--listen {} is reachable from other machines, and no --token-file is given: \
                 give one (a file with a long random token per line, e.g. `openssl rand -hex 32 > tokens`), \
                 or pass --insecure-no-auth on a private network you trust, or listen on 127.0.0.1",
                args.listen
            )))
        }
    };
    let index = match (args.postgres, args.store) {
        (Some(url), _) => IndexSource::Postgres {
            url,
            read: args.postgres_read,
        },
        (None, Some(store)) => IndexSource::Store(store),
        (None, None) => return Err(usage("give --store DIR or --postgres URL".to_owned())),
    };
    let config = ServeConfig {
        index,
        listen: args.listen,
        auth,
        read_only: args.read_only,
        quiet: args.quiet.quiet,
        refresh: Duration::from_millis(args.refresh_ms.max(10)),
        durability: match args.durability {
            DurabilityArg::Sync => Durability::Sync,
            DurabilityArg::Buffered => Durability::Buffered,
            DurabilityArg::NoWal => Durability::NoWal,
        },
        max_body: args.max_body,
        max_batch: args.max_batch,
        queue: args.queue,
        request_timeout: Duration::from_secs(args.request_timeout.max(1)),
        header_timeout: Duration::from_secs(args.header_timeout.max(1)),
        max_connections: args.max_connections,
        shutdown_grace: Duration::from_secs(30),
        tls: args.tls_cert.zip(args.tls_key),
        threads: args.threads,
        backup_dir: args.backup_dir,
    };
    crate::server::run(config)?;
    Ok(ExitCode::from(EXIT_OK))
}
