//! `kill -9` of a service on PostgreSQL while clients write through it: every write it
//! acknowledged is in the index, the index verifies clean, and a second service takes the
//! writes again; resending an acknowledged write by key keeps its id and adds no document.
//! Needs the test server: `scripts/postgres-test-server.sh start`.
#![cfg(all(feature = "server", feature = "postgres"))]

mod common;
mod server_support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use simhash_store::postgres::PgIndex;

use common::postgres::fresh_database;
use common::Rng;
use server_support::{try_request, Server};

#[test]
fn a_killed_service_loses_no_acknowledged_write() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let url = runtime.block_on(fresh_database("svc_kill"));
    let server = Server::start_postgres(&url, &[]);
    let addr = server.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let mut clients = Vec::new();
    for c in 0..6u64 {
        let stop = Arc::clone(&stop);
        clients.push(std::thread::spawn(move || {
            let mut rng = Rng::new(c);
            let mut acked = Vec::new();
            for i in 0.. {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let key = format!("c{c}-{i}");
                let fp = rng.next_u64();
                let body =
                    json!({"documents": [{"key": key, "fingerprint": format!("{fp:016x}")}]})
                        .to_string();
                match try_request(addr, "POST", "/v1/insert", Some(body.as_bytes()), None) {
                    Ok(r) if r.status == 200 => {
                        let id = r.json()["ids"][0].as_u64().expect("an id");
                        acked.push((key, id, fp));
                    }
                    _ => break,
                }
            }
            acked
        }));
    }
    std::thread::sleep(Duration::from_millis(1500));
    server.kill();
    stop.store(true, Ordering::Relaxed);
    let acked: Vec<(String, u64, u64)> = clients
        .into_iter()
        .flat_map(|c| c.join().expect("a client"))
        .collect();
    assert!(acked.len() > 20, "only {} writes acknowledged", acked.len());
    let count = runtime.block_on(async {
        let index = PgIndex::open(&url, None).await.expect("open");
        for (key, id, fp) in &acked {
            let doc = index
                .document(*id)
                .await
                .expect("read")
                .expect("an acknowledged document");
            assert_eq!(doc.fingerprint.0, *fp);
            assert_eq!(doc.key.as_deref(), Some(key.as_str()));
            assert_eq!(index.id_for_key(key).await.expect("key"), Some(*id));
        }
        let report = index.verify().await.expect("verify");
        assert!(report.is_ok(), "{:?}", report.problems);
        index.len().await.expect("len")
    });
    // Another service takes writes; an acknowledged write sent again replaces itself.
    let again = Server::start_postgres(&url, &[]);
    for (key, id, fp) in acked.iter().take(10) {
        let answer = again.post_ok(
            "/v1/insert",
            &json!({"documents": [{"key": key, "fingerprint": format!("{fp:016x}")}]}),
        );
        assert_eq!(answer["ids"][0], json!(id));
    }
    let stats = again.call("GET", "/v1/stats", None).json();
    assert_eq!(stats["documents"], json!(count));
}
