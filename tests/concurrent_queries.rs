//! Queries from many threads while another thread inserts: every query sees each document
//! whole (all four families or none), and at the end the answers equal brute force.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

use common::{brute_force, Rng};
use simhash_store::{Entry, Fingerprint, Result, Store};

#[test]
fn queries_during_inserts() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(Store::open(dir.path())?);
    let centre = 0x0123_4567_89ab_cdefu64;
    let mut rng = Rng::new(5);
    // Documents near the centre at distances 0..=3: a query at the centre must see each of
    // them once it is in, never twice, and the matches must grow monotonically.
    let docs: Vec<(u64, u64)> = (0..2000u64)
        .map(|id| (id, rng.flip(centre, (id % 4) as u32)))
        .collect();
    let done = Arc::new(AtomicBool::new(false));
    // The writer starts once every reader runs, and each reader queries at least once
    // after that (on a loaded machine a thread can otherwise start after the writer ends).
    let start = Arc::new(Barrier::new(5));

    let readers: Vec<_> = (0..4)
        .map(|_| {
            let store = Arc::clone(&store);
            let done = Arc::clone(&done);
            let start = Arc::clone(&start);
            std::thread::spawn(move || -> Result<usize> {
                let mut last = 0;
                let mut queries = 0;
                start.wait();
                loop {
                    let finished = done.load(Ordering::SeqCst);
                    let m = store.query(Fingerprint(centre), 3)?;
                    let mut ids: Vec<u64> = m.iter().map(|m| m.id).collect();
                    ids.sort_unstable();
                    ids.dedup();
                    assert_eq!(ids.len(), m.len(), "a document reported twice");
                    assert!(m.len() >= last, "matches went from {last} to {}", m.len());
                    last = m.len();
                    queries += 1;
                    if finished {
                        break;
                    }
                }
                Ok(queries)
            })
        })
        .collect();

    start.wait();
    for chunk in docs.chunks(10) {
        store.insert_batch(
            chunk
                .iter()
                .map(|&(id, fp)| Entry::new(id, Fingerprint(fp))),
        )?;
    }
    done.store(true, Ordering::SeqCst);
    for r in readers {
        let queries = r.join().expect("reader thread")?;
        assert!(queries > 0);
    }
    let got: Vec<(u32, u64, u64)> = store
        .query(Fingerprint(centre), 3)?
        .into_iter()
        .map(|m| (m.distance, m.id, m.fingerprint.0))
        .collect();
    assert_eq!(got, brute_force(&docs, centre, 3));
    assert!(store.verify()?.is_clean());
    Ok(())
}
