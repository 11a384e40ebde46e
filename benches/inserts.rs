//! Single writes: `Store::insert` one document at a time on one thread, with the default
//! `Durability::Buffered`, into a store that already holds `--base` documents (bulk-loaded),
//! (an insert is a delta, and a group is folded when 64 deltas have reached it);
//! and, into another such store, as many through `Store::insert_batch` of `--batch`
//! documents (1,000).
//! Then fresh k = 3 queries (fingerprints never asked, after 20,000 warm-up
//! queries of others) on the store as the inserts left it, and again after `compact`.
//!
//! `cargo bench --bench inserts -- --base 10000000 --n 1000000 --runs 3`
//!
//! Each run creates its store afresh; the table gives the median over runs.

use std::time::Instant;

use simhash_store::{Entry, Fingerprint, Store};

#[path = "support/rng.rs"]
mod rng;
use rng::SplitMix;

struct Args {
    base: u64,
    n: u64,
    runs: usize,
    queries: usize,
    batch: u64,
}

fn parse_args() -> Args {
    let mut args = Args {
        base: 1_000_000,
        n: 200_000,
        runs: 3,
        queries: 5_000,
        batch: 1_000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut num = |name: &str| -> u64 {
            let v = it.next().unwrap_or_else(|| panic!("{name} needs a value"));
            v.replace('_', "")
                .parse()
                .unwrap_or_else(|_| panic!("not a number: {v}"))
        };
        match a.as_str() {
            "--base" => args.base = num("--base"),
            "--n" => args.n = num("--n"),
            "--runs" => args.runs = num("--runs").max(1) as usize,
            "--queries" => args.queries = num("--queries") as usize,
            "--batch" => args.batch = num("--batch").max(1),
            "--bench" => {}
            other => panic!("unknown argument {other}; see the top of benches/inserts.rs"),
        }
    }
    args
}

/// p50 of fresh k = 3 queries: `warm` others first, then `measured`.
fn fresh_p50(store: &Store, rng: &mut SplitMix, warm: usize, measured: usize) -> f64 {
    for _ in 0..warm {
        store.query(Fingerprint(rng.next()), 3).expect("query");
    }
    let mut lat: Vec<f64> = (0..measured)
        .map(|_| {
            let q = Fingerprint(rng.next());
            let start = Instant::now();
            store.query(q, 3).expect("query");
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    lat.sort_by(f64::total_cmp);
    lat[lat.len() / 2]
}

struct Row {
    inserts_per_s: f64,
    batched_per_s: f64,
    query_after_inserts: f64,
    compact_s: f64,
    query_after_compact: f64,
}

/// A store of `base` bulk-loaded documents, ids `0..base`.
fn loaded(args: &Args, rng: &mut SplitMix) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir_in(".").expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    let mut loader = store.bulk_loader().expect("loader");
    for id in 0..args.base {
        loader.add(id, Fingerprint(rng.next())).expect("add");
    }
    loader.finish().expect("finish");
    (dir, store)
}

fn run(args: &Args, seed: u64) -> Row {
    let mut rng = SplitMix(seed);
    // Batched inserts into a store of their own, so that neither way of writing finds the
    // other's deltas in the store.
    let batched_per_s = {
        let (_dir, store) = loaded(args, &mut rng);
        let start = Instant::now();
        let mut id = args.base;
        while id < args.base + args.n {
            let end = (id + args.batch).min(args.base + args.n);
            store
                .insert_batch((id..end).map(|id| Entry::new(id, Fingerprint(rng.next()))))
                .expect("insert_batch");
            id = end;
        }
        args.n as f64 / start.elapsed().as_secs_f64()
    };
    let (_dir, store) = loaded(args, &mut rng);
    let start = Instant::now();
    for id in args.base..args.base + args.n {
        store.insert(id, Fingerprint(rng.next())).expect("insert");
    }
    let inserts_per_s = args.n as f64 / start.elapsed().as_secs_f64();
    let query_after_inserts = fresh_p50(&store, &mut rng, 20_000, args.queries);
    let start = Instant::now();
    store.compact().expect("compact");
    let compact_s = start.elapsed().as_secs_f64();
    let query_after_compact = fresh_p50(&store, &mut rng, 20_000, args.queries);
    Row {
        inserts_per_s,
        batched_per_s,
        query_after_inserts,
        compact_s,
        query_after_compact,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args = parse_args();
    println!(
        "# inserts: {} single inserts, and {} in batches of {}, each into a store of {} bulk-loaded documents, {} runs, {} measured queries",
        args.n, args.n, args.batch, args.base, args.runs, args.queries
    );
    let mut rows: [Vec<Row>; 1] = [Vec::new()];
    for r in 0..args.runs {
        let row = run(&args, 0x5eed + r as u64);
        println!(
            "  run {r}: {:.0} inserts/s one at a time, {:.0}/s batched, fresh k=3 p50 {:.1} µs after the inserts, compact {:.1} s, then {:.1} µs",
            row.inserts_per_s, row.batched_per_s, row.query_after_inserts, row.compact_s, row.query_after_compact
        );
        rows[0].push(row);
    }
    println!("| format | inserts/s one at a time | batched | fresh k=3 p50 after the inserts | compact | fresh k=3 p50 after compact |");
    println!("|---|---|---|---|---|---|");
    for (i, rows) in rows.iter().enumerate() {
        let m = |f: fn(&Row) -> f64| median(rows.iter().map(f).collect());
        println!(
            "| {} | {:.0} | {:.0} | {:.1} µs | {:.1} s | {:.1} µs |",
            simhash_store::upgrade::FORMAT_VERSION as usize + i,
            m(|r| r.inserts_per_s),
            m(|r| r.batched_per_s),
            m(|r| r.query_after_inserts),
            m(|r| r.compact_s),
            m(|r| r.query_after_compact)
        );
    }
}
