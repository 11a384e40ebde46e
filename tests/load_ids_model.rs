//! `simhash-store load` against a reference model of ids and keys (`common/id_model.rs`):
//! folders of text files and JSON Lines with and without ids and keys, several loads in a
//! row into one store. After each load the store holds exactly the model's documents, the
//! summary counts what the model counts, and every document read is stored or reported
//! (superseded within its load, or the load stopped at a named document).
#![cfg(feature = "cli")]

mod common;

use std::path::Path;

use proptest::prelude::*;
use serde_json::{json, Value};
use simhash_store::{SimhashConfig, Simhasher};

use common::cli::{run, Result};
use common::id_model::{adds, each_stored_or_superseded, Assigned, Assigner, Doc, InputDoc, Model};

/// Ids from a small pool, so that loads give the same ids, plus the largest ones.
fn an_id() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![
        3 => Just(None),
        3 => (0u64..8).prop_map(Some),
        1 => Just(Some(u64::MAX)),
        1 => Just(Some(u64::MAX - 1)),
    ]
}

fn a_key() -> impl Strategy<Value = Option<u8>> {
    prop_oneof![1 => Just(None), 2 => (0u8..4).prop_map(Some)]
}

/// One input of a load.
#[derive(Debug, Clone)]
enum Input {
    /// A folder of text files, by name (from a pool of 4: loads see the same paths again).
    Folder(Vec<u8>),
    /// JSON Lines records: the id and key (`u0`..`u3`) they give.
    Jsonl(Vec<(Option<u64>, Option<u8>)>),
}

fn an_input() -> impl Strategy<Value = Input> {
    prop_oneof![
        proptest::collection::btree_set(0u8..4, 1..4)
            .prop_map(|names| Input::Folder(names.into_iter().collect())),
        proptest::collection::vec((an_id(), a_key()), 1..6).prop_map(Input::Jsonl),
    ]
}

/// Words for texts with features, different for each document.
const WORDS: [&str; 16] = [
    "harbour", "ferries", "storm", "matcha", "cream", "railway", "glacier", "orchard", "violin",
    "lantern", "compass", "meadow", "granite", "saffron", "canyon", "thunder",
];

fn text(seq: u64) -> String {
    let mut words = Vec::new();
    let mut x = seq.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    for _ in 0..24 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        words.push(WORDS[(x % 16) as usize]);
    }
    format!("Document {seq}: {}.", words.join(" "))
}

/// Writes the inputs of load `n` under `dir` and returns their paths and documents, in the
/// order the command reads them.
fn write_inputs(
    dir: &Path,
    n: usize,
    inputs: &[Input],
    hasher: &Simhasher,
    seq: &mut u64,
) -> Result<(Vec<String>, Vec<InputDoc>)> {
    let mut paths = Vec::new();
    let mut docs = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        match input {
            Input::Folder(names) => {
                // The same folder in every load, so that its files keep their keys.
                let folder = dir.join(format!("site{i}"));
                std::fs::create_dir_all(&folder)?;
                for entry in std::fs::read_dir(&folder)? {
                    std::fs::remove_file(entry?.path())?;
                }
                for name in names {
                    *seq += 1;
                    let path = folder.join(format!("page{name}.txt"));
                    let body = text(*seq);
                    std::fs::write(&path, &body)?;
                    docs.push(InputDoc {
                        id: None,
                        key: Some(path.to_str().ok_or("path")?.to_string()),
                        fingerprint: hasher.fingerprint(&body)?.0,
                    });
                }
                paths.push(folder.to_str().ok_or("path")?.to_string());
            }
            Input::Jsonl(records) => {
                let path = dir.join(format!("load{n}-{i}.jsonl"));
                let mut lines = String::new();
                for (id, key) in records {
                    *seq += 1;
                    let fingerprint = seq.wrapping_mul(0xd6e8_feb8_6659_fd93) ^ 0x5555;
                    let mut record = json!({ "fingerprint": format!("{fingerprint:016x}") });
                    if let Some(id) = id {
                        record["id"] = json!(id);
                    }
                    let key = key.map(|k| format!("u{k}"));
                    if let Some(key) = &key {
                        record["url"] = json!(key);
                    }
                    lines.push_str(&record.to_string());
                    lines.push('\n');
                    docs.push(InputDoc {
                        id: *id,
                        key,
                        fingerprint,
                    });
                }
                std::fs::write(&path, lines)?;
                paths.push(path.to_str().ok_or("path")?.to_string());
            }
        }
    }
    Ok((paths, docs))
}

/// The store's documents, by `export`.
fn exported(store: &str) -> Result<Model> {
    let out = run(&["export", "--store", store])?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut model = Model::default();
    for line in String::from_utf8(out.stdout)?.lines().skip(1) {
        let v: Value = serde_json::from_str(line)?;
        let id = v["id"].as_u64().ok_or("id")?;
        let fingerprint = u64::from_str_radix(v["fingerprint"].as_str().ok_or("fp")?, 16)?;
        let key = v["key"].as_str().map(str::to_owned);
        if let Some(key) = &key {
            model.keys.insert(key.clone(), id);
        }
        model.docs.insert(id, Doc { key, fingerprint });
    }
    Ok(model)
}

fn check_loads(loads: &[Vec<Input>]) -> Result {
    let dir = tempfile::tempdir()?;
    let store_path = dir.path().join("store");
    let store = store_path.to_str().ok_or("path")?;
    let hasher = Simhasher::new(SimhashConfig::default())?;
    let mut model = Model::default();
    let mut seq = 0;
    for (n, inputs) in loads.iter().enumerate() {
        let (paths, docs) = write_inputs(dir.path(), n, inputs, &hasher, &mut seq)?;
        let assigned = Assigner::new(&model).assign(&model, &docs, false);
        let mut args = vec!["load", "--json", "--store", store];
        args.extend(paths.iter().map(String::as_str));
        let out = run(&args)?;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let ids = match &assigned {
            Assigned::All(ids) => {
                assert!(out.status.success(), "load {n}: {stderr}");
                ids
            }
            Assigned::StoppedAt { at, ids } => {
                assert!(!out.status.success(), "load {n} should stop at {at}");
                assert!(
                    stderr.contains("which this load already gave"),
                    "load {n}: {stderr}"
                );
                ids
            }
            Assigned::NoIdLeft { at, ids } => {
                assert!(!out.status.success(), "load {n} should stop at {at}");
                assert!(stderr.contains("no new id is left"), "load {n}: {stderr}");
                ids
            }
        };
        let added = adds(&docs, ids);
        let counts = model.apply(&added);
        each_stored_or_superseded(&model, &added);
        let stored = exported(store)?;
        assert_eq!(stored, model, "load {n} of {inputs:?}");
        if matches!(assigned, Assigned::All(_)) {
            let summary: Value = serde_json::from_slice(&out.stdout)?;
            let got = [
                summary["loaded"].as_u64(),
                summary["added"].as_u64(),
                summary["replaced"].as_u64(),
                summary["removed"].as_u64(),
                summary["superseded"].as_u64(),
                summary["documents_after"].as_u64(),
            ];
            let want = [
                Some(docs.len() as u64),
                Some(counts.added),
                Some(counts.replaced),
                Some(counts.removed),
                Some(counts.superseded),
                Some(model.docs.len() as u64),
            ];
            assert_eq!(got, want, "load {n}: {summary}");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn every_loaded_document_is_stored_or_reported(
        loads in proptest::collection::vec(proptest::collection::vec(an_input(), 1..4), 1..4)
    ) {
        check_loads(&loads).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
}

/// The reproduction of the report: a crawl folder loaded before JSON Lines that give id 0.
#[test]
fn a_folder_before_json_lines_with_ids_stops_and_names_both() -> Result {
    let dir = tempfile::tempdir()?;
    let site = dir.path().join("r1");
    std::fs::create_dir(&site)?;
    std::fs::write(
        site.join("a.html"),
        "<html><body><p>Ferries stayed in port for two days as the storm closed the harbour.</p></body></html>",
    )?;
    let jsonl = dir.path().join("r1.jsonl");
    std::fs::write(
        &jsonl,
        "{\"id\":0,\"url\":\"u0\",\"text\":\"A recipe for green tea ice cream with matcha powder and cream, chilled overnight.\"}\n",
    )?;
    let store = dir.path().join("r1.db");
    let (site, jsonl, store) = (
        site.to_str().ok_or("path")?,
        jsonl.to_str().ok_or("path")?,
        store.to_str().ok_or("path")?,
    );
    let out = run(&["load", site, jsonl, "--store", store])?;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("r1.jsonl"), "{stderr}");
    assert!(stderr.contains("a.html"), "{stderr}");
    assert!(stderr.contains("gives id 0"), "{stderr}");

    // In the order the error advises, both are stored: the page keeps its id and key, the
    // record takes id 0 and the page a new one.
    let out = run(&["load", "--json", jsonl, site, "--store", store])?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(summary["documents_after"], 2, "{summary}");
    assert_eq!(summary["replaced"], 1, "{summary}");
    let stored = exported(store)?;
    assert_eq!(stored.keys.get("u0"), Some(&0));
    assert_eq!(stored.docs.len(), 2);
    Ok(())
}

/// After id 2^64-1 no new id is left: a document without one is refused, not wrapped to 0.
#[test]
fn no_id_wraps_after_the_largest() -> Result {
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("s.db");
    let store = store.to_str().ok_or("path")?;
    let first = dir.path().join("first.jsonl");
    std::fs::write(
        &first,
        "{\"id\":0,\"fingerprint\":\"00000000000000ff\"}\n{\"id\":18446744073709551615,\"fingerprint\":\"0000ff0000000000\"}\n",
    )?;
    let out = run(&["load", first.to_str().ok_or("path")?, "--store", store])?;
    assert!(out.status.success());
    let second = dir.path().join("second.jsonl");
    std::fs::write(&second, "{\"fingerprint\":\"ff00000000000000\"}\n")?;
    let out = run(&["load", second.to_str().ok_or("path")?, "--store", store])?;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no new id is left"), "{stderr}");
    let stored = exported(store)?;
    assert_eq!(stored.docs.get(&0).map(|d| d.fingerprint), Some(0xff));
    assert_eq!(stored.docs.len(), 2);
    Ok(())
}
