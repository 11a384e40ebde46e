//! Replays the committed fuzz corpora (`fuzz/corpus/<target>/`) through the fuzz targets'
//! own checks (`fuzz/src/lib.rs`, included here), on the stable toolchain and without
//! libFuzzer: every input the fuzzer kept for its coverage, and every input that once failed,
//! keeps passing. The `decode_values` corpus is replayed by a unit test in `src/codec.rs`
//! (its decoders are crate-private). See `fuzz/README.md` for running the fuzzers.
#![cfg(feature = "readers")]

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::path::Path;

#[path = "../fuzz/src/lib.rs"]
mod checks;

/// Runs `check` on every file of `fuzz/corpus/<target>`, naming the file that fails.
fn replay(target: &str, check: fn(&[u8])) {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    if !fuzz.join("Cargo.toml").exists() {
        // A packaged crate: the fuzz workspace is not in it.
        return;
    }
    let dir = fuzz.join("corpus").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus in {}", dir.display());
    for path in files {
        let data = std::fs::read(&path).unwrap();
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| check(&data))) {
            eprintln!("fuzz corpus input {} fails", path.display());
            resume_unwind(panic);
        }
    }
}

#[test]
fn fingerprint() {
    replay("fingerprint", checks::fingerprint);
}

#[test]
fn warc() {
    replay("warc", checks::warc);
}

#[test]
fn html() {
    replay("html", checks::html);
}

#[test]
fn jsonl() {
    replay("jsonl", checks::jsonl);
}

#[test]
fn store_model() {
    replay("store_model", checks::store_model);
}
