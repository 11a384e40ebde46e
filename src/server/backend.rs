//! What the service reads and writes: a store directory or an index in PostgreSQL. Handlers
//! call the backend; the rules (queries, ids, keys, insert-if-new) are the library's either
//! way, and writes go through the writer's queue for both (`writer.rs`, `pg_writer.rs`).

use std::sync::Arc;

use simhash_store::{Document, Fingerprint, Match, Simhasher, Store};

use super::error::ApiError;
use super::pool::QueryPool;
use super::state::StoreSlot;

/// Batches up to this many queries (about 0.3 ms at k = 3) are answered on the request's own
/// thread, with no hand-over; larger ones go to the query pool (`pool.rs`), which shares the
/// cores fairly between the batches in flight.
const INLINE_QUERIES: usize = 8;

/// The index a service serves.
pub enum Backend {
    /// A store directory.
    Store(Arc<StoreSlot>),
    /// An index in PostgreSQL.
    #[cfg(feature = "postgres")]
    Postgres(PgBackend),
}

/// A service's index in PostgreSQL.
#[cfg(feature = "postgres")]
pub struct PgBackend {
    /// Where writes go (and reads without `--postgres-read`).
    pub write: Arc<simhash_store::postgres::PgIndex>,
    /// Where queries and document reads go: `--postgres-read`, else `write`.
    pub read: Arc<simhash_store::postgres::PgIndex>,
}

/// What fingerprints a request's texts, with the index's recorded settings.
#[derive(Clone)]
pub enum Fingerprinter {
    /// A store's settings.
    Store(Arc<Store>),
    /// The settings recorded in PostgreSQL.
    #[cfg(feature = "postgres")]
    Postgres(Arc<simhash_store::postgres::PgIndex>),
}

impl Fingerprinter {
    /// The fingerprinter.
    pub fn simhasher(&self) -> &Simhasher {
        match self {
            Fingerprinter::Store(store) => store.simhasher(),
            #[cfg(feature = "postgres")]
            Fingerprinter::Postgres(index) => index.simhasher(),
        }
    }
}

impl Backend {
    /// The store of a service on a store directory; a 400 `not_on_postgres` naming `what`
    /// for a service on PostgreSQL.
    #[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
    pub fn store(&self, what: &str) -> Result<Arc<Store>, ApiError> {
        match self {
            Backend::Store(slot) => Ok(slot.get()),
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => Err(ApiError::not_on_postgres(what)),
        }
    }

    /// The slot of a service on a store directory.
    pub fn store_slot(&self) -> Option<&Arc<StoreSlot>> {
        match self {
            Backend::Store(slot) => Some(slot),
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => None,
        }
    }

    /// What fingerprints texts.
    pub fn fingerprinter(&self) -> Fingerprinter {
        match self {
            Backend::Store(slot) => Fingerprinter::Store(slot.get()),
            #[cfg(feature = "postgres")]
            Backend::Postgres(pg) => Fingerprinter::Postgres(Arc::clone(&pg.write)),
        }
    }

    /// The queries of `fps` at distance `k`, in input order.
    pub async fn query(
        &self,
        pool: &QueryPool,
        fps: Vec<Fingerprint>,
        k: u32,
    ) -> Result<Vec<Vec<Match>>, ApiError> {
        match self {
            Backend::Store(slot) => {
                let store = slot.get();
                if fps.len() <= INLINE_QUERIES {
                    Ok(fps
                        .iter()
                        .map(|&fp| store.query(fp, k))
                        .collect::<Result<Vec<_>, _>>()?)
                } else {
                    pool.query(store, fps, k)
                        .await
                        .ok_or_else(|| {
                            ApiError::internal(
                                "answer a query batch",
                                "no answer from the query threads",
                            )
                        })?
                        .map_err(ApiError::from)
                }
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(pg) => Ok(pg.read.query_many(&fps, k).await?),
        }
    }

    /// Document `id`, if stored.
    pub async fn document(&self, id: u64) -> Result<Option<Document>, ApiError> {
        match self {
            Backend::Store(slot) => Ok(slot.get().document(id)?),
            #[cfg(feature = "postgres")]
            Backend::Postgres(pg) => Ok(pg.read.document(id).await?),
        }
    }

    /// The document stored under `key`, with its id.
    pub async fn by_key(&self, key: &str) -> Result<Option<(u64, Document)>, ApiError> {
        match self {
            Backend::Store(slot) => {
                let store = slot.get();
                Ok(match store.id_for_key(key)? {
                    Some(id) => store.document(id)?.map(|doc| (id, doc)),
                    None => None,
                })
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(pg) => Ok(match pg.read.id_for_key(key).await? {
                Some(id) => pg.read.document(id).await?.map(|doc| (id, doc)),
                None => None,
            }),
        }
    }

    /// The number of documents.
    pub async fn len(&self) -> Result<u64, ApiError> {
        match self {
            Backend::Store(slot) => Ok(slot.get().len()),
            #[cfg(feature = "postgres")]
            Backend::Postgres(pg) => Ok(pg.read.len().await?),
        }
    }

    /// The bytes the index takes on disk (0 for PostgreSQL: ask the database).
    pub fn disk_bytes(&self) -> Result<u64, ApiError> {
        match self {
            Backend::Store(slot) => Ok(slot.get().disk_usage()?.iter().map(|(_, b)| b).sum()),
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => Ok(0),
        }
    }
}
