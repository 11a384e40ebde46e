//! `Store::upgrade` and `simhash-store upgrade`: a store of every format this build reads
//! (the fixtures of formats 1 to 6), a store that keeps sketches and a store written in
//! several runs become stores of `FORMAT_VERSION` that hold the same documents (ids, keys,
//! fingerprints, text lengths, sketches, `added` times), record the same settings, answer
//! every query the same and verify clean; the old store is left as it was; a destination
//! that is not empty is refused.

use std::path::{Path, PathBuf};

use rocksdb::{Options, DB};
use simhash_store::sketch::SketchKind;
use simhash_store::upgrade::{UpgradeOptions, UpgradeSummary, FORMAT_VERSION, MIN_FORMAT_VERSION};
use simhash_store::verified::Verification;
use simhash_store::{
    BulkOptions, Document, Entry, Error, Fingerprint, Result, SimhashConfig, Store,
};

mod common;
use common::families::{ALL_FAMILIES, DOCS_FAMILY, META_FAMILY};
use common::Rng;

fn fixture(version: u32) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/format-v{version}"))
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        std::fs::copy(entry.path(), to.join(entry.file_name()))?;
    }
    Ok(())
}

/// The `format_version` and `simhasher` records of the store at `path`, read with RocksDB
/// alone.
fn raw_records(path: &Path) -> (Vec<u8>, Vec<u8>) {
    let db = DB::open_cf_for_read_only(&Options::default(), path, ALL_FAMILIES, false)
        .expect("raw open");
    let meta = db.cf_handle(META_FAMILY).expect("meta family");
    let get = |key: &[u8]| db.get_cf(meta, key).expect("read").expect("record");
    (get(b"format_version"), get(b"simhasher"))
}

/// What a store holds and answers: its settings, every document, and the answers of
/// `query` at k = 0, 3 and 6 (and, in a store that keeps sketches, of `query_verified` at
/// two verifications) for every stored fingerprint.
#[derive(Debug, PartialEq)]
struct Contents {
    config: SimhashConfig,
    len: u64,
    documents: Vec<(u64, Document)>,
    answers: Vec<Vec<simhash_store::Match>>,
    verified: Vec<Vec<simhash_store::VerifiedMatch>>,
}

fn contents(path: &Path) -> Result<Contents> {
    let store = Store::open(path)?;
    let documents = store.documents()?.collect::<Result<Vec<_>>>()?;
    let mut answers = Vec::new();
    let mut verified = Vec::new();
    for (_, doc) in &documents {
        for k in [0, 3, 6] {
            answers.push(store.query(doc.fingerprint, k)?);
        }
        if let Some(sketch) = &doc.sketch {
            for verification in [Verification::default(), Verification::new(6, 0.5)?] {
                verified.push(store.query_verified(doc.fingerprint, sketch, verification)?);
            }
        }
    }
    Ok(Contents {
        config: store.simhasher().config().clone(),
        len: store.len(),
        documents,
        answers,
        verified,
    })
}

/// Upgrades `old` into `new` and checks everything the upgrade promises.
fn upgrade_and_check(old: &Path, new: &Path, options: &UpgradeOptions) -> Result<UpgradeSummary> {
    let records = raw_records(old);
    let before = contents(old)?;
    let summary = Store::upgrade(old, new, options)?;

    assert_eq!(summary.documents, before.len);
    assert_eq!(summary.to_format, FORMAT_VERSION);
    assert_eq!(
        summary.from_format.to_be_bytes().as_slice(),
        records.0.as_slice()
    );
    assert_eq!(raw_records(new).0, FORMAT_VERSION.to_be_bytes());
    // The old store is left as it was, records included.
    assert_eq!(raw_records(old), records);
    assert_eq!(contents(old)?, before);

    let after = contents(new)?;
    assert_eq!(after.config, before.config);
    assert_eq!(after.len, before.len);
    assert_eq!(after.documents, before.documents);
    assert_eq!(after.answers, before.answers);
    assert_eq!(after.verified, before.verified);
    let store = Store::open(new)?;
    assert_eq!(store.format_version(), FORMAT_VERSION);
    let report = store.verify()?;
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.documents, before.len);
    Ok(summary)
}

#[test]
fn every_fixture_format_upgrades_to_the_newest() -> Result<()> {
    for version in MIN_FORMAT_VERSION..=FORMAT_VERSION {
        if version == FORMAT_VERSION && !fixture(version).exists() {
            // The newest format's fixture is written when it is released
            // (`tests/fixtures/README.md`); its stores are made by the other tests here.
            continue;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let old = dir.path().join("old");
        copy_dir(&fixture(version), &old).expect("copy the fixture");
        let summary = upgrade_and_check(&old, &dir.path().join("new"), &UpgradeOptions::new())?;
        assert_eq!(summary.from_format, version);
        assert_eq!((summary.documents, summary.keys), (40, 40));
    }
    Ok(())
}

fn page(i: u64) -> String {
    let words = [
        "harbour", "ferry", "storm", "port", "library", "concert", "reading", "room", "market",
        "bridge", "river", "train", "station", "museum", "garden", "festival",
    ];
    (0..80)
        .map(|j| words[((i * 7 + j * j * 3 + j) % words.len() as u64) as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn sketches_and_added_times_are_kept() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let old = dir.path().join("old");
    {
        let config = SimhashConfig::default().with_sketch(SketchKind::MinHash);
        // Each write a microsecond after the one before: the replaced documents' `added`
        // times differ from their neighbours'.
        let tick = std::sync::atomic::AtomicU64::new(1_000_000);
        let store = Store::builder()
            .simhash_config(config)
            .clock(move || tick.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
            .open(&old)?;
        for i in 0..150u64 {
            let key = format!("https://example.com/{i}");
            store.insert_text(i, Some(&key), &page(i))?;
        }
        // Near-copies, a document without a sketch, and replaced documents (whose `added`
        // times differ from their neighbours').
        for i in 0..20u64 {
            store.insert_text(1000 + i, None, &format!("{} share this page", page(i)))?;
        }
        store.insert_entry(Entry::new(2000, Fingerprint(0x0123_4567_89ab_cdef)))?;
        for i in 0..10u64 {
            store.insert_text(i, None, &page(i + 500))?;
        }
        let mut loader = store.bulk_loader()?;
        for i in 3000..3100u64 {
            loader.add_text(i, Some(&format!("bulk/{i}")), &page(i))?;
        }
        loader.finish()?;
    }
    let summary = upgrade_and_check(&old, &dir.path().join("new"), &UpgradeOptions::new())?;
    assert_eq!(summary.documents, 271);
    assert_eq!(summary.sketches, 270);
    assert_eq!(summary.from_format, FORMAT_VERSION);

    let new = Store::open(dir.path().join("new"))?;
    assert!(new.keeps_sketches());
    let copy = format!("{} share this page", page(40));
    let (fp, sketch) = new.simhasher().fingerprint_and_sketch(&copy)?;
    let sketch = sketch.ok_or(Error::NoFeatures)?;
    let found = new.query_verified(fp, &sketch, Verification::default())?;
    assert!(found.iter().any(|m| m.id == 40), "{found:?}");
    Ok(())
}

#[test]
fn a_store_of_several_runs_keeps_every_document() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let old = dir.path().join("old");
    let mut rng = Rng::new(11);
    {
        let store = Store::open(&old)?;
        let entries: Vec<Entry> = (0..20_000u64)
            .map(|id| {
                let mut e = Entry::new(id * 3, Fingerprint(rng.next_u64()));
                if id % 2 == 0 {
                    e = e.with_key(format!("doc/{id}"));
                }
                if id % 5 == 0 {
                    e = e.with_text_len(id * 10);
                }
                e
            })
            .collect();
        for chunk in entries.chunks(5000) {
            store.insert_batch(chunk.iter().cloned())?;
        }
        let mut loader = store.bulk_loader_with(BulkOptions::new())?;
        for id in 0..2000u64 {
            loader.add(100_000 + id, Fingerprint(rng.next_u64()))?;
        }
        loader.finish()?;
    }
    let options = UpgradeOptions::new().memory_budget(/* 256 KiB */ 256 << 10);
    let summary = upgrade_and_check(&old, &dir.path().join("new"), &options)?;
    assert_eq!((summary.documents, summary.keys), (22_000, 10_000));
    assert!(summary.runs > 1, "{summary}");
    Ok(())
}

#[test]
fn a_destination_that_is_not_empty_is_refused() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let old = dir.path().join("old");
    copy_dir(&fixture(FORMAT_VERSION), &old).expect("copy the fixture");
    let records = raw_records(&old);
    let new = dir.path().join("new");
    std::fs::create_dir(&new).expect("mkdir");
    std::fs::write(new.join("notes.txt"), "mine").expect("write");

    let refused = Store::upgrade(&old, &new, &UpgradeOptions::new());
    assert!(
        matches!(&refused, Err(Error::UnusableDestination { reason, .. }) if reason == "is not empty"),
        "{refused:?}"
    );
    // Nothing was written on either side.
    let names: Vec<_> = std::fs::read_dir(&new)
        .expect("read dir")
        .map(|e| e.map(|e| e.file_name()))
        .collect::<std::io::Result<_>>()
        .expect("entries");
    assert_eq!(names, ["notes.txt"]);
    assert_eq!(raw_records(&old), records);

    // The same store into the store itself, and an empty directory that exists.
    let itself = Store::upgrade(&old, &old, &UpgradeOptions::new());
    assert!(
        matches!(itself, Err(Error::UnusableDestination { .. })),
        "{itself:?}"
    );
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    assert_eq!(
        upgrade_and_check(&old, &empty, &UpgradeOptions::new())?.documents,
        40
    );
    Ok(())
}

/// Puts `value` under `key` in family `family` of the store at `path`, with RocksDB alone.
fn raw_put(path: &Path, family: &str, key: &[u8], value: &[u8]) {
    let db = DB::open_cf(&Options::default(), path, ALL_FAMILIES).expect("raw open");
    let cf = db.cf_handle(family).expect("family");
    db.put_cf(cf, key, value).expect("put");
    db.flush_cf(cf).expect("flush");
}

fn raw_get(path: &Path, family: &str, key: &[u8]) -> Vec<u8> {
    let db = DB::open_cf_for_read_only(&Options::default(), path, ALL_FAMILIES, false)
        .expect("raw open");
    let cf = db.cf_handle(family).expect("family");
    db.get_cf(cf, key).expect("read").expect("value")
}

#[test]
fn a_damaged_store_is_not_upgraded_and_nothing_is_left_behind() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let new = dir.path().join("new");

    // A document record that does not decode.
    let damaged = dir.path().join("damaged");
    copy_dir(&fixture(4), &damaged).expect("copy the fixture");
    raw_put(&damaged, DOCS_FAMILY, &5u64.to_be_bytes(), &[0xff]);
    let refused = Store::upgrade(&damaged, &new, &UpgradeOptions::new());
    assert!(matches!(refused, Err(Error::Decode { .. })), "{refused:?}");
    assert!(!new.exists());

    // Two documents that claim one external key: the copy would keep one of them.
    let doubled = dir.path().join("doubled");
    copy_dir(&fixture(4), &doubled).expect("copy the fixture");
    let first = raw_get(&doubled, DOCS_FAMILY, &0u64.to_be_bytes());
    raw_put(&doubled, DOCS_FAMILY, &1u64.to_be_bytes(), &first);
    let records = raw_records(&doubled);
    std::fs::create_dir(&new).expect("mkdir");
    let refused = Store::upgrade(&doubled, &new, &UpgradeOptions::new());
    assert!(
        matches!(&refused, Err(Error::Corruption { path, .. }) if *path == doubled),
        "{refused:?}"
    );
    // The empty directory it was given is left empty, the old store as it was.
    assert!(new.exists());
    assert_eq!(std::fs::read_dir(&new).expect("read dir").count(), 0);
    assert_eq!(raw_records(&doubled), records);
    assert_eq!(Store::open(&doubled)?.len(), 40);
    Ok(())
}

#[cfg(feature = "cli")]
mod cli {
    use super::*;
    use common::cli::{ok, run};

    fn s(p: &Path) -> &str {
        p.to_str().expect("a UTF-8 path")
    }

    /// The documents `export` writes: its lines after the header, which names the store's
    /// format (and so differs between a store and its upgrade).
    fn export(store: &Path) -> common::cli::Result<String> {
        let out = ok(&run(&["export", "--store", s(store)])?);
        let header = out.lines().next().unwrap_or_default();
        assert!(header.contains("\"simhash_store_export\""), "{header}");
        Ok(out.lines().skip(1).map(|l| format!("{l}\n")).collect())
    }

    #[test]
    fn the_command_upgrades_into_a_new_directory_and_in_place() -> common::cli::Result {
        let dir = tempfile::tempdir()?;
        let old = dir.path().join("old");
        copy_dir(&fixture(3), &old)?;
        let exported = export(&old)?;
        assert_eq!(exported.lines().count(), 40);

        let new = dir.path().join("new");
        let out = ok(&run(&["upgrade", "-q", s(&old), s(&new)])?);
        assert!(
            out.contains(&format!("from format 3 to format {FORMAT_VERSION}")),
            "{out}"
        );
        assert_eq!(export(&new)?, exported);
        assert_eq!(raw_records(&new).0, FORMAT_VERSION.to_be_bytes());
        assert_eq!(raw_records(&old).0, 3u32.to_be_bytes());

        // Not into a directory that holds something.
        let refused = run(&["upgrade", "-q", s(&old), s(&new)])?;
        assert_eq!(refused.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&refused.stderr).contains("not empty"));

        // In place: the old store kept beside it, named by its format.
        let out = ok(&run(&["upgrade", "-q", "--in-place", s(&old)])?);
        let bak = dir.path().join("old.format-3.bak");
        assert!(out.contains(s(&bak)), "{out}");
        assert_eq!(raw_records(&old).0, FORMAT_VERSION.to_be_bytes());
        assert_eq!(raw_records(&bak).0, 3u32.to_be_bytes());
        assert_eq!(export(&old)?, exported);
        assert_eq!(export(&bak)?, exported);
        assert!(!dir.path().join("old.upgrading").exists());
        let again = ok(&run(&["upgrade", "-q", "--in-place", s(&old)])?);
        assert!(again.contains("nothing to do"), "{again}");

        // Stopped between the two renames: the command says how to finish.
        std::fs::rename(&old, dir.path().join("old.upgrading"))?;
        let stopped = run(&["upgrade", "-q", "--in-place", s(&old)])?;
        assert_eq!(stopped.status.code(), Some(1));
        let message = String::from_utf8_lossy(&stopped.stderr);
        assert!(
            message.contains("mv ") && message.contains("old.format-3.bak"),
            "{message}"
        );

        // Neither NEW nor --in-place: a usage error.
        assert_eq!(run(&["upgrade", s(&bak)])?.status.code(), Some(2));
        Ok(())
    }
}
