//! Fingerprint settings as keyword arguments: the fields of [`SimhashConfig`] by name, each
//! defaulting to the Rust default. `tf` and `idf` take the command line's spellings
//! (`"raw"`, `"length-adaptive"`, `"sqrt"`, `"log"`, `"binary"`; `"none"`, `"jieba"`).
//! Going through the configuration's serde form means a setting added in Rust is accepted
//! here without a change.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyString};
use serde_json::{Map, Value};

use simhash_store::SimhashConfig;

use crate::errors::IntoPy;

const TF_NAMES: [(&str, &str); 5] = [
    ("raw", "Raw"),
    ("length-adaptive", "LengthAdaptive"),
    ("sqrt", "Sqrt"),
    ("log", "Log"),
    ("binary", "Binary"),
];
const IDF_NAMES: [(&str, &str); 2] = [("none", "None"), ("jieba", "Jieba")];

fn default_object() -> Map<String, Value> {
    match serde_json::to_value(SimhashConfig::default()) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn enum_value(field: &str, given: &str, names: &[(&str, &str)]) -> PyResult<Value> {
    let wanted = given.to_ascii_lowercase().replace('_', "-");
    names
        .iter()
        .find(|(py, rust)| *py == wanted || rust.eq_ignore_ascii_case(given))
        .map(|(_, rust)| Value::String((*rust).into()))
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "{field} must be one of {}, got {given:?}",
                names
                    .iter()
                    .map(|(py, _)| format!("{py:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
}

/// The configuration for `kwargs` (all optional), validated.
pub(crate) fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<SimhashConfig> {
    let mut object = default_object();
    if let Some(kwargs) = kwargs {
        for (name, value) in kwargs.iter() {
            let name: String = name.extract()?;
            let Some(default) = object.get(&name) else {
                let mut known: Vec<&String> = object.keys().collect();
                known.sort();
                return Err(PyTypeError::new_err(format!(
                    "unknown fingerprint setting {name:?}: expected one of {}",
                    known
                        .iter()
                        .map(|k| k.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            };
            let json = match (name.as_str(), default) {
                ("tf", _) => enum_value("tf", &str_setting(&name, &value)?, &TF_NAMES)?,
                ("idf", _) => enum_value("idf", &str_setting(&name, &value)?, &IDF_NAMES)?,
                (_, Value::Bool(_)) => {
                    if !value.is_instance_of::<PyBool>() {
                        return Err(PyTypeError::new_err(format!(
                            "{name} must be a bool, not {}",
                            crate::args::type_name(&value)
                        )));
                    }
                    Value::Bool(value.extract()?)
                }
                (_, Value::Number(_)) => {
                    if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
                        return Err(PyTypeError::new_err(format!(
                            "{name} must be an int, not {}",
                            crate::args::type_name(&value)
                        )));
                    }
                    let n: u64 = value.extract().map_err(|_| {
                        PyValueError::new_err(format!("{name} must be >= 0, got {value}"))
                    })?;
                    Value::from(n)
                }
                _ => Value::from(value.extract::<String>()?),
            };
            object.insert(name, json);
        }
    }
    let config: SimhashConfig = serde_json::from_value(Value::Object(object))
        .map_err(|e| PyValueError::new_err(format!("invalid fingerprint settings: {e}")))?;
    config.validate().py()?;
    Ok(config)
}

fn str_setting(name: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    value
        .cast::<PyString>()
        .map(|s| s.to_string())
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "{name} must be a str, not {}",
                crate::args::type_name(value)
            ))
        })
}

/// `config` as a dict of keyword arguments (`Simhasher(**settings)` gives it back).
pub(crate) fn to_dict<'py>(
    py: Python<'py>,
    config: &SimhashConfig,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    let Ok(Value::Object(object)) = serde_json::to_value(config) else {
        return Ok(dict);
    };
    for (name, value) in object {
        match (name.as_str(), value) {
            ("tf", Value::String(s)) => dict.set_item(
                &name,
                TF_NAMES
                    .iter()
                    .find(|(_, r)| *r == s)
                    .map_or(s.as_str(), |(p, _)| p),
            )?,
            ("idf", Value::String(s)) => dict.set_item(
                &name,
                IDF_NAMES
                    .iter()
                    .find(|(_, r)| *r == s)
                    .map_or(s.as_str(), |(p, _)| p),
            )?,
            (_, Value::Bool(b)) => dict.set_item(&name, b)?,
            (_, Value::Number(n)) => dict.set_item(&name, n.as_u64().unwrap_or(0))?,
            (_, Value::String(s)) => dict.set_item(&name, s)?,
            _ => {}
        }
    }
    Ok(dict)
}
