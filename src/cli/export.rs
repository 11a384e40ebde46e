//! `simhash-store export`: every document's id, key and fingerprint as JSON lines.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use super::StoreArg;

const EXAMPLES: &str = "\
Examples:
  simhash-store export --store pages.db > pages.jsonl
  simhash-store export --store pages.db --output pages.jsonl
  simhash-store load pages.jsonl --store rebuilt.db      # no fingerprinting again

One line per document in id order: {\"id\": 42, \"key\": \"https://example.com/a\", \"fingerprint\":
\"3f2a9c0e11d4b788\", \"text_len\": 5120}. Reads one consistent snapshot; works beside a process
that writes to the store.";

/// Arguments of `export`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    store: StoreArg,

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
    let mut n = 0u64;
    for item in store.documents()? {
        let (id, d) = item?;
        let line = serde_json::json!({"id": id, "key": d.key, "fingerprint": d.fingerprint, "text_len": d.text_len});
        writeln!(out, "{line}").with_context(|| format!("cannot write to {name}"))?;
        n += 1;
    }
    out.flush()
        .with_context(|| format!("cannot write to {name}"))?;
    eprintln!("exported {n} documents");
    Ok(ExitCode::SUCCESS)
}
