//! Replays the `server_request` fuzz corpus (`fuzz/corpus/server_request/`) through the
//! service's request decoding, on the stable toolchain: every input the fuzzer kept keeps
//! decoding without a panic.
#![cfg(feature = "server")]

#[path = "../src/server/api.rs"]
#[allow(dead_code)]
mod api;

#[test]
fn server_request_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/server_request");
    if !dir.exists() {
        return; // a packaged crate: the fuzz workspace is not in it
    }
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus") {
        let path = entry.expect("entry").path();
        let data = std::fs::read(&path).expect("read");
        api::check_all(&data);
        n += 1;
    }
    assert!(n > 0, "no corpus in {}", dir.display());
}
