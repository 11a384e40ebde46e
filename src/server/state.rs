//! What every handler shares, in one `Arc`: the store, the writer's queue, auth, limits,
//! metrics and the query pool.
//!
//! A writing server holds one [`Store`] for its lifetime. A `--read-only` server holds a
//! read-only open and replaces it with a fresh one every `--refresh` interval, so it sees the
//! writer's commits within that delay; a query in flight keeps the view it started with.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use simhash_store::Store;

use super::auth::Auth;
use super::metrics::Metrics;
use super::pool::QueryPool;
use super::writer::WriterHandle;

/// Limits applied by the handlers (the body size and time limits are tower layers).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Items (fingerprints, texts, documents) in one request.
    pub max_batch: usize,
}

/// The shared state; cheap to clone.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

/// The state behind [`AppState`].
pub struct Shared {
    store: RwLock<Arc<Store>>,
    /// `None` for a read-only server.
    pub writer: Option<WriterHandle>,
    /// Who may call.
    pub auth: Auth,
    /// Request limits.
    pub limits: Limits,
    /// Counters.
    pub metrics: Arc<Metrics>,
    /// The threads that answer large query batches.
    pub pool: QueryPool,
    /// Where `POST /v1/backup` writes backups (`--backup-dir`); `None`: it is refused.
    pub backup_dir: Option<PathBuf>,
}

impl std::ops::Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    /// The state of a server over `store`.
    pub fn new(
        store: Arc<Store>,
        writer: Option<WriterHandle>,
        auth: Auth,
        limits: Limits,
        metrics: Arc<Metrics>,
        pool: QueryPool,
        backup_dir: Option<PathBuf>,
    ) -> AppState {
        AppState(Arc::new(Shared {
            store: RwLock::new(store),
            writer,
            auth,
            limits,
            metrics,
            pool,
            backup_dir,
        }))
    }

    /// The store as of now.
    pub fn store(&self) -> Arc<Store> {
        match self.0.store.read() {
            Ok(s) => Arc::clone(&s),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Read-only servers: reopens the store every `interval` until the process ends, so
    /// that the writer's commits become visible. A failed reopen keeps the old view and is
    /// logged.
    pub fn refresh_every(&self, interval: Duration) {
        let state = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tick.tick().await;
                let path = state.store().path().to_path_buf();
                let reopened = tokio::task::spawn_blocking(move || {
                    Store::builder().read_only(true).open(&path)
                })
                .await;
                match reopened {
                    Ok(Ok(fresh)) => {
                        let fresh = Arc::new(fresh);
                        match state.0.store.write() {
                            Ok(mut s) => *s = fresh,
                            Err(poisoned) => *poisoned.into_inner() = fresh,
                        }
                    }
                    Ok(Err(e)) => eprintln!("warning: cannot refresh the read-only view: {e}"),
                    Err(e) => eprintln!("warning: cannot refresh the read-only view: {e}"),
                }
            }
        });
    }
}
