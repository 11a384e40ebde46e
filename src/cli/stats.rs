//! `simhash-store stats`: documents, disk usage, and how documents spread over block values.

use std::process::ExitCode;

use simhash_store::groups::BlockGroups;
use simhash_store::upgrade::FORMAT_VERSION;
use simhash_store::BLOCKS;

use super::{QuietArg, StoreArg};

const EXAMPLES: &str = "\
Examples:
  simhash-store stats --store pages.db
  simhash-store stats --store pages.db --json

Reading the output:
  format: the store's on-disk format version (`format_version` in --json); this build writes
  the newest and reads older ones read-only (`simhash-store upgrade` copies one into the newest).
  disk bytes per column family and per document: block0..block3 hold the index (formats 7 to
  9: packed chunks of up to 4,096 documents, about 9 bytes per document each at 100M documents,
  more in a small store, whose chunks are small and each carries several dozen bytes of header,
  padding and keys; formats 1 to 6: a 16-byte key per document each, before compression), docs
  the fingerprint, key and length of each document, keys the external keys.
  documents per block value: a query at k <= 3 scans, in each block family, the documents
  sharing one 16-bit value with the query. With random fingerprints each value holds about
  documents/65536 of them. `skew` compares the max with the max that uniformly random
  fingerprints of as many documents give (`random max`, the median over such stores): about 1x
  for well-spread fingerprints at any size; 10x or more means many documents share that block
  value: usually templated or empty-looking pages whose fingerprints are alike. The top values
  list them; query one of those documents with `simhash-store query --fingerprint` to see which
  pages they are. `max share` is the largest group's share of the documents. `shared` is how
  much more often two documents share the block's value than two uniformly random
  fingerprints (1x for those; real text gives a few times more), and `scan/query` the entries
  of the family that a new query drawn like the stored documents scans on average. The last
  line sums that over the four families, the cost of a k<=3 query, against uniform
  fingerprints. See docs/guide.md.";

/// Arguments of `stats`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    store: StoreArg,

    // Taken as every subcommand takes it; `stats` writes nothing to standard error but errors.
    #[command(flatten)]
    #[allow(dead_code)]
    quiet: QuietArg,

    /// How many of the most crowded block values to list per block.
    #[arg(long, default_value_t = 5, value_name = "N")]
    top: usize,

    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// The spread of documents over the 65536 values of one block.
#[derive(Debug, serde::Serialize)]
struct Spread {
    /// The block's column family (`block0`..`block3`).
    family: String,
    values_used: usize,
    min: u64,
    median: u64,
    max: u64,
    mean: f64,
    /// The max that uniformly random fingerprints of as many documents give (the median of
    /// the max over such stores).
    random_max: u64,
    /// `max / random_max`: about 1 for well-spread fingerprints.
    skew: f64,
    /// `max / documents`: the share of the documents in the largest group.
    max_share: f64,
    /// How much more often two documents share this block's value than two uniformly random
    /// fingerprints (see `simhash_store::groups`).
    shared_block_factor: f64,
    /// Entries of this family a fresh query drawn like the documents scans, on average.
    expected_scan: f64,
    /// Groups written split (format 9): a query reads a few thousandths of each.
    split_groups: u64,
    top: Vec<(String, u64)>,
}

/// The median of the largest count among the 65536 values of a block when `documents`
/// uniformly random fingerprints spread over them: each count is Poisson with mean
/// `documents / 65536`, so the median max is the smallest `m` with `P(count <= m)^65536 >=
/// 1/2`. (With 1,000 documents it is 2; with a million, 34; with a billion, 15,787.)
fn random_max(documents: u64) -> u64 {
    let values = f64::from(1u32 << 16);
    let lambda = documents as f64 / values;
    if lambda == 0.0 {
        return 0;
    }
    // P(count <= m) must reach 2^(-1/65536).
    let target = 0.5f64.powf(1.0 / values);
    let (mut m, mut log_pmf, mut cdf) = (0u64, -lambda, (-lambda).exp());
    while cdf < target && m < documents {
        m += 1;
        log_pmf += lambda.ln() - (m as f64).ln();
        cdf += log_pmf.exp();
    }
    m
}

fn spread(family: String, groups: &BlockGroups, block: usize, top: usize) -> Spread {
    let counts = groups.sizes(block);
    let mut sorted = counts.to_vec();
    sorted.sort_unstable();
    let total = groups.documents();
    let mean = total as f64 / sorted.len().max(1) as f64;
    let max = sorted.last().copied().unwrap_or(0);
    let random_max = random_max(total);
    Spread {
        family,
        values_used: counts.iter().filter(|&&n| n > 0).count(),
        min: sorted.first().copied().unwrap_or(0),
        median: sorted.get(sorted.len() / 2).copied().unwrap_or(0),
        max,
        mean,
        random_max,
        skew: if random_max > 0 {
            max as f64 / random_max as f64
        } else {
            0.0
        },
        max_share: groups.largest_share(block),
        shared_block_factor: groups.shared_block_factor(block),
        expected_scan: groups.expected_scan(block),
        split_groups: groups.split_groups(block),
        top: groups
            .largest(block, top)
            .into_iter()
            .map(|(v, n)| (format!("{v:04x}"), n))
            .collect(),
    }
}

/// What `stats` says after a store's format version: whether this build writes it.
fn format_note(version: u32) -> String {
    if version == FORMAT_VERSION {
        " (the newest: this build writes it)".into()
    } else {
        format!(
            " (read-only in this build, which writes format {FORMAT_VERSION}: `simhash-store upgrade` copies it)"
        )
    }
}

/// Runs `stats`.
///
/// # Errors
/// The store cannot be opened or read.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.store.open_read_only()?;
    let mut with_key = 0u64;
    let mut groups = BlockGroups::new();
    for item in store.documents()? {
        let (_, d) = item?;
        with_key += u64::from(d.key.is_some());
        groups.add(d.fingerprint);
    }
    groups.mark_split_groups(&store)?;
    let documents = groups.documents();
    let usage = store.disk_usage()?;
    let disk_total: u64 = usage.iter().map(|(_, b)| b).sum();
    let per_doc = |b: u64| {
        if documents > 0 {
            b as f64 / documents as f64
        } else {
            0.0
        }
    };
    let spreads: Vec<Spread> = (0..BLOCKS)
        .map(|i| spread(format!("block{i}"), &groups, i, args.top))
        .collect();
    let scan = groups.expected_scan_per_query();
    let uniform_scan = groups.uniform_scan_per_query();
    let scan_ratio = if uniform_scan > 0.0 {
        scan / uniform_scan
    } else {
        0.0
    };
    if args.json {
        let disk: serde_json::Map<String, serde_json::Value> = usage
            .iter()
            .map(|(cf, b)| {
                (
                    cf.to_string(),
                    serde_json::json!({"bytes": b, "per_document": per_doc(*b)}),
                )
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "documents": documents,
                "format_version": store.format_version(),
                "with_key": with_key,
                "disk_bytes": disk_total,
                "disk_bytes_per_document": per_doc(disk_total),
                "column_families": disk,
                "blocks": spreads,
                "expected_scan_per_query": scan,
                "uniform_scan_per_query": uniform_scan,
                "scan_vs_uniform": scan_ratio,
                "fingerprint_config": store.simhasher().config(),
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("store        {}", store.path().display());
    println!(
        "format       {}{}",
        store.format_version(),
        format_note(store.format_version())
    );
    println!("documents    {documents} ({with_key} with a key)");
    println!("disk         {disk_total} bytes, {:.1} per document (live SST files; run after a load has flushed)", per_doc(disk_total));
    for (cf, b) in &usage {
        println!(
            "  {cf:<8}   {b:>12} bytes  {:>8.1} per document",
            per_doc(*b)
        );
    }
    println!("documents per block value (65536 values per block; a k<=3 query scans one value per block):");
    println!(
        "  {:<8} {:>7} {:>6} {:>7} {:>7} {:>9} {:>10} {:>7} {:>8} {:>7} {:>10} {:>5}  top values",
        "block",
        "used",
        "min",
        "median",
        "max",
        "mean",
        "random max",
        "skew",
        "max share",
        "shared",
        "scan/query",
        "split"
    );
    for s in &spreads {
        let top: Vec<String> = s.top.iter().map(|(v, n)| format!("{v}:{n}")).collect();
        println!(
            "  {:<8} {:>7} {:>6} {:>7} {:>7} {:>9.2} {:>10} {:>6.1}x {:>8.3}% {:>6.1}x {:>10.1} {:>5}  {}",
            s.family,
            s.values_used,
            s.min,
            s.median,
            s.max,
            s.mean,
            s.random_max,
            s.skew,
            100.0 * s.max_share,
            s.shared_block_factor,
            s.expected_scan,
            s.split_groups,
            top.join(" ")
        );
    }
    println!(
        "skew: max / random max, the max that uniformly random fingerprints of {} give;\n\
         about 1x when fingerprints are well spread, 10x or more when many documents share most of\n\
         their fingerprint. max share: the largest group's share of the documents.\n\
         shared: how much more often two documents share the block's value than two uniformly\n\
         random fingerprints (1x for those). scan/query: entries of the family that a new query\n\
         drawn like these documents scans, on average (shared x mean; a group written split\n\
         counts about 4/4096 of itself). split: groups written split (a query reads by parts).",
        super::plural(documents, "document", "documents")
    );
    println!(
        "a k<=3 query drawn like these documents scans {scan:.1} entries on average; with uniformly\n\
         random fingerprints it would scan {uniform_scan:.1}: {scan_ratio:.2}x"
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use simhash_store::Fingerprint;

    #[test]
    fn spread_of_a_skewed_block() {
        let fps = (0..100)
            .map(|_| Fingerprint(7 << 48))
            .chain([Fingerprint(9 << 48)]);
        let s = spread("block0".into(), &BlockGroups::from_fingerprints(fps), 0, 2);
        assert_eq!((s.values_used, s.min, s.median, s.max), (2, 0, 0, 100));
        assert_eq!(
            s.top,
            vec![("0007".to_string(), 100), ("0009".to_string(), 1)]
        );
        assert_eq!(s.random_max, 1);
        assert_eq!(s.skew, 100.0);
        assert!((s.max_share - 100.0 / 101.0).abs() < 1e-9);
        // 100 * 99 ordered pairs of 101 * 100 share a value.
        let factor = 65536.0 * 9900.0 / 10100.0;
        assert!((s.shared_block_factor - factor).abs() < 1e-6);
        assert!((s.expected_scan - 99.0).abs() < 1e-9);
    }

    /// `n` fingerprints from a SplitMix64 stream.
    fn random_fingerprints(n: u64, seed: u64) -> BlockGroups {
        let mut state = seed;
        BlockGroups::from_fingerprints((0..n).map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            Fingerprint(z ^ (z >> 31))
        }))
    }

    #[test]
    fn random_fingerprints_are_not_skewed_at_any_size() {
        for (n, seed) in [(1_000, 1), (1_000, 2), (100_000, 3), (2_000_000, 4)] {
            let s = spread("block0".into(), &random_fingerprints(n, seed), 0, 1);
            assert!(
                (0.5..=2.0).contains(&s.skew),
                "{n} random fingerprints: skew {} (max {}, random max {})",
                s.skew,
                s.max,
                s.random_max
            );
        }
    }

    #[test]
    fn random_max_grows_with_the_mean() {
        assert_eq!(random_max(0), 0);
        assert_eq!(random_max(1_000), 2);
        let million = random_max(1_000_000);
        assert!((25..=40).contains(&million), "{million}");
        let billion = random_max(1_000_000_000);
        let mean = 1e9 / 65536.0;
        assert!(
            (billion as f64) > mean && (billion as f64) < mean + 6.0 * mean.sqrt(),
            "{billion}"
        );
    }
}
