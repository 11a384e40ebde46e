//! `simhash-store export`: the store's settings, then every document's id, key, fingerprint,
//! text length and sketch, as JSON lines (`simhash_store::readers::ExportHeader`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use simhash_store::readers::{ExportHeader, ExportedDocument};
use simhash_store::salvage::Salvage;

use super::{QuietArg, StoreArg};

const EXAMPLES: &str = "\
Examples:
  simhash-store export --store pages.db > pages.jsonl
  simhash-store export --store pages.db --output pages.jsonl
  simhash-store load pages.jsonl --store rebuilt.db      # no fingerprinting again

The first line names the store's settings: {\"simhash_store_export\": {\"version\": 1,
\"store_format\": 8, \"settings\": {...}}}. Then one line per document in id order:
{\"fingerprint\": \"3f2a9c0e11d4b788\", \"id\": 42, \"key\": \"https://example.com/a\", \"text_len\": 5120},
with \"sketch\" (128 hex digits) for a store that keeps sketches. `load` of the file makes a
store with the same settings that answers exactly as this one. Reads one consistent snapshot;
works beside a process that writes to the store.

A damaged store (`verify` names its damaged files) is refused; `--salvage` writes every document
that can still be read instead: it repairs a copy of the store (beside it, or in the temporary
directory; the store itself is not written) to the table files that can be read, writes each
document whose record survived, and rebuilds each one whose record was lost from the block
indexes and the keys (id, fingerprint and key; no text length or sketch). It names the files it
could not read and counts what is lost; exit code 3 when documents the store recorded could not
be salvaged:
  simhash-store export --salvage --store damaged.db --output salvaged.jsonl
  simhash-store load salvaged.jsonl --store rebuilt.db";

/// Arguments of `export`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    store: StoreArg,

    #[command(flatten)]
    quiet: QuietArg,

    /// Write to this file instead of standard output.
    #[arg(long, short = 'o', value_name = "PATH")]
    output: Option<PathBuf>,

    /// Write what a damaged store still holds (see below), instead of refusing it.
    #[arg(long)]
    salvage: bool,
}

/// Runs `export`.
///
/// # Errors
/// The store cannot be read or the output written.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.salvage {
        return salvage(args);
    }
    let store = args.store.open_read_only()?;
    let (mut out, name) = output(args.output.as_deref())?;
    let header = ExportHeader::new(store.simhasher().config().clone(), store.format_version());
    writeln!(out, "{}", header.to_line()).with_context(|| format!("cannot write to {name}"))?;
    let mut n = 0u64;
    for item in store.documents()? {
        let (id, d) = item?;
        writeln!(out, "{}", line(id, d)).with_context(|| format!("cannot write to {name}"))?;
        n += 1;
    }
    out.flush()
        .with_context(|| format!("cannot write to {name}"))?;
    if !args.quiet.quiet {
        eprintln!("exported {}", super::plural(n, "document", "documents"));
    }
    Ok(ExitCode::SUCCESS)
}

/// `export --salvage`.
fn salvage(args: Args) -> anyhow::Result<ExitCode> {
    args.store.require_existing()?;
    let path = &args.store.store;
    let salvage = Salvage::open(path)
        .with_context(|| format!("cannot salvage the store at {}", path.display()))?;
    let store = salvage.store();
    let (mut out, name) = output(args.output.as_deref())?;
    let header = ExportHeader::new(store.simhasher().config().clone(), store.format_version());
    writeln!(out, "{}", header.to_line()).with_context(|| format!("cannot write to {name}"))?;
    let summary = salvage.for_each(|id, d, _| {
        writeln!(out, "{}", line(id, d)).map_err(|e| simhash_store::Error::Io {
            operation: "write to",
            path: PathBuf::from(&name),
            source: e,
        })
    })?;
    out.flush()
        .with_context(|| format!("cannot write to {name}"))?;
    for file in &summary.damaged_files {
        eprintln!(
            "salvage: cannot read {}: what only it held is lost",
            path.join(file).display()
        );
    }
    // (The summary of a salvage is shown with `--quiet` too: it says what was lost.)
    eprintln!(
        "salvaged {} of {} ({} whole, {} rebuilt from the block indexes without text length or sketch)",
        summary.stored + summary.rebuilt,
        super::plural(summary.recorded, "document", "documents"),
        summary.stored,
        summary.rebuilt
    );
    if summary.missing() > 0 {
        eprintln!(
            "salvage: {} that the store recorded could not be read from any family",
            super::plural(summary.missing(), "document", "documents")
        );
        return Ok(ExitCode::from(super::EXIT_PROBLEMS));
    }
    Ok(ExitCode::SUCCESS)
}

/// A document's export line.
fn line(id: u64, d: simhash_store::Document) -> String {
    let mut exported = ExportedDocument::new(d.fingerprint);
    exported.text_len = d.text_len;
    exported.sketch = d.sketch;
    exported.to_line(id, d.key.as_deref())
}

/// The output (`--output`, else standard output) and its name for errors.
fn output(path: Option<&std::path::Path>) -> anyhow::Result<(Box<dyn Write>, String)> {
    Ok(match path {
        Some(path) => (
            Box::new(BufWriter::new(
                File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
            )),
            path.display().to_string(),
        ),
        None => (
            Box::new(BufWriter::new(std::io::stdout().lock())),
            "standard output".into(),
        ),
    })
}
