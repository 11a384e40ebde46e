//! `simhash-store compact`: fold single writes and bulk runs into packed chunks, and compact.

use std::process::ExitCode;
use std::time::Instant;

use super::{QuietArg, StoreArg};

const EXAMPLES: &str = "\
Examples:
  simhash-store compact --store pages.db

In a store of format 8 or 9, folds every group's single writes (deltas) and the chunks of earlier
bulk runs into one set of packed chunks, then has RocksDB compact every column family: the
store gets smaller and queries read fewer keys. Writers wait for at most a slice of 1,024
block values at a time; readers never wait. Takes about as long as reading the whole store.
Stores of older formats are only compacted (see `upgrade` to convert them).";

/// Arguments of `compact`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    store: StoreArg,

    // Taken as every subcommand takes it; `compact` writes nothing to standard error but errors.
    #[command(flatten)]
    #[allow(dead_code)]
    quiet: QuietArg,
}

fn total(usage: &[(&'static str, u64)]) -> u64 {
    usage.iter().map(|(_, bytes)| bytes).sum()
}

/// Runs `compact`.
///
/// # Errors
/// The store cannot be opened, read or written.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.store.open()?;
    let before = total(&store.disk_usage()?);
    let started = Instant::now();
    store.compact()?;
    let after = total(&store.disk_usage()?);
    println!(
        "compacted {} (format {}) in {:.1} s: {:.1} MiB -> {:.1} MiB on disk",
        super::plural(store.len(), "document", "documents"),
        store.format_version(),
        started.elapsed().as_secs_f64(),
        before as f64 / (1 << 20) as f64,
        after as f64 / (1 << 20) as f64,
    );
    Ok(ExitCode::SUCCESS)
}
