//! A store written by each released format version is kept under `tests/fixtures/` and must
//! keep opening, answering and fingerprinting the same way. Regenerate a fixture only when a
//! new format version is released:
//! `cargo test --release --test format_fixtures -- --ignored write_fixture`.

use std::path::{Path, PathBuf};

use simhash_store::{Entry, Result, SimhashConfig, Store, TfScaling, FORMAT_VERSION};

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
/// default since 0.5. A store of an older format did not do what the newer fields do, and
/// reads so.
fn fixture_config(version: u32) -> SimhashConfig {
    let release = |minor| SimhashConfig::release_default(minor).expect("a release");
    match version {
        1 => release(2).with_tf(TfScaling::Raw),
        2 => release(2).with_tf(TfScaling::LengthAdaptive),
        3 => release(3),
        4 => release(4),
        _ => SimhashConfig::default(),
    }
}

/// A line that format 3 leaves out of the fingerprint, and formats 1 and 2 do not.
const BOILERPLATE: &str =
    "\nShare on Facebook | Tweet | Email\n© 2026 Fixture Inc. All rights reserved.";

/// Opens a copy of the fixture of `version` and checks every document, its key, its
/// fingerprint (recomputed with the recorded configuration) and that it can be found.
fn check_fixture(version: u32) -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixture(version), dir.path());
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
    // Every older format's fixture holds fingerprints that today's default would not give,
    // so the checks above are about the recorded configuration, not the default.
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
#[ignore = "writes tests/fixtures: run only when releasing a new format version"]
fn write_fixture() -> Result<()> {
    let path = fixture(FORMAT_VERSION);
    let _ = std::fs::remove_dir_all(&path);
    let tmp = tempfile::tempdir().expect("tempdir");
    {
        let store = Store::builder()
            .simhash_config(fixture_config(FORMAT_VERSION))
            .open(tmp.path())?;
        let hasher = store.simhasher().clone();
        let entries: Vec<Entry> = (0..40u64)
            .map(|i| {
                Ok(Entry::new(i, hasher.fingerprint(&text(i))?).with_key(format!("fixture/{i}")))
            })
            .collect::<Result<_>>()?;
        store.insert_batch(entries)?;
        store.flush()?;
        store.compact()?;
    }
    // Keep only what RocksDB needs to open it: no logs of old runs.
    std::fs::create_dir_all(&path).expect("mkdir");
    for entry in std::fs::read_dir(tmp.path()).expect("read") {
        let entry = entry.expect("entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("LOG") {
            continue;
        }
        std::fs::copy(entry.path(), path.join(&name)).expect("copy");
    }
    Ok(())
}
