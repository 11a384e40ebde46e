//! `Store`'s upkeep: `verify` (and the `VerifyReport` it returns), `flush`, `compact`,
//! `backup` and `preload_query_cache`.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;

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

    /// Writes a consistent copy of the store into ``dest``, a new directory (its parent must
    /// exist), while the store stays open: other threads' queries go on, and writes wait only while
    /// the memtables are flushed and the store's files hard-linked (a fraction of a second). The
    /// copy is a store of its own: open, verify or serve it; to restore, use its directory in place
    /// of the original. On the store's file system its table files are hard links (no extra space
    /// until the store compacts them away); elsewhere they are then copied, while writes go on. It
    /// is made in a hidden directory beside ``dest`` and renamed once complete, so an interrupted
    /// backup leaves no ``dest``.
    ///
    /// Returns ``{"path": str, "documents": int}``: every write made before the call is in it.
    /// Raises ``InvalidArgumentError`` if ``dest`` exists or lies inside the store, and
    /// ``ReadOnlyError`` for a store opened read-only.
    fn backup<'py>(&self, py: Python<'py>, dest: PathBuf) -> PyResult<Bound<'py, PyDict>> {
        let store = self.store()?;
        let made = py.detach(|| store.backup(&dest)).py()?;
        let out = PyDict::new(py);
        out.set_item("path", made.path.display().to_string())?;
        out.set_item("documents", made.documents)?;
        Ok(out)
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
