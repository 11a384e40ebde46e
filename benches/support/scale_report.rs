//! The report of `benches/scale.rs`: the answers for the FAISS comparison, and the medians
//! over runs of each statistic, the store's and FAISS's side by side.

use super::*;

/// The answers of run 0, for the script to compare with FAISS's (see benches/support/faiss.rs).
pub(crate) fn write_answers(
    path: &std::path::Path,
    results: &[PhaseResult],
) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    for r in results.iter().filter(|r| r.run == 0) {
        for (i, ids) in r.answers.iter().enumerate() {
            write!(out, "{} {i}", r.k)?;
            for id in ids {
                write!(out, " {id}")?;
            }
            writeln!(out)?;
        }
    }
    out.flush()
}

/// The medians over runs of each statistic, the store's and FAISS's side by side.
pub(crate) fn print_comparison(
    args: &Args,
    ours: &[PhaseResult],
    theirs: Option<&faiss::FaissReport>,
) {
    if let Some(f) = theirs {
        println!();
        println!(
            "FAISS {}: IndexBinaryMultiHash(64, 4, 16) in memory, build {:.2} s, index {:.0} MiB, peak RSS {:.0} MiB, per-call overhead {:.1} µs (included in its latencies)",
            f.faiss_version, f.build_s, f.index_mib, f.peak_rss_mib, f.call_overhead_us
        );
        let whole_sets = args.faiss_queries == 0 || args.faiss_queries >= args.queries;
        for r in ours.iter().filter(|_| whole_sets) {
            if let Some(p) = f.phases.iter().find(|p| p.run == r.run && p.k == r.k) {
                if p.matches != r.matches {
                    println!(
                        "MISMATCH run {} k={}: the store found {} matches, FAISS {}",
                        r.run, r.k, r.matches, p.matches
                    );
                }
            }
        }
        println!(
            "answers compared id by id: {} queries, {} differ{}",
            f.checked,
            f.mismatches,
            if f.mismatches > 0 { " (MISMATCH)" } else { "" }
        );
    }
    println!();
    println!(
        "queries, µs, medians over {} runs, one thread (fresh: never asked, after reopening and {} warm-up queries; repeated: the same {} again):",
        args.runs, args.warmup, args.queries
    );
    println!("| k | queries | store p50 | store p99 | FAISS p50 | FAISS p99 | p50 store / FAISS | matches/query |");
    println!("|---|---|---|---|---|---|---|---|");
    for k in KS {
        let rows: Vec<&PhaseResult> = ours.iter().filter(|r| r.k == k).collect();
        let faiss_rows: Vec<&faiss::FaissPhase> = theirs
            .map(|f| f.phases.iter().filter(|p| p.k == k).collect())
            .unwrap_or_default();
        let matches = median(
            rows.iter()
                .map(|r| r.matches as f64 / r.fresh.len().max(1) as f64)
                .collect(),
        );
        for (case, fresh) in [("fresh", true), ("repeated", false)] {
            let stat = |p: f64| {
                median(
                    rows.iter()
                        .map(|r| us(percentile(if fresh { &r.fresh } else { &r.repeated }, p)))
                        .collect(),
                )
            };
            let (p50, p99) = (stat(0.5), stat(0.99));
            let (f50, f99) = if faiss_rows.is_empty() {
                (None, None)
            } else {
                let col = |g: fn(&faiss::FaissPhase) -> f64| {
                    median(faiss_rows.iter().map(|p| g(p)).collect())
                };
                if fresh {
                    (Some(col(|p| p.fresh_p50_us)), Some(col(|p| p.fresh_p99_us)))
                } else {
                    (
                        Some(col(|p| p.repeated_p50_us)),
                        Some(col(|p| p.repeated_p99_us)),
                    )
                }
            };
            let cell = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
            let ratio = f50.map_or("-".to_string(), |f| format!("{:.2}", p50 / f));
            println!(
                "| {k} | {case} | {p50:.1} | {p99:.1} | {} | {} | {ratio} | {matches:.2} |",
                cell(f50),
                cell(f99)
            );
        }
        if matches!(args.workload, Workload::Crowded { .. }) {
            let stat =
                |p: f64| median(rows.iter().map(|r| us(percentile(&r.crowded, p))).collect());
            let landing = median(rows.iter().map(|r| r.crowded.len() as f64).collect());
            println!(
                "| {k} | fresh, in the crowded group ({landing:.0} per run) | {:.1} | {:.1} | - | - | - | - |",
                stat(0.5),
                stat(0.99)
            );
        }
    }
}
