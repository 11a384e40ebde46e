//! A full disk under `serve`: a write that finds no space gets 503 `disk_full` with
//! `Retry-After`, queries go on, and once space is freed writes resume by themselves (the
//! same process), with every acknowledged write kept.
//! Needs root to mount a small tmpfs; skipped (with a message) otherwise.

mod common;
mod server_support;

use std::time::{Duration, Instant};

use common::files::Tmpfs;
use serde_json::json;
use server_support::Server;
use simhash_store::Store;

fn fingerprint(id: u64) -> u64 {
    id.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn insert(server: &Server, first: u64, n: u64) -> server_support::Response {
    let docs: Vec<_> = (first..first + n)
        .map(|id| {
            json!({
                "id": id,
                "fingerprint": format!("{:016x}", fingerprint(id)),
                "key": format!("https://example.com/{id:0>300}"),
            })
        })
        .collect();
    server.call("POST", "/v1/insert", Some(&json!({ "documents": docs })))
}

/// Fills the file system at `dir` with a file, to the last byte it takes.
fn fill(dir: &std::path::Path) -> std::path::PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).expect("create the filler");
    let chunk = vec![0u8; 64 * 1024];
    while file.write_all(&chunk).is_ok() {}
    let small = [0u8; 512];
    while file.write_all(&small).is_ok() {}
    let _ = file.sync_all();
    path
}

#[test]
fn a_full_disk_refuses_writes_with_503_then_writes_resume_once_space_is_freed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(tmpfs) = Tmpfs::mount(dir.path(), "48m", "a_full_disk_refuses_writes") else {
        return;
    };
    let mnt = tmpfs.path().to_path_buf();
    let store_dir = mnt.join("store");
    let server = Server::start(&store_dir, &["--durability", "sync"]);

    // Some documents, then a disk with no byte left.
    let mut acked = 0u64;
    for _ in 0..5 {
        let r = insert(&server, acked, 100);
        assert_eq!(r.status, 200, "{}", r.text());
        acked += 100;
    }
    let filler = fill(&mnt);

    // Writes until one is refused for want of space (bounded).
    let refused = loop {
        let r = insert(&server, acked, 100);
        match r.status {
            200 => acked += 100,
            _ => break r,
        }
        assert!(acked < 200_000, "the disk never filled");
    };
    assert_eq!(refused.status, 503, "{}", refused.text());
    assert_eq!(refused.error_kind(), "disk_full", "{}", refused.text());
    assert!(
        refused.headers.to_lowercase().contains("retry-after:"),
        "{}",
        refused.headers
    );
    // The body reveals nothing of the server's files.
    assert!(!refused.text().contains("mnt"), "{}", refused.text());

    // Queries go on. (Writes may already succeed again here: closing the stopped RocksDB
    // instance gives back its write-ahead log's preallocated space.)
    for _ in 0..3 {
        let q = server.post_ok(
            "/v1/query",
            &json!({"fingerprints": [format!("{:016x}", fingerprint(acked - 1))], "k": 0}),
        );
        let ids: Vec<u64> = q["results"][0]
            .as_array()
            .expect("matches")
            .iter()
            .map(|m| m["id"].as_u64().expect("id"))
            .collect();
        assert_eq!(ids, [acked - 1]);
    }

    // Space freed: writes resume without a restart.
    std::fs::remove_file(filler).expect("free space");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = insert(&server, acked, 100);
        if r.status == 200 {
            acked += 100;
            break;
        }
        assert_eq!(r.error_kind(), "disk_full", "{}", r.text());
        assert!(
            Instant::now() < deadline,
            "writes did not resume within 60 s of space freed"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let r = insert(&server, acked, 100);
    assert_eq!(r.status, 200, "{}", r.text());
    acked += 100;

    // Every acknowledged write is there, after a clean stop too.
    let status = server.terminate();
    assert!(status.success(), "{status:?}");
    let store = Store::open(&store_dir).expect("open");
    assert!(store.verify().expect("verify").is_clean());
    for id in 0..acked {
        assert_eq!(
            store.get(id).expect("get").map(|f| f.0),
            Some(fingerprint(id)),
            "acknowledged document {id} is lost"
        );
    }
}
