//! `Store`: opening a store (its options), closing it, and what it is (path, settings, size).
//! Its other methods are grouped by concept: `writes.rs`, `queries.rs`, `documents.rs`,
//! `maintenance.rs`, `stats.rs`, `load.rs`, `dedup.rs`.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use simhash_store::{Durability, Store};

use crate::errors::IntoPy;
use crate::hasher::PySimhasher;
use crate::settings;

/// A near-duplicate index in a directory (RocksDB with one column family per 16-bit
/// block of the fingerprint). ``Store.open(path)`` creates or opens it.
///
/// Options (keyword only):
///
/// - ``durability="buffered"``: ``"sync"`` (nothing acknowledged is lost, even on power
///   loss), ``"buffered"`` (a killed process loses nothing acknowledged; power loss the
///   last seconds) or ``"no-wal"`` (writes since the last flush are lost on a crash);
/// - ``read_only=False``: open beside a writing process;
/// - ``cache_size``: RocksDB's block cache, in bytes;
/// - ``query_cache_size``: the query cache in bytes, of a store of format 6 or older (256 MiB
///   by default, 0 for none; a store of formats 7 and 8 reads its packed chunks without one);
/// - ``concurrent_reads``: read a query's groups at once on eight I/O threads
///   (``None``, the default: when the store's files exceed half the memory available, that
///   is, when queries read from disk; chosen at open and after each bulk load);
/// - ``mmap_reads``: read the store's files through memory maps instead of positioned reads
///   (``None``, the default: when they fit in half the memory available as the store is
///   opened, where a fresh query takes about 0.6 times as long; from disk it is 3 to 10 times
///   slower; a new store is read without them);
/// - any :class:`Simhasher` setting: the fingerprint settings of a *new* store; an existing
///   store records its own and raises :class:`~simhash_store.SettingsMismatchError` if they
///   differ.
///
/// One process writes a store at a time; many Python threads can share one ``Store``, and
/// long calls release the interpreter. Use it as a context manager, or call ``close()``.
///
/// >>> import tempfile, simhash_store
/// >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
/// ...     store.insert(1, 0x0123_4567_89ab_cdef, key="https://example.com/a")
/// ...     store.insert(2, 0x0123_4567_89ab_cdee)
/// ...     [(m.id, m.distance) for m in store.query(0x0123_4567_89ab_cdef, k=1)]
/// [(1, 0), (2, 1)]
#[pyclass(module = "simhash_store._native", name = "Store", frozen, subclass)]
pub(crate) struct PyStore {
    inner: RwLock<Option<Arc<Store>>>,
    path: PathBuf,
    read_only: bool,
    durability: &'static str,
    hasher: Py<PySimhasher>,
}

fn durability_arg(name: &str) -> PyResult<(Durability, &'static str)> {
    match name.to_ascii_lowercase().replace('_', "-").as_str() {
        "sync" => Ok((Durability::Sync, "sync")),
        "buffered" => Ok((Durability::Buffered, "buffered")),
        "no-wal" | "nowal" => Ok((Durability::NoWal, "no-wal")),
        _ => Err(PyValueError::new_err(format!(
            "durability must be \"sync\", \"buffered\" or \"no-wal\", got {name:?}"
        ))),
    }
}

fn size_arg(v: Option<i64>, what: &str) -> PyResult<Option<usize>> {
    match v {
        None => Ok(None),
        Some(n) if n >= 0 => Ok(Some(n as usize)),
        Some(n) => Err(PyValueError::new_err(format!(
            "{what} must be >= 0 bytes, got {n}"
        ))),
    }
}

impl PyStore {
    /// The open store, or `ValueError` once closed.
    pub(crate) fn store(&self) -> PyResult<Arc<Store>> {
        let guard = self
            .inner
            .read()
            .map_err(|_| PyValueError::new_err("the store's lock was poisoned"))?;
        guard.clone().ok_or_else(|| {
            PyValueError::new_err(format!(
                "the store at {} is closed: open it again with Store.open",
                self.path.display()
            ))
        })
    }
}

#[pymethods]
impl PyStore {
    // One argument per keyword of Python's `Store(...)`.
    #[allow(clippy::too_many_arguments)]
    #[new]
    #[pyo3(signature = (path, *, durability = "buffered", read_only = false, cache_size = None, query_cache_size = None, concurrent_reads = None, mmap_reads = None, **settings))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        durability: &str,
        read_only: bool,
        cache_size: Option<i64>,
        query_cache_size: Option<i64>,
        concurrent_reads: Option<bool>,
        mmap_reads: Option<bool>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let (durability, durability_name) = durability_arg(durability)?;
        let mut builder = Store::builder().durability(durability).read_only(read_only);
        if let Some(bytes) = size_arg(cache_size, "cache_size")? {
            builder = builder.block_cache_size(bytes);
        }
        if let Some(bytes) = size_arg(query_cache_size, "query_cache_size")? {
            builder = builder.query_cache_size(bytes);
        }
        if let Some(on) = concurrent_reads {
            builder = builder.concurrent_reads(on);
        }
        if let Some(on) = mmap_reads {
            builder = builder.mmap_reads(on);
        }
        if settings.is_some_and(|s| !s.is_empty()) {
            builder = builder.simhash_config(settings::from_kwargs(settings)?);
        }
        let open_path = path.clone();
        let store = py.detach(move || builder.open(&open_path)).py()?;
        let hasher = Py::new(
            py,
            PySimhasher {
                inner: store.simhasher().clone(),
            },
        )?;
        Ok(PyStore {
            inner: RwLock::new(Some(Arc::new(store))),
            path,
            read_only,
            durability: durability_name,
            hasher,
        })
    }

    /// Closes the store (calls running on other threads finish first). Idempotent.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let taken = self
            .inner
            .write()
            .map_err(|_| PyValueError::new_err("the store's lock was poisoned"))?
            .take();
        // Closing flushes memtables without a write-ahead log: not under the interpreter lock.
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

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    #[getter]
    fn read_only(&self) -> bool {
        self.read_only
    }

    #[getter]
    fn durability(&self) -> &'static str {
        self.durability
    }

    /// The on-disk format version: 9 (packed posting blocks, crowded groups split) for a
    /// store this version created; an older store keeps its own until ``simhash-store
    /// upgrade`` converts it.
    #[getter]
    fn format_version(&self) -> PyResult<u32> {
        Ok(self.store()?.format_version())
    }

    /// The fingerprinter with the settings the store records.
    #[getter]
    fn simhasher(&self, py: Python<'_>) -> Py<PySimhasher> {
        self.hasher.clone_ref(py)
    }

    /// The number of documents.
    fn __len__(&self) -> PyResult<usize> {
        Ok(self.store()?.len() as usize)
    }

    /// ``id in store`` for an int id, ``key in store`` for a str key.
    fn __contains__(&self, py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<bool> {
        let store = self.store()?;
        if item.is_instance_of::<pyo3::types::PyString>() {
            let key: String = item.extract()?;
            return Ok(py.detach(|| store.id_for_key(&key)).py()?.is_some());
        }
        let Ok(id) = item.extract::<u64>() else {
            return Ok(false);
        };
        Ok(py.detach(|| store.get(id)).py()?.is_some())
    }

    fn __repr__(&self) -> String {
        match self.store() {
            Ok(s) => format!(
                "Store({:?}, documents={}{})",
                self.path.display().to_string(),
                s.len(),
                if self.read_only {
                    ", read_only=True"
                } else {
                    ""
                }
            ),
            Err(_) => format!("Store({:?}, closed)", self.path.display().to_string()),
        }
    }
}
