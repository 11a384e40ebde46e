//! `Store`'s writes: inserts (of fingerprints, texts, arrays), inserts of what is new, and
//! removes.

use pyo3::prelude::*;
use pyo3::types::PyList;

use simhash_store::{Entry, Fingerprint, InsertOutcome};

use crate::args::{k_arg, key_arg, text_arg, u64_arg};
use crate::columns::Columns;
use crate::errors::IntoPy;
use crate::queries::matches_to_py;
use crate::store::PyStore;

#[pymethods]
impl PyStore {
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

    /// :meth:`insert_if_new` of each document, in order, each decided against the store and
    /// the documents stored before it here; committed in atomic writes of 131,072 documents
    /// each (one write for fewer). Returns, per document, the near-duplicates that kept it
    /// out: an empty list means it was stored. Arrays are read as :meth:`insert_many` reads
    /// them.
    ///
    /// >>> import tempfile, simhash_store
    /// >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
    /// ...     [[m.id for m in found] for found in store.insert_many_if_new([1, 2, 3], [0b1111, 0b0111, 1 << 40])]
    /// [[], [1], []]
    #[pyo3(signature = (ids, fingerprints, k = 3, keys = None))]
    fn insert_many_if_new<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        fingerprints: &Bound<'py, PyAny>,
        k: i64,
        keys: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let k = k_arg(k)?;
        let mut columns = Columns::new(ids, fingerprints, keys)?;
        let store = self.store()?;
        let ranges: Vec<_> = columns.ranges().collect();
        let out = PyList::empty(py);
        for range in ranges {
            py.check_signals()?;
            let entries = columns.slice(range)?.entries();
            let outcomes = py.detach(|| store.insert_batch_if_new(entries, k)).py()?;
            for outcome in outcomes {
                out.append(outcome_to_py(py, outcome)?)?;
            }
        }
        Ok(out)
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
}

pub(crate) fn entry(
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

pub(crate) fn outcome_to_py<'py>(
    py: Python<'py>,
    outcome: InsertOutcome,
) -> PyResult<Bound<'py, PyList>> {
    match outcome {
        InsertOutcome::Duplicate(found) => matches_to_py(py, found),
        _ => Ok(PyList::empty(py)),
    }
}
