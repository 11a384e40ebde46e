//! Kill tests with real processes: a child process bulk-loads documents in many small runs
//! and prints each finished load; the parent kills it with SIGKILL at a random moment,
//! reopens the store, and checks that it is `verify()`-clean and holds every document of
//! every finished load, and that loading again completes an interrupted load.
//!
//! A quarter of the documents share one block value and the store splits groups of more than
//! [`SPLIT_ABOVE`] entries, so kills also land while split groups are written (by the merge
//! of a load's runs and by the fold after a load into a store that held documents).
//!
//! The child is this same test binary, re-run with `SIMHASH_BULK_KILL_CHILD` set.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Rng;
use simhash_store::{BulkOptions, Fingerprint, Result, Store};

const CHILD_ENV: &str = "SIMHASH_BULK_KILL_CHILD";
/// Documents per load.
const LOAD: u64 = 3000;

/// Groups of more entries are written split.
const SPLIT_ABOVE: usize = 64;
/// The block-0 value a quarter of the documents share.
const CROWDED: u64 = 0x5eed;

fn fp_of(id: u64) -> Fingerprint {
    let fp = id.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(23) ^ 0xaaaa;
    Fingerprint(if id.is_multiple_of(4) {
        (fp & !(0xffff << 48)) | CROWDED << 48
    } else {
        fp
    })
}

fn open(dir: &Path) -> Result<Store> {
    Store::builder().split_groups_above(SPLIT_ABOVE).open(dir)
}

fn load(store: &Store, first: u64) -> Result<()> {
    // ~300 adds per run: each load is about 10 runs, each ingested under a journal.
    let mut loader = store.bulk_loader_with(BulkOptions::new().memory_budget(16 << 10))?;
    for id in first..first + LOAD {
        loader.add_with_key(id, fp_of(id), &format!("k{id}"))?;
    }
    loader.finish()?;
    Ok(())
}

/// Child: load batches of `LOAD` documents forever, printing `ack <first> <last>` after each.
#[test]
fn child_process() -> Result<()> {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return Ok(()); // not a child: nothing to do
    };
    let store = open(Path::new(&dir))?;
    // Start from the last complete load: an interrupted one is loaded again.
    let mut next = store.len() / LOAD * LOAD;
    println!("ready {next}");
    loop {
        load(&store, next)?;
        println!("ack {next} {}", next + LOAD - 1);
        next += LOAD;
    }
}

fn run_round(dir: &Path, rng: &mut Rng, acked_until: &mut u64) -> Result<()> {
    let exe = std::env::current_exe().expect("test binary path");
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("stdout");
    let reader = BufReader::new(stdout);
    let mut lines = reader.lines();
    // Wait until it is ready, then kill it after a random time (0..400 ms).
    for line in lines.by_ref() {
        if line.expect("read child stdout").contains("ready ") {
            break;
        }
    }
    let kill_at = Instant::now() + Duration::from_millis(rng.below(400));
    let watcher = std::thread::spawn(move || {
        let mut acked = None;
        for line in lines {
            let Ok(line) = line else { break };
            if let Some(rest) = line.strip_prefix("ack ") {
                acked = rest
                    .split(' ')
                    .nth(1)
                    .and_then(|s| s.parse::<u64>().ok())
                    .or(acked);
            }
        }
        acked
    });
    std::thread::sleep(kill_at.saturating_duration_since(Instant::now()));
    child.kill().expect("kill");
    child.wait().expect("wait");
    if let Some(last) = watcher.join().expect("watcher") {
        *acked_until = (*acked_until).max(last + 1);
    }

    let store = open(dir)?;
    let report = store.verify()?;
    assert!(report.is_clean(), "after kill: {report}");
    for id in (0..*acked_until).step_by(7) {
        let doc = store
            .document(id)?
            .unwrap_or_else(|| panic!("document {id} of a finished load lost"));
        assert_eq!(doc.fingerprint, fp_of(id));
        assert_eq!(doc.key.as_deref(), Some(format!("k{id}").as_str()));
        // Found by a query, split group or not.
        let found = store.query(fp_of(id), 3)?;
        assert!(found.iter().any(|m| m.id == id), "document {id} not found");
    }
    assert!(store.len() >= *acked_until);
    assert!(
        !dir.join("bulk-tmp").exists(),
        "temporary files are removed on open"
    );
    Ok(())
}

#[test]
fn killed_loads_leave_a_consistent_store() -> Result<()> {
    if std::env::var(CHILD_ENV).is_ok() {
        return Ok(());
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut rng = Rng::new(99);
    let mut acked_until = 0u64;
    for _ in 0..12 {
        run_round(dir.path(), &mut rng, &mut acked_until)?;
    }
    // Rerunning the interrupted load completes it.
    let store = open(dir.path())?;
    let next = store.len() / LOAD * LOAD;
    load(&store, next)?;
    assert_eq!(store.len(), next + LOAD);
    for id in 0..next + LOAD {
        assert_eq!(store.get(id)?, Some(fp_of(id)), "document {id}");
    }
    assert!(store.verify()?.is_clean());
    drop(store);
    assert!(
        common::raw::split_groups(dir.path()) > 0,
        "no group was split"
    );
    Ok(())
}
