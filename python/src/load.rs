//! `Store.bulk_load` and `Store.bulk_load_fingerprints`: the Rust bulk loader fed from
//! Python, in batches handed over with the interpreter released; Ctrl-C is checked between
//! batches (a batch is at most 1 MiB of text: well under a second of fingerprinting). On an
//! exception the loader is dropped: runs already ingested stay (the store is consistent),
//! documents still in memory are not stored, and loading again completes the job (upserts).

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyDict, PyInt, PyList, PyString, PyTuple};

use simhash_store::bulk::{BulkPhase, BulkProgress, BulkSummary};
use simhash_store::{BulkLoader, BulkOptions, Fingerprint};

use crate::args::{key_arg, text_ref, type_name, u64_arg};
use crate::columns::{Columns, Slice};
use crate::errors::IntoPy;
use crate::store::PyStore;

/// Texts are handed to Rust in batches of this many bytes (or `BATCH_DOCS` documents).
const BATCH_BYTES: usize = 1 << 20;
const BATCH_DOCS: usize = 16_384;
/// The loader fingerprints texts in chunks of this size, on all cores.
const TEXT_CHUNK: usize = 2 << 20;

enum Record {
    Text {
        id: u64,
        key: Option<String>,
        text: PyBackedStr,
    },
    Fingerprint {
        id: u64,
        key: Option<String>,
        fp: u64,
    },
}

impl Record {
    fn bytes(&self) -> usize {
        match self {
            Record::Text { key, text, .. } => text.len() + key.as_ref().map_or(0, String::len) + 16,
            Record::Fingerprint { key, .. } => key.as_ref().map_or(0, String::len) + 16,
        }
    }

    fn add(&self, loader: &mut BulkLoader<'_>) -> simhash_store::Result<()> {
        match self {
            Record::Text { id, key, text } => loader.add_text(*id, key.as_deref(), text),
            Record::Fingerprint {
                id,
                key: Some(key),
                fp,
            } => loader.add_with_key(*id, Fingerprint(*fp), key),
            Record::Fingerprint { id, key: None, fp } => loader.add(*id, Fingerprint(*fp)),
        }
    }
}

/// One record: `(id, key, text)`, `(id, key, fingerprint)` or a dict with `id`, optional
/// `key` and `text` or `fingerprint`.
fn record(obj: &Bound<'_, PyAny>, n: usize) -> PyResult<Record> {
    let at = |field: &str| format!("records[{n}].{field}");
    let (id, key, body, body_name) = if let Ok(d) = obj.cast::<PyDict>() {
        let id = d
            .get_item("id")?
            .ok_or_else(|| PyValueError::new_err(format!("records[{n}] has no \"id\"")))?;
        let key = d.get_item("key")?;
        let (body, name) = match (d.get_item("text")?, d.get_item("fingerprint")?) {
            (Some(t), _) if !t.is_none() => (t, "text"),
            (_, Some(f)) if !f.is_none() => (f, "fingerprint"),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "records[{n}] has neither \"text\" nor \"fingerprint\""
                )))
            }
        };
        (id, key, body, name)
    } else if obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<PyList>() {
        if obj.len()? != 3 {
            return Err(PyValueError::new_err(format!(
                "records[{n}] must be (id, key, text), got {} items",
                obj.len()?
            )));
        }
        let body = obj.get_item(2)?;
        let name = if body.is_instance_of::<PyInt>() {
            "fingerprint"
        } else {
            "text"
        };
        (obj.get_item(0)?, Some(obj.get_item(1)?), body, name)
    } else {
        return Err(PyTypeError::new_err(format!(
            "records[{n}] must be a tuple (id, key, text) or a dict, not {}",
            type_name(obj)
        )));
    };
    let id = u64_arg(&id, &at("id"))?;
    let key = key_arg(key.as_ref(), &at("key"))?;
    if body_name == "fingerprint" {
        let fp = u64_arg(&body, &at("fingerprint"))?;
        Ok(Record::Fingerprint { id, key, fp })
    } else {
        if !body.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(format!(
                "{} must be a str or an int fingerprint, not {}",
                at("text"),
                type_name(&body)
            )));
        }
        Ok(Record::Text {
            id,
            key,
            text: text_ref(&body, &at("text"))?,
        })
    }
}

/// Progress calls into Python; an exception there stops the load at the next batch.
struct Callback {
    failed: Arc<Mutex<Option<PyErr>>>,
}

impl Callback {
    fn options(
        progress: Option<&Bound<'_, PyAny>>,
        memory_budget: Option<i64>,
    ) -> PyResult<(BulkOptions, Callback)> {
        let failed: Arc<Mutex<Option<PyErr>>> = Arc::new(Mutex::new(None));
        let mut options = BulkOptions::new().text_chunk_size(TEXT_CHUNK);
        if let Some(bytes) = memory_budget {
            if bytes <= 0 {
                return Err(PyValueError::new_err(format!(
                    "memory_budget must be > 0 bytes, got {bytes}"
                )));
            }
            options = options.memory_budget(bytes as usize);
        }
        let shown;
        let progress = match progress {
            // `progress=True`: a progress bar on standard error (simhash_store/_progress.py).
            Some(p) if p.is_instance_of::<pyo3::types::PyBool>() => {
                if p.is_truthy()? {
                    shown = p
                        .py()
                        .import("simhash_store._progress")?
                        .call_method0("bar")?;
                    Some(&shown)
                } else {
                    None
                }
            }
            other => other,
        };
        if let Some(cb) = progress.filter(|p| !p.is_none()) {
            if !cb.is_callable() {
                return Err(PyTypeError::new_err(format!(
                    "progress must be callable, not {}",
                    type_name(cb)
                )));
            }
            let cb = cb.clone().unbind();
            let sink = Arc::clone(&failed);
            options = options.progress(move |p: &BulkProgress| {
                Python::attach(|py| {
                    let Ok(mut slot) = sink.lock() else { return };
                    if slot.is_some() {
                        return;
                    }
                    if let Err(e) = cb.call1(py, (PyBulkProgress::from(p),)) {
                        *slot = Some(e);
                    }
                });
            });
        }
        Ok((options, Callback { failed }))
    }

    fn check(&self) -> PyResult<()> {
        match self.failed.lock().ok().and_then(|mut s| s.take()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[pymethods]
impl PyStore {
    /// Loads many documents through the Rust bulk loader: texts fingerprinted on all
    /// cores, sorted runs written as SST files and ingested (much faster than inserts).
    ///
    /// ``records`` are ``(id, key, text)`` tuples (``key`` may be None; an int instead of
    /// the text is a fingerprint) or dicts with ``id``, optional ``key`` and ``text`` or
    /// ``fingerprint``. The same upserts as :meth:`insert`; texts without features are
    /// skipped and counted. ``progress=True`` draws a progress line on standard error; a
    /// callable gets :class:`BulkProgress` reports. ``memory_budget`` bounds the bytes held
    /// before a run is written (by default a third of the memory available, with no upper bound).
    ///
    /// Ctrl-C (or an exception from ``records``) stops the load: runs already ingested stay,
    /// the store stays consistent, and loading the same records again completes it.
    ///
    /// >>> import tempfile, simhash_store
    /// >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
    /// ...     summary = store.bulk_load([(1, "a", "first crawled page about storage"),
    /// ...                                {"id": 2, "key": "b", "text": "second page about word segmentation"},
    /// ...                                (3, None, "  ,.  ")])
    /// ...     (summary.added, summary.skipped, len(store))
    /// (2, 1, 2)
    #[pyo3(signature = (records, *, progress = None, memory_budget = None))]
    fn bulk_load(
        &self,
        py: Python<'_>,
        records: &Bound<'_, PyAny>,
        progress: Option<&Bound<'_, PyAny>>,
        memory_budget: Option<i64>,
    ) -> PyResult<PyBulkSummary> {
        let (options, callback) = Callback::options(progress, memory_budget)?;
        let store = self.store()?;
        let mut loader = store.bulk_loader_with(options).py()?;
        let mut batch: Vec<Record> = Vec::new();
        let mut bytes = 0usize;
        let iter = records.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "records must be an iterable of (id, key, text) tuples or dicts, not {}",
                type_name(records)
            ))
        })?;
        for (n, item) in iter.enumerate() {
            let r = record(&item?, n)?;
            bytes += r.bytes();
            batch.push(r);
            if bytes >= BATCH_BYTES || batch.len() >= BATCH_DOCS {
                hand_over(py, &mut loader, &mut batch, &callback)?;
                bytes = 0;
            }
        }
        hand_over(py, &mut loader, &mut batch, &callback)?;
        let summary = py.detach(|| loader.finish()).py()?;
        callback.check()?;
        Ok(PyBulkSummary::from(summary))
    }

    /// :meth:`bulk_load` of precomputed fingerprints from arrays (for example the
    /// ``id``, ``fingerprint`` and ``key`` columns of a Spark job's Parquet output).
    ///
    /// Contiguous numpy ``uint64`` arrays are read in place, a slice at a time, so memory
    /// holds the arrays, the loader's ``memory_budget`` and the block cache: 100M
    /// fingerprints need about 1.6 GB of arrays plus the budget. ``int64`` fingerprints are read
    /// as their two's-complement bits; other sequences are copied once.
    #[pyo3(signature = (ids, fingerprints, keys = None, *, progress = None, memory_budget = None))]
    fn bulk_load_fingerprints(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        fingerprints: &Bound<'_, PyAny>,
        keys: Option<&Bound<'_, PyAny>>,
        progress: Option<&Bound<'_, PyAny>>,
        memory_budget: Option<i64>,
    ) -> PyResult<PyBulkSummary> {
        let mut columns = Columns::new(ids, fingerprints, keys)?;
        let (options, callback) = Callback::options(progress, memory_budget)?;
        let store = self.store()?;
        let mut loader = store.bulk_loader_with(options).py()?;
        let ranges: Vec<_> = columns.ranges().collect();
        for range in ranges {
            py.check_signals()?;
            callback.check()?;
            let slice = columns.slice(range)?;
            py.detach(|| add_slice(&mut loader, &slice)).py()?;
        }
        let summary = py.detach(|| loader.finish()).py()?;
        callback.check()?;
        Ok(PyBulkSummary::from(summary))
    }
}

/// Adds the documents of `slice` to the loader.
fn add_slice(loader: &mut BulkLoader<'_>, slice: &Slice<'_>) -> simhash_store::Result<()> {
    let pairs = slice.ids.iter().zip(slice.fingerprints.iter());
    match &slice.keys {
        Some(keys) => pairs.zip(keys).try_for_each(|((&id, &fp), key)| match key {
            Some(key) => loader.add_with_key(id, Fingerprint(fp), key),
            None => loader.add(id, Fingerprint(fp)),
        }),
        // Copied into the run on all cores.
        None => loader.add_fingerprints(&slice.ids, &slice.fingerprints),
    }
}

fn hand_over(
    py: Python<'_>,
    loader: &mut BulkLoader<'_>,
    batch: &mut Vec<Record>,
    callback: &Callback,
) -> PyResult<()> {
    py.check_signals()?;
    callback.check()?;
    let records = std::mem::take(batch);
    py.detach(|| records.iter().try_for_each(|r| r.add(loader)))
        .py()?;
    // The texts are released here, with the interpreter attached.
    drop(records);
    py.check_signals()
}

/// A progress report of a bulk load, passed to the ``progress`` callable.
#[pyclass(module = "simhash_store._native", name = "BulkProgress", frozen)]
pub(crate) struct PyBulkProgress {
    #[pyo3(get)]
    phase: &'static str,
    #[pyo3(get)]
    documents: u64,
    #[pyo3(get)]
    bytes: u64,
    #[pyo3(get)]
    rate: f64,
    #[pyo3(get)]
    runs: u32,
    #[pyo3(get)]
    elapsed: f64,
}

impl From<&BulkProgress> for PyBulkProgress {
    fn from(p: &BulkProgress) -> Self {
        PyBulkProgress {
            phase: BulkPhase::name(p.phase),
            documents: p.documents,
            bytes: p.bytes,
            rate: p.rate,
            runs: p.runs,
            elapsed: p.elapsed.as_secs_f64(),
        }
    }
}

#[pymethods]
impl PyBulkProgress {
    fn __repr__(&self) -> String {
        format!(
            "BulkProgress(phase={:?}, documents={}, bytes={}, rate={:.0}, runs={}, elapsed={:.2})",
            self.phase, self.documents, self.bytes, self.rate, self.runs, self.elapsed
        )
    }
}

/// What a finished bulk load did (``str()`` gives one line).
#[pyclass(module = "simhash_store._native", name = "BulkSummary", frozen)]
pub(crate) struct PyBulkSummary {
    #[pyo3(get)]
    added: u64,
    #[pyo3(get)]
    replaced: u64,
    #[pyo3(get)]
    removed: u64,
    #[pyo3(get)]
    superseded: u64,
    #[pyo3(get)]
    skipped: u64,
    #[pyo3(get)]
    bytes: u64,
    #[pyo3(get)]
    sst_bytes: u64,
    #[pyo3(get)]
    runs: u32,
    #[pyo3(get)]
    elapsed: f64,
    text: String,
}

impl From<BulkSummary> for PyBulkSummary {
    fn from(s: BulkSummary) -> Self {
        PyBulkSummary {
            added: s.added,
            replaced: s.replaced,
            removed: s.removed,
            superseded: s.superseded,
            skipped: s.skipped,
            bytes: s.bytes,
            sst_bytes: s.sst_bytes,
            runs: s.runs,
            elapsed: s.elapsed.as_secs_f64(),
            text: s.to_string(),
        }
    }
}

#[pymethods]
impl PyBulkSummary {
    fn __str__(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "BulkSummary(added={}, replaced={}, removed={}, superseded={}, skipped={}, runs={}, elapsed={:.3})",
            self.added, self.replaced, self.removed, self.superseded, self.skipped, self.runs, self.elapsed
        )
    }
}
