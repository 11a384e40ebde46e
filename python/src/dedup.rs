//! Deduplicating a whole store from Python: `Store.pairs` (an iterator fed by the scan on a
//! background thread), `Store.pairs_numpy` (three arrays, for millions of pairs),
//! `Store.clusters` (`Clusters`, with the command line's representative rules), and their
//! verified forms (`verified_pairs`, `verified_pairs_numpy`, `verified_clusters`). Ctrl-C stops
//! the scan within a fraction of a second ([`simhash_store::dedup::PairScan::stop_when`]).

use std::sync::atomic::{AtomicU64, Ordering};

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::{PyStopIteration, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use simhash_store::dedup::{ClusterBuilder, Representative, ScanStats};
use simhash_store::verified::{Verification, VerifiedPair};
use simhash_store::{Clusters, Error};

use crate::args::{k_arg, type_name, u64_arg};
use crate::errors::IntoPy;
use crate::interrupt;
use crate::store::PyStore;
use crate::stream::Stream;

fn representative_arg(name: &str) -> PyResult<Representative> {
    name.parse::<Representative>().py()
}

/// `a`, `b`, `distance` and `similarity` of every verified pair.
type VerifiedPairArrays<'py> = (
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<f64>>,
);

/// `a`, `b` and `distance` of every pair.
type PairArrays<'py> = (
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u8>>,
);

/// A progress callable for a pair scan: `progress(scanned, total)` with keys read so far and
/// in all; `True` draws a progress line on standard error (`simhash_store/_progress.py`).
fn scan_progress(progress: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Py<PyAny>>> {
    let Some(p) = progress.filter(|p| !p.is_none()) else {
        return Ok(None);
    };
    if p.is_instance_of::<pyo3::types::PyBool>() {
        if !p.is_truthy()? {
            return Ok(None);
        }
        let bar = p
            .py()
            .import("simhash_store._progress")?
            .call_method0("scan_bar")?;
        return Ok(Some(bar.unbind()));
    }
    if !p.is_callable() {
        return Err(PyTypeError::new_err(format!(
            "progress must be callable or a bool, not {}",
            type_name(p)
        )));
    }
    Ok(Some(p.clone().unbind()))
}

/// How far a scan running on another thread has got, for its progress callable.
#[derive(Default)]
struct ScanSeen {
    scanned: AtomicU64,
    total: AtomicU64,
}

impl ScanSeen {
    fn set(&self, p: simhash_store::dedup::ScanProgress) {
        self.total.store(p.total, Ordering::Relaxed);
        self.scanned.store(p.scanned, Ordering::Relaxed);
    }

    fn report(&self, py: Python<'_>, progress: Option<&Py<PyAny>>) -> PyResult<()> {
        if let Some(p) = progress {
            let scanned = self.scanned.load(Ordering::Relaxed);
            let total = self.total.load(Ordering::Relaxed);
            p.call1(py, (scanned, total.max(scanned)))?;
        }
        Ok(())
    }
}

/// ``(a, b, distance)`` with ``a < b``, each pair once, in no particular order, as the
/// scan finds them on a background thread. ``close()`` (or dropping it) stops the scan.
#[pyclass(module = "simhash_store._native", name = "PairIterator", frozen)]
pub(crate) struct PyPairIter {
    stream: Stream<(u64, u64, u32)>,
}

#[pymethods]
impl PyPairIter {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<(u64, u64, u32)> {
        self.stream
            .next(py)?
            .ok_or_else(|| PyStopIteration::new_err(()))
    }

    /// Stops the scan (the iterator then ends).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.stream.close(py)
    }
}

#[pymethods]
impl PyStore {
    /// Every pair of stored documents within ``k``: ``(a, b, distance)``, ``a < b``, each
    /// once, streamed as the scan (one pass per block family, all cores) finds them.
    ///
    /// >>> import tempfile, simhash_store
    /// >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
    /// ...     store.insert_many([1, 2, 3], [0b1111, 0b0111, 2**64 - 1])
    /// ...     sorted(store.pairs(k=3))
    /// [(1, 2, 1)]
    #[pyo3(signature = (k = 3))]
    fn pairs(&self, k: i64) -> PyResult<PyPairIter> {
        let k = k_arg(k)?;
        let store = self.store()?;
        let stream = Stream::start(move |stop, emit| {
            store
                .pairs(k)
                .stop_when(stop)
                .for_each(|p| emit((p.a, p.b, p.distance)))
                .map(drop)
        });
        Ok(PyPairIter { stream })
    }

    /// Every pair within ``k`` as three arrays ``a``, ``b``, ``distance``, sorted by
    /// ``(a, b)``: for millions of pairs. ``progress=True`` draws a progress line on
    /// standard error; a callable gets ``(keys scanned, keys in all)`` ten times a second.
    #[pyo3(signature = (k = 3, *, progress = None))]
    fn pairs_numpy<'py>(
        &self,
        py: Python<'py>,
        k: i64,
        progress: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<PairArrays<'py>> {
        let k = k_arg(k)?;
        let progress = scan_progress(progress)?;
        let store = self.store()?;
        let seen = ScanSeen::default();
        let pairs = interrupt::run_with_ticks(
            py,
            |stop| {
                let mut pairs = store
                    .pairs(k)
                    .stop_when(stop)
                    .on_progress(|p| seen.set(p))
                    .collect()?;
                pairs.sort_unstable();
                Ok::<_, Error>(pairs)
            },
            |py| seen.report(py, progress.as_ref()),
        )?
        .py()?;
        let (a, (b, d)): (Vec<u64>, (Vec<u64>, Vec<u8>)) = pairs
            .into_iter()
            .map(|p| (p.a, (p.b, p.distance as u8)))
            .unzip();
        Ok((a.into_pyarray(py), b.into_pyarray(py), d.into_pyarray(py)))
    }

    /// The connected components of the pairs within ``k``, each keeping one
    /// representative: ``"lowest-id"``, ``"longest"`` (longest text, ties to the lowest id)
    /// or ``"first-loaded"``, as ``simhash-store dedup --representative``. ``progress`` as
    /// in :meth:`pairs_numpy`.
    #[pyo3(signature = (k = 3, representative = "lowest-id", *, progress = None))]
    fn clusters(
        &self,
        py: Python<'_>,
        k: i64,
        representative: &str,
        progress: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClusters> {
        let k = k_arg(k)?;
        let rule = representative_arg(representative)?;
        let progress = scan_progress(progress)?;
        let store = self.store()?;
        let seen = ScanSeen::default();
        let (clusters, stats) = interrupt::run_with_ticks(
            py,
            |stop| {
                let mut builder = ClusterBuilder::new();
                let stats = store
                    .pairs(k)
                    .stop_when(stop)
                    .on_progress(|p| seen.set(p))
                    .for_each(|p| {
                        builder.add_pair(p.a, p.b);
                        Ok::<_, Error>(())
                    })?;
                let mut clusters = builder.finish();
                clusters.choose_representatives(&store, rule)?;
                Ok::<_, Error>((clusters, stats))
            },
            |py| seen.report(py, progress.as_ref()),
        )?
        .py()?;
        Ok(PyClusters {
            clusters,
            stats,
            representative: rule.to_string(),
        })
    }
}

#[pymethods]
impl PyStore {
    /// Every pair of verified near-duplicates: within ``k`` bits (default 8) with a sketch
    /// similarity of at least ``min_similarity`` (default 0.75), as ``(a, b, distance,
    /// similarity)`` tuples sorted by ``(a, b)``. Needs a store made with
    /// ``sketch="MinHash"`` (else :class:`~simhash_store.NoSketchesError`); documents stored
    /// without a sketch are in no verified pair. ``progress`` as in :meth:`pairs_numpy`.
    ///
    /// >>> import tempfile, simhash_store
    /// >>> page = "Rust storage engines keep sorted runs of keys on disk and merge them in the background."
    /// >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path, sketch="MinHash") as store:
    /// ...     _ = store.insert_text(1, page)
    /// ...     _ = store.insert_text(2, page + " Share this page.")
    /// ...     _ = store.insert_text(3, "A recipe for green tea ice cream with fresh matcha and cream.")
    /// ...     [(a, b) for a, b, distance, similarity in store.verified_pairs()]
    /// [(1, 2)]
    #[pyo3(signature = (k = 8, min_similarity = 0.75, *, progress = None))]
    fn verified_pairs(
        &self,
        py: Python<'_>,
        k: i64,
        min_similarity: f64,
        progress: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<(u64, u64, u32, f64)>> {
        Ok(self
            .collect_verified_pairs(py, k, min_similarity, progress)?
            .into_iter()
            .map(|p| (p.a, p.b, p.distance, p.similarity))
            .collect())
    }

    /// :meth:`verified_pairs` as four arrays ``a``, ``b`` (uint64), ``distance`` (uint8)
    /// and ``similarity`` (float64), sorted by ``(a, b)``: for millions of pairs.
    #[pyo3(signature = (k = 8, min_similarity = 0.75, *, progress = None))]
    fn verified_pairs_numpy<'py>(
        &self,
        py: Python<'py>,
        k: i64,
        min_similarity: f64,
        progress: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<VerifiedPairArrays<'py>> {
        let pairs = self.collect_verified_pairs(py, k, min_similarity, progress)?;
        let mut a = Vec::with_capacity(pairs.len());
        let mut b = Vec::with_capacity(pairs.len());
        let mut d = Vec::with_capacity(pairs.len());
        let mut s = Vec::with_capacity(pairs.len());
        for p in pairs {
            a.push(p.a);
            b.push(p.b);
            d.push(p.distance as u8);
            s.push(p.similarity);
        }
        Ok((
            a.into_pyarray(py),
            b.into_pyarray(py),
            d.into_pyarray(py),
            s.into_pyarray(py),
        ))
    }

    /// The clusters of verified near-duplicates (the connected components of
    /// :meth:`verified_pairs`), each keeping one representative as in :meth:`clusters`.
    ///
    /// >>> import tempfile, simhash_store
    /// >>> page = "Rust storage engines keep sorted runs of keys on disk and merge them in the background."
    /// >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path, sketch="MinHash") as store:
    /// ...     _ = store.insert_text(1, page)
    /// ...     _ = store.insert_text(2, page + " Share this page.")
    /// ...     clusters = store.verified_clusters()
    /// ...     [(c.id, c.members) for c in clusters], clusters.drop_ids().tolist()
    /// ([(1, [1, 2])], [2])
    #[pyo3(signature = (k = 8, min_similarity = 0.75, representative = "lowest-id", *, progress = None))]
    fn verified_clusters(
        &self,
        py: Python<'_>,
        k: i64,
        min_similarity: f64,
        representative: &str,
        progress: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClusters> {
        let verification = Verification::new(k_arg(k)?, min_similarity).py()?;
        let rule = representative_arg(representative)?;
        let progress = scan_progress(progress)?;
        let store = self.store()?;
        let seen = ScanSeen::default();
        let (clusters, stats) = interrupt::run_with_ticks(
            py,
            |stop| {
                let (mut clusters, stats) = store
                    .verified_pairs(verification)
                    .stop_when(stop)
                    .on_progress(|p| seen.set(p))
                    .clusters()?;
                clusters.choose_representatives(&store, rule)?;
                Ok::<_, Error>((clusters, stats.verified))
            },
            |py| seen.report(py, progress.as_ref()),
        )?
        .py()?;
        Ok(PyClusters {
            clusters,
            stats,
            representative: rule.to_string(),
        })
    }
}

impl PyStore {
    /// The verified pairs, sorted by `(a, b)`, with Ctrl-C and progress as `pairs_numpy`.
    fn collect_verified_pairs(
        &self,
        py: Python<'_>,
        k: i64,
        min_similarity: f64,
        progress: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<VerifiedPair>> {
        let verification = Verification::new(k_arg(k)?, min_similarity).py()?;
        let progress = scan_progress(progress)?;
        let store = self.store()?;
        let seen = ScanSeen::default();
        interrupt::run_with_ticks(
            py,
            |stop| {
                store
                    .verified_pairs(verification)
                    .stop_when(stop)
                    .on_progress(|p| seen.set(p))
                    .collect()
            },
            |py| seen.report(py, progress.as_ref()),
        )?
        .py()
    }
}

/// One cluster of near-duplicates: ``id`` is its lowest member id.
#[pyclass(module = "simhash_store._native", name = "Cluster", frozen, eq)]
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct PyCluster {
    #[pyo3(get)]
    id: u64,
    #[pyo3(get)]
    representative: u64,
    #[pyo3(get)]
    members: Vec<u64>,
}

#[pymethods]
impl PyCluster {
    fn __len__(&self) -> usize {
        self.members.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Cluster(id={}, representative={}, members={:?})",
            self.id, self.representative, self.members
        )
    }
}

impl From<&simhash_store::dedup::Cluster> for PyCluster {
    fn from(c: &simhash_store::dedup::Cluster) -> Self {
        PyCluster {
            id: c.id,
            representative: c.representative,
            members: c.members.clone(),
        }
    }
}

/// The clusters of near-duplicates of a store, sorted by id (documents without a
/// near-duplicate are in none), with one representative kept per cluster.
///
/// >>> import tempfile, simhash_store
/// >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
/// ...     store.insert_many([1, 2, 3], [0b1111, 0b0111, 2**64 - 1])
/// ...     clusters = store.clusters(k=3)
/// ...     [(c.id, c.members) for c in clusters], clusters.drop_ids().tolist()
/// ([(1, [1, 2])], [2])
#[pyclass(module = "simhash_store._native", name = "Clusters", frozen)]
pub(crate) struct PyClusters {
    clusters: Clusters,
    stats: ScanStats,
    representative: String,
}

#[pymethods]
impl PyClusters {
    fn __len__(&self) -> usize {
        self.clusters.len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let list = PyList::new(py, self.clusters.iter().map(PyCluster::from))?;
        list.try_iter().map(Bound::into_any)
    }

    fn __getitem__(&self, i: isize) -> PyResult<PyCluster> {
        let n = self.clusters.len() as isize;
        let at = if i < 0 { i + n } else { i };
        if !(0..n).contains(&at) {
            return Err(pyo3::exceptions::PyIndexError::new_err(
                "cluster index out of range",
            ));
        }
        self.clusters
            .iter()
            .nth(at as usize)
            .map(PyCluster::from)
            .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err("cluster index out of range"))
    }

    fn __repr__(&self) -> String {
        format!(
            "Clusters(k={}, clusters={}, documents={}, pairs={}, representative={:?})",
            self.stats.k,
            self.clusters.len(),
            self.clusters.documents(),
            self.stats.pairs,
            self.representative
        )
    }

    #[getter]
    fn k(&self) -> u32 {
        self.stats.k
    }

    #[getter]
    fn documents(&self) -> usize {
        self.clusters.documents()
    }

    #[getter]
    fn pairs(&self) -> u64 {
        self.stats.pairs
    }

    #[getter]
    fn per_distance(&self) -> Vec<u64> {
        self.stats.per_distance.clone()
    }

    #[getter]
    fn representative(&self) -> &str {
        &self.representative
    }

    /// Every member that is not its cluster's representative, sorted: the documents to drop.
    fn drop_ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.clusters.drop_ids().into_pyarray(py)
    }

    fn cluster_of(&self, id: &Bound<'_, PyAny>) -> PyResult<Option<PyCluster>> {
        let id = u64_arg(id, "id")?;
        Ok(self.clusters.cluster_of(id).map(PyCluster::from))
    }

    /// The external key of member ``id``.
    fn key(&self, id: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let id = u64_arg(id, "id")?;
        Ok(self.clusters.key(id).map(str::to_owned))
    }

    /// ``(size, clusters of that size)``, by size.
    fn size_distribution(&self) -> Vec<(usize, u64)> {
        self.clusters.size_distribution()
    }

    /// Arrays ``id``, ``cluster``, ``representative`` (uint64) and ``keep`` (bool), one
    /// row per clustered document, sorted by id: the rows of ``simhash-store dedup``'s
    /// ``clusters.jsonl``.
    fn to_numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut rows: Vec<(u64, u64, u64)> = self
            .clusters
            .iter()
            .flat_map(|c| c.members.iter().map(move |&m| (m, c.id, c.representative)))
            .collect();
        rows.sort_unstable();
        let keep: Vec<bool> = rows.iter().map(|&(m, _, r)| m == r).collect();
        let (ids, (cluster, rep)): (Vec<u64>, (Vec<u64>, Vec<u64>)) =
            rows.into_iter().map(|(m, c, r)| (m, (c, r))).unzip();
        let dict = PyDict::new(py);
        dict.set_item("id", ids.into_pyarray(py))?;
        dict.set_item("cluster", cluster.into_pyarray(py))?;
        dict.set_item("representative", rep.into_pyarray(py))?;
        dict.set_item("keep", keep.into_pyarray(py))?;
        Ok(dict)
    }
}
