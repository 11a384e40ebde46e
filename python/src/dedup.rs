//! Deduplicating a whole store from Python: `Store.pairs` (an iterator fed by the scan on a
//! background thread), `Store.pairs_numpy` (three arrays, for millions of pairs) and
//! `Store.clusters` (`Clusters`, with the command line's representative rules). Ctrl-C stops
//! the scan within a fraction of a second ([`simhash_store::PairScan::stop_when`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::{PyStopIteration, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use simhash_store::{ClusterBuilder, Clusters, Error, Pair, Representative, ScanStats, Store};

use crate::args::{k_arg, u64_arg};
use crate::errors::{to_py, IntoPy};
use crate::interrupt;
use crate::store::PyStore;

/// Pairs travel from the scan to the iterator in batches of this many.
const BATCH: usize = 4096;
/// Batches in flight: the scan waits when the consumer is this far behind.
const IN_FLIGHT: usize = 16;
const POLL: Duration = Duration::from_millis(100);

/// `a`, `b` and `distance` of every pair.
type PairArrays<'py> = (
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u8>>,
);

fn representative_arg(name: &str) -> PyResult<Representative> {
    name.parse::<Representative>().py()
}

struct IterState {
    buf: VecDeque<(u64, u64, u32)>,
    rx: Option<Receiver<Vec<Pair>>>,
    handle: Option<JoinHandle<Result<ScanStats, Error>>>,
}

/// ``(a, b, distance)`` with ``a < b``, each pair once, in no particular order, as the
/// scan finds them on a background thread. ``close()`` (or dropping it) stops the scan.
#[pyclass(module = "simhash_store._native", name = "PairIterator", frozen)]
pub(crate) struct PyPairIter {
    state: Mutex<IterState>,
    stop: Arc<AtomicBool>,
}

impl PyPairIter {
    fn start(store: Arc<Store>, k: u32) -> PyPairIter {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = sync_channel::<Vec<Pair>>(IN_FLIGHT);
        let flag = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let mut out = Vec::with_capacity(BATCH);
            let stats = store.pairs(k).stop_when(&flag).for_each(|p| {
                out.push(p);
                if out.len() >= BATCH {
                    let full = std::mem::replace(&mut out, Vec::with_capacity(BATCH));
                    tx.send(full).map_err(|_| Error::Cancelled)?;
                }
                Ok::<_, Error>(())
            })?;
            if !out.is_empty() {
                tx.send(out).map_err(|_| Error::Cancelled)?;
            }
            Ok(stats)
        });
        PyPairIter {
            state: Mutex::new(IterState {
                buf: VecDeque::new(),
                rx: Some(rx),
                handle: Some(handle),
            }),
            stop,
        }
    }

    fn finish(&self, state: &mut IterState, py: Python<'_>) -> PyResult<()> {
        state.rx = None;
        if let Some(h) = state.handle.take() {
            match py.detach(|| h.join()) {
                Ok(Ok(_)) | Ok(Err(Error::Cancelled)) => {}
                Ok(Err(e)) => return Err(to_py(e)),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        Ok(())
    }
}

impl Drop for PyPairIter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Ok(state) = self.state.get_mut() {
            state.rx = None;
        }
    }
}

#[pymethods]
impl PyPairIter {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<(u64, u64, u32)> {
        let mut state = self
            .state
            .lock()
            .map_err(|_| PyValueError::new_err("the pair iterator's lock was poisoned"))?;
        loop {
            if let Some(p) = state.buf.pop_front() {
                return Ok(p);
            }
            let Some(rx) = state.rx.take() else {
                return Err(PyStopIteration::new_err(()));
            };
            // The receiver moves into the detached closure and back (it is not `Sync`).
            let (received, rx) = py.detach(move || (rx.recv_timeout(POLL), rx));
            state.rx = Some(rx);
            match received {
                Ok(batch) => state
                    .buf
                    .extend(batch.into_iter().map(|p| (p.a, p.b, p.distance))),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        self.stop.store(true, Ordering::Relaxed);
                        let _ = self.finish(&mut state, py);
                        return Err(e);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.finish(&mut state, py)?;
                    return Err(PyStopIteration::new_err(()));
                }
            }
        }
    }

    /// Stops the scan (the iterator then ends).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.stop.store(true, Ordering::Relaxed);
        let mut state = self
            .state
            .lock()
            .map_err(|_| PyValueError::new_err("the pair iterator's lock was poisoned"))?;
        state.buf.clear();
        self.finish(&mut state, py)
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
        Ok(PyPairIter::start(self.store()?, k))
    }

    /// Every pair within ``k`` as three arrays ``a``, ``b``, ``distance``, sorted by
    /// ``(a, b)``: for millions of pairs.
    #[pyo3(signature = (k = 3))]
    fn pairs_numpy<'py>(
        &self,
        py: Python<'py>,
        k: i64,
    ) -> PyResult<PairArrays<'py>> {
        let k = k_arg(k)?;
        let store = self.store()?;
        let pairs = interrupt::run(py, |stop| {
            let mut pairs = store.pairs(k).stop_when(stop).collect()?;
            pairs.sort_unstable();
            Ok::<_, Error>(pairs)
        })?
        .py()?;
        let (a, (b, d)): (Vec<u64>, (Vec<u64>, Vec<u8>)) = pairs
            .into_iter()
            .map(|p| (p.a, (p.b, p.distance as u8)))
            .unzip();
        Ok((a.into_pyarray(py), b.into_pyarray(py), d.into_pyarray(py)))
    }

    /// The connected components of the pairs within ``k``, each keeping one
    /// representative: ``"lowest-id"``, ``"longest"`` (longest text, ties to the lowest id)
    /// or ``"first-loaded"``, as ``simhash-store dedup --representative``.
    #[pyo3(signature = (k = 3, representative = "lowest-id"))]
    fn clusters(&self, py: Python<'_>, k: i64, representative: &str) -> PyResult<PyClusters> {
        let k = k_arg(k)?;
        let rule = representative_arg(representative)?;
        let store = self.store()?;
        let (clusters, stats) = interrupt::run(py, |stop| {
            let mut builder = ClusterBuilder::new();
            let stats = store.pairs(k).stop_when(stop).for_each(|p| {
                builder.add_pair(p.a, p.b);
                Ok::<_, Error>(())
            })?;
            let mut clusters = builder.finish();
            clusters.choose_representatives(&store, rule)?;
            Ok::<_, Error>((clusters, stats))
        })?
        .py()?;
        Ok(PyClusters {
            clusters,
            stats,
            representative: rule.to_string(),
        })
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

impl From<&simhash_store::Cluster> for PyCluster {
    fn from(c: &simhash_store::Cluster) -> Self {
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
