//! The index's tables in PostgreSQL, their version, and the fingerprint settings they record.
//!
//! | table            | row                                                    | key                 |
//! |------------------|--------------------------------------------------------|---------------------|
//! | `simhash_meta`   | one: schema `version`, `settings` record, `documents`  | (one row)           |
//! | `simhash_docs`   | `id`, `fingerprint`, `key`, `text_len`, `added`, `sketch` | `id`             |
//! | `simhash_keys`   | external `key` -> document `id`                        | `key`               |
//! | `simhash_groups` | one packed chunk of group `grp`: `part` 0, 1, ...      | (`grp`, `part`)     |
//! | `simhash_deltas` | an entry put (`live`) or deleted since the last fold   | (`grp`, `remainder`, `id`) |
//!
//! Ids and fingerprints are `u64`s stored bit for bit in `bigint`s (so ids from 2^63 on read
//! as negative numbers in SQL). A group `grp` is `family * 65536 + block value`
//! ([`crate::pigeonhole::GROUPS`]); a chunk is the store's packed chunk with its ids inline
//! (`src/postings/chunk.rs`), and a remainder the 48 bits of a fingerprint outside the
//! group's block ([`crate::pigeonhole::split`]). `settings` is the store's settings record
//! (`src/settings/`), so texts are fingerprinted as the index records.
//!
//! The tables are made by the first [`PgIndex::open`](super::PgIndex::open) of an empty
//! database (or schema: the tables go to the first schema of the connection's
//! `search_path`), in one transaction that holds [`SCHEMA_LOCK`], so two processes that open
//! an empty database at once make them once. Tables of another [`SCHEMA_VERSION`] are refused
//! with [`Error::SchemaVersion`].

use deadpool_postgres::Object;

use super::pg_error;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::settings;
use crate::simhash::SimhashConfig;

/// The version of the tables this build reads and writes.
pub const SCHEMA_VERSION: i32 = 1;

/// The advisory lock (`pg_advisory_xact_lock`) that making the tables holds.
const SCHEMA_LOCK: i64 = 0x7369_6d68_6173_6801;

/// The tables of version 1, made in one transaction.
const CREATE_TABLES: &str = "
CREATE TABLE simhash_meta (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    version integer NOT NULL,
    settings bytea NOT NULL,
    documents bigint NOT NULL
);
CREATE TABLE simhash_docs (
    id bigint PRIMARY KEY,
    fingerprint bigint NOT NULL,
    key bytea,
    text_len bigint,
    added bigint NOT NULL,
    sketch bytea
);
CREATE TABLE simhash_keys (
    key bytea PRIMARY KEY,
    id bigint NOT NULL
);
CREATE TABLE simhash_groups (
    grp integer NOT NULL,
    part integer NOT NULL,
    chunk bytea NOT NULL,
    PRIMARY KEY (grp, part)
);
ALTER TABLE simhash_groups ALTER COLUMN chunk SET STORAGE EXTERNAL;
CREATE TABLE simhash_deltas (
    grp integer NOT NULL,
    remainder bigint NOT NULL,
    id bigint NOT NULL,
    live boolean NOT NULL,
    PRIMARY KEY (grp, remainder, id)
);
";

/// Makes the tables in an empty database, or checks the version of the ones there; returns
/// the settings the index fingerprints with. `requested` is the configuration a new index
/// records (the default if `None`); an existing index must record the same one, if given.
///
/// # Errors
/// [`Error::SchemaVersion`] for tables of another version, [`Error::ConfigMismatch`] (and the
/// other errors of reading a settings record) as for a store directory, [`Error::Postgres`].
pub(super) async fn create_or_check(
    conn: &mut Object,
    database: &str,
    requested: Option<&SimhashConfig>,
) -> Result<SimhashConfig> {
    let tx = conn
        .transaction()
        .await
        .map_err(pg_error("begin making the tables"))?;
    // A hot standby (`--postgres-read`) replays the primary's tables: nothing to make or
    // lock there, only to check.
    let standby: bool = tx
        .query_one("SELECT pg_is_in_recovery()", &[])
        .await
        .map_err(pg_error("ask whether the server is a standby"))?
        .try_get(0)
        .map_err(pg_error("ask whether the server is a standby"))?;
    if !standby {
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .await
            .map_err(pg_error("lock the tables"))?;
    }
    let exists: bool = tx
        .query_one("SELECT to_regclass('simhash_meta') IS NOT NULL", &[])
        .await
        .map_err(pg_error("look for the tables"))?
        .try_get(0)
        .map_err(pg_error("look for the tables"))?;
    let path = std::path::Path::new(database);
    if !exists && standby {
        return Err(Error::Postgres {
            operation: "open the index on a hot standby",
            message: format!(
                "{database} is on a standby and has no simhash-store tables yet: open the index on \
                 the primary first (serve --postgres, or load), then here once the standby has \
                 replayed them"
            ),
            code: None,
        });
    }
    if !exists {
        let config = requested.cloned().unwrap_or_default();
        tx.batch_execute(CREATE_TABLES)
            .await
            .map_err(pg_error("make the tables"))?;
        tx.execute(
            "INSERT INTO simhash_meta (version, settings, documents) VALUES ($1, $2, 0)",
            &[&SCHEMA_VERSION, &settings::encode(&config)],
        )
        .await
        .map_err(pg_error("record the settings"))?;
        tx.commit()
            .await
            .map_err(pg_error("commit the new tables"))?;
        return Ok(config);
    }
    // The version first: a later version may have other columns.
    let found: i32 = tx
        .query_one("SELECT version FROM simhash_meta", &[])
        .await
        .map_err(pg_error("read the schema version"))?
        .try_get(0)
        .map_err(pg_error("read the schema version"))?;
    if found != SCHEMA_VERSION {
        return Err(Error::SchemaVersion {
            database: database.to_owned(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    let record: Vec<u8> = tx
        .query_one("SELECT settings FROM simhash_meta", &[])
        .await
        .map_err(pg_error("read the settings"))?
        .try_get(0)
        .map_err(pg_error("read the settings"))?;
    tx.commit()
        .await
        .map_err(pg_error("end reading the settings"))?;
    let stored = settings::decode(&record, Format::CURRENT, path)?;
    if let Some(requested) = requested {
        settings::check_requested(path, &stored, requested)?;
    }
    Ok(stored)
}
