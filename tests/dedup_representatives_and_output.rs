//! Representatives chosen by lowest id, longest text and first loaded, and the pairs,
//! clusters and drop files written as JSON Lines and CSV.

use std::time::Duration;

use simhash_store::{
    ClusterBuilder, DedupWriter, Entry, Fingerprint, OutputFormat, Representative, Result, Store,
};

/// Cluster A = {5, 7, 9} (9 loaded first, 7 longest), cluster B = {2, 4} (4 has no length),
/// and a lone document 100.
fn store(dir: &std::path::Path) -> Result<Store> {
    let store = Store::open(dir)?;
    let a = 0x1111_2222_3333_4444u64;
    let b = 0x9999_8888_7777_6666u64;
    let docs = [
        Entry::new(9, Fingerprint(a))
            .with_text_len(100)
            .with_key("https://a.example/9"),
        Entry::new(5, Fingerprint(a ^ 0b1))
            .with_text_len(100)
            .with_key("https://a.example/5,\"x\""),
        Entry::new(7, Fingerprint(a ^ 0b11)).with_text_len(900),
        Entry::new(4, Fingerprint(b)),
        Entry::new(2, Fingerprint(b ^ (1 << 40))).with_text_len(10),
        Entry::new(100, Fingerprint(!a)),
    ];
    for entry in docs {
        store.insert_entry(entry)?;
        // Distinct `added` times.
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(store)
}

fn representatives(store: &Store, rule: Representative) -> Result<Vec<(u64, u64)>> {
    let (mut clusters, _) = store.pairs(3).clusters()?;
    clusters.choose_representatives(store, rule)?;
    Ok(clusters.iter().map(|c| (c.id, c.representative)).collect())
}

#[test]
fn each_rule_picks_its_representative() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(dir.path())?;
    assert_eq!(
        representatives(&store, Representative::LowestId)?,
        [(2, 2), (5, 5)]
    );
    assert_eq!(
        representatives(&store, Representative::Longest)?,
        [(2, 2), (5, 7)]
    );
    assert_eq!(
        representatives(&store, Representative::FirstLoaded)?,
        [(2, 4), (5, 9)]
    );
    Ok(())
}

#[test]
fn files_in_both_formats() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(&dir.path().join("store"))?;
    for format in [OutputFormat::Jsonl, OutputFormat::Csv] {
        let out = dir.path().join(format.to_string());
        let mut writer = DedupWriter::create(&out, format)?;
        let mut builder = ClusterBuilder::new();
        let mut pairs = store.pairs(3).collect()?;
        pairs.reverse();
        for p in pairs {
            builder.add_pair(p.a, p.b);
            writer.write_pair(p)?;
        }
        let mut clusters = builder.finish();
        clusters.choose_representatives(&store, Representative::Longest)?;
        let files = writer.finish(&clusters)?;
        let read = |i: usize| std::fs::read_to_string(&files[i]).expect("read output");
        match format {
            OutputFormat::Jsonl => {
                assert_eq!(
                    read(0),
                    "{\"a\":7,\"b\":9,\"distance\":2}\n{\"a\":5,\"b\":9,\"distance\":1}\n\
                     {\"a\":5,\"b\":7,\"distance\":1}\n{\"a\":2,\"b\":4,\"distance\":1}\n"
                );
                assert_eq!(
                    read(1),
                    "{\"id\":2,\"cluster\":2,\"representative\":2,\"keep\":true}\n\
                     {\"id\":4,\"cluster\":2,\"representative\":2,\"keep\":false}\n\
                     {\"id\":5,\"cluster\":5,\"representative\":7,\"keep\":false,\"key\":\"https://a.example/5,\\\"x\\\"\"}\n\
                     {\"id\":7,\"cluster\":5,\"representative\":7,\"keep\":true}\n\
                     {\"id\":9,\"cluster\":5,\"representative\":7,\"keep\":false,\"key\":\"https://a.example/9\"}\n"
                );
                assert_eq!(
                    read(2),
                    "{\"id\":4,\"representative\":2}\n\
                     {\"id\":5,\"representative\":7,\"key\":\"https://a.example/5,\\\"x\\\"\"}\n\
                     {\"id\":9,\"representative\":7,\"key\":\"https://a.example/9\"}\n"
                );
            }
            _ => {
                assert_eq!(read(0), "a,b,distance\n7,9,2\n5,9,1\n5,7,1\n2,4,1\n");
                assert_eq!(
                    read(1),
                    "id,cluster,representative,keep,key\n2,2,2,true,\n4,2,2,false,\n\
                     5,5,7,false,\"https://a.example/5,\"\"x\"\"\"\n7,5,7,true,\n9,5,7,false,https://a.example/9\n"
                );
                assert_eq!(
                    read(2),
                    "id,representative,key\n4,2,\n5,7,\"https://a.example/5,\"\"x\"\"\"\n9,7,https://a.example/9\n"
                );
            }
        }
    }
    Ok(())
}
