//! The index in PostgreSQL (feature `postgres`): [`PgIndex`], the same operations and the
//! same answers as a [`Store`](crate::Store) directory, on a database that any number of
//! processes share.
//!
//! The layout is the store's: four block families of 65,536 groups each, a group packed in
//! the store's chunk format, plus the documents, the keys and the settings record (the tables
//! are in `schema.rs`). The rules are the store's, called, not copied: the pigeonhole rule
//! picks the groups a query reads ([`crate::pigeonhole`]), and writes are planned by the
//! store's upsert planner over what the transaction reads (`stored.rs`), so ids and keys end
//! as they would in a store.
//!
//! Concurrency: every write runs in one transaction that first takes the index's writer lock
//! (`pg_advisory_xact_lock`), so writes from any number of processes apply one after
//! another, each seeing every write committed before it, like the single writer of a store;
//! [`PgIndex::insert_if_new`] checks and inserts under that lock, so two near-duplicates sent
//! at once to two processes are never both admitted. The lock is released when the
//! transaction commits or aborts (also when a connection dies). Queries take no lock: each
//! reads the committed index of one statement, then the keys of its matches with a second
//! (a match whose document was removed or changed in between is left out).
//!
//! ```no_run
//! # async fn example() -> simhash_store::Result<()> {
//! use simhash_store::postgres::PgIndex;
//! use simhash_store::{Entry, Fingerprint};
//!
//! let index = PgIndex::open("postgres://app@db.example/dedup", None).await?;
//! index.insert_batch([Entry::new(1, Fingerprint(0xff00)).with_key("https://a.example/")]).await?;
//! let found = index.query(Fingerprint(0xff01), 3).await?;
//! assert_eq!(found[0].id, 1);
//! # Ok(())
//! # }
//! ```

mod connect;
mod groups;
mod load;
mod schema;
mod staged;
mod stored;
mod tiers;
mod verify;
mod write;

use std::collections::HashMap;

use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::{NoTls, Row};

pub use load::{PgLoadSummary, PgLoader, DEFAULT_LOAD_BATCH};
pub use schema::SCHEMA_VERSION;
pub use staged::{PgConnection, PgStagedBatch};
pub use verify::PgVerifyReport;

use crate::codec::Document;
use crate::distance::MAX_DISTANCE;
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::query::Match;
use crate::simhash::{SimhashConfig, Simhasher, SketchKind};
use crate::sketch::{Sketch, SKETCH_BYTES};
use groups::GroupsRead;

/// Connections the pool of a [`PgIndex`] opens at most.
const POOL_SIZE: usize = 16;

/// The index in a PostgreSQL database. Cheap to share (`Arc` it); every method takes a
/// connection from the index's pool for its duration.
pub struct PgIndex {
    pool: Pool,
    simhasher: Simhasher,
    database: String,
}

impl std::fmt::Debug for PgIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgIndex")
            .field("database", &self.database)
            .finish_non_exhaustive()
    }
}

/// The columns a [`Document`] is read from, for [`document_from_row`].
pub(crate) const DOC_COLUMNS: &str = "id, fingerprint, key, text_len, added, sketch";

/// A document and its id from a row of [`DOC_COLUMNS`].
pub(crate) fn document_from_row(row: &Row) -> Result<(u64, Document)> {
    let id = col::<i64>(row, 0)? as u64;
    let decode = |what: &'static str, message: String| Error::Decode {
        column_family: "simhash_docs",
        key: format!("id {id}"),
        what,
        message,
    };
    let key = col::<Option<Vec<u8>>>(row, 2)?
        .map(|k| String::from_utf8(k).map_err(|e| decode("external key", e.to_string())))
        .transpose()?;
    let sketch = col::<Option<Vec<u8>>>(row, 5)?
        .map(|s| {
            <[u8; SKETCH_BYTES]>::try_from(s.as_slice())
                .map(Sketch::from_bytes)
                .map_err(|_| {
                    decode(
                        "sketch",
                        format!("{} bytes, expected {SKETCH_BYTES}", s.len()),
                    )
                })
        })
        .transpose()?;
    Ok((
        id,
        Document {
            fingerprint: Fingerprint(col::<i64>(row, 1)? as u64),
            key,
            text_len: col::<Option<i64>>(row, 3)?.map(|n| n as u64),
            added: col::<i64>(row, 4)? as u64,
            sketch,
        },
    ))
}

/// Column `i` of `row`: an error, not a panic, for a column of another type.
pub(crate) fn col<'a, T: tokio_postgres::types::FromSql<'a>>(row: &'a Row, i: usize) -> Result<T> {
    row.try_get(i).map_err(pg_error("read a column"))
}

/// Wraps a client error with what was being done.
pub(crate) fn pg_error(operation: &'static str) -> impl Fn(tokio_postgres::Error) -> Error {
    move |e| Error::Postgres {
        operation,
        code: e.code().map(|c| c.code().to_owned()),
        message: match e.as_db_error() {
            Some(db) => db.message().to_owned(),
            // The client's own message leaves out its cause ("error connecting to server").
            None => match std::error::Error::source(&e) {
                Some(cause) => format!("{e}: {cause}"),
                None => e.to_string(),
            },
        },
    }
}

/// The database of `config` as a URL without user or password, for messages.
fn database_name(config: &tokio_postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .zip(config.get_ports().iter().chain(std::iter::repeat(&5432)))
        .map(|(host, port)| match host {
            tokio_postgres::config::Host::Tcp(h) => format!("{h}:{port}"),
            #[cfg(unix)]
            tokio_postgres::config::Host::Unix(p) => format!("{}:{port}", p.display()),
        })
        .collect();
    format!(
        "postgres://{}/{}",
        hosts.join(","),
        config.get_dbname().unwrap_or_default()
    )
}

impl PgIndex {
    /// Opens the index in the database `url` names (`postgres://user:password@host:port/db`,
    /// or `host=... dbname=...`), making its tables in an empty database. TLS as in libpq's
    /// URLs: `?sslmode=verify-full` (or `require`, `verify-ca`: all three verify the server's
    /// certificate and host name), against the system's root certificates or those of
    /// `sslrootcert=PATH`; without `sslmode=require` or stronger, plain TCP. A new index
    /// fingerprints with `config` (the default if `None`); an existing one with the settings
    /// it records, which `config`, if given, must equal.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a malformed URL or an unreadable `sslrootcert`;
    /// [`Error::Postgres`] if the server cannot be reached or its TLS certificate is not
    /// trusted; [`Error::SchemaVersion`] for tables of another version;
    /// [`Error::ConfigMismatch`] for other settings than the recorded ones.
    pub async fn open(url: &str, config: Option<SimhashConfig>) -> Result<PgIndex> {
        let target = connect::parse(url)?;
        let database = database_name(&target.config);
        let manager_config = ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        let manager = match target.tls {
            Some(tls) => Manager::from_config(target.config, tls, manager_config),
            None => Manager::from_config(target.config, NoTls, manager_config),
        };
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .build()
            .map_err(|e| Error::Postgres {
                operation: "make the connection pool",
                message: e.to_string(),
                code: None,
            })?;
        // A failure to connect names the server, whose address the client's message lacks.
        let mut conn = connection(&pool).await.map_err(|e| match e {
            Error::Postgres {
                operation,
                message,
                code,
            } => Error::Postgres {
                operation,
                message: format!("{database}: {message}"),
                code,
            },
            other => other,
        })?;
        let config = schema::create_or_check(&mut conn, &database, config.as_ref()).await?;
        Ok(PgIndex {
            pool,
            simhasher: Simhasher::new(config)?,
            database,
        })
    }

    /// The fingerprinter of the recorded settings.
    pub fn simhasher(&self) -> &Simhasher {
        &self.simhasher
    }

    /// The database, as a URL without user or password.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// Whether the index keeps a sketch per document.
    pub fn keeps_sketches(&self) -> bool {
        self.simhasher.config().sketch != SketchKind::None
    }

    /// The number of documents.
    ///
    /// # Errors
    /// [`Error::Postgres`].
    pub async fn len(&self) -> Result<u64> {
        let conn = connection(&self.pool).await?;
        let n: i64 = conn
            .query_one("SELECT documents FROM simhash_meta", &[])
            .await
            .map_err(pg_error("read the document count"))?
            .try_get(0)
            .map_err(pg_error("read the document count"))?;
        Ok(n as u64)
    }

    /// Whether the index holds no document.
    ///
    /// # Errors
    /// [`Error::Postgres`].
    pub async fn is_empty(&self) -> Result<bool> {
        Ok(self.len().await? == 0)
    }

    /// The stored documents within Hamming distance `k` of `fp` (`k` above 64 reads as 64),
    /// sorted by distance, then id: the answer of [`Store::query`](crate::Store::query).
    ///
    /// # Errors
    /// [`Error::Postgres`]; [`Error::Decode`] for a damaged chunk or document.
    pub async fn query(&self, fp: Fingerprint, k: u32) -> Result<Vec<Match>> {
        let mut all = self.query_many(&[fp], k).await?;
        Ok(all.pop().unwrap_or_default())
    }

    /// [`PgIndex::query`] of each fingerprint, in two statements for all of them; results in
    /// input order.
    ///
    /// # Errors
    /// As [`PgIndex::query`].
    pub async fn query_many(&self, fps: &[Fingerprint], k: u32) -> Result<Vec<Vec<Match>>> {
        let conn = connection(&self.pool).await?;
        query_on(&conn, fps, k).await
    }

    /// Fingerprints `text` with the recorded settings and queries it.
    ///
    /// # Errors
    /// [`Error::NoFeatures`] for a text with nothing to fingerprint; as [`PgIndex::query`].
    pub async fn query_text(&self, text: &str, k: u32) -> Result<Vec<Match>> {
        self.query(self.simhasher.fingerprint(text)?, k).await
    }

    /// Everything stored about document `id`.
    ///
    /// # Errors
    /// [`Error::Postgres`]; [`Error::Decode`] for a damaged document.
    pub async fn document(&self, id: u64) -> Result<Option<Document>> {
        let conn = connection(&self.pool).await?;
        let row = conn
            .query_opt(
                &format!("SELECT {DOC_COLUMNS} FROM simhash_docs WHERE id = $1"),
                &[&(id as i64)],
            )
            .await
            .map_err(pg_error("read a document"))?;
        row.map(|r| document_from_row(&r).map(|(_, d)| d))
            .transpose()
    }

    /// The fingerprint of document `id`, if it is stored.
    ///
    /// # Errors
    /// As [`PgIndex::document`].
    pub async fn get(&self, id: u64) -> Result<Option<Fingerprint>> {
        Ok(self.document(id).await?.map(|d| d.fingerprint))
    }

    /// Every document, in id order (as the ids' `bigint`s sort: ids from 2^63 on come
    /// first), read into memory in one statement: for exports and tests of small indexes.
    ///
    /// # Errors
    /// [`Error::Postgres`]; [`Error::Decode`] for a damaged document.
    pub async fn documents(&self) -> Result<Vec<(u64, Document)>> {
        let conn = connection(&self.pool).await?;
        conn.query(
            &format!("SELECT {DOC_COLUMNS} FROM simhash_docs ORDER BY id"),
            &[],
        )
        .await
        .map_err(pg_error("read documents"))?
        .iter()
        .map(document_from_row)
        .collect()
    }

    /// The id of the document stored under external key `key`, if any.
    ///
    /// # Errors
    /// [`Error::Postgres`].
    pub async fn id_for_key(&self, key: &str) -> Result<Option<u64>> {
        let conn = connection(&self.pool).await?;
        let row = conn
            .query_opt(
                "SELECT id FROM simhash_keys WHERE key = $1",
                &[&key.as_bytes()],
            )
            .await
            .map_err(pg_error("read a key"))?;
        row.map(|r| col::<i64>(&r, 0).map(|id| id as u64))
            .transpose()
    }
}

/// A connection from `pool`.
async fn connection(pool: &Pool) -> Result<deadpool_postgres::Object> {
    pool.get().await.map_err(|e| match e {
        deadpool_postgres::PoolError::Backend(e) => pg_error("connect")(e),
        e => Error::Postgres {
            operation: "connect",
            message: e.to_string(),
            code: None,
        },
    })
}

/// The queries of `fps` at distance `k` on `client`: the groups in one statement, the
/// matches' keys in a second.
async fn query_on(
    client: &impl GenericClient,
    fps: &[Fingerprint],
    k: u32,
) -> Result<Vec<Vec<Match>>> {
    Ok(query_reading(client, fps, k).await?.0)
}

/// [`query_on`], with the groups it read (sorted) and what it read of them.
async fn query_reading(
    client: &impl GenericClient,
    fps: &[Fingerprint],
    k: u32,
) -> Result<(Vec<Vec<Match>>, Vec<i32>, GroupsRead)> {
    let k = k.min(MAX_DISTANCE);
    let probes: Vec<Vec<(i32, u32)>> = fps.iter().map(|fp| groups::probes(fp.0, k)).collect();
    let mut wanted: Vec<i32> = probes.iter().flatten().map(|&(g, _)| g).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let read = GroupsRead::read(client, &wanted).await?;
    let mut found: Vec<Vec<(u64, u64, u32)>> = Vec::with_capacity(fps.len());
    for (fp, probes) in fps.iter().zip(&probes) {
        let mut matches = Vec::new();
        for &(grp, block_bits) in probes {
            read.scan(grp, fp.0, k, block_bits, |id, x, d| {
                matches.push((id, x, d))
            })?;
        }
        // A document is in up to four of the groups read, and once in each.
        matches.sort_unstable_by_key(|&(id, _, d)| (d, id));
        matches.dedup_by_key(|m| m.0);
        found.push(matches);
    }
    let mut ids: Vec<i64> = found
        .iter()
        .flatten()
        .map(|&(id, _, _)| id as i64)
        .collect();
    if ids.is_empty() {
        return Ok((found.iter().map(|_| Vec::new()).collect(), wanted, read));
    }
    ids.sort_unstable();
    ids.dedup();
    let stmt = client
        .prepare_cached("SELECT id, fingerprint, key FROM simhash_docs WHERE id = ANY($1)")
        .await
        .map_err(pg_error("prepare the key read"))?;
    let rows = client
        .query(&stmt, &[&ids])
        .await
        .map_err(pg_error("read the matches' keys"))?;
    let mut docs = HashMap::with_capacity(rows.len());
    for row in rows {
        let id = col::<i64>(&row, 0)? as u64;
        let key = col::<Option<Vec<u8>>>(&row, 2)?
            .map(|k| {
                String::from_utf8(k).map_err(|e| Error::Decode {
                    column_family: "simhash_docs",
                    key: format!("id {id}"),
                    what: "external key",
                    message: e.to_string(),
                })
            })
            .transpose()?;
        docs.insert(id, (col::<i64>(&row, 1)? as u64, key));
    }
    let matches = found
        .into_iter()
        .map(|matches| {
            matches
                .into_iter()
                .filter_map(|(id, x, distance)| {
                    let (stored, key) = docs.get(&id)?;
                    (*stored == x).then(|| Match {
                        id,
                        fingerprint: Fingerprint(x),
                        distance,
                        key: key.clone(),
                    })
                })
                .collect()
        })
        .collect();
    Ok((matches, wanted, read))
}
