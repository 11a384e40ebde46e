//! `Simhasher`: text to 64-bit fingerprints, one or a batch on all cores; `distance`.

use std::sync::atomic::{AtomicBool, Ordering};

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

use simhash_store::{Error, Fingerprint, Simhasher};

use crate::args::{self, u64_arg};
use crate::errors::{self, IntoPy};
use crate::{interrupt, settings};

#[pyclass(module = "simhash_store._native", name = "Simhasher", frozen)]
pub(crate) struct PySimhasher {
    pub(crate) inner: Simhasher,
}

/// What `fingerprint_many` does with a text that has no features.
#[derive(Clone, Copy)]
enum OnEmpty {
    Raise,
    Zero,
}

/// Fingerprints `texts` in parallel; stops early when `stop` is set. Texts without features
/// give 0 with `OnEmpty::Zero`; with `Raise`, the error of the first such text, by index.
fn fingerprint_all(
    hasher: &Simhasher,
    texts: &[String],
    on_empty: OnEmpty,
    stop: &AtomicBool,
) -> Result<Vec<u64>, (usize, Error)> {
    let mut out = vec![0u64; texts.len()];
    let result = out
        .par_iter_mut()
        .zip(texts.par_iter())
        .enumerate()
        .try_for_each(|(i, (slot, text))| {
            if stop.load(Ordering::Relaxed) {
                return Err((i, Error::Cancelled));
            }
            match hasher.fingerprint(text) {
                Ok(fp) => {
                    *slot = fp.0;
                    Ok(())
                }
                Err(Error::NoFeatures) if matches!(on_empty, OnEmpty::Zero) => Ok(()),
                Err(e) => Err((i, e)),
            }
        });
    result.map(|()| out)
}

pub(crate) fn fingerprint_many_impl<'py>(
    py: Python<'py>,
    hasher: &Simhasher,
    texts: &Bound<'py, PyAny>,
    on_empty: &str,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let on_empty = match on_empty {
        "raise" => OnEmpty::Raise,
        "zero" => OnEmpty::Zero,
        other => {
            return Err(PyValueError::new_err(format!(
                "on_empty must be \"raise\" or \"zero\", got {other:?}"
            )))
        }
    };
    let texts = args::text_vec(texts, "texts")?;
    let result = interrupt::run(py, |stop| fingerprint_all(hasher, &texts, on_empty, stop))?;
    match result {
        Ok(fps) => Ok(fps.into_pyarray(py)),
        Err((i, e @ Error::NoFeatures)) => {
            let err = errors::to_py(e);
            let note = format!(
                "texts[{i}] has no features; pass on_empty=\"zero\" to get 0 for such texts"
            );
            let _ = err.value(py).call_method1("add_note", (note,));
            Err(err)
        }
        Err((_, e)) => Err(errors::to_py(e)),
    }
}

#[pymethods]
impl PySimhasher {
    #[new]
    #[pyo3(signature = (**settings))]
    fn new(settings: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let config = settings::from_kwargs(settings)?;
        Ok(PySimhasher {
            inner: Simhasher::new(config).py()?,
        })
    }

    fn fingerprint(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<u64> {
        let text = args::text_arg(text, "text")?;
        if text.len() < 1 << 16 {
            return self.inner.fingerprint(&text).map(|f| f.0).py();
        }
        py.detach(|| self.inner.fingerprint(&text)).map(|f| f.0).py()
    }

    #[pyo3(signature = (texts, *, on_empty = "raise"))]
    fn fingerprint_many<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        on_empty: &str,
    ) -> PyResult<Bound<'py, PyArray1<u64>>> {
        fingerprint_many_impl(py, &self.inner, texts, on_empty)
    }

    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        settings::to_dict(py, self.inner.config())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let defaults = simhash_store::SimhashConfig::default();
        if self.inner.config() == &defaults {
            return Ok("Simhasher()".into());
        }
        let ours = settings::to_dict(py, self.inner.config())?;
        let theirs = settings::to_dict(py, &defaults)?;
        let mut parts = Vec::new();
        for (k, v) in ours.iter() {
            let same = match theirs.get_item(&k)? {
                Some(d) => d.eq(&v)?,
                None => false,
            };
            if !same {
                parts.push(format!("{}={}", k, v.repr()?));
            }
        }
        Ok(format!("Simhasher({})", parts.join(", ")))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PySimhasher>()
            .is_ok_and(|o| o.get().inner.config() == self.inner.config())
    }

    /// Pickled by its settings (Spark ships a `Simhasher` to its workers this way).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyDict>,))> {
        let py = slf.py();
        let rebuild = py.import("simhash_store._pickle")?.getattr("simhasher")?;
        let settings = settings::to_dict(py, slf.get().inner.config())?;
        Ok((rebuild, (settings,)))
    }
}

/// Hamming distance between two 64-bit fingerprints.
#[pyfunction]
pub(crate) fn distance(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<u32> {
    let a = u64_arg(a, "a")?;
    let b = u64_arg(b, "b")?;
    Ok(Fingerprint(a).distance(Fingerprint(b)))
}

/// The default fingerprint settings, as keyword arguments.
#[pyfunction]
pub(crate) fn default_settings(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    settings::to_dict(py, &simhash_store::SimhashConfig::default())
}
