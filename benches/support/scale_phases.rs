//! The query phases of `benches/scale.rs`: the query sets of each run and k, and measuring
//! them on a freshly opened store.

use super::*;

/// The distances measured.
pub(crate) const KS: [u32; 2] = [3, 6];

/// One measured phase: the store reopened, `warmup` asked, then `measured` twice.
pub(crate) struct Phase {
    pub(crate) run: usize,
    pub(crate) k: u32,
    pub(crate) warmup: Vec<Fingerprint>,
    pub(crate) measured: Vec<Fingerprint>,
}

/// What one phase measured on the store.
pub(crate) struct PhaseResult {
    pub(crate) run: usize,
    pub(crate) k: u32,
    /// Latencies of the first and the second pass over the measured set, sorted.
    pub(crate) fresh: Vec<Duration>,
    pub(crate) repeated: Vec<Duration>,
    pub(crate) matches: u64,
    pub(crate) warmup: Duration,
    /// Ids of the answers to the first `--check` measured queries, ascending.
    pub(crate) answers: Vec<Vec<u64>>,
    /// Fresh latencies of the queries in the crowded group of `crowded:<share>`, sorted.
    pub(crate) crowded: Vec<Duration>,
}

/// `count` queries never in `asked` (which gets them): half 0..=3 bits from a stored
/// fingerprint, half fresh draws of the workload.
pub(crate) fn query_set(
    rng: &mut SplitMix,
    fps: &Fps,
    asked: &mut HashSet<u64>,
    count: usize,
) -> Vec<Fingerprint> {
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let q = if out.len() % 2 == 0 {
            let base = fps.get(rng.below(fps.n as u64) as usize);
            let d = rng.below(4) as u32;
            rng.flip(base, d)
        } else {
            fps.workload.draw(rng)
        };
        if asked.insert(q) {
            out.push(Fingerprint(q));
        }
    }
    out
}

/// Runs each phase on a freshly opened store (empty block and query caches; the store's
/// files in the OS page cache), one query at a time on this thread.
pub(crate) fn measure(
    args: &Args,
    open: &dyn Fn(&std::path::Path) -> Store,
    path: &std::path::Path,
    phases: &[Phase],
    label: &str,
) -> Vec<PhaseResult> {
    println!();
    println!(
        "queries ({label}), µs: each run reopens the store, asks {} warm-up queries, then {} others (fresh) and the same again (repeated)",
        args.warmup, args.queries
    );
    // Every run starts with the store's files in the OS page cache when they fit in half the
    // memory, as in a store in use; a larger store is read from disk.
    let t = Instant::now();
    if dir_size(path) * 2 < memory_available() {
        let bytes = read_files(path);
        println!(
            "  read the store's files once (OS page cache): {:.0} MiB in {:.2} s",
            mib(bytes),
            t.elapsed().as_secs_f64()
        );
    } else {
        println!("  the store is larger than half the available memory: queries read from disk");
    }
    let mut results = Vec::new();
    for phase in phases {
        let store = open(path);
        if args.preload {
            let t = Instant::now();
            let ranges = store.preload_query_cache().expect("preload");
            println!(
                "  preload_query_cache: {ranges} ranges, {:.0} MiB, {:.2} s",
                mib(store.query_cache_usage()),
                t.elapsed().as_secs_f64()
            );
        }
        let t = Instant::now();
        for &q in &phase.warmup {
            let _ = store.query(q, phase.k).expect("query");
        }
        let warmup = t.elapsed();
        let check = if phase.run == 0 { args.check } else { 0 };
        let fresh = run_queries(&store, &phase.measured, phase.k, check, &args.workload);
        let repeated = run_queries(&store, &phase.measured, phase.k, 0, &args.workload);
        assert_eq!(
            fresh.matches, repeated.matches,
            "the same queries found other matches"
        );
        drop(store);
        let r = PhaseResult {
            run: phase.run,
            k: phase.k,
            fresh: fresh.lat,
            repeated: repeated.lat,
            matches: fresh.matches,
            warmup,
            answers: fresh.answers,
            crowded: fresh.crowded,
        };
        println!(
            "  run {} k={}: fresh p50 {:.1} p99 {:.1}, repeated p50 {:.1} p99 {:.1}, {} matches, warm-up {:.1} µs/query, load average {:.1}",
            r.run,
            r.k,
            us(percentile(&r.fresh, 0.5)),
            us(percentile(&r.fresh, 0.99)),
            us(percentile(&r.repeated, 0.5)),
            us(percentile(&r.repeated, 0.99)),
            r.matches,
            us(r.warmup) / args.warmup.max(1) as f64,
            load_average(),
        );
        results.push(r);
    }
    results
}
