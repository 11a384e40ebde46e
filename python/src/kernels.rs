//! Array functions for the Spark jobs (`simhash_store.spark`): each works on the columns of
//! one Arrow batch, handed over as numpy arrays, so that a Spark task makes one call per batch
//! and never one per row.
//!
//! - `spark_fingerprint_utf8`: the fingerprints of an Arrow string column (offsets and bytes).
//! - `group_counts`, `PartitionPlan` and `task_pairs`: the crate's partition planner
//!   (`simhash_store::dedup::partition`, where the task key is described): documents per block
//!   group, documents to rows of (task, side, fingerprint, id), and the rows of one
//!   partition, sorted by task, to pairs, each pair once over all tasks.
//! - `spark_components`: connected components of pairs with the crate's `ClusterBuilder`.
//! - `WarcBatches`: the records of one input file (WARC, WET, ...) through the crate's
//!   readers, as batches of Arrow string buffers.

use std::sync::Mutex;

use numpy::{IntoPyArray, PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use simhash_store::dedup::partition::{
    add_group_counts, PartitionPlan, RowsRef, TaskPairs, TaskRows, TaskWork, GROUPS,
};
use simhash_store::dedup::ClusterBuilder;
use simhash_store::readers::{Body, Position, ReaderOptions, Records};
use simhash_store::{read_input, Error, Pair};

use crate::errors::{to_py, IntoPy};
use crate::hasher::PySimhasher;

/// Two numpy arrays returned together.
type ArrayPair<'py, A, B> = (Bound<'py, PyArray1<A>>, Bound<'py, PyArray1<B>>);

fn slice<'a, T: numpy::Element>(a: &'a PyReadonlyArray1<'_, T>, what: &str) -> PyResult<&'a [T]> {
    a.as_slice()
        .map_err(|_| PyValueError::new_err(format!("{what} must be a contiguous array")))
}

fn same_len(n: usize, m: usize, what: &str) -> PyResult<()> {
    if n == m {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "{what} has {m} entries, expected {n} (one per row)"
        )))
    }
}

/// The fingerprints of the strings of an Arrow string column: `offsets` (int32 or int64,
/// `n + 1` of them, already sliced to the array's offset) into `data` (the UTF-8 bytes);
/// `valid` marks non-null rows. Returns the fingerprints as int64 (two's complement) and
/// whether each row has one (false for a null text or a text without features).
#[pyfunction]
fn spark_fingerprint_utf8<'py>(
    py: Python<'py>,
    hasher: PyRef<'py, PySimhasher>,
    offsets: &Bound<'py, PyAny>,
    data: PyReadonlyArray1<'py, u8>,
    valid: PyReadonlyArray1<'py, bool>,
) -> PyResult<ArrayPair<'py, i64, bool>> {
    let offsets: Vec<i64> = if let Ok(a) = offsets.cast::<PyArray1<i32>>() {
        a.readonly()
            .as_array()
            .iter()
            .map(|&o| i64::from(o))
            .collect()
    } else if let Ok(a) = offsets.cast::<PyArray1<i64>>() {
        a.readonly().as_array().to_vec()
    } else {
        return Err(PyTypeError::new_err(
            "offsets must be a numpy array of int32 or int64",
        ));
    };
    let data = slice(&data, "data")?;
    let valid = slice(&valid, "valid")?;
    let n = valid.len();
    same_len(n + 1, offsets.len(), "offsets")?;
    let hasher = &hasher.inner;
    let result = py.detach(|| {
        let mut fps = vec![0i64; n];
        let mut ok = vec![false; n];
        for i in 0..n {
            if !valid[i] {
                continue;
            }
            let (lo, hi) = (offsets[i], offsets[i + 1]);
            let bytes = usize::try_from(lo)
                .ok()
                .zip(usize::try_from(hi).ok())
                .and_then(|(lo, hi)| data.get(lo..hi))
                .ok_or_else(|| format!("row {i}: offsets {lo}..{hi} outside the data buffer"))?;
            let text = std::str::from_utf8(bytes).map_err(|e| format!("row {i}: {e}"))?;
            match hasher.fingerprint(text) {
                Ok(fp) => {
                    fps[i] = fp.0 as i64;
                    ok[i] = true;
                }
                Err(Error::NoFeatures) => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok((fps, ok))
    });
    let (fps, ok) = result.map_err(PyValueError::new_err)?;
    Ok((fps.into_pyarray(py), ok.into_pyarray(py)))
}

/// The number of documents per (block family, block value) of `fingerprints` (uint64):
/// uint64, `4 * 65536` entries, index `family * 65536 + value`. The input of
/// `PartitionPlan`; sum the counts of several batches.
#[pyfunction]
fn group_counts<'py>(
    py: Python<'py>,
    fingerprints: PyReadonlyArray1<'py, u64>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let fps = slice(&fingerprints, "fingerprints")?;
    let counts = py.detach(|| {
        let mut counts = vec![0u64; GROUPS];
        add_group_counts(&mut counts, fps).map(|()| counts)
    });
    Ok(counts.py()?.into_pyarray(py))
}

/// Which tasks each document takes part in (the crate's `partition::PartitionPlan`), made
/// from the documents per group (`group_counts`): `PartitionPlan(counts, k, chunk_size,
/// new_counts=None)`. With `new_counts` (the new documents' counts, `counts` counting old
/// and new), the plan of `dedup_against`. Pickles as its arguments.
#[pyclass(module = "simhash_store._native", name = "PartitionPlan", frozen)]
struct PyPartitionPlan {
    plan: PartitionPlan,
    counts: Vec<u64>,
    new_counts: Option<Vec<u64>>,
    chunk_size: u64,
}

#[pymethods]
impl PyPartitionPlan {
    #[new]
    #[pyo3(signature = (counts, k, chunk_size, new_counts = None))]
    fn new(
        py: Python<'_>,
        counts: PyReadonlyArray1<'_, u64>,
        k: u32,
        chunk_size: u64,
        new_counts: Option<PyReadonlyArray1<'_, u64>>,
    ) -> PyResult<Self> {
        let counts = slice(&counts, "counts")?.to_vec();
        let new_counts = new_counts
            .as_ref()
            .map(|c| slice(c, "new_counts").map(<[u64]>::to_vec))
            .transpose()?;
        let plan = py
            .detach(|| match &new_counts {
                None => PartitionPlan::new(&counts, k, chunk_size),
                Some(new) => PartitionPlan::against(&counts, new, k, chunk_size),
            })
            .py()?;
        Ok(PyPartitionPlan {
            plan,
            counts,
            new_counts,
            chunk_size,
        })
    }

    /// The distance planned for.
    #[getter]
    fn k(&self) -> u32 {
        self.plan.k()
    }

    /// `(chunked, split)`: groups split into chunks, and groups split on sub-blocks.
    fn split_groups(&self) -> (usize, usize) {
        self.plan.split_groups()
    }

    /// Documents (`ids` int64, non-negative; `fingerprints` uint64; `old` flags or None) to
    /// rows `(task int64, side uint8, fingerprint uint64, id int64)`.
    #[pyo3(signature = (ids, fingerprints, old = None))]
    fn explode<'py>(
        &self,
        py: Python<'py>,
        ids: PyReadonlyArray1<'py, i64>,
        fingerprints: PyReadonlyArray1<'py, u64>,
        old: Option<PyReadonlyArray1<'py, bool>>,
    ) -> PyResult<RowArrays<'py>> {
        let ids = slice(&ids, "ids")?;
        let fps = slice(&fingerprints, "fingerprints")?;
        same_len(ids.len(), fps.len(), "fingerprints")?;
        let old = old.as_ref().map(|o| slice(o, "old")).transpose()?;
        if let Some(o) = old {
            same_len(ids.len(), o.len(), "old")?;
        }
        if let Some((i, id)) = ids.iter().enumerate().find(|(_, id)| **id < 0) {
            return Err(PyValueError::new_err(format!(
                "ids must be non-negative (document ids are 0..2**63-1), row {i} has {id}"
            )));
        }
        let rows = py.detach(|| {
            let mut rows = TaskRows::default();
            for (i, (&id, &fp)) in ids.iter().zip(fps).enumerate() {
                let is_old = old.is_some_and(|o| o[i]);
                self.plan.explode(id as u64, fp, is_old, &mut rows)?;
            }
            Ok::<_, Error>(rows)
        });
        let rows = rows.py()?;
        let id: Vec<i64> = rows.id.iter().map(|&v| v as i64).collect();
        Ok((
            rows.task.into_pyarray(py),
            rows.side.into_pyarray(py),
            rows.fingerprint.into_pyarray(py),
            id.into_pyarray(py),
        ))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this = slf.get();
        let counts = this.counts.clone().into_pyarray(py);
        let new_counts = this.new_counts.clone().map(|c| c.into_pyarray(py));
        let args = (counts, this.plan.k(), this.chunk_size, new_counts);
        Ok((slf.get_type(), args).into_pyobject(py)?.into_any())
    }
}

type RowArrays<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<i64>>,
);

/// The pairs of rows `(task, side, fingerprint, id)` sorted by task (one partition of the
/// shuffle, or part of it), each task through the crate's `partition::TaskPairs`. Unless
/// `last`, the rows of the final task may continue in the next batch, so they are left: the
/// result says where they start (`consumed`). Returns a dict with `a`, `b` (int64, `a < b`),
/// `distance` (uint8), `consumed`, and the comparisons made (`tasks`, `total_work`,
/// `max_task_work`).
#[pyfunction]
#[pyo3(signature = (task, side, fingerprint, id, k, last))]
fn task_pairs<'py>(
    py: Python<'py>,
    task: PyReadonlyArray1<'py, i64>,
    side: PyReadonlyArray1<'py, u8>,
    fingerprint: PyReadonlyArray1<'py, u64>,
    id: PyReadonlyArray1<'py, i64>,
    k: u32,
    last: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let task = slice(&task, "task")?;
    let side = slice(&side, "side")?;
    let fps = slice(&fingerprint, "fingerprint")?;
    let ids = slice(&id, "id")?;
    let runner = TaskPairs::new(k).py()?;
    let result = py.detach(|| {
        let ids: Vec<u64> = ids.iter().map(|&v| v as u64).collect();
        let rows = RowsRef {
            task,
            side,
            fingerprint: fps,
            id: &ids,
        };
        let (mut a, mut b, mut d) = (Vec::new(), Vec::new(), Vec::new());
        let (mut tasks, mut total, mut max) = (0u64, 0u64, 0u64);
        let consumed = runner.run_sorted(
            rows,
            last,
            &mut |p: Pair| {
                a.push(p.a as i64);
                b.push(p.b as i64);
                d.push(p.distance as u8);
            },
            &mut |w: TaskWork| {
                tasks += 1;
                total += w.comparisons;
                max = max.max(w.comparisons);
            },
        )?;
        Ok::<_, Error>((a, b, d, consumed, tasks, total, max))
    });
    let (a, b, d, consumed, tasks, total, max) = result.py()?;
    let out = PyDict::new(py);
    out.set_item("a", a.into_pyarray(py))?;
    out.set_item("b", b.into_pyarray(py))?;
    out.set_item("distance", d.into_pyarray(py))?;
    out.set_item("consumed", consumed)?;
    out.set_item("tasks", tasks)?;
    out.set_item("total_work", total)?;
    out.set_item("max_task_work", max)?;
    Ok(out)
}

/// The connected components of the pairs `a[i]`-`b[i]` (ids, int64), by the crate's
/// `ClusterBuilder`: `(id, cluster)` for every id in a pair, sorted by id, where `cluster` is
/// the lowest id of the component.
#[pyfunction]
fn spark_components<'py>(
    py: Python<'py>,
    a: PyReadonlyArray1<'py, i64>,
    b: PyReadonlyArray1<'py, i64>,
) -> PyResult<ArrayPair<'py, i64, i64>> {
    let a = slice(&a, "a")?;
    let b = slice(&b, "b")?;
    same_len(a.len(), b.len(), "b")?;
    if let Some(v) = a.iter().chain(b).find(|v| **v < 0) {
        return Err(PyValueError::new_err(format!(
            "ids must be non-negative, got {v}"
        )));
    }
    let (ids, clusters) = py.detach(|| {
        let mut builder = ClusterBuilder::new();
        for (&x, &y) in a.iter().zip(b) {
            builder.add_pair(x as u64, y as u64);
        }
        let clusters = builder.finish();
        let mut rows: Vec<(i64, i64)> = clusters
            .iter()
            .flat_map(|c| c.members.iter().map(move |&m| (m as i64, c.id as i64)))
            .collect();
        rows.sort_unstable();
        rows.into_iter().unzip::<i64, i64, Vec<i64>, Vec<i64>>()
    });
    Ok((ids.into_pyarray(py), clusters.into_pyarray(py)))
}

/// Strings as Arrow `large_string` buffers: int64 offsets, bytes and a validity bitmap.
#[derive(Default)]
struct StringColumn {
    offsets: Vec<i64>,
    data: Vec<u8>,
    valid: Vec<u8>,
    len: usize,
}

impl StringColumn {
    fn new() -> StringColumn {
        StringColumn {
            offsets: vec![0],
            ..StringColumn::default()
        }
    }

    fn push(&mut self, s: Option<&str>) {
        if self.len.is_multiple_of(8) {
            self.valid.push(0);
        }
        if let Some(s) = s {
            self.data.extend_from_slice(s.as_bytes());
            if let Some(last) = self.valid.last_mut() {
                *last |= 1 << (self.len % 8);
            }
        }
        self.offsets.push(self.data.len() as i64);
        self.len += 1;
    }

    fn into_py<'py>(self, py: Python<'py>, out: &Bound<'py, PyDict>, name: &str) -> PyResult<()> {
        out.set_item(format!("{name}_offsets"), self.offsets.into_pyarray(py))?;
        out.set_item(format!("{name}_data"), self.data.into_pyarray(py))?;
        out.set_item(format!("{name}_valid"), self.valid.into_pyarray(py))?;
        Ok(())
    }
}

struct ReaderState {
    records: Records,
    done: bool,
    bad: u64,
    skipped: u64,
}

/// The documents of one input file (WARC or WET, plain or gzipped; any format the crate's
/// readers take), in batches: `WarcBatches(path, batch_size=..., extract_main_text=True,
/// max_doc_bytes=16 MiB, strict=False)`. Each item is a dict of numpy arrays: `rows`, the
/// Arrow `large_string` buffers of `url` and `text` (`*_offsets`, `*_data`, `*_valid`) and
/// `position` (int64: the byte offset of the record, or its line). Records that hold no
/// document (redirects, images) are counted in `skipped`; bad records in `bad`, or raised
/// with `strict`.
#[pyclass(module = "simhash_store._native", name = "WarcBatches", frozen)]
struct PyWarcBatches {
    state: Mutex<ReaderState>,
    opts: ReaderOptions,
    batch_size: usize,
    strict: bool,
}

#[pymethods]
impl PyWarcBatches {
    #[new]
    #[pyo3(signature = (path, *, batch_size = 1024, extract_main_text = true, max_doc_bytes = 16 * 1024 * 1024, strict = false))]
    fn new(
        path: std::path::PathBuf,
        batch_size: usize,
        extract_main_text: bool,
        max_doc_bytes: usize,
        strict: bool,
    ) -> PyResult<Self> {
        if batch_size == 0 {
            return Err(PyValueError::new_err("batch_size must be at least 1"));
        }
        let mut opts = ReaderOptions::default();
        opts.extract_main_text = extract_main_text;
        opts.max_doc_bytes = max_doc_bytes;
        let records = read_input(&path, &opts).py()?;
        Ok(PyWarcBatches {
            state: Mutex::new(ReaderState {
                records,
                done: false,
                bad: 0,
                skipped: 0,
            }),
            opts,
            batch_size,
            strict,
        })
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let mut state = self
            .state
            .lock()
            .map_err(|_| PyValueError::new_err("the reader's lock was poisoned"))?;
        if state.done {
            return Ok(None);
        }
        let state: &mut ReaderState = &mut state;
        let batch = py.detach(|| {
            let (mut url, mut text) = (StringColumn::new(), StringColumn::new());
            let mut position = Vec::new();
            while url.len < self.batch_size {
                let Some(item) = state.records.next() else {
                    state.done = true;
                    break;
                };
                let record = match item {
                    Ok(r) => r,
                    Err(bad) if self.strict => return Err(Error::from(bad)),
                    Err(_) => {
                        state.bad += 1;
                        continue;
                    }
                };
                if matches!(
                    record.body,
                    Body::Skipped(_) | Body::Exported(_) | Body::ExportHeader(_)
                ) {
                    state.skipped += 1;
                    continue;
                }
                match record.text(&self.opts) {
                    Ok(Some(t)) => {
                        url.push(record.key.as_deref());
                        text.push(Some(&t));
                        position.push(match record.location.position {
                            Position::Offset(n) | Position::Line(n) => n as i64,
                            _ => 0,
                        });
                    }
                    Ok(None) => state.skipped += 1,
                    Err(bad) if self.strict => return Err(Error::from(bad)),
                    Err(_) => state.bad += 1,
                }
            }
            Ok((url, text, position))
        });
        let (url, text, position) = batch.map_err(to_py)?;
        if url.len == 0 && state.done {
            return Ok(None);
        }
        let out = PyDict::new(py);
        out.set_item("rows", url.len)?;
        url.into_py(py, &out, "url")?;
        text.into_py(py, &out, "text")?;
        out.set_item("position", position.into_pyarray(py))?;
        Ok(Some(out))
    }

    /// Bad records passed over so far (undecodable, malformed, truncated, too large).
    #[getter]
    fn bad(&self) -> PyResult<u64> {
        self.state
            .lock()
            .map(|s| s.bad)
            .map_err(|_| PyValueError::new_err("the reader's lock was poisoned"))
    }

    /// Records without a document passed over so far (redirects, images, ...).
    #[getter]
    fn skipped(&self) -> PyResult<u64> {
        self.state
            .lock()
            .map(|s| s.skipped)
            .map_err(|_| PyValueError::new_err("the reader's lock was poisoned"))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(spark_fingerprint_utf8, m)?)?;
    m.add_function(wrap_pyfunction!(group_counts, m)?)?;
    m.add_class::<PyPartitionPlan>()?;
    m.add_function(wrap_pyfunction!(task_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(spark_components, m)?)?;
    m.add_class::<PyWarcBatches>()?;
    Ok(())
}
