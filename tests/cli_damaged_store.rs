//! The command on a store with a damaged table file: `query` fails naming the file (never an
//! empty answer with exit code 0), `verify` names it and exits 3, and `export --salvage`
//! followed by `load` rebuilds a store holding every document.

#![cfg(feature = "cli")]

mod common;

use std::fs;
use std::path::Path;

use common::cli::{ok, run, Result};
use common::files::copy_dir;
use common::Rng;

const DOCS: u64 = 2000;

fn sst_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .expect("list")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    v.sort();
    v
}

/// `export`'s document lines, without the header.
fn exported(store: &str) -> Result<Vec<String>> {
    let out = run(&["export", "--store", store])?;
    let text = ok(&out);
    Ok(text.lines().skip(1).map(str::to_owned).collect())
}

#[test]
fn a_damaged_file_is_named_and_the_store_rebuilt_from_a_salvage() -> Result {
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("docs.jsonl");
    let mut rng = Rng::new(7);
    let fingerprints: Vec<u64> = (0..DOCS).map(|_| rng.next_u64()).collect();
    let lines: Vec<String> = fingerprints
        .iter()
        .enumerate()
        .map(|(i, fp)| {
            format!(
                r#"{{"id": {i}, "key": "https://example.com/{i}", "fingerprint": "{fp:016x}"}}"#
            )
        })
        .collect();
    fs::write(&input, lines.join("\n") + "\n")?;
    let original = dir.path().join("d.db");
    let original_s = original.to_str().ok_or("path")?;
    ok(&run(&[
        "load",
        input.to_str().ok_or("path")?,
        "--store",
        original_s,
    ])?);
    let reference = exported(original_s)?;
    assert_eq!(reference.len() as u64, DOCS);

    let ssts = sst_files(&original);
    assert!(ssts.len() >= 4, "{ssts:?}");
    let (mut refused, mut rebuilt_stores, mut named) = (0, 0, 0);
    for (n, sst) in ssts.iter().enumerate() {
        let copy = dir.path().join(format!("damaged-{n}.db"));
        copy_dir(&original, &copy);
        let path = copy.join(sst);
        let mut bytes = fs::read(&path)?;
        let at = bytes.len() - 5;
        bytes[at] ^= 0xff;
        fs::write(&path, bytes)?;
        let copy_s = copy.to_str().ok_or("path")?;

        // A stored document's own fingerprint: its match, or an error naming the file.
        let fp = format!("{:016x}", fingerprints[n * 7 % fingerprints.len()]);
        let out = run(&["query", "--store", copy_s, "--fingerprint", &fp])?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(stdout.contains(&fp), "{sst}: {stdout}");
        } else {
            assert!(stderr.contains(sst.as_str()), "{sst}: {stderr}");
            assert!(stderr.contains("export --salvage"), "{stderr}");
            refused += 1;
        }

        // verify: the file named, exit code 3.
        let out = run(&["verify", "--store", copy_s])?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{sst}: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains(sst.as_str()), "{sst}: {stdout}");

        // The documented rebuild: every document back (the metadata's file excepted: without
        // it there is no store to salvage, and salvage says so).
        let salvaged = dir.path().join(format!("salvaged-{n}.jsonl"));
        let salvaged_s = salvaged.to_str().ok_or("path")?;
        let out = run(&[
            "export",
            "--salvage",
            "--store",
            copy_s,
            "--output",
            salvaged_s,
        ])?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            assert!(stderr.contains("cannot salvage"), "{sst}: {stderr}");
            continue;
        }
        // A damaged file that salvage needed is named (the documents family's: then its
        // records are rebuilt from the block indexes).
        if stderr.contains(sst.as_str()) {
            named += 1;
            assert!(!stderr.contains(" 0 rebuilt"), "{sst}: {stderr}");
        }
        let rebuilt = dir.path().join(format!("rebuilt-{n}.db"));
        let rebuilt_s = rebuilt.to_str().ok_or("path")?;
        ok(&run(&["load", salvaged_s, "--store", rebuilt_s])?);
        let rebuilt_docs = exported(rebuilt_s)?;
        let strip = |lines: &[String]| -> Vec<(u64, String, String)> {
            lines
                .iter()
                .map(|l| {
                    let v: serde_json::Value = serde_json::from_str(l).expect("json");
                    (
                        v["id"].as_u64().expect("id"),
                        v["fingerprint"].as_str().expect("fp").to_owned(),
                        v["key"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        };
        assert_eq!(
            strip(&rebuilt_docs),
            strip(&reference),
            "{sst}: rebuilt store"
        );
        ok(&run(&["verify", "--store", rebuilt_s])?);
        rebuilt_stores += 1;
    }
    // A damaged footer is refused on open, whichever family's file it is; only the metadata
    // family's file cannot be salvaged.
    assert_eq!(refused, ssts.len(), "queries refused");
    assert!(
        rebuilt_stores + 1 >= ssts.len(),
        "{rebuilt_stores} of {} rebuilt",
        ssts.len()
    );
    assert!(named >= 1, "no salvage needed a damaged file");
    Ok(())
}
