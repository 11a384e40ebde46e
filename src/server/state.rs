//! What every handler shares, in one `Arc`: the backend (a store or PostgreSQL), the writer's queue, auth, limits,
//! metrics and the query pool.
//!
//! A writing server holds one writable [`Store`], which the writer replaces after a full disk
//! (`writer.rs`). A `--read-only` server holds a read-only open and replaces it with a fresh
//! one every `--refresh` interval, so it sees the writer's commits within that delay. Either
//! way a query in flight keeps the store it started with ([`StoreSlot`]).

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use simhash_store::Store;

use super::auth::Auth;
use super::backend::Backend;
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

/// The store the handlers read now: shared by the handlers and the writer, which may put
/// another open of the same store in its place.
pub struct StoreSlot(RwLock<Arc<Store>>);

impl StoreSlot {
    /// A slot holding `store`.
    pub fn new(store: Arc<Store>) -> StoreSlot {
        StoreSlot(RwLock::new(store))
    }

    /// The store as of now.
    pub fn get(&self) -> Arc<Store> {
        match self.0.read() {
            Ok(s) => Arc::clone(&s),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Puts `store` in the slot; requests that hold the one before keep it until they end.
    pub fn replace(&self, store: Arc<Store>) {
        let before = match self.0.write() {
            Ok(mut s) => std::mem::replace(&mut *s, store),
            Err(poisoned) => std::mem::replace(&mut *poisoned.into_inner(), store),
        };
        // Closed (if this was the last handle) outside the lock.
        drop(before);
    }
}

/// The state behind [`AppState`].
pub struct Shared {
    /// The index served.
    pub backend: Backend,
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
    /// The state of a server over `backend`.
    pub fn new(
        backend: Backend,
        writer: Option<WriterHandle>,
        auth: Auth,
        limits: Limits,
        metrics: Arc<Metrics>,
        pool: QueryPool,
        backup_dir: Option<PathBuf>,
    ) -> AppState {
        AppState(Arc::new(Shared {
            backend,
            writer,
            auth,
            limits,
            metrics,
            pool,
            backup_dir,
        }))
    }

    /// Read-only servers: reopens the store every `interval` until the process ends, so
    /// that the writer's commits become visible. A failed reopen keeps the old view and is
    /// logged.
    pub fn refresh_every(&self, interval: Duration) {
        let Some(slot) = self.0.backend.store_slot() else {
            return;
        };
        let slot = Arc::clone(slot);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tick.tick().await;
                let path = slot.get().path().to_path_buf();
                let reopened = tokio::task::spawn_blocking(move || {
                    Store::builder().read_only(true).open(&path)
                })
                .await;
                match reopened {
                    Ok(Ok(fresh)) => slot.replace(Arc::new(fresh)),
                    Ok(Err(e)) => eprintln!("warning: cannot refresh the read-only view: {e}"),
                    Err(e) => eprintln!("warning: cannot refresh the read-only view: {e}"),
                }
            }
        });
    }
}
