//! # simhash-store
//!
//! A persistent, embedded near-duplicate index for text. Give it documents (crawled pages,
//! news articles, training-corpus records); ask which stored documents are within Hamming
//! distance `k` of a new one.
//!
//! - **Fingerprints**: 64-bit SimHash (Charikar 2002; Manku, Jain and Das Sarma 2007). Text is
//!   split into features (jieba for Chinese, Unicode words for other scripts), stop words are
//!   dropped, features are weighted by their term frequency and hashed with xxh3; each of the 64
//!   bits is the sign of the weighted vote. Similar texts get fingerprints a few bits apart.
//!   See [`Simhasher`].
//! - **The store**: RocksDB with one column family per 16-bit block of the fingerprint. Two
//!   fingerprints within distance 3 share a block exactly, so a query scans four small key
//!   ranges (about `N / 65536` keys each) and checks the full distance: exact answers, equal
//!   to a brute-force scan, in microseconds at millions of documents. Larger `k` stays exact
//!   by probing neighbouring block values. See [`Store`].
//! - **Bulk loading**: [`Store::bulk_loader`] writes sorted SST files under a memory budget and
//!   ingests them, crash-safe, with the same upsert semantics as [`Store::insert_entry`].
//! - **Deduplicating a whole collection**: [`Store::pairs`] streams every pair within `k` by one
//!   pass over the block families, [`Clusters`] groups them with a representative per
//!   cluster, and [`Store::insert_if_new`] checks and inserts atomically.
//! - **Verified near-duplicates**: a store made with [`SimhashConfig::with_sketch`] keeps a
//!   64-byte [`Sketch`] per document; [`Store::query_verified`] and [`Store::verified_pairs`]
//!   take candidates at a wider `k` and keep those whose sketches agree.
//! - **Backups**: [`Store::backup`] copies an open store consistently into a new directory
//!   (hard links on the same file system) while it is queried and written; the copy is a store.
//! - **Reading crawls** (feature `readers`, on by default): WARC/WET, HTML main text, JSON
//!   Lines and text files, see [`read_input`]; the `simhash-store` command (feature `cli`).
//!
//! ```
//! use simhash_store::Store;
//!
//! let dir = tempfile::tempdir()?;
//! let store = Store::open(dir.path())?;
//! let page = "Near-duplicate detection finds web pages that are almost the same: the same \
//!             article under two addresses, a copy with another advert, a reposted story.";
//! store.insert_text(1, Some("https://example.com/a"), page)?;
//!
//! let copy = format!("{page} Share this page!");
//! for m in store.query_text(&copy, 3)? {
//!     println!("{} {:?} at distance {}", m.id, m.key, m.distance);
//! }
//! # Ok::<_, simhash_store::Error>(())
//! ```
//!
//! ## Where to start
//!
//! [`Store`] is the index: open it, insert or bulk-load, query. The root re-exports the types
//! most programs name; everything else lives in the module that owns it:
//!
//! | module | what it holds |
//! |---|---|
//! | [`bulk`] | the options, progress and summary of a [`BulkLoader`] |
//! | [`dedup`] | all pairs within `k` ([`Store::pairs`]), clusters, check-then-insert, the [`partition`](dedup::partition) planner of the Spark and Ray jobs |
//! | [`verified`] | near-duplicates whose MinHash sketches agree |
//! | [`readers`] | WARC/WET, HTML, JSON Lines and text inputs (feature `readers`) |
//! | [`simhash`] | the fingerprinter and its settings |
//! | [`sketch`] | the 64-byte MinHash sketch |
//! | [`pigeonhole`] | the rule that makes queries and pair scans exact |
//! | [`verify`] | the store's integrity check |
//! | [`salvage`] | what can still be read from a damaged store, for a rebuild |
//! | [`groups`] | how documents spread over block values: crowded groups, the shared-block factor, what a query scans |
//! | [`upgrade`] | store formats and copying an old store into the newest |
//! | `postgres` | the index in a PostgreSQL database that many processes share, `PgIndex` (feature `postgres`) |
//!
//! How the store works and why: `docs/design.md`; using it: `docs/guide.md`.
//!
//! ## Limits, and what it is not
//! - Ids are `u64`s chosen by the caller; an optional external key (URL, path) is unique.
//! - SimHash measures closeness of whole documents; it does not find a paragraph copied into
//!   a longer page, and short texts (titles, comments) need a larger `k`.
//! - One writing process at a time (others can open it read-only).
//! - It is not a search engine: there is no ranking by relevance and no text is stored.

#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod bulk;
mod codec;
pub mod dedup;
mod distance;
mod error;
mod failpoint;
mod fingerprint;
mod format;
pub mod groups;
mod integrity;
mod keys;
mod memory;
pub mod pigeonhole;
#[cfg(feature = "postgres")]
pub mod postgres;
mod postings;
mod query;
#[cfg(feature = "readers")]
pub mod readers;
pub mod salvage;
mod settings;
pub mod simhash;
pub mod sketch;
mod storage;
mod store;
pub mod upgrade;
mod upsert;
pub mod verified;
pub mod verify;

// The names most programs use; everything else is in the module that owns it (above).
pub use bulk::BulkOptions;
pub use codec::Document;
pub use dedup::{Clusters, Pair};
pub use distance::{DEFAULT_K, MAX_DISTANCE};
pub use error::{Error, Result};
pub use fingerprint::{Fingerprint, BLOCKS};
pub use keys::{external_key_fits, MAX_EXTERNAL_KEY_LEN};
pub use query::{Match, Strategy};
#[cfg(feature = "readers")]
pub use readers::{read_input, Record};
pub use simhash::{SimhashConfig, Simhasher};
pub use sketch::Sketch;
pub use store::{
    Backup, BulkLoader, Durability, InsertOutcome, KeyHolder, StagedBatch, Store, StoreBuilder,
};
pub use upsert::{Entry, IdAssigner};
pub use verified::VerifiedMatch;
pub use verify::VerifyReport;

/// The `decode_values` fuzz target (`fuzz/`) runs the crate-private value decoders through
/// this. Compiled only under `cargo fuzz` (`--cfg fuzzing`); not part of the API.
#[cfg(fuzzing)]
#[doc(hidden)]
pub fn fuzz_decode_values(bytes: &[u8]) {
    codec::check_decoders(bytes);
    settings::check_decoders(bytes);
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The guide's examples (`docs/guide.md`), compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/guide.md")]
struct GuideDoctests;
