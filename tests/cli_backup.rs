//! `simhash-store backup`: the copy opens, verifies clean and answers every query as the
//! store does; an existing destination is refused, and so is a store that another process
//! holds for writing, with advice that names the service's backups.
#![cfg(feature = "cli")]

mod common;

use common::cli::{ok, run, Result};
use common::Rng;
use simhash_store::{Entry, Fingerprint, Store};

/// A store of 2,000 documents with keys, planted near 50 centres, at `path`; its fingerprints.
fn filled(path: &std::path::Path) -> Result<Vec<u64>> {
    let mut rng = Rng::new(11);
    let centres: Vec<u64> = (0..50).map(|_| rng.next_u64()).collect();
    let fps: Vec<u64> = (0..2_000)
        .map(|_| {
            let centre = centres[rng.below(50) as usize];
            let d = rng.below(6) as u32;
            rng.flip(centre, d)
        })
        .collect();
    let store = Store::open(path)?;
    store.insert_batch(
        fps.iter()
            .enumerate()
            .map(|(id, &fp)| Entry::new(id as u64, Fingerprint(fp)).with_key(format!("k{id}"))),
    )?;
    // Some documents only in the memtable, some removed: the backup has them as they are.
    store.flush()?;
    store.insert(5_000, Fingerprint(fps[0] ^ 1))?;
    store.remove(7)?;
    Ok(fps)
}

#[test]
fn a_backup_opens_verifies_and_answers_as_the_store() -> Result {
    let dir = tempfile::tempdir()?;
    let (src, dest) = (dir.path().join("store"), dir.path().join("backup"));
    let fps = filled(&src)?;
    let (src_s, dest_s) = (src.to_str().ok_or("path")?, dest.to_str().ok_or("path")?);

    let out = ok(&run(&["backup", "--store", src_s, dest_s])?);
    assert!(out.contains("backed up 2000 documents"), "{out}");
    ok(&run(&["verify", "--store", dest_s])?);

    let (store, copy) = (Store::open(&src)?, Store::open(&dest)?);
    assert_eq!(
        (copy.len(), copy.format_version()),
        (store.len(), store.format_version())
    );
    assert_eq!(copy.simhasher().config(), store.simhasher().config());
    let mut rng = Rng::new(12);
    for &fp in fps.iter().step_by(20) {
        let probe = Fingerprint(rng.flip(fp, 2));
        assert_eq!(copy.query(probe, 3)?, store.query(probe, 3)?);
    }
    for id in [0u64, 7, 1_999, 5_000] {
        assert_eq!(copy.document(id)?, store.document(id)?);
    }
    assert_eq!(copy.id_for_key("k1999")?, Some(1_999));
    drop((store, copy));

    // The command's own query reads the backup as the store's.
    let query = |s: &str| run(&["query", "--store", s, "--key", "k42", "--json"]);
    assert_eq!(ok(&query(dest_s)?), ok(&query(src_s)?));
    Ok(())
}

#[test]
fn an_existing_destination_is_refused() -> Result {
    let dir = tempfile::tempdir()?;
    let (src, dest) = (dir.path().join("store"), dir.path().join("backup"));
    filled(&src)?;
    std::fs::create_dir(&dest)?;
    std::fs::write(dest.join("notes.txt"), "mine")?;
    let out = run(&[
        "backup",
        "--store",
        src.to_str().ok_or("path")?,
        dest.to_str().ok_or("path")?,
    ])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("already exists"), "{stderr}");
    assert_eq!(std::fs::read_to_string(dest.join("notes.txt"))?, "mine");
    assert_eq!(std::fs::read_dir(&dest)?.count(), 1);
    Ok(())
}

#[test]
fn a_store_held_by_a_writer_is_refused_with_advice() -> Result {
    let dir = tempfile::tempdir()?;
    let (src, dest) = (dir.path().join("store"), dir.path().join("backup"));
    filled(&src)?;
    // This process holds the store for writing, as a `serve` would.
    let held = Store::open(&src)?;
    let out = run(&[
        "backup",
        "--store",
        src.to_str().ok_or("path")?,
        dest.to_str().ok_or("path")?,
    ])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("held by another process"), "{stderr}");
    assert!(stderr.contains("--backup-dir"), "{stderr}");
    assert!(!dest.exists());
    drop(held);
    Ok(())
}
