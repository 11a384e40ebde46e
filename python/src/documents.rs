//! `Store`'s stored documents: one by id or key, the next free id and the id of a new one, and all of them streamed
//! or as arrays; `Document` and `DocumentIterator`.

use std::sync::atomic::{AtomicBool, Ordering};

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyStopIteration;
use pyo3::prelude::*;

use simhash_store::{Document, Error, IdAssigner, Store};

use crate::args::{text_arg, u64_arg};
use crate::errors::IntoPy;
use crate::store::PyStore;
use crate::stream::Stream;

#[pymethods]
impl PyStore {
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

    /// The id a document that gives none is stored under: the id of the document holding
    /// external key ``key``, else the next free id (as ``simhash-store load`` and the service
    /// assign them). Raises ``InvalidArgumentError`` when a new id is needed and none is left.
    #[pyo3(signature = (key=None))]
    fn assign_id(&self, py: Python<'_>, key: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
        let key = key.map(|k| text_arg(k, "key")).transpose()?;
        let store = self.store()?;
        py.detach(|| {
            let holder = match &key {
                Some(key) => store.id_for_key(key)?,
                None => None,
            };
            IdAssigner::for_store(&store)?
                .for_key(holder, |_| false)
                .ok_or_else(|| Error::NoIdLeft {
                    path: store.path().to_path_buf(),
                })
        })
        .py()
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
