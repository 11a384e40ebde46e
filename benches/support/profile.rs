//! The profile mode of the fingerprint benches: a plain loop that callgrind can count alone
//! (`--toggle-collect='*profile_loop*'`), instead of criterion.

use std::hint::black_box;

/// Runs `f` over every document `iters` times: the only code callgrind counts in profile mode.
#[inline(never)]
pub fn profile_loop(docs: &[String], iters: usize, f: impl Fn(&str)) {
    for _ in 0..iters {
        for d in docs {
            f(black_box(d));
        }
    }
}

/// `FINGERPRINT_ITERS`, or `default` when it is unset or not a number.
pub fn iterations(default: usize) -> usize {
    std::env::var("FINGERPRINT_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
