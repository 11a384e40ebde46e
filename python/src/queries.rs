//! `Store`'s near-duplicate queries (of fingerprints, texts, arrays) and the `Match` they
//! return.

use pyo3::prelude::*;
use pyo3::types::PyList;

use simhash_store::verified::Verification;
use simhash_store::{Fingerprint, Match};

use crate::args::{k_arg, text_arg, u64_arg, u64_vec, Signed};
use crate::errors::IntoPy;
use crate::store::PyStore;

#[pymethods]
impl PyStore {
    /// The stored documents within Hamming distance ``k`` (0..=64) of ``fingerprint``,
    /// sorted by distance, then id: exactly what a brute-force scan finds.
    #[pyo3(signature = (fingerprint, k = 3))]
    fn query<'py>(
        &self,
        py: Python<'py>,
        fingerprint: &Bound<'py, PyAny>,
        k: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        let fp = Fingerprint(u64_arg(fingerprint, "fingerprint")?);
        let k = k_arg(k)?;
        let store = self.store()?;
        let found = py.detach(|| store.query(fp, k)).py()?;
        matches_to_py(py, found)
    }

    /// :meth:`query` of the fingerprint of ``text``.
    ///
    /// >>> import tempfile, simhash_store
    /// >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
    /// ...     _ = store.insert_text(7, "Rust storage engines keep sorted runs of keys on disk.")
    /// ...     [m.id for m in store.query_text("Rust storage engines keep sorted runs of keys on disk!")]
    /// [7]
    #[pyo3(signature = (text, k = 3))]
    fn query_text<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        k: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = text_arg(text, "text")?;
        let k = k_arg(k)?;
        let store = self.store()?;
        let found = py.detach(|| store.query_text(&text, k)).py()?;
        matches_to_py(py, found)
    }

    /// Verified near-duplicates of ``text``, in a store opened with ``sketch="MinHash"``:
    /// the stored documents within ``k`` bits whose sketch has a similarity of at least
    /// ``min_similarity`` with the text's, as ``(match, similarity)`` pairs sorted by
    /// distance, then id.
    ///
    /// >>> import tempfile, simhash_store
    /// >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path, sketch="MinHash") as store:
    /// ...     _ = store.insert_text(7, "Rust storage engines keep sorted runs of keys on disk, and merge them.")
    /// ...     [(m.id, s) for m, s in store.query_text_verified("Rust storage engines keep sorted runs of keys on disk, and merge them.")]
    /// [(7, 1.0)]
    #[pyo3(signature = (text, k = 8, min_similarity = 0.75))]
    fn query_text_verified<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        k: i64,
        min_similarity: f64,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = text_arg(text, "text")?;
        let verification = Verification::new(k_arg(k)?, min_similarity).py()?;
        let store = self.store()?;
        let found = py
            .detach(|| store.query_text_verified(&text, verification))
            .py()?;
        PyList::new(
            py,
            found.into_iter().map(|m| {
                let similarity = m.similarity;
                let matched = PyMatch {
                    id: m.id,
                    key: m.key,
                    fingerprint: m.fingerprint.0,
                    distance: m.distance,
                };
                (matched, similarity)
            }),
        )
    }

    /// :meth:`query` of each fingerprint, on all cores; results in input order.
    #[pyo3(signature = (fingerprints, k = 3))]
    fn query_many<'py>(
        &self,
        py: Python<'py>,
        fingerprints: &Bound<'py, PyAny>,
        k: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        let fps: Vec<Fingerprint> = u64_vec(fingerprints, "fingerprints", Signed::Bits)?
            .into_iter()
            .map(Fingerprint)
            .collect();
        let k = k_arg(k)?;
        let store = self.store()?;
        let found = py.detach(|| store.query_batch(&fps, k)).py()?;
        PyList::new(
            py,
            found
                .into_iter()
                .map(|ms| matches_to_py(py, ms))
                .collect::<PyResult<Vec<_>>>()?,
        )
    }
}

/// Query results as a list of `Match`.
pub(crate) fn matches_to_py<'py>(
    py: Python<'py>,
    found: Vec<Match>,
) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, found.into_iter().map(PyMatch::from))
}

/// A stored document within the queried distance. Query results are sorted by
/// distance, then id.
#[pyclass(module = "simhash_store._native", name = "Match", frozen, eq)]
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct PyMatch {
    #[pyo3(get)]
    id: u64,
    #[pyo3(get)]
    key: Option<String>,
    #[pyo3(get)]
    fingerprint: u64,
    #[pyo3(get)]
    distance: u32,
}

impl From<Match> for PyMatch {
    fn from(m: Match) -> Self {
        PyMatch {
            id: m.id,
            key: m.key,
            fingerprint: m.fingerprint.0,
            distance: m.distance,
        }
    }
}

#[pymethods]
impl PyMatch {
    #[new]
    #[pyo3(signature = (id, fingerprint, distance, key = None))]
    fn new(id: u64, fingerprint: u64, distance: u32, key: Option<String>) -> Self {
        PyMatch {
            id,
            key,
            fingerprint,
            distance,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Match(id={}, key={}, fingerprint=0x{:016x}, distance={})",
            self.id,
            self.key
                .as_ref()
                .map_or("None".into(), |k| format!("{k:?}")),
            self.fingerprint,
            self.distance
        )
    }

    fn __hash__(&self) -> u64 {
        self.id ^ self.fingerprint.rotate_left(17) ^ u64::from(self.distance)
    }
}
