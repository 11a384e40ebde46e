//! `simhash_store._native`: the Rust half of the Python package `simhash_store`.
//!
//! - `errors.rs`: the Rust [`simhash_store::Error`] as the Python exception classes of
//!   `simhash_store/errors.py`, messages unchanged.
//! - `args.rs`: checked conversions of ids, fingerprints, texts and arrays from Python.
//! - `interrupt.rs`: long calls run off the interpreter, and stop on Ctrl-C.
//! - `settings.rs`: keyword arguments <-> `SimhashConfig`.
//! - `hasher.rs`: `Simhasher` and `distance`.
//! - `store.rs`: `Store`: opening (its options), closing, what it is.
//! - `writes.rs`: `Store.insert`, `insert_many`, `insert_if_new`, `remove` and the like.
//! - `queries.rs`: `Store.query`, `query_text`, `query_text_verified`, `query_many`; `Match`.
//! - `documents.rs`: `Store.get`, `document`, `id_for_key`, `next_id`, `documents`,
//!   `documents_numpy`; `Document`, `DocumentIterator`.
//! - `maintenance.rs`: `Store.verify`, `flush`, `compact`, `preload_query_cache`;
//!   `VerifyReport`.
//! - `stats.rs`: `Store.disk_usage`, `Store.stats`.
//! - `load.rs`: `Store.bulk_load` and `Store.bulk_load_fingerprints`.
//! - `postgres.rs`: `PostgresIndex`, the index in PostgreSQL, and `PostgresLoadSummary`.
//! - `dedup.rs`: `Store.pairs`, `Store.pairs_numpy`, `Store.clusters` and `Clusters`.
//! - `stream.rs`: iterators fed by a scan on a background thread (pairs, documents).
//! - `kernels.rs`: array functions for the Spark jobs (`simhash_store.spark`).
//!
//! Docstrings are the `///` comments of the Python-facing items (what `help()` shows); the
//! type stubs `simhash_store/_native.pyi` repeat them for editors and type checkers, and
//! `python/tests/test_docs.py` checks that the two agree and runs their examples.

use pyo3::prelude::*;

/// The default `k` of every Python method that takes one. `#[pyo3(signature)]` needs it
/// written as the literal `3` (so that `help()` shows `k=3`); this fails the build if the
/// crate's default, [`simhash_store::DEFAULT_K`], ever differs.
const _: () = assert!(
    simhash_store::DEFAULT_K == 3,
    "the `k = 3` defaults of python/src/*.rs must equal simhash_store::DEFAULT_K"
);

mod args;
mod columns;
mod dedup;
mod documents;
mod errors;
mod hasher;
mod interrupt;
mod kernels;
mod load;
mod maintenance;
mod postgres;
mod queries;
mod settings;
mod stats;
mod store;
mod stream;
mod writes;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("FORMAT_VERSION", simhash_store::upgrade::FORMAT_VERSION)?;
    m.add("MAX_DISTANCE", simhash_store::MAX_DISTANCE)?;
    // The block families' shape, from the pigeonhole module (the Spark planner's groups).
    m.add("BLOCKS", simhash_store::pigeonhole::BLOCKS)?;
    m.add("BLOCK_BITS", simhash_store::pigeonhole::BLOCK_BITS)?;
    m.add("BLOCK_VALUES", simhash_store::pigeonhole::BLOCK_VALUES)?;
    m.add("GROUPS", simhash_store::pigeonhole::GROUPS)?;
    m.add_function(wrap_pyfunction!(hasher::distance, m)?)?;
    m.add_function(wrap_pyfunction!(hasher::default_settings, m)?)?;
    m.add_class::<hasher::PySimhasher>()?;
    m.add_class::<store::PyStore>()?;
    m.add_class::<queries::PyMatch>()?;
    m.add_class::<documents::PyDocument>()?;
    m.add_class::<maintenance::PyVerifyReport>()?;
    m.add_class::<documents::PyDocumentIter>()?;
    m.add_class::<load::PyBulkSummary>()?;
    m.add_class::<load::PyBulkProgress>()?;
    m.add_class::<postgres::PyPostgresIndex>()?;
    m.add_class::<postgres::PyPostgresLoadSummary>()?;
    m.add_class::<dedup::PyPairIter>()?;
    m.add_class::<dedup::PyClusters>()?;
    m.add_class::<dedup::PyCluster>()?;
    kernels::register(m)?;
    Ok(())
}
