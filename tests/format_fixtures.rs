//! A store written by each released format version is kept under `tests/fixtures/` and must
//! keep opening, answering and fingerprinting the same way, without its records being
//! rewritten. Write the fixture of a new format version (`FORMAT_VERSION`) once, when it is
//! released: `cargo test --release --test format_fixtures -- --ignored write_fixture`
//! (`tests/fixtures/README.md`).

use std::path::{Path, PathBuf};

use rocksdb::{Options, DB};
use simhash_store::simhash::TfScaling;
use simhash_store::upgrade::FORMAT_VERSION;
use simhash_store::{Entry, Result, SimhashConfig, Store};

mod common;
use common::families::{ALL_FAMILIES, META_FAMILY};

/// The texts stored in the fixture: id i is `text(i)`, with key `fixture/{i}`.
fn text(i: u64) -> String {
    let zh = [
        "近似重复检测",
        "网页去重",
        "指纹",
        "存储",
        "查询",
        "汉明距离",
        "新闻",
        "语料",
    ];
    let en = [
        "near",
        "duplicate",
        "detection",
        "fingerprint",
        "store",
        "query",
        "crawl",
        "page",
    ];
    (0..60)
        .map(|j| {
            let n = (i * 31 + j * 7) as usize;
            if i.is_multiple_of(2) {
                zh[n % zh.len()].to_string()
            } else {
                en[n % en.len()].to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn fixture(version: u32) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/format-v{version}"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
    }
}

/// The configuration the fixture of `version` was written with: format 1 has the default
/// configuration of its time (raw TF); format 2 exists for `TfScaling::LengthAdaptive`;
/// format 3 for `drop_boilerplate`, the default since 0.3; format 4 for Latin shingles within
/// words and count pieces, the default since 0.4; format 5 for the count pieces' ratio, the
/// default since 0.5; format 6 for the settings record by name, with the default settings.
/// A store of an older format did not do what the newer fields do, and reads so.
fn fixture_config(version: u32) -> SimhashConfig {
    let release = |minor| SimhashConfig::release_default(minor).expect("a release");
    match version {
        1 => release(2).with_tf(TfScaling::Raw),
        2 => release(2).with_tf(TfScaling::LengthAdaptive),
        3 => release(3),
        4 => release(4),
        5 => release(5),
        6 => release(6),
        _ => SimhashConfig::default(),
    }
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

/// A line that format 3 leaves out of the fingerprint, and formats 1 and 2 do not.
const BOILERPLATE: &str =
    "\nShare on Facebook | Tweet | Email\n© 2026 Fixture Inc. All rights reserved.";

/// Opens a copy of the fixture of `version` and checks every document, its key, its
/// fingerprint (recomputed with the recorded configuration) and that it can be found.
fn check_fixture(version: u32) -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixture(version), dir.path());
    let records = raw_records(dir.path());
    assert_eq!(records.0, version.to_be_bytes());
    // Format 6 on names the settings; older formats wrote bincode.
    assert_eq!(records.1.first() == Some(&b'{'), version >= 6);
    let store = Store::open(dir.path())?;
    assert_eq!(store.len(), 40);
    assert_eq!(store.simhasher().config(), &fixture_config(version));
    let report = store.verify()?;
    assert!(report.is_clean(), "{report}");
    let mut moved_by_boilerplate = 0;
    let mut unlike_the_current_default = 0;
    let current = simhash_store::Simhasher::default();
    for i in 0..40u64 {
        let doc = store.document(i)?.expect("fixture document");
        assert_eq!(doc.key, Some(format!("fixture/{i}")));
        // The recorded configuration still fingerprints the same text the same way.
        assert_eq!(
            store.simhasher().fingerprint(&text(i))?,
            doc.fingerprint,
            "document {i}"
        );
        assert!(store.query(doc.fingerprint, 0)?.iter().any(|m| m.id == i));
        if current.fingerprint(&text(i))? != doc.fingerprint {
            unlike_the_current_default += 1;
        }
        let with_boilerplate = store
            .simhasher()
            .fingerprint(&format!("{}{BOILERPLATE}", text(i)))?;
        if version >= 3 {
            assert_eq!(with_boilerplate, doc.fingerprint, "document {i}");
        } else if with_boilerplate != doc.fingerprint {
            moved_by_boilerplate += 1;
        }
    }
    // Formats 1 and 2 see the lines (a short text may still keep its fingerprint).
    if version < 3 {
        assert!(moved_by_boilerplate >= 20, "{moved_by_boilerplate} of 40");
    }
    check_writes(&store, version);
    drop(store);
    if version == 7 {
        // The packed layout's three kinds of records, read with RocksDB alone: 10 added
        // deltas (keys of 17 bytes, empty), 1 removal (a 4-byte value), and chunks (11 bytes)
        // of segments 2 and 1, stored as `u32::MAX - segment`, the later one first.
        let db = DB::open_cf_for_read_only(&Options::default(), dir.path(), ALL_FAMILIES, false)
            .expect("raw open");
        let block0 = db.cf_handle(ALL_FAMILIES[0]).expect("block0");
        let mut kinds = std::collections::BTreeMap::new();
        for item in db.iterator_cf(block0, rocksdb::IteratorMode::Start) {
            let (key, value) = item.expect("read");
            let kind = match (key.len(), value.len()) {
                (11, _) => format!(
                    "segment {}",
                    u32::MAX - u32::from_be_bytes([key[3], key[4], key[5], key[6]])
                ),
                (17, 0) => "added".to_string(),
                (17, 4) => "removed".to_string(),
                other => format!("{other:?}"),
            };
            *kinds.entry(kind).or_insert(0) += 1;
        }
        assert_eq!(kinds.get("added"), Some(&10), "{kinds:?}");
        assert_eq!(kinds.get("removed"), Some(&1), "{kinds:?}");
        assert_eq!(kinds.get("segment 2"), Some(&1), "{kinds:?}");
        assert!(kinds.get("segment 1").is_some_and(|&n| n >= 1), "{kinds:?}");
        assert_eq!(kinds.len(), 4, "{kinds:?}");
    }
    // Opening (for writing) left the records as the build that made them wrote them.
    assert_eq!(raw_records(dir.path()), records);
    // Every fixture of other settings than today's default holds fingerprints the default
    // would not give, so the checks above are about the recorded configuration.
    if fixture_config(version) != SimhashConfig::default() {
        assert!(
            unlike_the_current_default >= 10,
            "{unlike_the_current_default} of 40"
        );
    } else {
        assert_eq!(unlike_the_current_default, 0);
    }
    Ok(())
}

/// A store of an older format is read only: every write fails with `Error::LegacyFormat`,
/// whose message names `simhash-store upgrade`, and changes nothing. (The current format's
/// fixture is left as it is for the checks that follow.)
fn check_writes(store: &Store, version: u32) {
    if version == simhash_store::upgrade::FORMAT_VERSION {
        return;
    }
    let writes: [(&str, simhash_store::Result<()>); 4] = [
        ("insert", store.insert(1000, simhash_store::Fingerprint(1))),
        ("remove", store.remove(0).map(|_| ())),
        ("compact", store.compact()),
        ("bulk_loader", store.bulk_loader().map(|_| ())),
    ];
    for (what, result) in writes {
        match result {
            Err(e @ simhash_store::Error::LegacyFormat { found, .. }) => {
                assert_eq!(found, version);
                assert!(
                    e.to_string().contains("`simhash-store upgrade "),
                    "{what}: {e}"
                );
            }
            other => panic!("{what} on a store of format {version}: {other:?}"),
        }
    }
    assert_eq!(store.len(), 40);
    assert!(store.document(0).expect("read").is_some());
}

#[test]
fn format_v1_fixture_opens_and_answers() -> Result<()> {
    check_fixture(1)
}

#[test]
fn format_v2_fixture_opens_and_answers() -> Result<()> {
    check_fixture(2)
}

#[test]
fn format_v3_fixture_opens_and_answers() -> Result<()> {
    check_fixture(3)
}

#[test]
fn format_v4_fixture_opens_and_answers() -> Result<()> {
    check_fixture(4)
}

#[test]
fn format_v5_fixture_opens_and_answers() -> Result<()> {
    check_fixture(5)
}

#[test]
fn format_v6_fixture_opens_and_answers() -> Result<()> {
    check_fixture(6)
}

#[test]
fn format_v7_fixture_opens_and_answers() -> Result<()> {
    check_fixture(7)
}

#[test]
fn format_v8_fixture_opens_and_answers() -> Result<()> {
    check_fixture(8)
}

#[test]
fn format_v9_fixture_opens_and_answers() -> Result<()> {
    check_fixture(9)
}

#[test]
#[ignore = "writes tests/fixtures: run only when releasing a new format version"]
fn write_fixture() -> Result<()> {
    let path = fixture(FORMAT_VERSION);
    let _ = std::fs::remove_dir_all(&path);
    let tmp = tempfile::tempdir().expect("tempdir");
    {
        // Split groups (format 9) are only written where reading by parts pays (20 entries
        // or more in a group), which these 40 documents lack: `tests/split_groups.rs` covers
        // them.
        let store = Store::builder()
            .simhash_config(fixture_config(FORMAT_VERSION))
            .open(tmp.path())?;
        let hasher = store.simhasher().clone();
        let entries: Vec<Entry> = (0..40u64)
            .map(|i| {
                Ok(Entry::new(i, hasher.fingerprint(&text(i))?).with_key(format!("fixture/{i}")))
            })
            .collect::<Result<_>>()?;
        // Every kind of block-family record (formats 7 and 8): documents 0-29 by a bulk run (chunks
        // of segment 1), 3 removed (a removal delta) and loaded again by a second run (segment
        // 2), 30-39 one by one (added deltas).
        let (bulk, single) = entries.split_at(30);
        let mut loader = store.bulk_loader()?;
        for entry in bulk {
            loader.add_entry(entry)?;
        }
        loader.finish()?;
        store.remove(3)?;
        let mut loader = store.bulk_loader()?;
        loader.add_entry(&bulk[3])?;
        loader.finish()?;
        store.insert_batch(single.iter().cloned())?;
        store.flush()?;
    }
    // Keep only what RocksDB needs to open it: no logs of old runs.
    std::fs::create_dir_all(&path).expect("mkdir");
    for entry in std::fs::read_dir(tmp.path()).expect("read") {
        let entry = entry.expect("entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("LOG") || entry.path().is_dir() {
            continue;
        }
        std::fs::copy(entry.path(), path.join(&name)).expect("copy");
    }
    Ok(())
}

/// A copy of the format 6 fixture whose settings record is `edit` of its own.
fn v6_with_record(edit: impl FnOnce(&mut serde_json::Value)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixture(6), dir.path());
    let db = DB::open_cf(&Options::default(), dir.path(), ALL_FAMILIES).expect("raw open");
    let meta = db.cf_handle(META_FAMILY).expect("meta family");
    let bytes = db
        .get_cf(meta, b"simhasher")
        .expect("read")
        .expect("record");
    let mut record: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
    edit(&mut record);
    db.put_cf(
        meta,
        b"simhasher",
        serde_json::to_vec(&record).expect("JSON"),
    )
    .expect("write");
    drop(db);
    dir
}

#[test]
fn a_record_is_read_by_name_and_checked_against_this_build() -> Result<()> {
    // A setting this build does not know (a newer build's) is refused, naming it.
    let newer = v6_with_record(|r| r["settings"]["stem_words"] = true.into());
    let err = Store::open(newer.path()).unwrap_err();
    assert!(
        matches!(&err, simhash_store::Error::UnknownSetting { name, .. } if name == "stem_words"),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains("setting `stem_words`, which this build does not know: upgrade"),
        "{message}"
    );

    // A stop-word list other than this build's (the store's settings use stop words) is
    // refused, naming the list, both hashes and what to do.
    let mut stored = String::new();
    let edited = v6_with_record(|r| {
        let hash = &mut r["word_lists"]["stop_words"];
        stored = hash.as_str().expect("a hash").to_string();
        *hash = "0123456789abcdef".into();
    });
    let err = Store::open(edited.path()).unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(
            &err,
            simhash_store::Error::WordListChanged {
                list: "stop-word lists",
                ..
            }
        ),
        "{err}"
    );
    for part in [
        "stop-word lists",
        "0123456789abcdef",
        &stored,
        "into a new store",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }
    // Read-only opens refuse it too.
    assert!(matches!(
        Store::builder().read_only(true).open(edited.path()),
        Err(simhash_store::Error::WordListChanged { .. })
    ));

    // A record without a newer setting (as a build before it wrote) reads as the behaviour
    // from before it.
    let older = v6_with_record(|r| {
        r["settings"]
            .as_object_mut()
            .expect("settings")
            .remove("latin_count_pieces_ratio");
    });
    let store = Store::open(older.path())?;
    assert_eq!(
        store.simhasher().config(),
        &SimhashConfig::default().with_latin_count_pieces_ratio(0)
    );
    Ok(())
}

#[test]
fn damaged_records_of_old_and_new_formats_fail_to_open_naming_them() {
    for (version, what) in [
        (5, "fingerprint configuration (format 5)"),
        (6, "settings record"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        copy_dir(&fixture(version), dir.path());
        {
            let db = DB::open_cf(&Options::default(), dir.path(), ALL_FAMILIES).expect("open");
            let meta = db.cf_handle(META_FAMILY).expect("meta family");
            db.put_cf(meta, b"simhasher", [0xff; 40]).expect("write");
        }
        let err = Store::open(dir.path()).unwrap_err();
        assert!(
            matches!(
                &err,
                simhash_store::Error::Decode {
                    column_family: "meta",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains(what), "{err}");
    }
}
