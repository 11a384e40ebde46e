//! Array functions for the Spark jobs (`simhash_store.spark`): each works on the columns of
//! one Arrow batch, handed over as numpy arrays, so that a Spark task makes one call per batch
//! and never one per row.
//!
//! - `spark_fingerprint_utf8`: the fingerprints of an Arrow string column (offsets and bytes).
//! - `spark_chunk_plan`: from the number of documents per (block family, block value), how
//!   many chunks each group and its guests (documents of neighbouring groups, for `k >= 4`)
//!   are split into, so that no task holds a huge group.
//! - `spark_explode`: documents to rows of (task, side, fingerprint, id): one row per block
//!   family and chunk task, plus the copies sent to neighbouring groups.
//! - `spark_pairs`: the rows of one Spark partition, sorted by task, to pairs, through the
//!   crate's own [`PairKernel`] (the code `Store::pairs` runs), each pair once.
//! - `spark_components`: connected components of pairs with the crate's `ClusterBuilder`.
//! - `WarcBatches`: the records of one input file (WARC, WET, ...) through the crate's
//!   readers, as batches of Arrow string buffers.
//!
//! ## The task key
//! A row's task is one `i64`, `(group << 40) | (kind << 38) | (x << 19) | y`, where
//! `group = family * 65536 + block value` and `x`, `y < 2^19` are chunk numbers:
//!
//! | kind | rows | compared |
//! |---|---|---|
//! | 0 `WHOLE` | the group (side B) and its guests (side A), neither split | B with itself, A with B |
//! | 1 `HOME` | chunks `x <= y` of the group: `x` side A, `y` side B (`x == y`: all B) | `x == y`: B with itself; else A with B |
//! | 2 `GUEST` | guest chunk `x` (side A), group chunk `y` (side B) | A with B |
//!
//! A group uses kind 0 when it has at most one chunk of its own and one of guests, kinds 1
//! and 2 otherwise. Every pair of (chunk, chunk) is one task, so each pair of documents of a
//! group, and each (guest, member) pair, is compared in exactly one task; the kernel's
//! first-family rule then reports each pair within `k` once over the four families.
//!
//! The side byte: bit 0 is the side (0 = A, 1 = B), bit 1 marks an old document
//! (`dedup_against`: pairs of two old documents are not compared).

use std::ops::ControlFlow;
use std::sync::Mutex;

use numpy::{IntoPyArray, PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use simhash_store::{
    read_input, Body, ClusterBuilder, Error, Pair, PairKernel, Position, ReaderOptions, Records,
    BLOCKS,
};

use crate::errors::{to_py, IntoPy};
use crate::hasher::PySimhasher;

/// Block values per family.
const VALUES: usize = 1 << 16;
/// Groups: (family, block value).
const GROUPS: usize = BLOCKS * VALUES;
/// Chunk numbers fit in 19 bits of the task key.
const MAX_CHUNKS: u64 = 1 << 19;
const CHUNK_MASK: i64 = (MAX_CHUNKS as i64) - 1;

const KIND_WHOLE: i64 = 0;
const KIND_HOME: i64 = 1;
const KIND_GUEST: i64 = 2;

const SIDE_B: u8 = 1;
const OLD: u8 = 2;

/// Two numpy arrays returned together.
type ArrayPair<'py, A, B> = (Bound<'py, PyArray1<A>>, Bound<'py, PyArray1<B>>);

fn task_key(group: usize, kind: i64, x: u64, y: u64) -> i64 {
    ((group as i64) << 40) | (kind << 38) | ((x as i64) << 19) | (y as i64)
}

fn block(fp: u64, family: usize) -> usize {
    ((fp >> (48 - 16 * family)) & 0xffff) as usize
}

/// A well-mixed hash of an id (splitmix64's finaliser), for spreading documents over chunks.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn table<'a, T: numpy::Element>(a: &'a PyReadonlyArray1<'_, T>, what: &str) -> PyResult<&'a [T]> {
    let s = a
        .as_slice()
        .map_err(|_| PyValueError::new_err(format!("{what} must be a contiguous array")))?;
    if s.len() != GROUPS {
        return Err(PyValueError::new_err(format!(
            "{what} must have {GROUPS} entries (4 block families x 65536 values), got {}",
            s.len()
        )));
    }
    Ok(s)
}

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

/// The non-zero block masks of at most `k / 4` bits (empty for `k <= 3`).
fn neighbour_masks(k: u32) -> PyResult<Vec<u16>> {
    Ok(PairKernel::new(k, 0).py()?.neighbour_masks())
}

/// For each group `w` (index `family * 65536 + value`), the documents of lower groups of the
/// same family within `k / 4` bits (its guests), counting only groups `w` that have documents
/// of their own (guests of an empty group are never sent).
fn guest_counts(counts: &[u64], masks: &[u16]) -> Vec<u64> {
    let mut guests = vec![0u64; GROUPS];
    if masks.is_empty() {
        return guests;
    }
    for family in 0..BLOCKS {
        let base = family * VALUES;
        for v in 0..VALUES {
            let c = counts[base + v];
            if c == 0 {
                continue;
            }
            for &m in masks {
                let w = v ^ m as usize;
                if w > v && counts[base + w] > 0 {
                    guests[base + w] += c;
                }
            }
        }
    }
    guests
}

/// How many chunks of at most about `chunk_size` documents each group and its guests are
/// split into: `(home_chunks, guest_chunks)`, uint32, one entry per group (0: none). `counts`
/// is the number of documents per group (uint64, `4 * 65536` entries).
#[pyfunction]
fn spark_chunk_plan<'py>(
    py: Python<'py>,
    counts: PyReadonlyArray1<'py, u64>,
    k: u32,
    chunk_size: u64,
) -> PyResult<ArrayPair<'py, u32, u32>> {
    if chunk_size == 0 {
        return Err(PyValueError::new_err("chunk_size must be at least 1"));
    }
    let counts = table(&counts, "counts")?;
    let masks = neighbour_masks(k)?;
    let (home, guest) = py.detach(|| {
        let guests = guest_counts(counts, &masks);
        let chunks = |c: u64| c.div_ceil(chunk_size).min(MAX_CHUNKS - 1) as u32;
        let home: Vec<u32> = counts.iter().map(|&c| chunks(c)).collect();
        let guest: Vec<u32> = guests.iter().map(|&c| chunks(c)).collect();
        (home, guest)
    });
    Ok((home.into_pyarray(py), guest.into_pyarray(py)))
}

/// Which groups need old documents (`dedup_against`): `(old_home, old_guest)`, uint8 per
/// group. An old document of group `w` is needed when `w` has new documents or new guests; an
/// old document sent as a guest to `w`, when `w` has new documents. `new_counts` is the number
/// of new documents per group.
#[pyfunction]
fn spark_old_needed<'py>(
    py: Python<'py>,
    new_counts: PyReadonlyArray1<'py, u64>,
    k: u32,
) -> PyResult<ArrayPair<'py, u8, u8>> {
    let counts = table(&new_counts, "new_counts")?;
    let masks = neighbour_masks(k)?;
    let (home, guest) = py.detach(|| {
        // Guests of every group, empty or not: new documents reach old ones there too.
        let mut new_guests = vec![0u64; GROUPS];
        for family in 0..BLOCKS {
            let base = family * VALUES;
            for v in 0..VALUES {
                if counts[base + v] == 0 {
                    continue;
                }
                for &m in &masks {
                    let w = v ^ m as usize;
                    if w > v {
                        new_guests[base + w] += counts[base + v];
                    }
                }
            }
        }
        let home: Vec<u8> = (0..GROUPS)
            .map(|g| u8::from(counts[g] > 0 || new_guests[g] > 0))
            .collect();
        let guest: Vec<u8> = counts.iter().map(|&c| u8::from(c > 0)).collect();
        (home, guest)
    });
    Ok((home.into_pyarray(py), guest.into_pyarray(py)))
}

/// Rows of the exploded documents.
#[derive(Default)]
struct Rows {
    task: Vec<i64>,
    side: Vec<u8>,
    fp: Vec<i64>,
    id: Vec<i64>,
}

impl Rows {
    fn push(&mut self, task: i64, side: u8, fp: u64, id: u64) {
        self.task.push(task);
        self.side.push(side);
        self.fp.push(fp as i64);
        self.id.push(id as i64);
    }
}

type RowArrays<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
);

/// Documents (`ids`, `fingerprints` as int64, and `old` flags or None) to rows
/// `(task, side, fingerprint, id)`: per block family, one row per task of the document's
/// group it takes part in, and for `k >= 4` the copies sent as guests to each non-empty
/// higher group within `k / 4` bits. `home_chunks` and `guest_chunks` come from
/// `spark_chunk_plan`; `old_home` and `old_guest` from `spark_old_needed` (with `old`).
#[pyfunction]
#[pyo3(signature = (ids, fingerprints, old, k, home_chunks, guest_chunks, old_home = None, old_guest = None))]
#[allow(clippy::too_many_arguments)]
fn spark_explode<'py>(
    py: Python<'py>,
    ids: PyReadonlyArray1<'py, i64>,
    fingerprints: PyReadonlyArray1<'py, i64>,
    old: Option<PyReadonlyArray1<'py, bool>>,
    k: u32,
    home_chunks: PyReadonlyArray1<'py, u32>,
    guest_chunks: PyReadonlyArray1<'py, u32>,
    old_home: Option<PyReadonlyArray1<'py, u8>>,
    old_guest: Option<PyReadonlyArray1<'py, u8>>,
) -> PyResult<RowArrays<'py>> {
    let ids = slice(&ids, "ids")?;
    let fps = slice(&fingerprints, "fingerprints")?;
    same_len(ids.len(), fps.len(), "fingerprints")?;
    let old = old.as_ref().map(|o| slice(o, "old")).transpose()?;
    if let Some(o) = old {
        same_len(ids.len(), o.len(), "old")?;
    }
    let home_chunks = table(&home_chunks, "home_chunks")?;
    let guest_chunks = table(&guest_chunks, "guest_chunks")?;
    let old_home = old_home
        .as_ref()
        .map(|t| table(t, "old_home"))
        .transpose()?;
    let old_guest = old_guest
        .as_ref()
        .map(|t| table(t, "old_guest"))
        .transpose()?;
    if old.is_some() && (old_home.is_none() || old_guest.is_none()) {
        return Err(PyValueError::new_err(
            "old documents need the old_home and old_guest tables",
        ));
    }
    if let Some((i, id)) = ids.iter().enumerate().find(|(_, id)| **id < 0) {
        return Err(PyValueError::new_err(format!(
            "ids must be non-negative (document ids are 0..2**63-1 in a LongType column), row {i} has {id}"
        )));
    }
    let masks = neighbour_masks(k)?;
    let rows = py.detach(|| {
        let mut rows = Rows::default();
        for (i, (&id, &fp)) in ids.iter().zip(fps).enumerate() {
            let (id, fp) = (id as u64, fp as u64);
            let is_old = old.is_some_and(|o| o[i]);
            let flag = if is_old { OLD } else { 0 };
            for family in 0..BLOCKS {
                let v = block(fp, family);
                let g = family * VALUES + v;
                let nh = u64::from(home_chunks[g]);
                if nh == 0 {
                    // The plan was made for other documents: a bug of the caller.
                    return Err(format!(
                        "document {id} is in block group {g}, which the chunk plan says is empty"
                    ));
                }
                let ng = u64::from(guest_chunks[g]);
                if !is_old || old_home.is_some_and(|t| t[g] != 0) {
                    if nh == 1 && ng <= 1 {
                        rows.push(task_key(g, KIND_WHOLE, 0, 0), SIDE_B | flag, fp, id);
                    } else {
                        let j = mix(id ^ ((g as u64) << 32)) % nh;
                        for l in 0..nh {
                            let side = if j < l { 0 } else { SIDE_B };
                            rows.push(
                                task_key(g, KIND_HOME, j.min(l), j.max(l)),
                                side | flag,
                                fp,
                                id,
                            );
                        }
                        for x in 0..ng {
                            rows.push(task_key(g, KIND_GUEST, x, j), SIDE_B | flag, fp, id);
                        }
                    }
                }
                for &m in &masks {
                    let w = v ^ m as usize;
                    if w <= v {
                        continue;
                    }
                    let gw = family * VALUES + w;
                    let nhw = u64::from(home_chunks[gw]);
                    if nhw == 0 || (is_old && old_guest.is_some_and(|t| t[gw] == 0)) {
                        continue;
                    }
                    let ngw = u64::from(guest_chunks[gw]);
                    if nhw == 1 && ngw <= 1 {
                        rows.push(task_key(gw, KIND_WHOLE, 0, 0), flag, fp, id);
                    } else {
                        let x = mix(id ^ ((gw as u64) << 32) ^ 0x5bd1_e995) % ngw.max(1);
                        for y in 0..nhw {
                            rows.push(task_key(gw, KIND_GUEST, x, y), flag, fp, id);
                        }
                    }
                }
            }
        }
        Ok(rows)
    });
    let rows = rows.map_err(PyValueError::new_err)?;
    Ok((
        rows.task.into_pyarray(py),
        rows.side.into_pyarray(py),
        rows.fp.into_pyarray(py),
        rows.id.into_pyarray(py),
    ))
}

/// What one call of `spark_pairs` found.
#[derive(Default)]
struct Found {
    a: Vec<i64>,
    b: Vec<i64>,
    d: Vec<u8>,
    /// Comparisons per task (pairs of documents looked at), for the skew report.
    max_task_work: u64,
    total_work: u64,
    tasks: u64,
}

/// Compares the documents of one task (rows `rows` of the sorted arrays).
fn run_task(
    kernels: &[PairKernel],
    task: i64,
    sides: &[u8],
    fps: &[i64],
    ids: &[i64],
    found: &mut Found,
) -> Result<(), String> {
    let group = (task >> 40) as usize;
    let family = group / VALUES;
    let kind = (task >> 38) & 3;
    let (x, y) = ((task >> 19) & CHUNK_MASK, task & CHUNK_MASK);
    let kernel = kernels
        .get(family)
        .ok_or_else(|| format!("task {task} names block family {family}"))?;
    let (mut a_new, mut a_old, mut b_new, mut b_old) = (vec![], vec![], vec![], vec![]);
    for ((&s, &fp), &id) in sides.iter().zip(fps).zip(ids) {
        let doc = (fp as u64, id as u64);
        match (s & SIDE_B != 0, s & OLD != 0) {
            (false, false) => a_new.push(doc),
            (false, true) => a_old.push(doc),
            (true, false) => b_new.push(doc),
            (true, true) => b_old.push(doc),
        }
    }
    let mut duplicate = None;
    let mut emit = |p: Pair| {
        if p.a == p.b {
            duplicate = Some(p.a);
            return ControlFlow::Break(());
        }
        found.a.push(p.a as i64);
        found.b.push(p.b as i64);
        found.d.push(p.distance as u8);
        ControlFlow::Continue(())
    };
    let with_self = kind == KIND_WHOLE || (kind == KIND_HOME && x == y);
    let (an, ao, bn, bo) = (
        a_new.len() as u64,
        a_old.len() as u64,
        b_new.len() as u64,
        b_old.len() as u64,
    );
    // Pairs of two old documents are never compared.
    let mut work = (an + ao) * bn + an * bo;
    let _ = (|| {
        if with_self {
            work += bn * bn.saturating_sub(1) / 2 + bn * bo;
            kernel.self_pairs(&b_new, &mut emit)?;
            kernel.cross_pairs(&b_new, &b_old, &mut emit)?;
        }
        kernel.cross_pairs(&a_new, &b_new, &mut emit)?;
        kernel.cross_pairs(&a_new, &b_old, &mut emit)?;
        kernel.cross_pairs(&a_old, &b_new, &mut emit)
    })();
    if let Some(id) = duplicate {
        return Err(format!(
            "id {id} is given to more than one document: ids must be unique"
        ));
    }
    found.max_task_work = found.max_task_work.max(work);
    found.total_work += work;
    found.tasks += 1;
    Ok(())
}

/// The pairs of rows `(task, side, fingerprint, id)` sorted by task (one Spark partition, or
/// part of it): every task whose rows are complete is compared with the crate's
/// [`PairKernel`]. Unless `last`, the rows of the final task may continue in the next batch,
/// so they are left: the result says where they start (`consumed`). Returns a dict with `a`,
/// `b` (int64, `a < b`), `distance` (uint8), `consumed`, and the comparisons made (`tasks`,
/// `total_work`, `max_task_work`).
#[pyfunction]
#[pyo3(signature = (task, side, fingerprint, id, k, last))]
fn spark_pairs<'py>(
    py: Python<'py>,
    task: PyReadonlyArray1<'py, i64>,
    side: PyReadonlyArray1<'py, u8>,
    fingerprint: PyReadonlyArray1<'py, i64>,
    id: PyReadonlyArray1<'py, i64>,
    k: u32,
    last: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let task = slice(&task, "task")?;
    let side = slice(&side, "side")?;
    let fps = slice(&fingerprint, "fingerprint")?;
    let ids = slice(&id, "id")?;
    let n = task.len();
    same_len(n, side.len(), "side")?;
    same_len(n, fps.len(), "fingerprint")?;
    same_len(n, ids.len(), "id")?;
    let kernels: Vec<PairKernel> = (0..BLOCKS)
        .map(|f| PairKernel::new(k, f))
        .collect::<Result<_, _>>()
        .py()?;
    let result = py.detach(|| {
        let mut found = Found::default();
        let mut start = 0;
        while start < n {
            let t = task[start];
            let mut end = start + 1;
            while end < n && task[end] == t {
                end += 1;
            }
            if end < n && task[end] < t {
                return Err(format!(
                    "rows are not sorted by task (row {end} after row {})",
                    end - 1
                ));
            }
            if end == n && !last {
                break;
            }
            run_task(
                &kernels,
                t,
                &side[start..end],
                &fps[start..end],
                &ids[start..end],
                &mut found,
            )?;
            start = end;
        }
        Ok((found, start))
    });
    let (found, consumed) = result.map_err(PyValueError::new_err)?;
    let out = PyDict::new(py);
    out.set_item("a", found.a.into_pyarray(py))?;
    out.set_item("b", found.b.into_pyarray(py))?;
    out.set_item("distance", found.d.into_pyarray(py))?;
    out.set_item("consumed", consumed)?;
    out.set_item("tasks", found.tasks)?;
    out.set_item("total_work", found.total_work)?;
    out.set_item("max_task_work", found.max_task_work)?;
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
    m.add_function(wrap_pyfunction!(spark_chunk_plan, m)?)?;
    m.add_function(wrap_pyfunction!(spark_old_needed, m)?)?;
    m.add_function(wrap_pyfunction!(spark_explode, m)?)?;
    m.add_function(wrap_pyfunction!(spark_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(spark_components, m)?)?;
    m.add_class::<PyWarcBatches>()?;
    Ok(())
}
