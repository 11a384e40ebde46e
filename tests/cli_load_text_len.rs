//! `load` records each document's text length, which `dedup --representative longest` uses.
#![cfg(feature = "cli")]

use std::process::Command;

use simhash_store::Store;

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

#[test]
fn loaded_documents_carry_their_text_length() -> Result {
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("docs.txt");
    let lines = ["the first document talks about near duplicate detection in web crawls",
        "a second and somewhat longer document talks about fingerprints, blocks and hamming distance"];
    std::fs::write(&input, lines.join("\n"))?;
    let store_dir = dir.path().join("store");
    let out = Command::new(env!("CARGO_BIN_EXE_simhash-store"))
        .args(["load", "--format", "lines", "--store"])
        .arg(&store_dir)
        .arg(&input)
        .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = Store::open(&store_dir)?;
    assert_eq!(store.len(), 2);
    let mut lens: Vec<u64> = store
        .documents()?
        .map(|d| d.map(|(_, doc)| doc.text_len))
        .collect::<simhash_store::Result<Vec<_>>>()?
        .into_iter()
        .map(|l| l.ok_or("a loaded document has no text length"))
        .collect::<std::result::Result<_, _>>()?;
    lens.sort_unstable();
    let mut want: Vec<u64> = lines.iter().map(|l| l.len() as u64).collect();
    want.sort_unstable();
    assert_eq!(lens, want);
    Ok(())
}
