//! `kill -9` of a server with `--durability sync` in the middle of a stream of inserts from
//! two clients: after a restart every acknowledged document is there. 200 rounds here; 1,000
//! in the ignored test. Also: SIGTERM finishes what is in flight and loses nothing
//! acknowledged.
#![cfg(feature = "server")]

mod common;
mod server_support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use common::Rng;
use serde_json::json;
use server_support::Server;
use simhash_store::{Fingerprint, Store};

/// Streams inserts from two clients until `stop`; returns the acknowledged (id, fp).
fn stream_inserts(addr: std::net::SocketAddr, seed: u64, stop: &AtomicBool) -> Vec<(u64, u64)> {
    let acknowledged = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for client in 0..2u64 {
            let acknowledged = &acknowledged;
            s.spawn(move || {
                let mut rng = Rng::new(seed * 7 + client);
                let mut next = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    let n = 1 + rng.below(5);
                    let docs: Vec<(u64, u64)> = (0..n)
                        .map(|_| {
                            next += 1;
                            (seed << 32 | client << 24 | next, rng.next_u64())
                        })
                        .collect();
                    let body = json!({"documents": docs.iter().map(|&(id, fp)| json!({"id": id, "fingerprint": fp})).collect::<Vec<_>>()}).to_string();
                    // A connection the killed server drops is not an acknowledgement.
                    let Ok(r) =
                        server_support::try_request(addr, "POST", "/v1/insert", Some(body.as_bytes()), None)
                    else {
                        break;
                    };
                    if r.status != 200 {
                        break;
                    }
                    let ids: Vec<u64> = r.json()["ids"].as_array().expect("ids").iter().filter_map(|v| v.as_u64()).collect();
                    assert_eq!(ids, docs.iter().map(|d| d.0).collect::<Vec<_>>());
                    acknowledged.lock().expect("lock").extend(docs);
                }
            });
        }
    });
    acknowledged.into_inner().expect("lock")
}

fn kill_rounds(rounds: u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut all = Vec::new();
    let mut rng = Rng::new(3);
    for round in 1..=rounds {
        let server = Server::start(dir.path(), &["--durability", "sync"]);
        let stop = AtomicBool::new(false);
        let wait = Duration::from_millis(5 + rng.below(40));
        let acked = std::thread::scope(|s| {
            let streaming = s.spawn(|| stream_inserts(server.addr, round, &stop));
            std::thread::sleep(wait);
            // Kill first, then tell the clients to stop: their last requests meet a dead server.
            let pid = server.child.id();
            let killed = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status()
                .expect("kill -9");
            assert!(killed.success());
            stop.store(true, Ordering::SeqCst);
            streaming.join().expect("clients")
        });
        drop(server);
        all.extend(acked);
        let store = Store::open(dir.path()).expect("reopen after kill -9");
        for &(id, fp) in &all {
            assert_eq!(
                store.get(id).expect("get"),
                Some(Fingerprint(fp)),
                "round {round}: acknowledged document {id} lost"
            );
        }
    }
    assert!(!all.is_empty(), "no insert was ever acknowledged");
}

#[test]
fn kill_9_loses_nothing_acknowledged_200_rounds() {
    kill_rounds(200);
}

#[test]
#[ignore = "1,000 rounds take several minutes: cargo test --release --test server_kill -- --ignored"]
fn kill_9_loses_nothing_acknowledged_1000_rounds() {
    kill_rounds(1000);
}

#[test]
fn sigterm_finishes_in_flight_writes_and_exits_0() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--durability", "buffered"]);
    let addr = server.addr;
    let stop = AtomicBool::new(false);
    let acked = std::thread::scope(|s| {
        let streaming = s.spawn(|| stream_inserts(addr, 9, &stop));
        std::thread::sleep(Duration::from_millis(300));
        let status = server.terminate();
        assert!(status.success(), "exit status after SIGTERM: {status:?}");
        stop.store(true, Ordering::SeqCst);
        streaming.join().expect("clients")
    });
    assert!(!acked.is_empty());
    let store = Store::open(dir.path()).expect("reopen");
    for &(id, fp) in &acked {
        assert_eq!(
            store.get(id).expect("get"),
            Some(Fingerprint(fp)),
            "acknowledged document {id} lost"
        );
    }
}
