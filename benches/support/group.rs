//! The criterion group of the fingerprint benches: each side fingerprints (or segments)
//! every document once per iteration, throughput in bytes of text.

use std::hint::black_box;

use criterion::{Criterion, Throughput};

/// One criterion benchmark: a name and what it does to one document.
pub type DocSide<'a> = (&'a str, &'a dyn Fn(&str));

/// Runs the group `name` over `docs`, one benchmark per side.
pub fn bench_docs(c: &mut Criterion, name: &str, docs: &[String], sides: &[DocSide<'_>]) {
    let bytes: usize = docs.iter().map(String::len).sum();
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(30);
    for (side, per_doc) in sides {
        group.bench_function(*side, |b| {
            b.iter(|| {
                for d in docs {
                    per_doc(black_box(d));
                }
            })
        });
    }
    group.finish();
}

/// A fingerprint bench's `main`: the profile loop when `profile` says it ran (its
/// environment variable set), else criterion's `groups` and then `ratios`, only under `cargo
/// bench` (which passes `--bench`), not when `cargo test` runs the bench as a test or a
/// listing is asked for.
pub fn main(profile: fn() -> bool, groups: fn(), ratios: fn()) {
    if profile() {
        return;
    }
    groups();
    Criterion::default().configure_from_args().final_summary();
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--list") {
        ratios();
    }
}
