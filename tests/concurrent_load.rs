//! Queries from 8 threads while one thread bulk loads and another inserts batches. Every
//! query must succeed and be exact for what it may see:
//!
//! - every document it returns was written (its index was handed to a writer before the query
//!   returned), with the fingerprint and key that were written, at the distance reported,
//!   within `k`, once, in (distance, id) order;
//! - every planted near-duplicate whose write had returned before the query started is in the
//!   answer (a query reads a snapshot taken after it starts).
//!
//! At the end every answer equals brute force over everything written, and the store is
//! verify-clean with the right count. `concurrent_load_short` runs for a few seconds in the
//! normal suite; `concurrent_load_long` (ignored) runs for `CONCURRENT_LOAD_SECS` seconds,
//! 180 by default.

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{brute_force, Rng};
use simhash_store::{BulkOptions, Entry, Fingerprint, Match, Result, Store};

/// Query centres; planted document `i` of a writer is near centre `i % CENTRES`.
const CENTRES: usize = 32;
/// The distances queried: one block value per block (k = 3), 17 (k = 6) and 137 (k = 10).
const KS: [u32; 3] = [3, 6, 10];
/// Planted documents lie within this distance of their centre.
const MAX_PLANTED_DISTANCE: u32 = 10;
const QUERY_THREADS: usize = 8;

/// The four kinds of documents, each with its own id range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Space {
    BulkRandom = 0,
    BulkPlanted = 1,
    InsertPlanted = 2,
    InsertRandom = 3,
}

const SPACES: [Space; 4] = [
    Space::BulkRandom,
    Space::BulkPlanted,
    Space::InsertPlanted,
    Space::InsertRandom,
];

impl Space {
    fn base(self) -> u64 {
        (self as u64) << 40
    }

    fn id(self, index: u64) -> u64 {
        self.base() + index
    }

    fn of(id: u64) -> Option<(Space, u64)> {
        let space = *SPACES.get((id >> 40) as usize)?;
        Some((space, id - space.base()))
    }

    fn planted(self) -> bool {
        matches!(self, Space::BulkPlanted | Space::InsertPlanted)
    }
}

fn centres() -> Vec<u64> {
    let mut rng = Rng::new(0xC0FFEE);
    (0..CENTRES).map(|_| rng.next_u64()).collect()
}

/// The fingerprint written for `id`: a function of the id alone, so any answer can be checked.
fn fingerprint_of(id: u64, centres: &[u64]) -> u64 {
    let (space, index) = Space::of(id).expect("an id of a known space");
    let mut rng = Rng::new(id);
    if space.planted() {
        let centre = centres[(index % CENTRES as u64) as usize];
        let d = rng.below(u64::from(MAX_PLANTED_DISTANCE) + 1) as u32;
        rng.flip(centre, d)
    } else {
        rng.next_u64()
    }
}

/// The external key written for `id`: planted documents have one, random ones do not.
fn key_of(id: u64) -> Option<String> {
    let (space, index) = Space::of(id)?;
    space.planted().then(|| format!("{space:?}/{index}"))
}

/// Per space: how many documents a writer has started to write (an index below it may be
/// visible) and how many of its writes have returned (an index below it must be visible).
#[derive(Default)]
struct Progress {
    started: [AtomicU64; 4],
    acked: [AtomicU64; 4],
}

impl Progress {
    fn start(&self, space: Space, count: u64) {
        self.started[space as usize].store(count, Ordering::SeqCst);
    }

    fn ack(&self, space: Space, count: u64) {
        self.acked[space as usize].store(count, Ordering::SeqCst);
    }

    fn started(&self, space: Space) -> u64 {
        self.started[space as usize].load(Ordering::SeqCst)
    }

    fn acked(&self, space: Space) -> u64 {
        self.acked[space as usize].load(Ordering::SeqCst)
    }
}

/// Bulk loads rounds of `random` random and `planted` planted documents until `stop`; a
/// small memory budget makes each round several ingested runs.
fn bulk_writer(
    store: &Store,
    progress: &Progress,
    stop: &AtomicBool,
    centres: &[u64],
    random: u64,
    planted: u64,
) -> Result<u64> {
    let (mut r, mut p, mut rounds) = (0u64, 0u64, 0u64);
    while !stop.load(Ordering::SeqCst) {
        let mut loader =
            store.bulk_loader_with(BulkOptions::new().memory_budget(/* 256 KiB */ 256 << 10))?;
        for i in 0..random + planted {
            // Planted documents spread through the round, between random ones.
            if i % (random / planted.max(1) + 1) == 0 && p < planted * (rounds + 1) {
                let id = Space::BulkPlanted.id(p);
                p += 1;
                progress.start(Space::BulkPlanted, p);
                let key = key_of(id).expect("planted documents have keys");
                loader.add_with_key(id, Fingerprint(fingerprint_of(id, centres)), &key)?;
            } else {
                let id = Space::BulkRandom.id(r);
                r += 1;
                progress.start(Space::BulkRandom, r);
                loader.add(id, Fingerprint(fingerprint_of(id, centres)))?;
            }
        }
        loader.finish()?;
        progress.ack(Space::BulkPlanted, p);
        progress.ack(Space::BulkRandom, r);
        rounds += 1;
    }
    Ok(rounds)
}

/// Inserts batches of 5 planted and 20 random documents until `stop`.
fn insert_writer(
    store: &Store,
    progress: &Progress,
    stop: &AtomicBool,
    centres: &[u64],
) -> Result<u64> {
    let (mut r, mut p, mut batches) = (0u64, 0u64, 0u64);
    while !stop.load(Ordering::SeqCst) {
        let mut batch = Vec::new();
        for _ in 0..5 {
            let id = Space::InsertPlanted.id(p);
            p += 1;
            let entry = Entry::new(id, Fingerprint(fingerprint_of(id, centres)));
            batch.push(entry.with_key(key_of(id).expect("planted documents have keys")));
        }
        for _ in 0..20 {
            let id = Space::InsertRandom.id(r);
            r += 1;
            batch.push(Entry::new(id, Fingerprint(fingerprint_of(id, centres))));
        }
        progress.start(Space::InsertPlanted, p);
        progress.start(Space::InsertRandom, r);
        store.insert_batch(batch)?;
        progress.ack(Space::InsertPlanted, p);
        progress.ack(Space::InsertRandom, r);
        batches += 1;
    }
    Ok(batches)
}

/// Checks one answer as described in the module documentation. `acked` was read before the
/// query started, `started` after it returned.
fn check_answer(
    q: u64,
    k: u32,
    centre: usize,
    matches: &[Match],
    acked: [u64; 4],
    started: [u64; 4],
    centres: &[u64],
) {
    let mut seen = HashSet::new();
    for m in matches {
        let (space, index) = Space::of(m.id).unwrap_or_else(|| panic!("unknown id {}", m.id));
        assert!(
            index < started[space as usize],
            "id {} ({space:?} #{index}) returned before it was written",
            m.id
        );
        let fp = fingerprint_of(m.id, centres);
        assert_eq!(m.fingerprint, Fingerprint(fp), "fingerprint of id {}", m.id);
        assert_eq!(m.distance, (fp ^ q).count_ones(), "distance of id {}", m.id);
        assert!(m.distance <= k, "id {} at {} > k = {k}", m.id, m.distance);
        assert_eq!(m.key, key_of(m.id), "key of id {}", m.id);
        assert!(seen.insert(m.id), "id {} reported twice", m.id);
    }
    assert!(
        matches
            .windows(2)
            .all(|w| (w[0].distance, w[0].id) < (w[1].distance, w[1].id)),
        "answer not sorted by (distance, id)"
    );
    for space in [Space::BulkPlanted, Space::InsertPlanted] {
        for index in (centre as u64..acked[space as usize]).step_by(CENTRES) {
            let id = space.id(index);
            let d = (fingerprint_of(id, centres) ^ q).count_ones();
            assert!(
                d > k || seen.contains(&id),
                "{space:?} #{index} (id {id}, distance {d} <= k = {k}) was acknowledged before \
                 the query started but is not in its answer of {} matches",
                matches.len()
            );
        }
    }
}

/// Queries random centres at random `k` until `stop`; returns the number of queries.
fn query_loop(
    store: &Store,
    progress: &Progress,
    stop: &AtomicBool,
    centres: &[u64],
    seed: u64,
) -> Result<u64> {
    let mut rng = Rng::new(seed);
    let mut queries = 0;
    while !stop.load(Ordering::SeqCst) {
        let centre = rng.below(CENTRES as u64) as usize;
        let k = KS[rng.below(KS.len() as u64) as usize];
        // Half the queries are a few bits off the centre, so planted documents are found at
        // other distances than from the centre itself.
        let off = rng.below(3) as u32 * (queries as u32 % 2);
        let q = rng.flip(centres[centre], off);
        let acked = SPACES.map(|s| progress.acked(s));
        let matches = store.query(Fingerprint(q), k)?;
        let started = SPACES.map(|s| progress.started(s));
        check_answer(q, k, centre, &matches, acked, started, centres);
        queries += 1;
    }
    Ok(queries)
}

fn run(duration: Duration, bulk_random: u64, bulk_planted: u64) -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(Store::open(dir.path())?);
    let centres = Arc::new(centres());
    let progress = Arc::new(Progress::default());
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();

    let spawn = |f: Job| {
        let (store, progress, stop, centres) = (
            Arc::clone(&store),
            Arc::clone(&progress),
            Arc::clone(&stop),
            Arc::clone(&centres),
        );
        std::thread::spawn(move || {
            let result = f(&store, &progress, &stop, &centres);
            // A failing thread stops the others, so the test ends promptly.
            if result.is_err() {
                stop.store(true, Ordering::SeqCst);
            }
            result
        })
    };
    let bulk = spawn(Box::new(move |s, p, st, c| {
        bulk_writer(s, p, st, c, bulk_random, bulk_planted)
    }));
    let inserts = spawn(Box::new(insert_writer));
    let readers: Vec<_> = (0..QUERY_THREADS as u64)
        .map(|t| {
            spawn(Box::new(move |s, p, st, c| {
                query_loop(s, p, st, c, 100 + t)
            }))
        })
        .collect();

    while start.elapsed() < duration && !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::SeqCst);
    let mut queries = 0;
    for r in readers {
        queries += r.join().expect("query thread")?;
    }
    let rounds = bulk.join().expect("bulk thread")?;
    let batches = inserts.join().expect("insert thread")?;
    let elapsed = start.elapsed();

    let counts = SPACES.map(|s| progress.acked(s));
    assert_eq!(counts, SPACES.map(|s| progress.started(s)));
    let docs: Vec<(u64, u64)> = SPACES
        .iter()
        .flat_map(|&s| (0..counts[s as usize]).map(move |i| s.id(i)))
        .map(|id| (id, fingerprint_of(id, &centres)))
        .collect();
    eprintln!(
        "concurrent load: {queries} queries from {QUERY_THREADS} threads in {:.1} s while \
         {rounds} bulk loads added {} documents and {batches} insert batches added {}; \
         {} documents in all",
        elapsed.as_secs_f64(),
        counts[0] + counts[1],
        counts[2] + counts[3],
        docs.len()
    );
    assert!(queries > 0 && rounds > 0 && batches > 0);
    assert_eq!(store.len(), docs.len() as u64);
    let mut rng = Rng::new(7);
    let queries: Vec<u64> = centres
        .iter()
        .copied()
        .chain((0..CENTRES).map(|_| rng.next_u64()))
        .collect();
    for &q in &queries {
        for k in KS {
            let got: Vec<(u32, u64, u64)> = store
                .query(Fingerprint(q), k)?
                .into_iter()
                .map(|m| (m.distance, m.id, m.fingerprint.0))
                .collect();
            assert_eq!(got, brute_force(&docs, q, k), "query {q:016x}, k = {k}");
        }
    }
    let report = store.verify()?;
    assert!(report.is_clean(), "{report:?}");
    Ok(())
}

#[test]
fn concurrent_load_short() -> Result<()> {
    run(Duration::from_secs(4), 5_000, 100)
}

/// `CONCURRENT_LOAD_SECS=600 cargo test --release --test concurrent_load -- --ignored --nocapture`
#[test]
#[ignore = "long: a few minutes; run with --ignored"]
fn concurrent_load_long() -> Result<()> {
    let secs = std::env::var("CONCURRENT_LOAD_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(180);
    run(Duration::from_secs(secs), 50_000, 500)
}
/// A writer or reader thread's work.
type Job = Box<dyn FnOnce(&Store, &Progress, &AtomicBool, &[u64]) -> Result<u64> + Send>;
