//! A full disk gives a clear error; after space is freed the store reopens and nothing
//! acknowledged before the error is lost. Needs root to mount a small tmpfs; skipped (with a
//! message) otherwise.

mod common;

use std::process::Command;

use common::files::Tmpfs;

use simhash_store::{Durability, Entry, Error, Fingerprint, Result, Store};

#[test]
fn disk_full_then_recover() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(tmpfs) = Tmpfs::mount(dir.path(), "24m", "disk_full_then_recover") else {
        return Ok(());
    };
    let mnt = tmpfs.path().to_path_buf();
    let store_dir = mnt.join("store");
    let mut acked = 0u64;
    let err = {
        let store = Store::builder()
            .durability(Durability::Sync)
            .open(&store_dir)?;
        loop {
            let batch: Vec<Entry> = (acked..acked + 1000)
                .map(|id| {
                    Entry::new(id, Fingerprint(id.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
                        .with_key(format!("https://example.com/{id:0>200}"))
                })
                .collect();
            match store.insert_batch(batch) {
                Ok(()) => acked += 1000,
                Err(e) => break e,
            }
            assert!(acked < 10_000_000, "the disk never filled");
        }
    };
    let msg = err.to_string();
    assert!(matches!(err, Error::DiskFull { .. }), "{msg}");
    assert!(
        msg.to_lowercase().contains("space"),
        "the message should say the disk is full: {msg}"
    );
    assert!(acked > 0);

    // Free space: grow the tmpfs, as an operator would free or add disk.
    let remounted = Command::new("mount")
        .args(["-o", "remount,size=256m"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    assert!(remounted, "remount");
    let store = Store::open(&store_dir)?;
    let report = store.verify()?;
    assert!(report.is_clean(), "{report}");
    for id in (0..acked).step_by(97) {
        assert_eq!(
            store.get(id)?,
            Some(Fingerprint(id.wrapping_mul(0x9e37_79b9_7f4a_7c15))),
            "document {id} lost"
        );
    }
    assert!(store.len() >= acked);
    // and it takes writes again
    store.insert(u64::MAX, Fingerprint(1))?;
    Ok(())
}
