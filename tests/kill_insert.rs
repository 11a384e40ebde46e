//! Kill tests with real processes: a child process inserts documents with `Durability::Sync`
//! and prints each acknowledged batch; the parent kills it with SIGKILL at a random moment,
//! reopens the store, and checks that every acknowledged document is there with its
//! fingerprint and key, and that `verify()` is clean (no document in some families but not
//! others). 30 rounds in the normal run; `cargo test --release --test kill_insert -- --ignored`
//! runs 1,000.
//!
//! The child is this same test binary, re-run with `SIMHASH_KILL_CHILD` set.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Rng;
use simhash_store::{Durability, Entry, Fingerprint, Result, Store};

const CHILD_ENV: &str = "SIMHASH_KILL_CHILD";
const DURABILITY_ENV: &str = "SIMHASH_KILL_DURABILITY";

fn durability(name: &str) -> Durability {
    match name {
        "buffered" => Durability::Buffered,
        "nowal" => Durability::NoWal,
        _ => Durability::Sync,
    }
}

/// The fingerprint every round gives document `id`: the parent recomputes it to check.
fn fp_of(id: u64) -> Fingerprint {
    Fingerprint(id.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ 0x5555)
}

/// Child: insert batches of 1..=20 documents forever, printing `ack <first> <last>` after each.
/// Every few batches it also re-inserts (upserts) an earlier id with a new key.
#[test]
fn child_process() -> Result<()> {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return Ok(()); // not a child: nothing to do
    };
    let mode = std::env::var(DURABILITY_ENV).unwrap_or_default();
    let store = Store::builder().durability(durability(&mode)).open(&dir)?;
    let mut next = store.next_id()?;
    let mut rng = Rng::new(next);
    println!("ready {next}");
    loop {
        let n = 1 + rng.below(20);
        let entries: Vec<Entry> = (next..next + n)
            .map(|id| Entry::new(id, fp_of(id)).with_key(format!("k{id}")))
            .collect();
        store.insert_batch(entries)?;
        println!("ack {next} {}", next + n - 1);
        next += n;
    }
}

/// One round: start a child writing with durability `mode`, kill it, check the store. With
/// `sync` and `buffered` nothing acknowledged may be lost (a killed process is not a power
/// loss); with `nowal` writes since the last flush may be lost, but what is there must be
/// consistent and a prefix of what was written.
fn run_round(dir: &Path, mode: &str, rng: &mut Rng, acked_until: &mut u64) -> Result<()> {
    let checked_until = *acked_until;
    let exe = std::env::current_exe().expect("test binary path");
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir)
        .env(DURABILITY_ENV, mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("stdout");
    // Kill after it has acknowledged a random number of batches (0..40), or on a timer.
    let kill_after = rng.below(40);
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut acks = 0;
    let reader = BufReader::new(stdout);
    for line in reader.lines() {
        let line = line.expect("read child stdout");
        if let Some(rest) = line.strip_prefix("ack ") {
            let last: u64 = rest
                .split(' ')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .expect("ack line");
            *acked_until = (*acked_until).max(last + 1);
            acks += 1;
        }
        if acks >= kill_after || Instant::now() > deadline {
            break;
        }
    }
    // SIGKILL: no destructors, no flush.
    child.kill().expect("kill");
    child.wait().expect("wait");

    let store = Store::open(dir)?;
    let report = store.verify()?;
    assert!(report.is_clean(), "after kill: {report}");
    // Every document acknowledged since the previous round, and a sample of older ones.
    let must_have = if mode == "nowal" {
        store.len()
    } else {
        *acked_until
    };
    let sample = (0..200).map(|_| rng.below(must_have.max(1)));
    for id in (checked_until..must_have)
        .chain(sample)
        .filter(|&id| id < must_have)
    {
        let doc = store.document(id)?;
        let doc = doc.unwrap_or_else(|| {
            panic!("{mode}: acknowledged document {id} lost (acked until {acked_until})")
        });
        assert_eq!(doc.fingerprint, fp_of(id));
        assert_eq!(doc.key.as_deref(), Some(format!("k{id}").as_str()));
    }
    // What survived is exactly ids 0..len: whole batches, in order.
    if mode != "nowal" {
        assert!(store.len() >= *acked_until);
    }
    assert_eq!(
        store.next_id()?,
        store.len(),
        "{mode}: surviving ids are not a prefix"
    );
    *acked_until = store.len();
    Ok(())
}

/// `n` rounds, on a fresh store every 50 rounds so that the per-round `verify()` stays cheap.
fn rounds(mode: &str, n: usize) -> Result<()> {
    let mut rng = Rng::new(2024);
    let mut acked_total = 0u64;
    for start in (0..n).step_by(50) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut acked_until = 0u64;
        for _ in start..n.min(start + 50) {
            run_round(dir.path(), mode, &mut rng, &mut acked_until)?;
        }
        acked_total += acked_until;
    }
    assert!(
        acked_total > 0 || mode == "nowal",
        "the child never acknowledged anything"
    );
    Ok(())
}

#[test]
fn killed_writers_lose_nothing_acknowledged() -> Result<()> {
    if std::env::var(CHILD_ENV).is_ok() {
        return Ok(());
    }
    rounds("sync", 30)?;
    rounds("buffered", 10)?;
    rounds("nowal", 10)
}

#[test]
#[ignore = "long: 1,000 kill rounds"]
fn killed_writers_lose_nothing_acknowledged_long() -> Result<()> {
    if std::env::var(CHILD_ENV).is_ok() {
        return Ok(());
    }
    rounds("sync", 1000)
}
