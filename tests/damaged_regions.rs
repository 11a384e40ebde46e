//! A damaged table file is an error naming it, never a wrong answer, in every open mode.
//!
//! One byte is flipped in each kind of region of each family's SST file (a data block near the
//! start; the filter, index, properties and metaindex blocks before the footer; the footer),
//! one copy of the store per damage. Then, opened as a writer and read-only: the open fails
//! naming the file, or every query, `document` and the scan of all documents answer exactly as
//! the undamaged store did or fail. `verify` names the damaged file wherever a read failed;
//! salvage recovers every document (id, fingerprint, key) the store held, whichever single
//! file is damaged (the metadata family's excepted: without it there is no store to read).

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use common::families::ALL_FAMILIES;
use common::files::copy_dir;
use common::Rng;
use simhash_store::salvage::Salvage;
use simhash_store::verify::Problem;
use simhash_store::{Entry, Error, Fingerprint, Store};

const DOCS: u64 = 3000;
/// Documents whose own fingerprint is queried in each damaged copy.
const QUERIED: u64 = 60;

type Answers = Vec<(u64, Vec<(u64, u32, Option<String>)>)>;

struct Reference {
    answers: Answers,
    documents: Vec<(u64, Fingerprint, Option<String>)>,
}

fn make_store(dir: &Path) -> Vec<Entry> {
    let mut rng = Rng::new(54);
    let mut entries = Vec::new();
    for id in 0..DOCS {
        // Near-duplicates of earlier documents too, so that answers hold several matches.
        let fp = if id > 10 && id % 5 == 0 {
            let base: &Entry = &entries[(rng.next_u64() % id) as usize];
            Fingerprint(base.fingerprint.0 ^ (1 << (rng.next_u64() % 64)))
        } else {
            Fingerprint(rng.next_u64())
        };
        entries.push(Entry::new(id, fp).with_key(format!("https://example.com/{id}")));
    }
    let store = Store::open(dir).expect("open");
    store.insert_batch(entries.clone()).expect("insert");
    store.flush().expect("flush");
    entries
}

fn answers(store: &Store, entries: &[Entry]) -> Result<Answers, Error> {
    let mut out = Vec::new();
    for e in entries.iter().step_by((DOCS / QUERIED) as usize) {
        let mut matches: Vec<_> = store
            .query(e.fingerprint, 3)?
            .into_iter()
            .map(|m| (m.id, m.distance, m.key))
            .collect();
        matches.sort();
        out.push((e.id, matches));
    }
    Ok(out)
}

fn documents(store: &Store) -> Result<Vec<(u64, Fingerprint, Option<String>)>, Error> {
    store
        .documents()?
        .map(|item| item.map(|(id, d)| (id, d.fingerprint, d.key)))
        .collect()
}

/// Asserts that `got` equals `want`, naming the first difference (not the whole lists).
fn assert_same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], context: &str) {
    if let Some(i) = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)) {
        panic!(
            "{context}: {} items, {} wanted; first difference at {i}: {:?} against {:?}",
            got.len(),
            want.len(),
            got.get(i),
            want.get(i)
        );
    }
}

/// The family of each SST file of the store at `path`.
fn sst_families(path: &Path) -> BTreeMap<String, String> {
    let db =
        rocksdb::DB::open_cf_for_read_only(&rocksdb::Options::default(), path, ALL_FAMILIES, false)
            .expect("raw open");
    db.live_files()
        .expect("live files")
        .into_iter()
        .map(|f| {
            (
                f.name.trim_start_matches('/').to_string(),
                f.column_family_name,
            )
        })
        .collect()
}

/// The offsets damaged in a file of `len` bytes, each with the region it is in (the blocks
/// after the data blocks are, in order: filter, index, properties, metaindex, footer).
fn offsets(len: usize) -> Vec<(usize, &'static str)> {
    let mut v = vec![(len / 8, "data block"), (len / 3, "data block")];
    for back in [
        5, 12, 30, 45, 60, 75, 100, 140, 200, 300, 450, 700, 1000, 1500, 2200,
    ] {
        if back < len {
            v.push((len - back, "the blocks after the data"));
        }
    }
    v
}

/// Checks one damaged copy in one open mode: an error, or the reference's answers. Returns
/// whether any read failed.
fn check_mode(
    path: &Path,
    read_only: bool,
    file: &str,
    entries: &[Entry],
    reference: &Reference,
) -> bool {
    let store = match Store::builder().read_only(read_only).open(path) {
        Ok(store) => store,
        Err(e) => {
            assert!(
                matches!(e, Error::Corruption { .. }),
                "{file}, read_only {read_only}: {e:?}"
            );
            assert!(e.to_string().contains(file), "the error names {file}: {e}");
            return true;
        }
    };
    let mut failed = false;
    match answers(&store, entries) {
        Ok(a) => assert_eq!(
            a, reference.answers,
            "{file}, read_only {read_only}: queries"
        ),
        Err(e) => {
            assert!(matches!(e, Error::Corruption { .. }), "{e:?}");
            failed = true;
        }
    }
    match documents(&store) {
        Ok(d) => assert_same(
            &d,
            &reference.documents,
            &format!("{file}, read_only {read_only}: scan"),
        ),
        Err(e) => {
            assert!(matches!(e, Error::Corruption { .. }), "{e:?}");
            failed = true;
        }
    }
    for e in entries.iter().step_by(97) {
        match store.document(e.id) {
            Ok(d) => assert_eq!(
                d.map(|d| (d.fingerprint, d.key)),
                Some((e.fingerprint, e.key.clone())),
                "{file}, read_only {read_only}: document {}",
                e.id
            ),
            Err(e) => {
                assert!(matches!(e, Error::Corruption { .. }), "{e:?}");
                failed = true;
            }
        }
    }
    if failed {
        let report = store.verify().expect("verify");
        assert!(
            report
                .problems
                .iter()
                .any(|p| matches!(p, Problem::DamagedFile { file: f, .. } if f == file)),
            "verify names {file}: {report}"
        );
    }
    failed
}

#[test]
fn damage_in_any_region_of_any_family_is_an_error_or_the_right_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let original = dir.path().join("original");
    let entries = make_store(&original);
    let reference = {
        let store = Store::builder()
            .read_only(true)
            .open(&original)
            .expect("open");
        Reference {
            answers: answers(&store, &entries).expect("answers"),
            documents: documents(&store).expect("documents"),
        }
    };
    assert!(reference.answers.iter().any(|(_, m)| m.len() > 1));
    let families = sst_families(&original);
    for family in ALL_FAMILIES {
        assert!(
            families.values().any(|f| f == family),
            "{family} has an SST file: {families:?}"
        );
    }

    let (mut cases, mut refused) = (0, 0);
    for (file, family) in &families {
        let len = fs::metadata(original.join(file)).expect("stat").len() as usize;
        for (offset, region) in offsets(len) {
            let copy: PathBuf = dir.path().join(format!("{file}-{offset}"));
            copy_dir(&original, &copy);
            let mut bytes = fs::read(copy.join(file)).expect("read");
            bytes[offset] ^= 0xff;
            fs::write(copy.join(file), bytes).expect("write");
            cases += 1;
            let context = format!("{family} {file} at {offset} ({region})");
            let writer_failed = check_mode(&copy, false, file, &entries, &reference);
            let reader_failed = check_mode(&copy, true, file, &entries, &reference);
            refused += usize::from(writer_failed || reader_failed);

            // Salvage recovers every document, whichever file is damaged (but the metadata).
            if family != "meta" {
                let salvage = Salvage::open(&copy).unwrap_or_else(|e| panic!("{context}: {e}"));
                let mut salvaged = Vec::new();
                let summary = salvage
                    .for_each(|id, d, _| {
                        salvaged.push((id, d.fingerprint, d.key));
                        Ok(())
                    })
                    .expect("salvage");
                assert_same(
                    &salvaged,
                    &reference.documents,
                    &format!("{context}: salvage"),
                );
                assert_eq!(summary.missing(), 0, "{context}");
                assert!(
                    summary.damaged_files.is_empty() || summary.damaged_files == [file.clone()],
                    "{context}: {:?}",
                    summary.damaged_files
                );
            }
            fs::remove_dir_all(&copy).expect("rm");
        }
    }
    // Most damage is found (a flipped byte in a block's padding or an unused property may not
    // be), and found damage was refused above, never answered.
    assert!(
        refused * 2 > cases,
        "{refused} of {cases} damaged copies refused"
    );
}
