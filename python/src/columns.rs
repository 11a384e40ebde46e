//! Parallel columns of ids, fingerprints and optional keys, read in slices: a contiguous
//! numpy `uint64` array is borrowed, not copied, so that loading 100M fingerprints holds the
//! arrays and one slice, not a second copy of everything (`bulk_load_fingerprints`,
//! `insert_many`).

use std::borrow::Cow;
use std::ops::Range;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

use simhash_store::{Entry, Fingerprint};

use crate::args::{key_arg, type_name, u64_vec, Signed};

/// Documents per slice: 2 MiB of ids and fingerprints, small beside any loader budget.
pub(crate) const SLICE: usize = 1 << 17;

/// A column of `u64`s.
enum U64Column<'py> {
    /// A contiguous `uint64` array, read in place.
    Unsigned(PyReadonlyArray1<'py, u64>),
    /// A contiguous `int64` array, converted a slice at a time.
    Signed(PyReadonlyArray1<'py, i64>, Signed),
    /// Anything else (lists, strided arrays), copied once.
    Owned(Vec<u64>),
}

impl<'py> U64Column<'py> {
    fn new(obj: &Bound<'py, PyAny>, what: &str, signed: Signed) -> PyResult<U64Column<'py>> {
        if let Ok(a) = obj.cast::<PyArray1<u64>>() {
            let a = a.readonly();
            if a.is_contiguous() {
                return Ok(U64Column::Unsigned(a));
            }
        }
        if let Ok(a) = obj.cast::<PyArray1<i64>>() {
            let a = a.readonly();
            if a.is_contiguous() {
                return Ok(U64Column::Signed(a, signed));
            }
        }
        u64_vec(obj, what, signed).map(U64Column::Owned)
    }

    fn len(&self) -> usize {
        match self {
            U64Column::Unsigned(a) => a.len(),
            U64Column::Signed(a, _) => a.len(),
            U64Column::Owned(v) => v.len(),
        }
    }

    /// The values at `range`; `what` names the column in errors.
    fn slice(&self, range: Range<usize>, what: &str) -> PyResult<Cow<'_, [u64]>> {
        let start = range.start;
        Ok(match self {
            U64Column::Unsigned(a) => Cow::Borrowed(&a.as_slice()?[range]),
            U64Column::Owned(v) => Cow::Borrowed(&v[range]),
            U64Column::Signed(a, signed) => {
                let values = &a.as_slice()?[range];
                if *signed == Signed::Reject {
                    if let Some((i, v)) = values.iter().enumerate().find(|(_, v)| **v < 0) {
                        return Err(PyValueError::new_err(format!(
                            "{what}[{}] must be in 0..2**64-1, got {v}",
                            start + i
                        )));
                    }
                }
                Cow::Owned(values.iter().map(|&v| v as u64).collect())
            }
        })
    }
}

/// The optional keys column, read as the slices are.
struct KeyColumn<'py> {
    iter: Bound<'py, pyo3::types::PyIterator>,
    read: usize,
}

impl<'py> KeyColumn<'py> {
    /// `keys` (None, or a sized iterable of `str`/None) for a column of `len` documents.
    fn new(keys: Option<&Bound<'py, PyAny>>, len: usize) -> PyResult<Option<KeyColumn<'py>>> {
        let Some(keys) = keys.filter(|k| !k.is_none()) else {
            return Ok(None);
        };
        if keys.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "keys must be a sequence of str or None, not a single str (wrap it in a list)",
            ));
        }
        let iter = keys.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "keys must be a sequence of str or None, not {}",
                type_name(keys)
            ))
        })?;
        if let Ok(n) = keys.len() {
            if n != len {
                return Err(PyValueError::new_err(format!(
                    "keys must have the same length as ids, got {n} and {len}"
                )));
            }
        }
        Ok(Some(KeyColumn { iter, read: 0 }))
    }

    /// The next `n` keys.
    fn next(&mut self, n: usize, len: usize) -> PyResult<Vec<Option<String>>> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let Some(item) = self.iter.next() else {
                return Err(PyValueError::new_err(format!(
                    "keys must have the same length as ids, got {} and {len}",
                    self.read
                )));
            };
            out.push(key_arg(Some(&item?), &format!("keys[{}]", self.read))?);
            self.read += 1;
        }
        Ok(out)
    }
}

/// One slice of the columns: ids, fingerprints and keys, ready to hand over with the
/// interpreter released.
pub(crate) struct Slice<'a> {
    pub(crate) ids: Cow<'a, [u64]>,
    pub(crate) fingerprints: Cow<'a, [u64]>,
    pub(crate) keys: Option<Vec<Option<String>>>,
}

impl Slice<'_> {
    /// The documents of the slice as entries.
    pub(crate) fn entries(&self) -> Vec<Entry> {
        let mut keys = self.keys.iter().flatten();
        self.ids
            .iter()
            .zip(self.fingerprints.iter())
            .map(|(&id, &fp)| {
                let entry = Entry::new(id, Fingerprint(fp));
                match keys.next() {
                    Some(Some(key)) => entry.with_key(key.clone()),
                    _ => entry,
                }
            })
            .collect()
    }
}

/// Parallel columns of ids, fingerprints and optional keys, checked for equal lengths.
pub(crate) struct Columns<'py> {
    ids: U64Column<'py>,
    fingerprints: U64Column<'py>,
    keys: Option<KeyColumn<'py>>,
}

impl<'py> Columns<'py> {
    /// Ids (negative ones refused), fingerprints (`int64` read as their bits) and optional keys.
    pub(crate) fn new(
        ids: &Bound<'py, PyAny>,
        fingerprints: &Bound<'py, PyAny>,
        keys: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Columns<'py>> {
        let ids = U64Column::new(ids, "ids", Signed::Reject)?;
        let fingerprints = U64Column::new(fingerprints, "fingerprints", Signed::Bits)?;
        if ids.len() != fingerprints.len() {
            return Err(PyValueError::new_err(format!(
                "ids and fingerprints must have the same length, got {} and {}",
                ids.len(),
                fingerprints.len()
            )));
        }
        let keys = KeyColumn::new(keys, ids.len())?;
        Ok(Columns {
            ids,
            fingerprints,
            keys,
        })
    }

    /// The number of documents.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The documents at `range`.
    pub(crate) fn slice(&mut self, range: Range<usize>) -> PyResult<Slice<'_>> {
        let n = range.len();
        let len = self.ids.len();
        let keys = match &mut self.keys {
            Some(k) => Some(k.next(n, len)?),
            None => None,
        };
        Ok(Slice {
            ids: self.ids.slice(range.clone(), "ids")?,
            fingerprints: self.fingerprints.slice(range, "fingerprints")?,
            keys,
        })
    }

    /// The ranges of the slices, in order.
    pub(crate) fn ranges(&self) -> impl Iterator<Item = Range<usize>> {
        let len = self.len();
        (0..len)
            .step_by(SLICE)
            .map(move |start| start..(start + SLICE).min(len))
    }
}
