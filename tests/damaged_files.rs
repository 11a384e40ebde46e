//! A damaged CURRENT, MANIFEST or SST file gives `Error::Corruption` naming the problem, never
//! a panic.

use std::fs;
use std::path::{Path, PathBuf};

use simhash_store::{Entry, Error, Fingerprint, Result, Store};

fn make_store(dir: &Path) -> Result<()> {
    let store = Store::open(dir)?;
    store.insert_batch((0..5000u64).map(|i| {
        Entry::new(i, Fingerprint(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))).with_key(format!("k{i}"))
    }))?;
    store.flush()?;
    Ok(())
}

fn files_named(dir: &Path, f: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .expect("read dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&f))
        .collect();
    v.sort();
    v
}

#[test]
fn damaged_current() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    make_store(dir.path())?;
    fs::write(dir.path().join("CURRENT"), b"garbage-without-newline").expect("write");
    let err = Store::open(dir.path()).unwrap_err();
    assert!(
        matches!(err, Error::Corruption { .. } | Error::RocksDb { .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("CURRENT") || err.to_string().contains("garbage"),
        "{err}"
    );
    Ok(())
}

#[test]
fn damaged_manifest() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    make_store(dir.path())?;
    let manifest = files_named(dir.path(), |n| n.starts_with("MANIFEST-"))
        .pop()
        .expect("a MANIFEST");
    let mut bytes = fs::read(&manifest).expect("read");
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..] {
        *b ^= 0x5a;
    }
    fs::write(&manifest, bytes).expect("write");
    let err = Store::open(dir.path()).unwrap_err();
    assert!(matches!(err, Error::Corruption { .. }), "{err}");
    Ok(())
}

#[test]
fn damaged_sst_is_reported_on_read() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    make_store(dir.path())?;
    // Damage every SST's data (the first blocks) but leave its footer intact.
    for sst in files_named(dir.path(), |n| n.ends_with(".sst")) {
        let mut bytes = fs::read(&sst).expect("read");
        let end = bytes.len().saturating_sub(4096).min(2048);
        for b in &mut bytes[16..end.max(16)] {
            *b ^= 0xff;
        }
        fs::write(&sst, bytes).expect("write");
    }
    // Either opening or reading finds it; both must be a Corruption error naming an .sst file.
    let outcome = Store::open(dir.path()).and_then(|store| {
        store.verify()?;
        store.query(Fingerprint(0), 3)?;
        Ok(())
    });
    let err = outcome.unwrap_err();
    assert!(matches!(err, Error::Corruption { .. }), "{err}");
    assert!(err.to_string().contains(".sst"), "{err}");
    Ok(())
}
