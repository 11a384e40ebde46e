//! Backups through the service (`serve --backup-dir`, `POST /v1/backup`): a backup taken
//! while four clients write verifies clean, holds every write acknowledged before the
//! request, and serves; a name is one path component (400), a taken name is 409, and a
//! server without `--backup-dir` refuses (403).
#![cfg(feature = "server")]

mod server_support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use serde_json::json;
use server_support::Server;
use simhash_store::{Fingerprint, Store};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

const CLIENTS: u64 = 4;

fn fp(id: u64) -> u64 {
    id.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (id >> 3)
}

#[test]
fn a_backup_under_four_writing_clients_holds_every_acknowledged_write() -> Result {
    let dir = tempfile::tempdir()?;
    let (store, backups) = (dir.path().join("store"), dir.path().join("backups"));
    let server = Server::start(&store, &["--backup-dir", backups.to_str().ok_or("path")?]);
    let addr = server.addr;
    let acked = Mutex::new(Vec::<u64>::new());
    let stop = AtomicBool::new(false);
    let count = || acked.lock().map(|a| a.len()).unwrap_or(0);
    let wait_for = |n: usize| {
        while count() < n {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    };
    let (before, made) = std::thread::scope(|s| {
        for c in 0..CLIENTS {
            let (acked, stop) = (&acked, &stop);
            s.spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    let ids: Vec<u64> = (0..5).map(|j| c * 1_000_000 + i * 5 + j).collect();
                    let docs: Vec<_> = ids
                        .iter()
                        .map(|&id| json!({"id": id, "key": format!("k{id}"), "fingerprint": format!("{:016x}", fp(id))}))
                        .collect();
                    let body = json!({ "documents": docs }).to_string();
                    let r = server_support::request(addr, "POST", "/v1/insert", Some(body.as_bytes()), None);
                    assert_eq!(r.status, 200, "{}", r.text());
                    acked.lock().expect("lock").extend(ids);
                    i += 1;
                }
            });
        }
        wait_for(400);
        // Every write acknowledged before the request is sent.
        let before: Vec<u64> = acked.lock().expect("lock").clone();
        let made = server.post_ok("/v1/backup", &json!({"name": "during-writes"}));
        let after = count();
        // The writers went on after the backup.
        wait_for(after + 400);
        stop.store(true, Ordering::SeqCst);
        (before, made)
    });
    let path = made["path"].as_str().ok_or("no path")?.to_owned();
    let documents = made["documents"].as_u64().ok_or("no count")?;
    assert_eq!(made["name"], "during-writes");
    assert_eq!(
        std::path::Path::new(&path),
        backups.canonicalize()?.join("during-writes")
    );
    assert!(server.terminate().success());

    let copy = Store::open(&path)?;
    let report = copy.verify()?;
    assert!(report.is_clean(), "{report}");
    assert_eq!(copy.len(), documents);
    assert!(
        documents >= before.len() as u64,
        "{documents} < {}",
        before.len()
    );
    for &id in &before {
        assert_eq!(copy.get(id)?, Some(Fingerprint(fp(id))), "id {id}");
        assert_eq!(copy.id_for_key(&format!("k{id}"))?, Some(id));
    }
    let total = acked.lock().map_err(|_| "lock")?.len() as u64;
    assert_eq!(Store::open(&store)?.len(), total);
    assert!(
        documents < total,
        "writes after the backup are the store's alone"
    );
    drop(copy);

    // The backup serves.
    let served = Server::start(std::path::Path::new(&path), &[]);
    let stats = served.call("GET", "/v1/stats", None).json();
    assert_eq!(stats["documents"], documents);
    let r = served.call("GET", &format!("/v1/documents/{}", before[0]), None);
    assert_eq!(r.status, 200, "{}", r.text());
    Ok(())
}

#[test]
fn names_are_one_path_component_and_never_reused() -> Result {
    let dir = tempfile::tempdir()?;
    let (store, backups) = (dir.path().join("store"), dir.path().join("backups"));
    let server = Server::start(&store, &["--backup-dir", backups.to_str().ok_or("path")?]);
    server.post_ok(
        "/v1/insert",
        &json!({"documents": [{"id": 1, "fingerprint": "ff"}]}),
    );
    let long = "x".repeat(256);
    for bad in [
        json!({"name": ""}),
        json!({"name": "."}),
        json!({"name": ".."}),
        json!({"name": "../escape"}),
        json!({"name": "a/b"}),
        json!({"name": "/tmp/abs"}),
        json!({"name": "a\u{0}b"}),
        json!({"name": long}),
        json!({"name": 7}),
        json!({"nom": "x"}),
        json!({}),
    ] {
        let r = server.call("POST", "/v1/backup", Some(&bad));
        assert_eq!(
            (r.status, r.error_kind().as_str()),
            (400, "bad_request"),
            "{bad}: {}",
            r.text()
        );
    }
    assert_eq!(std::fs::read_dir(&backups)?.count(), 0);
    assert!(!dir.path().join("escape").exists());

    let made = server.post_ok("/v1/backup", &json!({"name": "first"}));
    assert_eq!(made["documents"], 1);
    let again = server.call("POST", "/v1/backup", Some(&json!({"name": "first"})));
    assert_eq!(
        (again.status, again.error_kind().as_str()),
        (409, "backup_exists"),
        "{}",
        again.text()
    );
    assert_eq!(std::fs::read_dir(&backups)?.count(), 1);
    drop(server);

    let without = Server::start(&store, &[]);
    let r = without.call("POST", "/v1/backup", Some(&json!({"name": "x"})));
    assert_eq!(
        (r.status, r.error_kind().as_str()),
        (403, "backups_off"),
        "{}",
        r.text()
    );
    Ok(())
}
