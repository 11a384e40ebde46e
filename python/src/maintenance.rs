//! `Store`'s upkeep: `verify` (and the `VerifyReport` it returns), `flush`, `compact` and
//! `preload_query_cache`.

use pyo3::prelude::*;

use simhash_store::VerifyReport;

use crate::errors::IntoPy;
use crate::store::PyStore;

#[pymethods]
impl PyStore {
    /// Checks that every document is in all four block families and nothing else is.
    fn verify(&self, py: Python<'_>) -> PyResult<PyVerifyReport> {
        let store = self.store()?;
        let report = py.detach(|| store.verify()).py()?;
        Ok(PyVerifyReport::from(report))
    }

    /// Writes memtables to disk (what ``durability="no-wal"`` needs to keep writes).
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let store = self.store()?;
        py.detach(|| store.flush()).py()
    }

    /// Compacts the store: in a store of format 8 or 9, folds single writes and earlier bulk loads
    /// into one set of packed chunks per block value, then compacts every column family
    /// (smaller, faster to query after many single writes, several loads or removes).
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        let store = self.store()?;
        py.detach(|| store.compact()).py()
    }

    /// Fills the query cache from the block families; the number of key ranges cached. Only
    /// stores of format 6 or older have a query cache: for a store of format 7 or 8 this is 0.
    fn preload_query_cache(&self, py: Python<'_>) -> PyResult<u64> {
        let store = self.store()?;
        py.detach(|| store.preload_query_cache()).py()
    }
}

/// What :meth:`Store.verify` found. True (``bool(report)``) when clean.
#[pyclass(module = "simhash_store._native", name = "VerifyReport", frozen)]
pub(crate) struct PyVerifyReport {
    #[pyo3(get)]
    documents: u64,
    #[pyo3(get)]
    block_entries: Vec<u64>,
    #[pyo3(get)]
    keys: u64,
    #[pyo3(get)]
    problems: Vec<String>,
    #[pyo3(get)]
    problem_count: u64,
    text: String,
}

impl From<VerifyReport> for PyVerifyReport {
    fn from(r: VerifyReport) -> Self {
        PyVerifyReport {
            documents: r.documents,
            block_entries: r.block_entries.to_vec(),
            keys: r.keys,
            problems: r.problems.iter().map(ToString::to_string).collect(),
            problem_count: r.problem_count,
            text: r.to_string(),
        }
    }
}

#[pymethods]
impl PyVerifyReport {
    #[getter]
    fn is_clean(&self) -> bool {
        self.problem_count == 0
    }

    fn __bool__(&self) -> bool {
        self.problem_count == 0
    }

    fn __str__(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "VerifyReport(documents={}, keys={}, problem_count={})",
            self.documents, self.keys, self.problem_count
        )
    }
}
