//! Sketches of texts: a store that keeps sketches stores each text's sketch in its document
//! record, the same through `insert_text`, the bulk loader's `add_text` and an entry made by
//! hand; verified answers find an edited copy that a plain k = 3 query misses and drop an
//! unrelated text at the same distance; a store without sketches refuses verified questions
//! with an error that names the fix.

use simhash_store::sketch::SketchKind;
use simhash_store::verified::Verification;
use simhash_store::{Entry, Error, Result, SimhashConfig, Sketch, Store};

fn sketch_store(dir: &std::path::Path) -> Result<Store> {
    let config = SimhashConfig::default().with_sketch(SketchKind::MinHash);
    Store::builder().simhash_config(config).open(dir)
}

fn page(i: usize) -> String {
    let words = [
        "storage",
        "engine",
        "compaction",
        "level",
        "memtable",
        "flush",
        "bloom",
        "filter",
        "index",
        "block",
        "cache",
        "snapshot",
        "write",
        "ahead",
        "log",
        "recovery",
    ];
    (0..120)
        .map(|j| words[(i * 7 + j * j * 3 + j) % words.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn every_write_path_stores_the_texts_sketch() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let store = sketch_store(dir.path())?;
    let hasher = store.simhasher().clone();
    store.insert_text(1, Some("a"), &page(1))?;
    let mut loader = store.bulk_loader()?;
    loader.add_text(2, Some("b"), &page(2))?;
    loader.add(3, hasher.fingerprint(&page(3))?)?;
    loader.finish()?;
    let (fp, sketch) = hasher.fingerprint_and_sketch(&page(4))?;
    let sketch = sketch.expect("the store keeps sketches");
    store.insert_entry(Entry::new(4, fp).with_sketch(sketch))?;
    store.insert_text_if_new(5, None, &page(5), 0)?;
    for id in [1, 2, 4, 5] {
        let doc = store.document(id)?.expect("stored");
        assert_eq!(
            doc.sketch,
            hasher.sketch(&page(id as usize)),
            "document {id}"
        );
        assert!(doc.sketch.is_some());
    }
    assert_eq!(store.document(3)?.expect("stored").sketch, None);
    assert!(store.verify()?.is_clean());
    Ok(())
}

#[test]
fn verification_keeps_edits_and_drops_strangers() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let store = sketch_store(dir.path())?;
    let original = page(5);
    store.insert_text(1, None, &original)?;
    let found = store.query_text_verified(&original, Verification::default())?;
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].id, found[0].distance, found[0].similarity),
        (1, 0, 1.0)
    );
    // Another text stored under a fingerprint 2 bits from the original's: a plain query
    // reports it, verification does not.
    let (fp, _) = store.simhasher().fingerprint_and_sketch(&original)?;
    let stranger = store
        .simhasher()
        .sketch("an unrelated page about gardening, roses and tomatoes in the summer");
    let stranger = stranger.expect("sketch");
    store.insert_entry(
        Entry::new(2, simhash_store::Fingerprint(fp.0 ^ 0b101)).with_sketch(stranger),
    )?;
    assert_eq!(store.query(fp, 3)?.len(), 2);
    let found = store.query_text_verified(&original, Verification::default())?;
    assert_eq!(found.iter().map(|m| m.id).collect::<Vec<_>>(), [1]);
    let pairs = store.verified_pairs(Verification::default()).collect()?;
    assert!(pairs.is_empty());
    assert_eq!(store.pairs(3).collect()?.len(), 1);
    Ok(())
}

#[test]
fn a_store_without_sketches_names_the_fix() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(dir.path())?;
    store.insert_text(1, None, &page(1))?;
    assert!(!store.keeps_sketches());
    let sketch = Sketch::from_bytes([0; simhash_store::sketch::SKETCH_BYTES]);
    let fp = store.get(1)?.expect("stored");
    let err = store
        .query_verified(fp, &sketch, Verification::default())
        .unwrap_err();
    assert!(matches!(err, Error::NoSketches { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("SimhashConfig::with_sketch(SketchKind::MinHash)"),
        "{err}"
    );
    assert!(matches!(
        store.query_text_verified(&page(1), Verification::default()),
        Err(Error::NoSketches { .. })
    ));
    assert!(matches!(
        store.verified_pairs(Verification::default()).collect(),
        Err(Error::NoSketches { .. })
    ));
    // A sketch handed to it has no place in its records.
    assert!(matches!(
        store.insert_entry(Entry::new(2, fp).with_sketch(sketch)),
        Err(Error::InvalidArgument(_))
    ));
    let mut loader = store.bulk_loader()?;
    assert!(matches!(
        loader.add_entry(&Entry::new(2, fp).with_sketch(sketch)),
        Err(Error::InvalidArgument(_))
    ));
    drop(loader);
    assert_eq!(store.document(1)?.expect("stored").sketch, None);
    // The setting is recorded: asking for it on this store is a mismatch.
    drop(store);
    let again = Store::builder()
        .simhash_config(SimhashConfig::default().with_sketch(SketchKind::MinHash))
        .open(dir.path());
    assert!(matches!(again, Err(Error::ConfigMismatch { .. })));
    Ok(())
}

#[test]
fn verification_arguments_are_checked() {
    assert!(matches!(
        Verification::new(65, 0.5),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        Verification::new(6, 1.5),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        Verification::new(6, f64::NAN),
        Err(Error::InvalidArgument(_))
    ));
}
