//! `stats` names a crowded group, its share, the shared-block factor and what a query of the
//! store's own distribution scans; uniform fingerprints give factors near 1.
#![cfg(feature = "cli")]

mod common;

use common::cli::{ok, run, Result};
use simhash_store::{Entry, Fingerprint, Store};

/// SplitMix64 from `seed`.
fn random(n: u64, seed: u64) -> Vec<u64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

fn stats_json(fps: &[u64]) -> Result<serde_json::Value> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("store");
    let store = Store::open(&path)?;
    store.insert_batch(
        fps.iter()
            .enumerate()
            .map(|(i, &fp)| Entry::new(i as u64, Fingerprint(fp))),
    )?;
    drop(store);
    stats_json_of(&path)
}

/// `stats --json` of the store at `path`.
fn stats_json_of(path: &std::path::Path) -> Result<serde_json::Value> {
    let out = ok(&run(&[
        "stats",
        "--store",
        path.to_str().ok_or("path")?,
        "--json",
    ])?);
    Ok(serde_json::from_str(&out)?)
}

fn f(v: &serde_json::Value) -> Result<f64> {
    Ok(v.as_f64().ok_or_else(|| format!("not a number: {v}"))?)
}

#[test]
fn a_planted_crowded_value_is_reported() -> Result {
    // A fifth of 20,000 documents share block 2 (0xbeef).
    let fps: Vec<u64> = random(20_000, 5)
        .into_iter()
        .enumerate()
        .map(|(i, fp)| {
            if i % 5 == 0 {
                (fp & !(0xffff << 16)) | (0xbeef << 16)
            } else {
                fp
            }
        })
        .collect();
    let stats = stats_json(&fps)?;
    let block = &stats["blocks"][2];
    assert_eq!(block["top"][0][0], "beef", "{block}");
    // 4,000 planted, and a random one now and then.
    let size = f(&block["top"][0][1])?;
    assert!((4_000.0..=4_010.0).contains(&size), "{block}");
    assert!(
        (f(&block["max_share"])? - size / 20_000.0).abs() < 1e-9,
        "{block}"
    );
    // One pair in 25 shares the value: about 65536 / 25 = 2,621 times uniform.
    let factor = f(&block["shared_block_factor"])?;
    assert!((2_500.0..=2_750.0).contains(&factor), "{block}");
    // A query drawn like the documents scans about 800 entries of block2, 0.3 elsewhere.
    let scan = f(&stats["expected_scan_per_query"])?;
    let uniform = f(&stats["uniform_scan_per_query"])?;
    assert!((750.0..=850.0).contains(&scan), "{stats}");
    assert!((uniform - 4.0 * 20_000.0 / 65536.0).abs() < 1e-9, "{stats}");
    assert!(f(&stats["scan_vs_uniform"])? > 500.0, "{stats}");
    for b in [0, 1, 3] {
        let factor = f(&stats["blocks"][b]["shared_block_factor"])?;
        assert!((0.6..=1.4).contains(&factor), "block {b}: {factor}");
    }
    Ok(())
}

#[test]
fn uniform_fingerprints_have_factors_near_one() -> Result {
    let stats = stats_json(&random(50_000, 9))?;
    for b in 0..4 {
        let factor = f(&stats["blocks"][b]["shared_block_factor"])?;
        assert!((0.8..=1.2).contains(&factor), "block {b}: {factor}");
    }
    let ratio = f(&stats["scan_vs_uniform"])?;
    assert!((0.8..=1.2).contains(&ratio), "{ratio}");
    Ok(())
}

#[test]
fn a_split_group_is_counted_and_costs_a_query_a_few_thousandths_of_itself() -> Result {
    // 80,000 of 100,000 documents share block 0 (0x5eed): more than a group is let grow
    // before it is written split (65,536 by default).
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("store");
    let store = Store::open(&path)?;
    let mut loader = store.bulk_loader()?;
    for (i, fp) in random(100_000, 3).into_iter().enumerate() {
        let fp = if i % 5 == 0 {
            fp
        } else {
            (fp & !(0xffff << 48)) | 0x5eed << 48
        };
        loader.add(i as u64, Fingerprint(fp))?;
    }
    loader.finish()?;
    drop(store);
    let stats = stats_json_of(&path)?;
    let block = &stats["blocks"][0];
    assert_eq!(block["split_groups"], 1, "{block}");
    assert_eq!(stats["blocks"][1]["split_groups"], 0, "{stats}");
    // Unsplit, a query would scan 80,000 * 79,999 / 99,999 = 64,000 entries of block0; split,
    // about 4 / 4,096 of that.
    let scan = f(&block["expected_scan"])?;
    assert!((55.0..=70.0).contains(&scan), "{block}");
    let text = ok(&run(&["stats", "--store", path.to_str().ok_or("path")?])?);
    assert!(text.contains("split"), "{text}");
    Ok(())
}

/// `stats` shows the store's format version, in text and in JSON: the newest for a new store,
/// the old one (read-only in this build) for a store of format 1.
#[test]
fn the_format_version_is_shown() -> Result {
    let json = stats_json(&random(100, 9))?;
    assert_eq!(
        json["format_version"],
        simhash_store::upgrade::FORMAT_VERSION,
        "{json}"
    );
    let dir = tempfile::tempdir()?;
    let new = dir.path().join("new");
    drop(Store::open(&new)?);
    let old = dir.path().join("v1");
    std::fs::create_dir(&old)?;
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-v1");
    for entry in std::fs::read_dir(fixture)? {
        let entry = entry?;
        std::fs::copy(entry.path(), old.join(entry.file_name()))?;
    }
    assert_eq!(stats_json_of(&old)?["format_version"], 1);
    let text = |path: &std::path::Path| -> Result<String> {
        ok(&run(&["stats", "--store", path.to_str().ok_or("path")?])?)
            .lines()
            .find(|line| line.starts_with("format "))
            .map(str::to_string)
            .ok_or_else(|| "no format line".into())
    };
    let current = simhash_store::upgrade::FORMAT_VERSION;
    let line = text(&new)?;
    assert!(
        line.ends_with(&format!("{current} (the newest: this build writes it)")),
        "{line}"
    );
    let line = text(&old)?;
    assert!(
        line.contains(" 1 (read-only in this build") && line.contains("simhash-store upgrade"),
        "{line}"
    );
    Ok(())
}
