//! `simhash-store verify`: the store's consistency check.

use std::process::ExitCode;

use super::{QuietArg, StoreArg, EXIT_PROBLEMS};

const EXAMPLES: &str = "\
Examples:
  simhash-store verify --store pages.db && echo clean

Reads the whole store and checks that every document is in the four block indexes under its
fingerprint, that nothing else is there, that every key points to the document carrying it, and
that the document count is right. Exit code 0 when clean, 3 when problems were found (listed),
1 when the store cannot be read. Rebuild a damaged store with `export` and `load`.";

/// Arguments of `verify`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    store: StoreArg,

    // Taken as every subcommand takes it; `verify` writes nothing to standard error but errors.
    #[command(flatten)]
    #[allow(dead_code)]
    quiet: QuietArg,
}

/// Runs `verify`.
///
/// # Errors
/// The store cannot be opened or read.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.store.open_read_only()?;
    let report = store.verify()?;
    println!("{report}");
    if report.is_clean() {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(EXIT_PROBLEMS))
    }
}
