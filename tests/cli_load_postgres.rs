//! `simhash-store load --postgres URL`: a JSON Lines load whose queries equal brute force
//! over what the index stores, and a second load that replaces every document by key; a load
//! killed (SIGKILL) between batches leaves the index consistent, and running it again makes
//! it complete; a bad record is named by file and line and skipped. Needs the test server:
//! `scripts/postgres-test-server.sh start`.
#![cfg(all(feature = "cli", feature = "postgres"))]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::cli::{ok, run, Result};
use common::postgres::{connect, fresh_database};
use common::{brute_force, Rng};
use simhash_store::postgres::PgIndex;
use simhash_store::Fingerprint;

const WORDS: [&str; 24] = [
    "river", "bridge", "train", "station", "garden", "flower", "market", "harbour", "castle",
    "forest", "mountain", "valley", "library", "museum", "window", "kitchen", "village", "engine",
    "letter", "winter", "summer", "island", "desert", "meadow",
];

/// `n` JSON Lines documents with keys; every fifth is a copy of the one before with one word
/// changed (a near-duplicate).
fn write_docs(path: &Path, n: usize, seed: u64) -> Result {
    let mut rng = Rng::new(seed);
    let mut out = String::new();
    let mut last: Vec<&str> = Vec::new();
    for i in 0..n {
        let words: Vec<&str> = if i % 5 == 4 {
            let mut w = last.clone();
            let at = rng.below(w.len() as u64) as usize;
            w[at] = WORDS[rng.below(WORDS.len() as u64) as usize];
            w
        } else {
            (0..40)
                .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
                .collect()
        };
        out.push_str(&serde_json::json!({"url": format!("https://site.example/{i}"), "text": words.join(" ")}).to_string());
        out.push('\n');
        last = words;
    }
    std::fs::write(path, out)?;
    Ok(())
}

/// Every document's (id, fingerprint); asserts that the index verifies clean.
async fn stored(index: &PgIndex) -> Result<Vec<(u64, u64)>> {
    let report = index.verify().await?;
    assert!(report.is_ok(), "{:?}", report.problems);
    Ok(index
        .documents()
        .await?
        .into_iter()
        .map(|(id, d)| (id, d.fingerprint.0))
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_then_queries_equal_brute_force() -> Result {
    let url = fresh_database("cli_load").await;
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("docs.jsonl");
    write_docs(&input, 3000, 1)?;
    let input_s = input.to_str().ok_or("path")?;
    let args = [
        "load",
        input_s,
        "--postgres",
        &url,
        "--postgres-batch",
        "700",
        "--json",
    ];
    let out = run(&args)?;
    let v: serde_json::Value = serde_json::from_str(&ok(&out))?;
    assert_eq!(v["loaded"].as_u64(), Some(3000), "{v}");
    assert_eq!(v["added"].as_u64(), Some(3000), "{v}");
    assert_eq!(v["batches"].as_u64(), Some(5), "{v}");
    assert_eq!(v["documents_after"].as_u64(), Some(3000), "{v}");

    let index = PgIndex::open(&url, None).await?;
    let docs = stored(&index).await?;
    assert_eq!(docs.len(), 3000);
    assert_eq!(
        index.id_for_key("https://site.example/2999").await?,
        Some(2999)
    );
    let mut rng = Rng::new(7);
    for &(_, fp) in docs.iter().step_by(37) {
        for k in [0, 3, 6] {
            let d = rng.below(4) as u32;
            let q = rng.flip(fp, d);
            let got: Vec<(u32, u64, u64)> = index
                .query(Fingerprint(q), k)
                .await?
                .into_iter()
                .map(|m| (m.distance, m.id, m.fingerprint.0))
                .collect();
            assert_eq!(got, brute_force(&docs, q, k), "query {q:016x} k={k}");
        }
    }

    // The same load again replaces every document by key, under the same ids.
    let v: serde_json::Value = serde_json::from_str(&ok(&run(&args)?))?;
    assert_eq!(
        (v["added"].as_u64(), v["replaced"].as_u64()),
        (Some(0), Some(3000)),
        "{v}"
    );
    assert_eq!(stored(&index).await?, docs);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_load_is_consistent_and_a_rerun_completes_it() -> Result {
    const N: usize = 60_000;
    let url = fresh_database("cli_load_kill").await;
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("docs.jsonl");
    write_docs(&input, N, 2)?;
    let input_s = input.to_str().ok_or("path")?;
    let args = [
        "load",
        input_s,
        "--postgres",
        &url,
        "--postgres-batch",
        "2000",
        "--quiet",
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_simhash-store"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    // Kill it once a batch is committed (the document count moves), within 60 s.
    let watcher = connect(&url).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let committed: i64 = match watcher
            .query_opt("SELECT documents FROM simhash_meta", &[])
            .await
        {
            Ok(Some(row)) => row.try_get(0)?,
            _ => 0,
        };
        if committed > 0 {
            break;
        }
        assert!(
            child.try_wait()?.is_none(),
            "the load ended before it was killed"
        );
        assert!(Instant::now() < deadline, "no batch committed in 60 s");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.kill()?;
    child.wait()?;

    let index = PgIndex::open(&url, None).await?;
    let part = stored(&index).await?;
    assert!(
        !part.is_empty() && part.len() < N,
        "killed after {} documents",
        part.len()
    );
    assert_eq!(part.len() % 2000, 0, "whole batches only");

    let out = run(&args)?;
    ok(&out);
    let all = stored(&index).await?;
    assert_eq!(all.len(), N);
    assert_eq!(
        all.iter().map(|&(id, _)| id).collect::<Vec<_>>(),
        (0..N as u64).collect::<Vec<_>>()
    );
    // The documents of the first run kept their ids and fingerprints.
    for d in &part {
        assert!(all.binary_search(d).is_ok(), "{d:?}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_record_named_by_file_and_line() -> Result {
    let url = fresh_database("cli_load_bad").await;
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("docs.jsonl");
    std::fs::write(
        &input,
        "{\"key\": \"a\", \"text\": \"the first document is about rivers and bridges\"}\n\
         [1, 2]\n\
         {\"key\": \"b\", \"text\": \"the second document is about trains and stations\"}\n",
    )?;
    let input_s = input.to_str().ok_or("path")?;
    let out = run(&["load", input_s, "--postgres", &url, "--json"])?;
    let v: serde_json::Value = serde_json::from_str(&ok(&out))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{input_s}:line 2: wrong JSON type")),
        "{stderr}"
    );
    assert_eq!(v["loaded"].as_u64(), Some(2), "{v}");
    assert_eq!(v["bad_records"]["wrong JSON type"].as_u64(), Some(1), "{v}");
    let index = PgIndex::open(&url, None).await?;
    assert_eq!(index.len().await?, 2);

    let out = run(&["load", input_s, "--postgres", &url, "--strict"])?;
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}
