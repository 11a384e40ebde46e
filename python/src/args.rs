//! Arguments from Python, checked: an id or fingerprint outside `0..2**64` is a
//! `ValueError`, a value of the wrong type a `TypeError`, both naming the argument (and the
//! position in a sequence). Nothing here panics on user input.

use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyInt, PyString};

/// A `u64` from a Python int (or anything with `__index__`, such as a numpy integer).
pub(crate) fn u64_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    if let Ok(v) = obj.extract::<u64>() {
        return Ok(v);
    }
    let is_int = obj.is_instance_of::<PyInt>() || obj.hasattr("__index__").unwrap_or(false);
    if is_int {
        Err(PyValueError::new_err(format!(
            "{what} must be in 0..2**64-1, got {}",
            obj.repr().map(|r| r.to_string()).unwrap_or_default()
        )))
    } else {
        Err(PyTypeError::new_err(format!(
            "{what} must be an int, not {}",
            type_name(obj)
        )))
    }
}

/// A text: `str` only (bytes must be decoded by the caller, who knows the encoding).
pub(crate) fn text_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    text_ref(obj, what).map(|s| String::from(&*s))
}

/// A text as UTF-8 held by Python (no copy into Rust; `Send`, so it can be read with the
/// interpreter released).
pub(crate) fn text_ref(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<PyBackedStr> {
    match obj.cast::<PyString>() {
        Ok(s) => PyBackedStr::try_from(s.clone()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{what} must be a str, not {}{}",
            type_name(obj),
            if type_name(obj) == "bytes" {
                " (decode it first, e.g. data.decode(\"utf-8\"))"
            } else {
                ""
            }
        ))),
    }
}

/// An optional external key: `str` or `None`.
pub(crate) fn key_arg(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<String>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => text_arg(o, what).map(Some),
    }
}

pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// How an `int64` array is read as `u64`s.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signed {
    /// Negative values are an error (ids).
    Reject,
    /// The two's-complement bits (fingerprints stored as Spark/Parquet/Arrow longs).
    Bits,
}

/// A sequence of `u64`s: a 1-D numpy array of `uint64` or `int64` (see [`Signed`]), or any
/// iterable of ints.
pub(crate) fn u64_vec(obj: &Bound<'_, PyAny>, what: &str, signed: Signed) -> PyResult<Vec<u64>> {
    if let Ok(a) = obj.cast::<PyArray1<u64>>() {
        let a = a.readonly();
        return Ok(match a.as_slice() {
            Ok(s) => s.to_vec(),
            Err(_) => a.as_array().iter().copied().collect(),
        });
    }
    if let Ok(a) = obj.cast::<PyArray1<i64>>() {
        let a = a.readonly();
        let view = a.as_array();
        if signed == Signed::Reject {
            if let Some((i, v)) = view.iter().enumerate().find(|(_, v)| **v < 0) {
                return Err(PyValueError::new_err(format!(
                    "{what}[{i}] must be in 0..2**64-1, got {v}"
                )));
            }
        }
        return Ok(view.iter().map(|&v| v as u64).collect());
    }
    if let Ok(a) = obj.cast::<numpy::PyUntypedArray>() {
        if a.ndim() != 1 {
            return Err(PyValueError::new_err(format!(
                "{what} must be one-dimensional, got {} dimensions",
                a.ndim()
            )));
        }
        let kind = a.dtype().kind();
        if kind != b'i' && kind != b'u' {
            return Err(PyTypeError::new_err(format!(
                "{what} must hold integers, got an array of dtype {}",
                a.dtype()
            )));
        }
    }
    each(obj, what, "ints (or a numpy array of them)", u64_arg)
}

/// `item(x, "what[i]")` of each `x` of the iterable `obj`, which must not be a single `str`;
/// `of` names what the items should be, for the errors.
fn each<T>(
    obj: &Bound<'_, PyAny>,
    what: &str,
    of: &str,
    mut item: impl FnMut(&Bound<'_, PyAny>, &str) -> PyResult<T>,
) -> PyResult<Vec<T>> {
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a sequence of {of}, not a single str (wrap it in a list)"
        )));
    }
    let iter = obj.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be an iterable of {of}, not {}",
            type_name(obj)
        ))
    })?;
    let mut out = Vec::with_capacity(obj.len().unwrap_or(0));
    for (i, x) in iter.enumerate() {
        out.push(item(&x?, &format!("{what}[{i}]"))?);
    }
    Ok(out)
}

/// A sequence of texts (any iterable of `str`).
pub(crate) fn text_vec(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<PyBackedStr>> {
    each(obj, what, "str", text_ref)
}

/// `k`: a distance in `0..=64`.
pub(crate) fn k_arg(k: i64) -> PyResult<u32> {
    if (0..=i64::from(simhash_store::MAX_DISTANCE)).contains(&k) {
        Ok(k as u32)
    } else {
        Err(PyValueError::new_err(format!(
            "k must be in 0..=64, got {k}"
        )))
    }
}
