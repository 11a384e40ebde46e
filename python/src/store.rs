//! `Store` and what its methods return: `Match`, `Document`, `VerifyReport`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::{PyStopIteration, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use simhash_store::verified::Verification;
use simhash_store::{
    Document, Durability, Entry, Error, Fingerprint, InsertOutcome, Match, Store, VerifyReport,
};

use crate::args::{k_arg, key_arg, text_arg, u64_arg, u64_vec, Signed};
use crate::columns::Columns;
use crate::errors::IntoPy;
use crate::hasher::PySimhasher;
use crate::settings;
use crate::stream::Stream;

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

pub(crate) fn matches_to_py<'py>(
    py: Python<'py>,
    found: Vec<Match>,
) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, found.into_iter().map(PyMatch::from))
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

    /// The on-disk format version: 8 (packed posting blocks, each chunk's ids apart) for a
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

    /// Stores document ``id``; an upsert: a stored ``id`` is replaced, and a document
    /// that carried ``key`` before loses it (and is removed). Atomic and durable as the
    /// store's ``durability`` says.
    #[pyo3(signature = (id, fingerprint, key = None))]
    fn insert(
        &self,
        py: Python<'_>,
        id: &Bound<'_, PyAny>,
        fingerprint: &Bound<'_, PyAny>,
        key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let entry = entry(id, fingerprint, key)?;
        let store = self.store()?;
        py.detach(|| store.insert_entry(entry)).py()
    }

    /// Fingerprints ``text`` with :attr:`simhasher`, stores it like :meth:`insert` and
    /// returns the fingerprint.
    #[pyo3(signature = (id, text, key = None))]
    fn insert_text(
        &self,
        py: Python<'_>,
        id: &Bound<'_, PyAny>,
        text: &Bound<'_, PyAny>,
        key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let id = u64_arg(id, "id")?;
        let text = text_arg(text, "text")?;
        let key = key_arg(key, "key")?;
        let store = self.store()?;
        py.detach(|| store.insert_text(id, key.as_deref(), &text))
            .map(|f| f.0)
            .py()
    }

    /// Inserts many documents, in atomic writes of 131,072 documents each (one write for
    /// fewer): a crash or an error part-way leaves the writes before it stored. Contiguous
    /// uint64 arrays are read in place, a slice at a time; int64 fingerprint arrays are read
    /// as their two's-complement bits (as Spark, Arrow and Parquet store them). For
    /// millions, :meth:`bulk_load_fingerprints` is faster.
    #[pyo3(signature = (ids, fingerprints, keys = None))]
    fn insert_many(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        fingerprints: &Bound<'_, PyAny>,
        keys: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let mut columns = Columns::new(ids, fingerprints, keys)?;
        let store = self.store()?;
        let ranges: Vec<_> = columns.ranges().collect();
        for range in ranges {
            py.check_signals()?;
            let entries = columns.slice(range)?.entries();
            py.detach(|| store.insert_batch(entries)).py()?;
        }
        Ok(())
    }

    /// Removes document ``id``; whether it was stored.
    fn remove(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<bool> {
        let id = u64_arg(id, "id")?;
        let store = self.store()?;
        py.detach(|| store.remove(id)).py()
    }

    /// Removes the document with external key ``key``; its id, if there was one.
    fn remove_key(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let key = text_arg(key, "key")?;
        let store = self.store()?;
        py.detach(|| store.remove_key(&key)).py()
    }

    /// The fingerprint of document ``id``.
    fn get(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let id = u64_arg(id, "id")?;
        let store = self.store()?;
        Ok(py.detach(|| store.get(id)).py()?.map(|f| f.0))
    }

    /// Everything stored for document ``id``.
    fn document(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<Option<PyDocument>> {
        let id = u64_arg(id, "id")?;
        let store = self.store()?;
        Ok(py
            .detach(|| store.document(id))
            .py()?
            .map(|d| PyDocument::new(id, d)))
    }

    /// The id of the document with external key ``key``.
    fn id_for_key(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let key = text_arg(key, "key")?;
        let store = self.store()?;
        py.detach(|| store.id_for_key(&key)).py()
    }

    /// One more than the largest stored id (0 for an empty store). Raises
    /// ``InvalidArgumentError`` if the store holds id 2**64-1: no id is left after it, and ids
    /// never wrap to a stored one.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        let store = self.store()?;
        py.detach(|| store.next_id()).py()
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

    /// Stores the document only if nothing stored is within ``k``, atomically (no
    /// concurrent insert slips in between). Returns the near-duplicates that kept it out:
    /// an empty list means it was stored.
    ///
    /// >>> import tempfile, simhash_store
    /// >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
    /// ...     store.insert_if_new(1, 0b1111), [m.id for m in store.insert_if_new(2, 0b0111)]
    /// ([], [1])
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
        let store = self.store()?;
        let outcome = py.detach(|| store.insert_if_new(entry, k)).py()?;
        outcome_to_py(py, outcome)
    }

    /// :meth:`insert_if_new` of the fingerprint of ``text``.
    #[pyo3(signature = (id, text, k = 3, key = None))]
    fn insert_text_if_new<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
        text: &Bound<'py, PyAny>,
        k: i64,
        key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let id = u64_arg(id, "id")?;
        let text = text_arg(text, "text")?;
        let key = key_arg(key, "key")?;
        let k = k_arg(k)?;
        let store = self.store()?;
        let outcome = py
            .detach(|| store.insert_text_if_new(id, key.as_deref(), &text, k))
            .py()?
            .1;
        outcome_to_py(py, outcome)
    }

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

    /// Compacts the store: in a store of format 8, folds single writes and earlier bulk loads
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

    /// Bytes on disk per column family.
    fn disk_usage<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let store = self.store()?;
        let usage = py.detach(|| store.disk_usage()).py()?;
        let dict = PyDict::new(py);
        for (family, bytes) in usage {
            dict.set_item(family, bytes)?;
        }
        Ok(dict)
    }

    /// How the documents spread over the groups of the four block families, and what that
    /// costs a query (one pass over the documents), as a dict:
    ///
    /// - ``documents``;
    /// - ``blocks``: per block family, ``family``, ``largest`` (the ``top`` largest groups,
    ///   ``(block value, documents)``), ``max_share`` (the largest group's share of the
    ///   documents), ``shared_block_factor`` (how much more often two documents share the
    ///   block's value than two uniformly random fingerprints: about 1 for those) and
    ///   ``expected_scan`` (the entries of the family a new query drawn like the documents
    ///   scans, on average);
    /// - ``expected_scan_per_query``: the four together, what a ``k <= 3`` query scans;
    ///   ``uniform_scan_per_query``: the same for uniformly random fingerprints
    ///   (``4 * documents / 65536``); ``scan_vs_uniform``: their ratio.
    #[pyo3(signature = (top = 5))]
    fn stats<'py>(&self, py: Python<'py>, top: usize) -> PyResult<Bound<'py, PyDict>> {
        let store = self.store()?;
        let groups = py
            .detach(|| simhash_store::groups::BlockGroups::of_store(&store))
            .py()?;
        let blocks = PyList::empty(py);
        for b in 0..simhash_store::BLOCKS {
            let block = PyDict::new(py);
            block.set_item("family", format!("block{b}"))?;
            block.set_item("largest", groups.largest(b, top))?;
            block.set_item("max_share", groups.largest_share(b))?;
            block.set_item("shared_block_factor", groups.shared_block_factor(b))?;
            block.set_item("expected_scan", groups.expected_scan(b))?;
            blocks.append(block)?;
        }
        let scan = groups.expected_scan_per_query();
        let uniform = groups.uniform_scan_per_query();
        let dict = PyDict::new(py);
        dict.set_item("documents", groups.documents())?;
        dict.set_item("blocks", blocks)?;
        dict.set_item("expected_scan_per_query", scan)?;
        dict.set_item("uniform_scan_per_query", uniform)?;
        dict.set_item(
            "scan_vs_uniform",
            if uniform > 0.0 { scan / uniform } else { 0.0 },
        )?;
        Ok(dict)
    }

    /// ``(id, fingerprint, key)`` of every document, in id order, streamed from one snapshot
    /// (later writes are not seen).
    fn documents(&self) -> PyResult<PyDocumentIter> {
        let store = self.store()?;
        let stream = Stream::start(move |stop, emit| {
            each_document(&store, stop, |id, d| emit((id, d.fingerprint.0, d.key)))
        });
        Ok(PyDocumentIter { stream })
    }

    /// The ids and fingerprints of every document, in id order, as two uint64 arrays.
    fn documents_numpy<'py>(&self, py: Python<'py>) -> PyResult<IdsAndFingerprints<'py>> {
        let store = self.store()?;
        let (ids, fps) = crate::interrupt::run(py, |stop| {
            let mut ids = Vec::with_capacity(store.len() as usize);
            let mut fps = Vec::with_capacity(store.len() as usize);
            each_document(&store, stop, |id, d| {
                ids.push(id);
                fps.push(d.fingerprint.0);
                Ok(())
            })?;
            Ok::<_, Error>((ids, fps))
        })?
        .py()?;
        Ok((ids.into_pyarray(py), fps.into_pyarray(py)))
    }
}

/// `f(id, document)` of every document in id order, from one snapshot; stops with
/// [`Error::Cancelled`] once `stop` is set, or with the first error of `f`.
fn each_document(
    store: &Store,
    stop: &AtomicBool,
    mut f: impl FnMut(u64, Document) -> Result<(), Error>,
) -> Result<(), Error> {
    for item in store.documents()? {
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let (id, d) = item?;
        f(id, d)?;
    }
    Ok(())
}

/// Ids and fingerprints, as arrays.
type IdsAndFingerprints<'py> = (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u64>>);

/// ``(id, fingerprint, key)`` of every document, in id order. ``close()`` (or dropping it)
/// stops reading.
#[pyclass(module = "simhash_store._native", name = "DocumentIterator", frozen)]
pub(crate) struct PyDocumentIter {
    stream: Stream<(u64, u64, Option<String>)>,
}

#[pymethods]
impl PyDocumentIter {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<(u64, u64, Option<String>)> {
        self.stream
            .next(py)?
            .ok_or_else(|| PyStopIteration::new_err(()))
    }

    /// Stops reading (the iterator then ends).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.stream.close(py)
    }
}

fn entry(
    id: &Bound<'_, PyAny>,
    fingerprint: &Bound<'_, PyAny>,
    key: Option<&Bound<'_, PyAny>>,
) -> PyResult<Entry> {
    let id = u64_arg(id, "id")?;
    let fp = Fingerprint(u64_arg(fingerprint, "fingerprint")?);
    let mut e = Entry::new(id, fp);
    if let Some(key) = key_arg(key, "key")? {
        e = e.with_key(key);
    }
    Ok(e)
}

fn outcome_to_py<'py>(py: Python<'py>, outcome: InsertOutcome) -> PyResult<Bound<'py, PyList>> {
    match outcome {
        InsertOutcome::Duplicate(found) => matches_to_py(py, found),
        _ => Ok(PyList::empty(py)),
    }
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

/// What the store holds for one document.
#[pyclass(module = "simhash_store._native", name = "Document", frozen, eq)]
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct PyDocument {
    #[pyo3(get)]
    id: u64,
    #[pyo3(get)]
    fingerprint: u64,
    #[pyo3(get)]
    key: Option<String>,
    #[pyo3(get)]
    text_len: Option<u64>,
    #[pyo3(get)]
    added: u64,
}

impl PyDocument {
    fn new(id: u64, d: Document) -> Self {
        PyDocument {
            id,
            fingerprint: d.fingerprint.0,
            key: d.key,
            text_len: d.text_len,
            added: d.added,
        }
    }
}

#[pymethods]
impl PyDocument {
    fn __repr__(&self) -> String {
        format!(
            "Document(id={}, fingerprint=0x{:016x}, key={}, text_len={}, added={})",
            self.id,
            self.fingerprint,
            self.key
                .as_ref()
                .map_or("None".into(), |k| format!("{k:?}")),
            self.text_len.map_or("None".into(), |n| n.to_string()),
            self.added
        )
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
