//! `simhash-store dedup`: every near-duplicate pair of a store, the clusters they form, the
//! documents to drop, a summary and a picture of the distance and cluster-size distributions.
//!
//! - `files.rs`: the pairs, clusters and drop files, as JSON Lines or CSV.
//! - `svg.rs`: the picture, `summary.svg`.

mod files;
mod svg;

use std::cell::Cell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use simhash_store::dedup::{ClusterBuilder, DedupSummary, Representative, ScanProgress};
use simhash_store::verified::{Verification, DEFAULT_MIN_SIMILARITY, DEFAULT_VERIFIED_K};
use simhash_store::Store;

use self::files::{DedupWriter, OutputFormat, PairColumns, PairRow};
use self::svg::summary_svg;

use super::{usage, StoreArg, EXIT_OK};

use simhash_store::DEFAULT_K;

const EXAMPLES: &str = "\
Examples:
  simhash-store dedup --store pages.db --out dedup/
  simhash-store dedup --store pages.db -k 5 --out dedup/ --format csv --representative longest
  simhash-store dedup --store pages.db --verified --out dedup/
  simhash-store dedup --store pages.db --with-keys --out dedup/   # pairs with their URLs

Writes into --out:
  pairs.jsonl     every pair within k: {\"a\": id, \"b\": id, \"distance\": d}, a < b (with
                  --verified, only the pairs whose sketches agree, and their \"similarity\";
                  with --with-keys, \"key_a\" and \"key_b\")
  clusters.jsonl  every document with a near-duplicate: id, cluster (its lowest member id),
                  representative (the member kept), keep, key
  drop.jsonl      the documents to drop: every clustered document but the representative
  summary.json    the numbers printed at the end
  summary.svg     pairs per distance and clusters per size (log scale): open it in a browser
                  to choose k: pairs at the largest distances that are not duplicates mean k
                  is too large
(.csv instead of .jsonl with --format csv.) Documents without a near-duplicate appear in no
file. The store is opened read-only, so this runs beside a process that writes to it, on a
consistent snapshot.";

/// Arguments of `dedup`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    store: StoreArg,

    /// The largest Hamming distance between near-duplicates (0..=64). Up to 3 is one pass
    /// over each block family; larger values also compare neighbouring block values.
    /// Default: 3; with --verified, 8 (the candidates' distance).
    #[arg(short = 'k', long, value_name = "BITS", value_parser = clap::value_parser!(u32).range(0..=64))]
    k: Option<u32>,

    /// Verified near-duplicates: pairs within k bits (8 by default) kept only where the
    /// documents' sketches agree (a store loaded with --sketch).
    #[arg(long)]
    verified: bool,

    /// With --verified: the smallest sketch similarity (0 to 1) of a kept pair. Default: 0.75.
    #[arg(long, value_name = "SIMILARITY", requires = "verified")]
    min_similarity: Option<f64>,

    /// The directory to write the results into (created if missing; files are replaced).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,

    /// The format of the pairs, clusters and drop files: jsonl or csv.
    #[arg(long, default_value = "jsonl", value_name = "FORMAT", value_parser = parse_format)]
    format: OutputFormat,

    /// Which document of each cluster to keep: lowest-id, longest (longest text) or
    /// first-loaded.
    #[arg(long, default_value = "lowest-id", value_name = "RULE", value_parser = parse_representative)]
    representative: Representative,

    /// Documents compared at a time per chunk of a block value shared by many documents.
    #[arg(long, default_value_t = 65_536, value_name = "DOCS")]
    chunk_size: usize,

    /// Write the external keys of both documents into the pairs file (`key_a`, `key_b`):
    /// one document lookup per document of a pair.
    #[arg(long)]
    with_keys: bool,

    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,

    #[arg(long, short = 'q', help = super::QUIET_HELP)]
    quiet: bool,
}

fn parse_format(s: &str) -> Result<OutputFormat, String> {
    s.parse()
}

fn parse_representative(s: &str) -> Result<Representative, String> {
    s.parse().map_err(|e: simhash_store::Error| e.to_string())
}

fn progress_bar(quiet: bool) -> ProgressBar {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr())
    };
    let style = ProgressStyle::with_template(
        "{spinner} scanning {bar:30} {percent}% of {human_len} keys, {msg} [{elapsed}, eta {eta}]",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// The external keys of the documents of recent pairs (a pair's documents often appear in the
/// next pairs too); cleared when it holds [`KeyCache::MAX`] documents.
#[derive(Default)]
struct KeyCache {
    keys: HashMap<u64, Option<String>>,
}

impl KeyCache {
    const MAX: usize = 1 << 20;

    /// The keys of `a` and `b` when `wanted`.
    fn of(
        &mut self,
        store: &Store,
        wanted: bool,
        a: u64,
        b: u64,
    ) -> anyhow::Result<Option<(Option<String>, Option<String>)>> {
        if !wanted {
            return Ok(None);
        }
        Ok(Some((self.key(store, a)?, self.key(store, b)?)))
    }

    fn key(&mut self, store: &Store, id: u64) -> anyhow::Result<Option<String>> {
        if let Some(key) = self.keys.get(&id) {
            return Ok(key.clone());
        }
        if self.keys.len() >= Self::MAX {
            self.keys.clear();
        }
        let key = store
            .document(id)
            .with_context(|| format!("reading document {id}"))?
            .and_then(|d| d.key);
        self.keys.insert(id, key.clone());
        Ok(key)
    }
}

/// Runs `dedup`.
///
/// # Errors
/// The store cannot be opened or read, or the output cannot be written.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.store.open_read_only()?;
    if args.verified && !store.keeps_sketches() {
        // Before anything is written into --out.
        return Err(simhash_store::Error::NoSketches {
            path: store.path().to_path_buf(),
        }
        .into());
    }
    let start = Instant::now();
    let columns = PairColumns {
        similarity: args.verified,
        keys: args.with_keys,
    };
    let mut writer = DedupWriter::create(&args.out, args.format, columns)
        .with_context(|| format!("cannot write the results into {}", args.out.display()))?;
    let mut keys = KeyCache::default();
    let bar = progress_bar(args.quiet);
    let found = Cell::new(0u64);
    let mut builder = ClusterBuilder::new();
    let on_progress = |p: ScanProgress| {
        bar.set_length(p.total);
        bar.set_position(p.scanned);
        bar.set_message(format!("{} pairs", found.get()));
    };
    let mut candidates = None;
    let stats = if args.verified {
        let verification = Verification::new(
            args.k.unwrap_or(DEFAULT_VERIFIED_K),
            args.min_similarity.unwrap_or(DEFAULT_MIN_SIMILARITY),
        )
        .map_err(|e| usage(e.to_string()))?;
        let stats = store
            .verified_pairs(verification)
            .chunk_size(args.chunk_size)
            .on_progress(on_progress)
            .for_each(|pair| {
                found.set(found.get() + 1);
                builder.add_pair(pair.a, pair.b);
                let mut row = PairRow::of(pair.pair());
                row.similarity = Some(pair.similarity);
                let pair_keys = keys.of(&store, args.with_keys, pair.a, pair.b)?;
                row.keys = pair_keys
                    .as_ref()
                    .map(|(a, b)| (a.as_deref(), b.as_deref()));
                writer.write_pair(&row)
            })
            .with_context(|| format!("scanning {} for verified pairs", store.path().display()))?;
        candidates = Some(stats.candidates.pairs);
        stats.verified
    } else {
        store
            .pairs(args.k.unwrap_or(DEFAULT_K))
            .chunk_size(args.chunk_size)
            .on_progress(on_progress)
            .for_each(|pair| {
                found.set(found.get() + 1);
                builder.add_pair(pair.a, pair.b);
                let mut row = PairRow::of(pair);
                let pair_keys = keys.of(&store, args.with_keys, pair.a, pair.b)?;
                row.keys = pair_keys
                    .as_ref()
                    .map(|(a, b)| (a.as_deref(), b.as_deref()));
                writer.write_pair(&row)
            })
            .with_context(|| format!("scanning {} for pairs", store.path().display()))?
    };
    bar.set_message("clustering");
    let mut clusters = builder.finish();
    clusters
        .choose_representatives(&store, args.representative)
        .context("reading the documents of the clusters")?;
    let files = writer.finish(&clusters)?;
    bar.finish_and_clear();

    let summary = DedupSummary::new(store.len(), &stats, &clusters);
    let svg = args.out.join("summary.svg");
    std::fs::write(&svg, summary_svg(&summary))
        .with_context(|| format!("writing {}", svg.display()))?;
    let json_path = args.out.join("summary.json");
    let json = serde_json::to_string_pretty(&summary)?;
    std::fs::write(&json_path, format!("{json}\n"))
        .with_context(|| format!("writing {}", json_path.display()))?;

    if args.json {
        println!("{json}");
    } else {
        println!("{}", summary_text(&summary));
        if let Some(candidates) = candidates {
            println!(
                "verified:            {} of {candidates} candidate pairs (sketch similarity >= {})",
                stats.pairs,
                args.min_similarity.unwrap_or(DEFAULT_MIN_SIMILARITY)
            );
        }
        println!(
            "time:                {:.1} s",
            start.elapsed().as_secs_f64()
        );
        println!("written:");
        for path in files.iter().chain([&json_path, &svg]) {
            println!("  {}", path.display());
        }
    }
    Ok(ExitCode::from(EXIT_OK))
}

/// The summary as the lines `dedup` prints: counts, pairs per distance, the largest clusters.
fn summary_text(summary: &DedupSummary) -> String {
    let mut text = format!("documents:           {}\n", summary.documents);
    text += &format!("pairs within k = {}:  {}\n", summary.k, summary.pairs);
    for (d, n) in summary.pairs_per_distance.iter().enumerate() {
        text += &format!("  distance {d:>2}:       {n}\n");
    }
    text += &format!("clusters:            {}\n", summary.clusters);
    text += &format!("clustered documents: {}\n", summary.clustered_documents);
    text += &format!("documents to drop:   {}\n", summary.dropped);
    let largest: Vec<String> = summary
        .largest_clusters
        .iter()
        .map(ToString::to_string)
        .collect();
    text += &format!(
        "largest clusters:    {}",
        if largest.is_empty() {
            "-".to_owned()
        } else {
            largest.join(", ")
        }
    );
    text
}

#[cfg(test)]
mod tests {
    use simhash_store::dedup::{ClusterBuilder, ScanStats};

    use super::*;

    #[test]
    fn summary_lists_the_largest_clusters() {
        let mut b = ClusterBuilder::new();
        for (x, y) in [(1, 2), (2, 3), (10, 11)] {
            b.add_pair(x, y);
        }
        let stats = ScanStats {
            k: 3,
            pairs: 3,
            per_distance: vec![1, 0, 2, 0],
            keys_scanned: 400,
        };
        let text = summary_text(&DedupSummary::new(100, &stats, &b.finish()));
        assert!(text.contains("largest clusters:    3, 2"), "{text}");
        assert!(
            text.starts_with("documents:           100\npairs within k = 3:  3\n"),
            "{text}"
        );
    }
}
