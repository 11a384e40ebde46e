//! `PostgresIndex`: the index in a PostgreSQL database ([`PgIndex`]) with the names of
//! `Store`, and `PostgresLoadSummary`. Each index runs its async calls on a tokio runtime of
//! its own (made at open, so an index opened in a forked worker works there), blocking the
//! calling thread with the interpreter released.

use std::sync::{Arc, RwLock};
use std::time::Instant;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use simhash_store::postgres::{PgIndex, PgLoader, DEFAULT_LOAD_BATCH};
use simhash_store::{Fingerprint, InsertOutcome};

use crate::args::{k_arg, text_arg, u64_arg, u64_vec, Signed};
use crate::columns::Columns;
use crate::errors::{to_py_with_advice, IntoPy};
use crate::hasher::PySimhasher;
use crate::queries::matches_to_py;
use crate::settings;
use crate::writes::{entry, outcome_to_py};

// The default `batch_size` of `bulk_load_fingerprints`, written out for its Python signature.
const _: () = assert!(DEFAULT_LOAD_BATCH == 1000000);

/// Fingerprints per statement pair of `query_many`: the groups of 1,024 fingerprints are
/// one `ANY` array of at most 4,096 groups for `k <= 3`.
const QUERY_CHUNK: usize = 1024;

/// The near-duplicate index in a PostgreSQL database, shared by any number of processes:
/// the same answers as a :class:`Store` directory. ``PostgresIndex.open(url)`` opens it,
/// making its tables in an empty database.
///
/// ``url`` is ``postgres://user:password@host:port/database`` (or ``postgresql://``, or
/// ``host=... dbname=...``); several hosts with ``target_session_attrs=read-write`` reach
/// the primary of a replicated cluster. Keyword arguments are :class:`Simhasher` settings
/// for a *new* index; an existing one records its own and raises
/// :class:`~simhash_store.SettingsMismatchError` if they differ.
///
/// Writes from all processes apply one after another (each transaction takes the index's
/// writer lock), so :meth:`insert_if_new` never admits two near-duplicates sent at once.
/// Calls release the interpreter while the database works; many threads can share one
/// index (it keeps a pool of up to 16 connections). Use it as a context manager, or call
/// ``close()``. Failures of the server or the connection raise
/// :class:`~simhash_store.PostgresError`.
///
/// >>> import simhash_store
/// >>> with simhash_store.PostgresIndex.open("postgres://app@db.example/dedup") as index:  # doctest: +SKIP
/// ...     index.insert(1, 0x0123_4567_89ab_cdef, key="https://example.com/a")
/// ...     [(m.id, m.key, m.distance) for m in index.query(0x0123_4567_89ab_cdee, k=1)]
/// [(1, 'https://example.com/a', 1)]
#[pyclass(
    module = "simhash_store._native",
    name = "PostgresIndex",
    frozen,
    subclass
)]
pub(crate) struct PyPostgresIndex {
    inner: RwLock<Option<Arc<PgIndex>>>,
    runtime: tokio::runtime::Runtime,
    database: String,
    hasher: Py<PySimhasher>,
}

impl PyPostgresIndex {
    /// The open index, or `ValueError` once closed.
    fn index(&self) -> PyResult<Arc<PgIndex>> {
        let guard = self
            .inner
            .read()
            .map_err(|_| PyValueError::new_err("the index's lock was poisoned"))?;
        guard.clone().ok_or_else(|| {
            PyValueError::new_err(format!(
                "the index in {} is closed: open it again with PostgresIndex.open",
                self.database
            ))
        })
    }

    /// Runs `work` on the runtime with the interpreter released.
    fn block_on<T: Send>(
        &self,
        py: Python<'_>,
        work: impl std::future::Future<Output = simhash_store::Result<T>> + Send,
    ) -> PyResult<T> {
        py.detach(|| self.runtime.block_on(work)).py()
    }
}

#[pymethods]
impl PyPostgresIndex {
    #[new]
    #[pyo3(signature = (url, **settings))]
    fn new(py: Python<'_>, url: &str, settings: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let config = match settings {
            Some(s) if !s.is_empty() => Some(settings::from_kwargs(Some(s))?),
            _ => None,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("simhash-store-postgres")
            .enable_all()
            .build()
            .map_err(|e| {
                PyOSError::new_err(format!("cannot start the PostgreSQL client's threads: {e}"))
            })?;
        let index = py
            .detach(|| runtime.block_on(PgIndex::open(url, config)))
            .py()?;
        let hasher = Py::new(
            py,
            PySimhasher {
                inner: index.simhasher().clone(),
            },
        )?;
        Ok(PyPostgresIndex {
            database: index.database().to_owned(),
            inner: RwLock::new(Some(Arc::new(index))),
            runtime,
            hasher,
        })
    }

    /// Closes the index's connections (calls running on other threads finish first).
    /// Idempotent.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let taken = self
            .inner
            .write()
            .map_err(|_| PyValueError::new_err("the index's lock was poisoned"))?
            .take();
        py.detach(move || drop(taken));
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    #[getter]
    fn closed(&self) -> bool {
        self.inner.read().map(|g| g.is_none()).unwrap_or(true)
    }

    /// The database, as a URL without user or password.
    #[getter]
    fn database(&self) -> String {
        self.database.clone()
    }

    /// The fingerprinter with the settings the index records.
    #[getter]
    fn simhasher(&self, py: Python<'_>) -> Py<PySimhasher> {
        self.hasher.clone_ref(py)
    }

    /// The number of documents.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        let index = self.index()?;
        Ok(self.block_on(py, index.len())? as usize)
    }

    /// Stores document ``id`` (an upsert, as :meth:`Store.insert`), in one transaction.
    #[pyo3(signature = (id, fingerprint, key = None))]
    fn insert(
        &self,
        py: Python<'_>,
        id: &Bound<'_, PyAny>,
        fingerprint: &Bound<'_, PyAny>,
        key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let entry = entry(id, fingerprint, key)?;
        let index = self.index()?;
        self.block_on(py, index.insert_entry(entry))
    }

    /// Stores the document only if nothing stored is within ``k``: the check and the insert
    /// hold the index's writer lock together, so two near-duplicates sent at once, from any
    /// processes, are never both stored. Returns the near-duplicates that kept it out: an
    /// empty list means it was stored.
    #[pyo3(signature = (id, fingerprint, k = 3, key = None))]
    fn insert_if_new<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
        fingerprint: &Bound<'py, PyAny>,
        k: i64,
        key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let entry = entry(id, fingerprint, key)?;
        let k = k_arg(k)?;
        let index = self.index()?;
        let outcome: InsertOutcome = self.block_on(py, index.insert_if_new(entry, k))?;
        outcome_to_py(py, outcome)
    }

    /// The fingerprint of document ``id``.
    fn get(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let id = u64_arg(id, "id")?;
        let index = self.index()?;
        Ok(self.block_on(py, index.get(id))?.map(|fp| fp.0))
    }

    /// The id of the document with external key ``key``.
    fn id_for_key(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let key = text_arg(key, "key")?;
        let index = self.index()?;
        self.block_on(py, index.id_for_key(&key))
    }

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
        let index = self.index()?;
        let found = self.block_on(py, index.query(fp, k))?;
        matches_to_py(py, found)
    }

    /// :meth:`query` of the fingerprint of ``text``, made with the recorded settings.
    #[pyo3(signature = (text, k = 3))]
    fn query_text<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        k: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = text_arg(text, "text")?;
        let k = k_arg(k)?;
        let index = self.index()?;
        let found = self.block_on(py, index.query_text(&text, k))?;
        matches_to_py(py, found)
    }

    /// :meth:`query` of each fingerprint (a list of ints, or a numpy ``uint64`` or
    /// ``int64`` array, read as the fingerprints' bits), two statements per 1,024 of them;
    /// results in input order.
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
        let index = self.index()?;
        let found = self.block_on(py, async {
            let mut all = Vec::with_capacity(fps.len());
            for chunk in fps.chunks(QUERY_CHUNK) {
                all.extend(index.query_many(chunk, k).await?);
            }
            Ok(all)
        })?;
        PyList::new(
            py,
            found
                .into_iter()
                .map(|ms| matches_to_py(py, ms))
                .collect::<PyResult<Vec<_>>>()?,
        )
    }

    /// Loads precomputed fingerprints as ``simhash-store load --postgres`` does: every
    /// ``batch_size`` documents are one transaction that copies the new documents in
    /// (binary COPY) and packs their entries into the groups in this process: into this
    /// load's parts of recent batches, merged as a binary counter carries, so a batch does
    /// not rewrite the groups whole. Larger batches load faster, leave fewer parts per
    /// group and hold more memory (a few hundred bytes
    /// a document). Arrays are read as :meth:`Store.bulk_load_fingerprints` reads them.
    /// Documents are upserts by id and key, so loading the same ones again stores none twice.
    ///
    /// A load that stops (an error, a lost server, Ctrl-C) leaves the batches before it in
    /// the index and nothing of the one in flight; the error says how many; calling again
    /// with the same documents finishes the load.
    ///
    /// >>> import numpy as np, simhash_store
    /// >>> with simhash_store.PostgresIndex.open("postgres://app@db.example/dedup") as index:  # doctest: +SKIP
    /// ...     summary = index.bulk_load_fingerprints(np.array([1, 2, 2**63], dtype=np.uint64),
    /// ...                                            np.array([0xff, 0xfe, 2**64 - 1], dtype=np.uint64))
    /// ...     (summary.added, len(index), [m.id for m in index.query(0xff, k=1)])
    /// (3, 3, [1, 2])
    #[pyo3(signature = (ids, fingerprints, keys = None, *, batch_size = 1000000))]
    fn bulk_load_fingerprints(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        fingerprints: &Bound<'_, PyAny>,
        keys: Option<&Bound<'_, PyAny>>,
        batch_size: i64,
    ) -> PyResult<PyPostgresLoadSummary> {
        if batch_size < 1 {
            return Err(PyValueError::new_err(format!(
                "batch_size must be at least 1 document, got {batch_size}"
            )));
        }
        let mut columns = Columns::new(ids, fingerprints, keys)?;
        let index = self.index()?;
        let started = Instant::now();
        let mut loader = PgLoader::new(&index, batch_size as usize);
        let ranges: Vec<_> = columns.ranges().collect();
        for range in ranges {
            py.check_signals()?;
            let entries = columns.slice(range)?.entries();
            let added = py.detach(|| self.runtime.block_on(loader.add_all(entries)));
            added.map_err(|e| stopped(e, &loader))?;
        }
        let flushed = py.detach(|| self.runtime.block_on(loader.flush()));
        flushed.map_err(|e| stopped(e, &loader))?;
        let s = loader.summary();
        Ok(PyPostgresLoadSummary {
            added: s.added,
            replaced: s.replaced,
            removed: s.removed,
            superseded: s.superseded,
            documents: loader.committed(),
            batches: loader.batches(),
            elapsed: started.elapsed().as_secs_f64(),
        })
    }

    fn __repr__(&self) -> String {
        if self.closed() {
            format!("PostgresIndex({:?}, closed)", self.database)
        } else {
            format!("PostgresIndex({:?})", self.database)
        }
    }
}

/// The error of a batch that failed, with where the load left the index and how to finish.
fn stopped(e: simhash_store::Error, loader: &PgLoader<'_>) -> PyErr {
    to_py_with_advice(
        e,
        &format!(
            "{}; call bulk_load_fingerprints again with the same documents to finish: each replaces \
             itself by id, so none is stored twice",
            loader.stopped()
        ),
    )
}

/// What :meth:`PostgresIndex.bulk_load_fingerprints` did (``str()`` gives one line).
#[pyclass(module = "simhash_store._native", name = "PostgresLoadSummary", frozen)]
pub(crate) struct PyPostgresLoadSummary {
    #[pyo3(get)]
    added: u64,
    #[pyo3(get)]
    replaced: u64,
    #[pyo3(get)]
    removed: u64,
    #[pyo3(get)]
    superseded: u64,
    #[pyo3(get)]
    documents: u64,
    #[pyo3(get)]
    batches: u64,
    #[pyo3(get)]
    elapsed: f64,
}

#[pymethods]
impl PyPostgresLoadSummary {
    fn __str__(&self) -> String {
        let plural =
            |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        format!(
            "loaded {} in {} in {:.2} s: {} new, {} replaced a stored document (same id or key), \
             {} superseded by a later document of this load, {} removed (a loaded document took \
             their key)",
            plural(self.documents, "document", "documents"),
            plural(self.batches, "transaction", "transactions"),
            self.elapsed,
            self.added,
            self.replaced,
            self.superseded,
            plural(self.removed, "stored document", "stored documents")
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "PostgresLoadSummary(added={}, replaced={}, removed={}, superseded={}, documents={}, batches={}, elapsed={:.3})",
            self.added,
            self.replaced,
            self.removed,
            self.superseded,
            self.documents,
            self.batches,
            self.elapsed
        )
    }
}
