//! Upserts, removals, external keys and reopening keep the store consistent.

use simhash_store::simhash::TfScaling;
use simhash_store::{Durability, Entry, Fingerprint, Result, SimhashConfig, Store};

fn clean(store: &Store) -> Result<()> {
    let report = store.verify()?;
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.documents, store.len());
    Ok(())
}

#[test]
fn upsert_replaces_the_old_fingerprint() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    store.insert(1, Fingerprint(0xaaaa_0000_0000_0000))?;
    store.insert(1, Fingerprint(0x5555_0000_0000_ffff))?;
    assert_eq!(store.len(), 1);
    assert_eq!(store.get(1)?, Some(Fingerprint(0x5555_0000_0000_ffff)));
    assert!(store
        .query(Fingerprint(0xaaaa_0000_0000_0000), 3)?
        .is_empty());
    assert_eq!(store.query(Fingerprint(0x5555_0000_0000_ffff), 0)?.len(), 1);
    clean(&store)?;
    // the same fingerprint again changes nothing
    store.insert(1, Fingerprint(0x5555_0000_0000_ffff))?;
    assert_eq!(store.len(), 1);
    clean(&store)
}

#[test]
fn remove_and_missing_ids() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    assert!(!store.remove(42)?);
    assert_eq!(store.get(42)?, None);
    store.insert_batch((0..100).map(|i| Entry::new(i, Fingerprint(i * 0x0123_4567_89ab_cdef))))?;
    assert_eq!(store.len(), 100);
    for i in (0..100).step_by(2) {
        assert!(store.remove(i)?);
    }
    assert_eq!(store.len(), 50);
    assert_eq!(store.get(2)?, None);
    assert_eq!(store.get(3)?, Some(Fingerprint(3 * 0x0123_4567_89ab_cdef)));
    clean(&store)
}

#[test]
fn a_batch_with_repeated_ids_ends_with_the_last_one() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    store.insert_batch([
        Entry::new(5, Fingerprint(1)),
        Entry::new(5, Fingerprint(2)).with_key("k"),
        Entry::new(6, Fingerprint(3)).with_key("k"),
    ])?;
    assert_eq!(
        store.len(),
        1,
        "id 6 took key k from id 5, which was replaced"
    );
    assert_eq!(store.id_for_key("k")?, Some(6));
    assert_eq!(store.get(5)?, None);
    clean(&store)
}

#[test]
fn external_keys_identify_documents() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    store.insert_entry(
        Entry::new(1, Fingerprint(10))
            .with_key("https://a.example/1")
            .with_text_len(99),
    )?;
    store.insert_entry(Entry::new(2, Fingerprint(11)).with_key("https://a.example/2"))?;
    let m = store.query(Fingerprint(10), 1)?;
    assert_eq!(
        m.iter().map(|m| m.key.as_deref()).collect::<Vec<_>>(),
        [Some("https://a.example/1"), Some("https://a.example/2")]
    );
    assert_eq!(store.document(1)?.map(|d| d.text_len), Some(Some(99)));

    // Loading the same page again under a new id replaces the old document.
    store.insert_entry(Entry::new(3, Fingerprint(12)).with_key("https://a.example/1"))?;
    assert_eq!(store.len(), 2);
    assert_eq!(store.get(1)?, None);
    assert_eq!(store.id_for_key("https://a.example/1")?, Some(3));

    // Re-keying a document frees its old key.
    store.insert_entry(Entry::new(2, Fingerprint(11)).with_key("https://a.example/2b"))?;
    assert_eq!(store.id_for_key("https://a.example/2")?, None);
    assert_eq!(store.remove_key("https://a.example/2b")?, Some(2));
    assert_eq!(store.remove_key("https://a.example/2b")?, None);
    assert_eq!(store.len(), 1);

    assert!(matches!(
        store.insert_entry(Entry::new(9, Fingerprint(1)).with_key("")),
        Err(simhash_store::Error::InvalidArgument(_))
    ));
    assert!(matches!(
        store.insert_entry(Entry::new(9, Fingerprint(1)).with_key("x".repeat(5000))),
        Err(simhash_store::Error::InvalidArgument(_))
    ));
    assert_eq!(store.len(), 1, "failed inserts wrote nothing");
    clean(&store)
}

/// The keys of a query's matches, by id.
fn keys_of_matches(store: &Store, fp: Fingerprint) -> Result<Vec<(u64, Option<String>)>> {
    let mut found: Vec<_> = store
        .query(fp, 3)?
        .into_iter()
        .map(|m| (m.id, m.key))
        .collect();
    found.sort();
    Ok(found)
}

#[test]
fn query_answers_carry_keys_however_they_arrive() -> Result<()> {
    // A store without keys answers queries without reading `docs`; a key that arrives by a
    // bulk load, a single insert or with the store's files at open must still show.
    let dir = tempfile::tempdir().expect("tempdir");
    let fp = Fingerprint(0xfeed_f00d_0000_0000);
    {
        let store = Store::open(dir.path())?;
        let mut loader = store.bulk_loader()?;
        loader.add(1, fp)?;
        loader.add(2, Fingerprint(fp.0 ^ 0b11))?;
        loader.finish()?;
        assert_eq!(keys_of_matches(&store, fp)?, [(1, None), (2, None)]);

        let mut loader = store.bulk_loader()?;
        loader.add_with_key(3, Fingerprint(fp.0 ^ 0b100), "https://b.example/3")?;
        loader.finish()?;
        assert_eq!(
            keys_of_matches(&store, fp)?,
            [
                (1, None),
                (2, None),
                (3, Some("https://b.example/3".into()))
            ]
        );
    }
    {
        let store = Store::open(dir.path())?;
        assert_eq!(
            keys_of_matches(&store, fp)?,
            [
                (1, None),
                (2, None),
                (3, Some("https://b.example/3".into()))
            ],
            "a key stored before the store was opened"
        );
    }

    let dir = tempfile::tempdir().expect("tempdir");
    {
        let store = Store::open(dir.path())?;
        store.insert(1, fp)?;
        assert_eq!(keys_of_matches(&store, fp)?, [(1, None)]);
    }
    let store = Store::open(dir.path())?;
    store.insert_batch([Entry::new(2, fp).with_key("https://b.example/2")])?;
    assert_eq!(
        keys_of_matches(&store, fp)?,
        [(1, None), (2, Some("https://b.example/2".into()))]
    );
    clean(&store)
}

#[test]
fn every_configuration_is_recorded_and_read_back() -> Result<()> {
    // The settings of every release, and variations: each is recorded by name and read back.
    let release = |minor| SimhashConfig::release_default(minor).expect("a release");
    let (v4, v3, keep) = (release(4), release(3), release(2));
    for config in [
        keep.clone(),
        keep.clone().with_tf(TfScaling::LengthAdaptive).with_seed(9),
        v3.clone(),
        v3.clone().with_tf(TfScaling::LengthAdaptive),
        v4.clone(),
        v4.with_tf(TfScaling::LengthAdaptive),
        keep.clone().with_latin_count_pieces(16),
        keep.clone().with_word_char_shingles_within_words(true),
        SimhashConfig::default(),
        SimhashConfig::default().with_tf(TfScaling::LengthAdaptive),
        SimhashConfig::default()
            .with_latin_count_pieces(8)
            .with_latin_count_pieces_ratio(3),
        // A ratio without pieces changes no fingerprint, but is recorded as given.
        keep.with_latin_count_pieces_ratio(2),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = "Share on Facebook\nThe crawler stores one fingerprint per page.";
        let fp = {
            let store = Store::builder()
                .simhash_config(config.clone())
                .open(dir.path())?;
            let fp = store.simhasher().fingerprint(text)?;
            store.insert(1, fp)?;
            fp
        };
        let store = Store::open(dir.path())?;
        assert_eq!(store.simhasher().config(), &config);
        assert_eq!(store.simhasher().fingerprint(text)?, fp);
        assert_eq!(store.get(1)?, Some(fp));
        drop(store);
        // Asking for the recorded configuration explicitly is not a mismatch.
        Store::builder().simhash_config(config).open(dir.path())?;
    }
    Ok(())
}

#[test]
fn data_survives_close_and_reopen() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let fps: Vec<(u64, Fingerprint)> = (0..1000u64)
        .map(|i| (i, Fingerprint(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))))
        .collect();
    {
        let store = Store::builder()
            .durability(Durability::Sync)
            .open(dir.path())?;
        store.insert_batch(
            fps.iter()
                .map(|&(id, fp)| Entry::new(id, fp).with_key(format!("doc-{id}"))),
        )?;
        store.remove(7)?;
    }
    for durability in [Durability::Buffered, Durability::NoWal] {
        let store = Store::builder().durability(durability).open(dir.path())?;
        assert_eq!(store.len(), 999);
        assert_eq!(store.get(8)?, Some(fps[8].1));
        assert_eq!(store.get(7)?, None);
        assert_eq!(store.id_for_key("doc-500")?, Some(500));
        assert_eq!(store.next_id()?, 1000);
        assert_eq!(store.query(fps[123].1, 0)?.first().map(|m| m.id), Some(123));
        clean(&store)?;
    }
    // documents() walks them all in id order
    let store = Store::open(dir.path())?;
    let ids: Vec<u64> = store
        .documents()?
        .map(|d| d.map(|(id, _)| id))
        .collect::<Result<_>>()?;
    assert_eq!(ids.len(), 999);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    Ok(())
}

#[test]
fn text_insert_and_query() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path())?;
    let text = "Near-duplicate detection finds pages that are almost the same, such as the same \
                article published under two addresses with a different advertisement beside it.";
    let fp = store.insert_text(1, Some("a"), text)?;
    assert_eq!(store.get(1)?, Some(fp));
    assert_eq!(store.query_text(text, 0)?.first().map(|m| m.id), Some(1));
    assert!(matches!(
        store.insert_text(2, None, " ,.!? "),
        Err(simhash_store::Error::NoFeatures)
    ));
    assert!(matches!(
        store.query_text("", 3),
        Err(simhash_store::Error::NoFeatures)
    ));
    let batch = store.query_batch(&[fp, Fingerprint(!fp.0)], 3)?;
    assert_eq!(batch.len(), 2);
    assert_eq!(batch[0].len(), 1);
    assert!(batch[1].is_empty());
    Ok(())
}
