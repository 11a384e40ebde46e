//! `add_text` fingerprints texts with the store's simhasher (in parallel chunks), skips and
//! counts texts without features, and records the text length.

use simhash_store::{BulkOptions, Result, Store};

#[test]
fn texts_are_fingerprinted_and_empty_ones_skipped() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    let texts: Vec<String> = (0..500)
        .map(|i| match i % 10 {
            0 => String::new(),
            1 => " ，。！ ... ".to_string(),
            _ => format!("第{i}篇文章：数据库使用多版本并发控制来保证数据一致性，读不阻塞写。Document {i} about storage engines and compaction."),
        })
        .collect();
    let progress = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = progress.clone();
    // A small chunk so that several parallel chunks are fingerprinted.
    let opts = BulkOptions::new()
        .text_chunk_size(4096)
        .progress(move |p| seen.store(p.documents, std::sync::atomic::Ordering::SeqCst));
    let mut loader = store.bulk_loader_with(opts)?;
    for (i, t) in texts.iter().enumerate() {
        let key = (i % 2 == 0).then(|| format!("doc-{i}"));
        loader.add_text(i as u64, key.as_deref(), t)?;
    }
    let s = loader.finish()?;
    assert_eq!(s.skipped, 100, "{s}");
    assert_eq!(s.added, 400, "{s}");
    assert_eq!(
        s.bytes,
        texts.iter().map(|t| t.len() as u64).sum::<u64>()
            + (0..500)
                .step_by(2)
                .map(|i| format!("doc-{i}").len() as u64)
                .sum::<u64>()
    );
    assert_eq!(
        progress.load(std::sync::atomic::Ordering::SeqCst),
        500,
        "the final report counts every add"
    );
    assert_eq!(store.len(), 400);
    for (i, t) in texts.iter().enumerate() {
        let doc = store.document(i as u64)?;
        if i % 10 < 2 {
            assert_eq!(doc, None);
            continue;
        }
        let doc = doc.expect("stored");
        assert_eq!(doc.fingerprint, store.simhasher().fingerprint(t)?);
        assert_eq!(doc.text_len, Some(t.len() as u64));
        assert_eq!(doc.key, (i % 2 == 0).then(|| format!("doc-{i}")));
    }
    let report = store.verify()?;
    assert!(report.is_clean(), "{report}");
    Ok(())
}

#[test]
fn bad_keys_are_refused_at_once() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    let mut loader = store.bulk_loader()?;
    let err = loader.add_text(1, Some(""), "some text").unwrap_err();
    assert!(
        matches!(err, simhash_store::Error::InvalidArgument(_)),
        "{err}"
    );
    let long = "x".repeat(5000);
    let err = loader
        .add_with_key(1, simhash_store::Fingerprint(1), &long)
        .unwrap_err();
    assert!(
        matches!(err, simhash_store::Error::InvalidArgument(_)),
        "{err}"
    );
    assert_eq!(loader.finish()?.added, 0);
    assert!(store.is_empty());
    Ok(())
}

/// Adds keep their order whatever their kind: a text waiting to be fingerprinted does not
/// overtake a fingerprint added after it, so the later add of an id wins.
#[test]
fn a_later_fingerprint_add_wins_over_an_earlier_text() -> simhash_store::Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = simhash_store::Store::open(dir.path())?;
    let mut loader = store.bulk_loader()?;
    loader.add_text(
        0,
        Some("https://example.com/page"),
        "Ferries stayed in port for two days as the storm closed the harbour.",
    )?;
    loader.add(0, simhash_store::Fingerprint(0xabcd))?;
    loader.add_text(
        1,
        None,
        "A recipe for green tea ice cream with matcha powder, chilled overnight.",
    )?;
    loader.add_entry(&simhash_store::Entry::new(
        1,
        simhash_store::Fingerprint(0x1234),
    ))?;
    let summary = loader.finish()?;
    assert_eq!((summary.added, summary.superseded), (2, 2), "{summary}");
    assert_eq!(store.get(0)?, Some(simhash_store::Fingerprint(0xabcd)));
    assert_eq!(store.get(1)?, Some(simhash_store::Fingerprint(0x1234)));
    assert_eq!(store.id_for_key("https://example.com/page")?, None);
    Ok(())
}
