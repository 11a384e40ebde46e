//! `simhash-store get`: what the store holds about documents, by id or key.

use std::process::ExitCode;

use simhash_store::Store;

use super::{usage, QuietArg, StoreArg};

const EXAMPLES: &str = "\
Examples:
  simhash-store get --store pages.db 42 43
  simhash-store get --store pages.db --key https://example.com/a

Prints one JSON line per document: {\"id\", \"key\", \"fingerprint\", \"text_len\", \"added\"} (added:
microseconds since 1970). Exit code 1 if any is not stored.";

/// Arguments of `get`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    store: StoreArg,

    // Taken as every subcommand takes it; `get` writes nothing to standard error but errors.
    #[command(flatten)]
    #[allow(dead_code)]
    quiet: QuietArg,

    /// Document ids.
    ids: Vec<u64>,

    /// External keys (URLs, paths); repeat for several.
    #[arg(long)]
    key: Vec<String>,
}

/// The id of each id and key argument, `Err(description)` for a key that is not stored.
pub(crate) fn resolve(
    store: &Store,
    ids: &[u64],
    keys: &[String],
) -> anyhow::Result<Vec<Result<u64, String>>> {
    if ids.is_empty() && keys.is_empty() {
        return Err(usage("give document ids, or keys with --key"));
    }
    let mut out: Vec<Result<u64, String>> = ids.iter().map(|&id| Ok(id)).collect();
    for key in keys {
        out.push(store.id_for_key(key)?.ok_or_else(|| format!("key {key:?}")));
    }
    Ok(out)
}

/// Runs `get`.
///
/// # Errors
/// The store cannot be opened or read; a document is not stored.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.store.open_read_only()?;
    let mut missing = Vec::new();
    for id in resolve(&store, &args.ids, &args.key)? {
        let id = match id {
            Ok(id) => id,
            Err(what) => {
                missing.push(what);
                continue;
            }
        };
        match store.document(id)? {
            Some(d) => println!(
                "{}",
                serde_json::json!({"id": id, "key": d.key, "fingerprint": d.fingerprint, "text_len": d.text_len, "added": d.added})
            ),
            None => missing.push(format!("id {id}")),
        }
    }
    if !missing.is_empty() {
        anyhow::bail!("not stored: {}", missing.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}
