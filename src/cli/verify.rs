//! `simhash-store verify`: the store's consistency check.

use std::process::ExitCode;

use super::{QuietArg, StoreArg, EXIT_PROBLEMS};

const EXAMPLES: &str = "\
Examples:
  simhash-store verify --store pages.db && echo clean

Reads the whole store and checks that every document is in the four block indexes under its
fingerprint, that nothing else is there, that every key points to the document carrying it, and
that the document count is right. A damaged store (a table file that cannot be read) is a
problem too: every damaged file is named. Exit code 0 when clean, 3 when problems or damage were
found (listed), 1 when the store cannot be read for another reason (missing, permissions).
Restore a damaged store from a backup (`simhash-store backup`), or rebuild it:
  simhash-store export --salvage --store pages.db --output pages.jsonl
  simhash-store load pages.jsonl --store rebuilt.db";

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
    let opened = args.store.open_read_only();
    let report = match opened {
        Ok(store) => store.verify()?,
        // A store too damaged to open: name what is damaged.
        Err(e) => match e.downcast_ref::<simhash_store::Error>() {
            Some(simhash_store::Error::Corruption { message, .. }) => {
                simhash_store::verify::damage_report(&args.store.store, message)?
            }
            _ => return Err(e),
        },
    };
    println!("{report}");
    if report.is_clean() {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(EXIT_PROBLEMS))
    }
}
