//! The rules of writing, shared by both backends (the store directory, `src/store/`, and the
//! index on PostgreSQL, `src/postgres/`) and the bulk loader: what a document to store is,
//! what a sequence of upserts does, how its writes are laid out, and which ids documents get.
//!
//! - `entry.rs`: [`Entry`], a batch of them as the planner reads it, and the check of an
//!   external key;
//! - `plan/`: the upsert planner (ids and keys: the last add wins, a key names one document),
//!   over any backend's stored documents and keys ([`plan::Stored`]);
//! - `apply.rs`: a plan's writes into a [`Sink`](crate::storage::Sink), the one translation
//!   for write batches and a bulk run's SST files;
//! - `ids.rs`: [`IdAssigner`], the ids of documents that give none.

pub(crate) mod apply;
mod entry;
pub(crate) mod ids;
pub(crate) mod plan;

pub use entry::Entry;
pub(crate) use entry::{check_key, Entries};
pub use ids::IdAssigner;
