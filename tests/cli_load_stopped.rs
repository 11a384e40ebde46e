//! A `load` that stops before its end says what the store holds and how to complete the
//! load: on Ctrl-C (a real SIGINT to the process) and on a full disk (a small tmpfs; needs
//! root to mount it, skipped with a message otherwise). The store then opens verify-clean
//! with what the message says.
#![cfg(all(feature = "cli", target_os = "linux"))]

mod common;

use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::cli::{ok, run, Result};
use common::files::Tmpfs;
use simhash_store::Store;

/// JSON Lines of `n` documents with keys, ids from `first`.
fn pages(first: u64, n: u64) -> String {
    (first..first + n)
        .map(|i| {
            format!(
                "{{\"id\": {i}, \"key\": \"https://example.com/{i}\", \"text\": \"page {i} about \
                 rivers and bridges of the north, number {}\"}}\n",
                i * 7
            )
        })
        .collect()
}

/// Loads three documents into a new store at `store`.
fn three_documents(store: &Path, dir: &Path) -> Result {
    let input = dir.join("three.jsonl");
    std::fs::write(&input, pages(0, 3))?;
    ok(&run(&[
        "load",
        input.to_str().ok_or("path")?,
        "--store",
        store.to_str().ok_or("path")?,
        "-q",
    ])?);
    Ok(())
}

/// Whether process `pid` holds a POSIX lock on the file with inode `inode` (`/proc/locks`).
fn holds_lock(pid: u32, inode: u64) -> Result<bool> {
    let locks = std::fs::read_to_string("/proc/locks")?;
    Ok(locks.lines().any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // `1: POSIX  ADVISORY  WRITE 1234 fd:01:5678 0 EOF`
        fields.get(4) == Some(&pid.to_string().as_str())
            && fields
                .get(5)
                .and_then(|dev_inode| dev_inode.rsplit(':').next())
                .is_some_and(|i| i == inode.to_string())
    }))
}

#[test]
fn ctrl_c_says_the_store_is_unchanged() -> Result {
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    three_documents(&store, dir.path())?;
    let lock_inode = std::fs::metadata(store.join("LOCK"))?.ino();
    let mut child = Command::new(env!("CARGO_BIN_EXE_simhash-store"))
        .args(["load", "-", "--format", "jsonl", "--store"])
        .arg(&store)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    // More than a batch of records, and standard input left open: the load waits for more.
    let mut stdin = child.stdin.take().ok_or("stdin")?;
    stdin.write_all(pages(100, 600).as_bytes())?;
    stdin.flush()?;
    let started = Instant::now();
    while !holds_lock(child.id(), lock_inode)? {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the load never opened the store"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The store is open; give the load a moment to take its document count.
    std::thread::sleep(Duration::from_millis(500));
    let pid = i32::try_from(child.id())?;
    // SAFETY: sends a signal to the child this test started and has not waited for.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = child.wait()?;
    drop(stdin);
    let mut err = String::new();
    child
        .stderr
        .take()
        .ok_or("stderr")?
        .read_to_string(&mut err)?;
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        err.contains(&format!(
            "interrupted: the store at {} is unchanged: it holds the 3 documents it held before this load",
            store.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("Run the same load again to complete it") && err.contains("replaces"),
        "{err}"
    );
    let store = Store::open(&store)?;
    assert_eq!(store.len(), 3);
    assert!(store.verify()?.is_clean());
    Ok(())
}

#[test]
fn a_full_disk_says_what_the_store_holds() -> Result {
    let dir = tempfile::tempdir()?;
    let Some(tmpfs) = Tmpfs::mount(dir.path(), "4m", "a_full_disk_says_what_the_store_holds")
    else {
        return Ok(());
    };
    let mnt = tmpfs.path().to_path_buf();
    let store = mnt.join("store");
    three_documents(&store, dir.path())?;
    // 200,000 fingerprints with keys: far more than 4 MiB of SST files.
    let input = dir.path().join("many.jsonl");
    let lines: String = (100..200_100u64)
        .map(|i| {
            format!(
                "{{\"id\": {i}, \"key\": \"https://example.com/{i:0>40}\", \"fingerprint\": \"{:016x}\"}}\n",
                i.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            )
        })
        .collect();
    std::fs::write(&input, lines)?;
    let out = run(&[
        "load",
        input.to_str().ok_or("path")?,
        "--store",
        store.to_str().ok_or("path")?,
        "-q",
    ])?;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left"), "{err}");
    assert!(
        err.contains(&format!(
            "the store at {} is unchanged: it holds the 3 documents it held before this load",
            store.display()
        )),
        "{err}"
    );
    assert!(err.contains("Run the same load again"), "{err}");
    let store = Store::open(&store)?;
    assert_eq!(store.len(), 3);
    assert!(store.verify()?.is_clean());
    Ok(())
}
