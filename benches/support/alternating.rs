//! Throughput ratios measured in alternating rounds, shared by the fingerprint benches.
//!
//! criterion times its groups one after the other, seconds apart, and on a shared machine the
//! load changes in between by more than the differences a ratio of two group results is meant
//! to show. Here every round runs the baseline and then each side, each for a few short
//! batches (about 3 ms), and the fastest batch counts: other processes only ever add time,
//! so the fastest batch is the closest to the time without them. The result is the median of
//! the per-round ratios `baseline time / side time` (a side's throughput over the
//! baseline's) and their interquartile range.

use std::hint::black_box;
use std::time::Instant;

use simhash_store::Simhasher;

/// Rounds, the batches each side runs per round and about how long a batch takes.
pub const ROUNDS: usize = 41;
const BATCHES: usize = 5;
const BATCH_SECONDS: f64 = 0.003;

/// One thing timed: a name and one pass over the benchmark's text.
pub type Side<'a> = (&'a str, &'a dyn Fn());

/// Prints, for each of `sides`, its throughput over `baseline`'s, measured in alternating
/// rounds, one line each: `{label}: {side} / {baseline} throughput: median ...`. The batch
/// size is set from the slowest of the sides, `sides[slowest]`.
pub fn print_ratios(label: &str, baseline: Side<'_>, sides: &[Side<'_>], slowest: usize) {
    let (baseline_name, baseline) = baseline;
    let once = sides.get(slowest).map_or(1e-3, |(_, pass)| {
        (0..10)
            .map(|_| {
                let start = Instant::now();
                pass();
                start.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    });
    let iters = (BATCH_SECONDS / once.max(1e-9)).ceil() as usize;
    // The fastest of the batches of a round.
    let time = |pass: &dyn Fn()| {
        (0..BATCHES)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..iters {
                    pass();
                }
                start.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    // ratios[side][round]
    let mut ratios = vec![Vec::with_capacity(ROUNDS); sides.len()];
    for _ in 0..ROUNDS {
        let base = time(baseline);
        for ((_, pass), r) in sides.iter().zip(&mut ratios) {
            r.push(base / time(*pass));
        }
    }
    for ((name, _), ratios) in sides.iter().zip(&mut ratios) {
        ratios.sort_by(f64::total_cmp);
        let at = |q: usize| {
            ratios
                .get(q * (ROUNDS - 1) / 4)
                .copied()
                .unwrap_or(f64::NAN)
        };
        println!(
            "{label}: {name} / {baseline_name} throughput: median {:.3} (quartiles \
             {:.3}..{:.3}) over {ROUNDS} alternating rounds, the fastest of {BATCHES} batches \
             of {iters} iterations per side",
            at(2),
            at(1),
            at(3),
        );
    }
}

/// [`print_ratios`] for fingerprinting `docs` with each of `hashers` (one side each, named
/// as given), after one warm-up fingerprint of `warm_up` each.
pub fn print_fingerprint_ratios(
    label: &str,
    baseline: Side<'_>,
    hashers: &[(&str, Simhasher)],
    docs: &[String],
    warm_up: &str,
    slowest: usize,
) {
    for (_, h) in hashers {
        let _ = h.fingerprint(warm_up);
    }
    let passes: Vec<_> = hashers
        .iter()
        .map(|(name, h)| {
            let pass = move || {
                for d in docs {
                    black_box(h.fingerprint(black_box(d)).ok());
                }
            };
            (*name, pass)
        })
        .collect();
    let sides: Vec<Side<'_>> = passes
        .iter()
        .map(|(name, pass)| (*name, pass as &dyn Fn()))
        .collect();
    print_ratios(label, baseline, &sides, slowest);
}
