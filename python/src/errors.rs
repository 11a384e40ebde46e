//! Rust errors as Python exceptions. The classes live in `simhash_store/errors.py` (so that
//! `InvalidArgumentError` can be both an `Error` and a `ValueError`); this maps each
//! [`simhash_store::Error`] variant to its class, with the Rust message (its advice given as
//! Python calls where the Rust one names a Rust API).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;

use simhash_store::Error;

static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// The name of the Python class for `e`, in `simhash_store.errors`.
fn class_name(e: &Error) -> &'static str {
    match e {
        Error::NoFeatures => "NoFeaturesError",
        Error::Locked { .. } => "LockedError",
        Error::Corruption { .. } => "CorruptionError",
        Error::RocksDb { .. } => "RocksDbError",
        Error::DiskFull { .. } => "DiskFullError",
        Error::UnsupportedFormat { .. } => "UnsupportedFormatError",
        Error::NotAStore { .. } => "NotAStoreError",
        Error::UnknownSetting { .. } => "UnsupportedFormatError",
        Error::ConfigMismatch { .. } | Error::WordListChanged { .. } => "SettingsMismatchError",
        Error::Decode { .. } => "DecodeError",
        Error::ParseFingerprint { .. } => "ParseFingerprintError",
        Error::InvalidArgument(_)
        | Error::NoIdLeft { .. }
        | Error::BulkLoadInProgress
        | Error::LoaderFailed
        | Error::UnusableDestination { .. }
        | Error::DestinationExists { .. } => "InvalidArgumentError",
        Error::WriterBusy { .. } => "WriterBusyError",
        Error::ReadOnly { .. } | Error::LegacyFormat { .. } => "ReadOnlyError",
        Error::Io { .. } => "StoreIOError",
        Error::Cancelled => "CancelledError",
        Error::BadRecord { .. } => "BadRecordError",
        Error::NoSketches { .. } => "NoSketchesError",
        Error::Postgres { .. } => "PostgresError",
        Error::SchemaVersion { .. } => "UnsupportedFormatError",
        _ => "Error",
    }
}

/// The message of `e`, with advice given as Python calls instead of Rust ones.
fn message(e: &Error) -> String {
    match e {
        Error::Locked { path, message } => format!(
            "store at {} is already open for writing, by another process or by another Store \
             in this process ({message}): close the other one first (store.close(), or a with \
             block), or open this one with Store.open(path, read_only=True) to read beside it",
            path.display()
        ),
        Error::NoSketches { path } => format!(
            "store at {} keeps no sketches, so it cannot verify near-duplicates: sketches come \
             from the texts, so load them into a new store made with \
             Store.open(new_path, sketch=\"MinHash\"), or ask without verification",
            path.display()
        ),
        Error::ReadOnly { path } => format!(
            "store at {} is open read-only: open it with Store.open(path) to write",
            path.display()
        ),
        Error::ConfigMismatch {
            path, differences, ..
        } if path.starts_with("postgres://") => format!(
            "the index in {} fingerprints with other settings than requested ({differences}): \
             open it with PostgresIndex.open(url) and no settings to use the stored ones, or \
             use a new database",
            path.display()
        ),
        Error::ConfigMismatch {
            path, differences, ..
        } => format!(
            "store at {} fingerprints with other settings than requested ({differences}): \
             open it with Store.open(path) and no settings to use the stored ones, or use a new \
             store",
            path.display()
        ),
        other => other.to_string(),
    }
}

/// `e` as an instance of its `simhash_store.errors` class.
pub(crate) fn to_py(e: Error) -> PyErr {
    let message = message(&e);
    instance(class_name(&e), message)
}

/// [`to_py`] with `advice` on a second line of the message (where a load that stopped left
/// things, and how to finish it).
pub(crate) fn to_py_with_advice(e: Error, advice: &str) -> PyErr {
    let message = format!("{}\n{advice}", message(&e));
    instance(class_name(&e), message)
}

/// An instance of class `name` of `simhash_store.errors` with `message`.
fn instance(name: &str, message: String) -> PyErr {
    Python::attach(|py| {
        let module = match ERRORS.get_or_try_init(py, || {
            PyModule::import(py, "simhash_store.errors").map(Bound::unbind)
        }) {
            Ok(m) => m.bind(py),
            Err(import) => return import,
        };
        match module.getattr(name) {
            Ok(class) => match class.call1((message,)) {
                Ok(instance) => PyErr::from_value(instance),
                Err(err) => err,
            },
            Err(_) => PyRuntimeError::new_err(message),
        }
    })
}

/// `?` for results of the crate: `store.len().py()?`.
pub(crate) trait IntoPy<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, Error> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
