//! Two writers creating one new store at the same moment: one creates it, and the other opens
//! the finished store or is told that the store is in use, never that the directory is not a
//! store. RocksDB makes a database in steps (its log and lock files, then `CURRENT`, then each
//! column family), and the store records its format last: the lock alone decides.

mod common;

use std::sync::{Arc, Barrier};

use simhash_store::{Error, Result, Store};

/// Tries of each race.
const TRIES: usize = 20;

#[test]
fn two_threads_creating_one_store() -> Result<()> {
    let mut locked = 0;
    for _ in 0..TRIES {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("store");
        let barrier = Arc::new(Barrier::new(2));
        let opens: Vec<_> = (0..2)
            .map(|_| {
                let (barrier, path) = (Arc::clone(&barrier), path.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    // Held until both have tried, so that the loser cannot open it after.
                    let store = Store::open(&path);
                    barrier.wait();
                    store.map(|_| ())
                })
            })
            .collect();
        let results: Vec<Result<()>> = opens
            .into_iter()
            .map(|t| t.join().expect("thread"))
            .collect();
        assert_eq!(
            results.iter().filter(|r| r.is_ok()).count(),
            1,
            "{results:?}"
        );
        for result in results {
            match result {
                Ok(()) => {}
                Err(Error::Locked {
                    path: locked_path, ..
                }) => {
                    assert_eq!(locked_path, path);
                    locked += 1;
                }
                Err(other) => panic!("the loser of a creation race got: {other}"),
            }
        }
        // The store the winner made is whole.
        assert!(Store::open(&path)?.verify()?.is_clean());
    }
    assert_eq!(locked, TRIES);
    Ok(())
}

#[cfg(feature = "cli")]
#[test]
fn two_loads_creating_one_store() -> common::cli::Result {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("pages.jsonl");
    let lines: Vec<String> = (0..2000)
        .map(|i| {
            format!(
                "{{\"id\": {i}, \"text\": \"page {i} about rivers and bridges of the north, \
                 number {}\"}}",
                i * 7
            )
        })
        .collect();
    std::fs::write(&input, lines.join("\n"))?;
    for attempt in 0..TRIES / 2 {
        let store = dir.path().join(format!("store{attempt}"));
        let load = || {
            Command::new(env!("CARGO_BIN_EXE_simhash-store"))
                .arg("load")
                .arg(&input)
                .arg("--store")
                .arg(&store)
                .arg("--quiet")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
        };
        let (first, second) = (load()?, load()?);
        for out in [first.wait_with_output()?, second.wait_with_output()?] {
            let err = String::from_utf8_lossy(&out.stderr);
            // Both may succeed: the second opened the store after the first had finished.
            assert!(
                out.status.success() || err.contains("is in use by another process"),
                "{err}"
            );
            assert!(!err.contains("not a simhash-store store"), "{err}");
        }
        let store = Store::open(&store)?;
        assert_eq!(store.len(), 2000);
        assert!(store.verify()?.is_clean());
    }
    Ok(())
}
