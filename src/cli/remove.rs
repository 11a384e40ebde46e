//! `simhash-store remove`: delete documents by id or key.

use std::process::ExitCode;

use super::get::resolve;
use super::{QuietArg, StoreArg};

const EXAMPLES: &str = "\
Examples:
  simhash-store remove --store pages.db 42 43
  simhash-store remove --store pages.db --key https://example.com/a

Each removal is atomic. Prints how many were removed; ids and keys that were not stored are
named on standard error (exit code 0: the documents are gone either way).";

/// Arguments of `remove`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    store: StoreArg,

    #[command(flatten)]
    quiet: QuietArg,

    /// Document ids.
    ids: Vec<u64>,

    /// External keys (URLs, paths); repeat for several.
    #[arg(long)]
    key: Vec<String>,
}

/// Runs `remove`.
///
/// # Errors
/// The store cannot be opened or written.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.store.open()?;
    let mut removed = 0u64;
    let mut absent = Vec::new();
    for id in resolve(&store, &args.ids, &args.key)? {
        match id {
            Ok(id) if store.remove(id)? => removed += 1,
            Ok(id) => absent.push(format!("id {id}")),
            Err(what) => absent.push(what),
        }
    }
    if !absent.is_empty() && !args.quiet.quiet {
        eprintln!("not stored: {}", absent.join(", "));
    }
    println!(
        "removed {}; the store holds {}",
        super::plural(removed, "document", "documents"),
        super::plural(store.len(), "document", "documents")
    );
    Ok(ExitCode::SUCCESS)
}
