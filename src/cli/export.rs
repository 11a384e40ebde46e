//! `simhash-store export`: the store's settings, then every document's id, key, fingerprint,
//! text length and sketch, as JSON lines (`simhash_store::readers::ExportHeader`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use simhash_store::readers::{ExportHeader, ExportedDocument};

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
works beside a process that writes to the store.";

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
}

/// Runs `export`.
///
/// # Errors
/// The store cannot be read or the output written.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.store.open_read_only()?;
    let (mut out, name): (Box<dyn Write>, String) = match &args.output {
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
    };
    let header = ExportHeader::new(store.simhasher().config().clone(), store.format_version());
    writeln!(out, "{}", header.to_line()).with_context(|| format!("cannot write to {name}"))?;
    let mut n = 0u64;
    for item in store.documents()? {
        let (id, d) = item?;
        let mut exported = ExportedDocument::new(d.fingerprint);
        exported.text_len = d.text_len;
        exported.sketch = d.sketch;
        writeln!(out, "{}", exported.to_line(id, d.key.as_deref()))
            .with_context(|| format!("cannot write to {name}"))?;
        n += 1;
    }
    out.flush()
        .with_context(|| format!("cannot write to {name}"))?;
    if !args.quiet.quiet {
        eprintln!("exported {}", super::plural(n, "document", "documents"));
    }
    Ok(ExitCode::SUCCESS)
}
