//! `Simhasher`: text to 64-bit fingerprints, one or a batch on all cores; `distance`.

use std::sync::atomic::{AtomicBool, Ordering};

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyDict;
use rayon::prelude::*;

use simhash_store::{Error, Fingerprint, Simhasher};

use crate::args::{self, u64_arg};
use crate::errors::{self, IntoPy};
use crate::{interrupt, settings};

/// Turns text into 64-bit SimHash fingerprints.
///
/// Keyword arguments are the fields of the Rust ``SimhashConfig``, each defaulting to the
/// Rust default (chosen on a labelled Chinese and English near-duplicate set):
///
/// - ``normalize=True``: fold full-width forms, ligatures and look-alike letters to ASCII;
/// - ``hmm=True``: let jieba join unknown characters into new words;
/// - ``stop_words=True``: drop the built-in Chinese and English stop words;
/// - ``words=True``: words are features;
/// - ``word_shingles=0``: runs of this many words as features too (0, or 2..=8);
/// - ``cjk_char_shingles=1``: runs of this many ideographs (0, or 1..=16);
/// - ``word_char_shingles=3``: character n-grams of other scripts' words (0, or 1..=16);
/// - ``word_char_shingles_within_words=True``: n-grams within each word, not across words;
/// - ``tf="raw"``: ``"raw"``, ``"length-adaptive"``, ``"sqrt"``, ``"log"`` or ``"binary"``;
/// - ``idf="none"``: or ``"jieba"`` for jieba's IDF table;
/// - ``seed=0``: seed of the xxh3 feature hash;
/// - ``drop_boilerplate=True``: leave out copyright, share-button and similar short lines;
/// - ``latin_count_pieces=4``, ``latin_count_pieces_ratio=2``: count pieces of frequent
///   non-CJK features, so that deleted text shows;
/// - ``sketch="None"``: ``"MinHash"`` for a store that keeps a 64-byte sketch per document
///   and answers :meth:`Store.query_text_verified` (it does not change fingerprints).
///
/// Fingerprints equal those of the Rust library and the ``simhash-store`` command for the
/// same settings. A Simhasher is immutable, thread-safe and picklable (by its settings).
///
/// >>> from simhash_store import Simhasher, distance
/// >>> h = Simhasher()
/// >>> a = h.fingerprint("The quick brown fox jumps over the lazy dog near the river bank.")
/// >>> b = h.fingerprint("The quick brown fox jumps over the lazy dog near the river bank!")
/// >>> distance(a, b)
/// 0
/// >>> Simhasher(seed=7, tf="sqrt")
/// Simhasher(seed=7, tf='sqrt')
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
    texts: &[PyBackedStr],
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

    /// The fingerprint of ``text``, an int in ``0..2**64-1``.
    ///
    /// Raises :class:`~simhash_store.NoFeaturesError` for a text with nothing to
    /// fingerprint (empty, only punctuation or stop words) and ``TypeError`` for a non-str.
    ///
    /// >>> from simhash_store import Simhasher
    /// >>> 0 <= Simhasher().fingerprint("北京今天下雨了，气温比昨天低五度。") < 2**64
    /// True
    fn fingerprint(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<u64> {
        let text = args::text_arg(text, "text")?;
        if text.len() < 1 << 16 {
            return self.inner.fingerprint(&text).map(|f| f.0).py();
        }
        py.detach(|| self.inner.fingerprint(&text))
            .map(|f| f.0)
            .py()
    }

    /// The fingerprints of ``texts`` as a uint64 array, computed on all cores with the
    /// interpreter released (Ctrl-C stops it).
    ///
    /// A text without features raises :class:`~simhash_store.NoFeaturesError` (its index in a
    /// note), or gives 0 with ``on_empty="zero"``.
    ///
    /// >>> from simhash_store import Simhasher
    /// >>> fps = Simhasher().fingerprint_many(["first page text", "second page text", ""], on_empty="zero")
    /// >>> fps.dtype, len(fps), int(fps[2])
    /// (dtype('uint64'), 3, 0)
    #[pyo3(signature = (texts, *, on_empty = "raise"))]
    fn fingerprint_many<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        on_empty: &str,
    ) -> PyResult<Bound<'py, PyArray1<u64>>> {
        fingerprint_many_impl(py, &self.inner, texts, on_empty)
    }

    /// The settings, as keyword arguments: ``Simhasher(**h.settings) == h``.
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
///
/// >>> from simhash_store import distance
/// >>> distance(0b1011, 0b0001)
/// 2
#[pyfunction]
pub(crate) fn distance(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<u32> {
    let a = u64_arg(a, "a")?;
    let b = u64_arg(b, "b")?;
    Ok(Fingerprint(a).distance(Fingerprint(b)))
}

/// The default fingerprint settings, as the keyword arguments of :class:`Simhasher`.
///
/// >>> from simhash_store import default_settings
/// >>> default_settings()["word_char_shingles"]
/// 3
#[pyfunction]
pub(crate) fn default_settings(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    settings::to_dict(py, &simhash_store::SimhashConfig::default())
}
