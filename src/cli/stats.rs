//! `simhash-store stats`: documents, disk usage, and how documents spread over block values.

use std::process::ExitCode;

use simhash_store::BLOCKS;

use super::StoreArg;

const EXAMPLES: &str = "\
Examples:
  simhash-store stats --store pages.db
  simhash-store stats --store pages.db --json

Reading the output:
  disk bytes per column family and per document: block0..block3 hold the index (16 bytes of
  key per document each, before compression), docs the fingerprint, key and length of each
  document, keys the external keys.
  documents per block value: a query at k <= 3 scans, in each block family, the documents
  sharing one 16-bit value with the query. With random fingerprints each value holds about
  documents/65536 of them and the max is a few times that. A max far above the mean (shown as
  `skew`) means many documents share that block value: usually templated or empty-looking pages
  whose fingerprints are alike. The top values list them; query one of those documents with
  `simhash-store query --fingerprint` to see which pages they are. See docs/guide.md.";

/// Arguments of `stats`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    store: StoreArg,

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
    skew: f64,
    top: Vec<(String, u64)>,
}

fn spread(family: String, counts: &[u64], top: usize) -> Spread {
    let mut sorted = counts.to_vec();
    sorted.sort_unstable();
    let total: u64 = sorted.iter().sum();
    let mean = total as f64 / sorted.len().max(1) as f64;
    let max = sorted.last().copied().unwrap_or(0);
    let mut by_count: Vec<(usize, u64)> = counts
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, n)| n > 0)
        .collect();
    by_count.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Spread {
        family,
        values_used: counts.iter().filter(|&&n| n > 0).count(),
        min: sorted.first().copied().unwrap_or(0),
        median: sorted.get(sorted.len() / 2).copied().unwrap_or(0),
        max,
        mean,
        skew: if mean > 0.0 { max as f64 / mean } else { 0.0 },
        top: by_count
            .into_iter()
            .take(top)
            .map(|(v, n)| (format!("{v:04x}"), n))
            .collect(),
    }
}

/// Runs `stats`.
///
/// # Errors
/// The store cannot be opened or read.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.store.open_read_only()?;
    let mut counts = vec![vec![0u64; 1 << 16]; BLOCKS];
    let mut documents = 0u64;
    let mut with_key = 0u64;
    for item in store.documents()? {
        let (_, d) = item?;
        documents += 1;
        with_key += u64::from(d.key.is_some());
        for (i, b) in d.fingerprint.blocks().iter().enumerate() {
            counts[i][usize::from(*b)] += 1;
        }
    }
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
        .map(|i| spread(format!("block{i}"), &counts[i], args.top))
        .collect();
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
                "with_key": with_key,
                "disk_bytes": disk_total,
                "disk_bytes_per_document": per_doc(disk_total),
                "column_families": disk,
                "blocks": spreads,
                "fingerprint_config": store.simhasher().config(),
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("store        {}", store.path().display());
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
        "  {:<8} {:>7} {:>6} {:>7} {:>7} {:>9} {:>7}  top values",
        "block", "used", "min", "median", "max", "mean", "skew"
    );
    for s in &spreads {
        let top: Vec<String> = s.top.iter().map(|(v, n)| format!("{v}:{n}")).collect();
        println!(
            "  {:<8} {:>7} {:>6} {:>7} {:>7} {:>9.2} {:>6.1}x  {}",
            s.family,
            s.values_used,
            s.min,
            s.median,
            s.max,
            s.mean,
            s.skew,
            top.join(" ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_a_skewed_block() {
        let mut counts = vec![0u64; 1 << 16];
        counts[7] = 100;
        counts[9] = 1;
        let s = spread("block0".into(), &counts, 2);
        assert_eq!((s.values_used, s.min, s.median, s.max), (2, 0, 0, 100));
        assert_eq!(
            s.top,
            vec![("0007".to_string(), 100), ("0009".to_string(), 1)]
        );
        assert!(s.skew > 60_000.0);
    }
}
