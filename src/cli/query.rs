//! `simhash-store query`: stored documents within `k` bits of a text, a file, a stored key or a
//! fingerprint.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use simhash_store::{read_input, Error, Fingerprint, ReaderOptions};

use super::{usage, StoreArg};

const EXAMPLES: &str = "\
Examples:
  simhash-store query --store pages.db --text \"a paragraph of a page\"
  simhash-store query --store pages.db --file new-page.html -k 5
  simhash-store query --store pages.db --key https://example.com/a --json
  simhash-store query --store pages.db --fingerprint 3f2a9c0e11d4b788

Output: one line per match, nearest first: distance, id, fingerprint, key. With --json, one
object: {\"query\": FINGERPRINT, \"matches\": [{\"id\", \"key\", \"distance\", \"fingerprint\"}]}.
With --key, the document itself is left out of the matches.

Choosing k: 3 suits pages of a few hundred words or more; short texts (titles, comments) need
more, and a larger k also finds more unrelated texts. See docs/guide.md.";

/// Arguments of `query`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["text", "file", "key", "fingerprint"])))]
pub struct Args {
    #[command(flatten)]
    store: StoreArg,

    /// Query with this text.
    #[arg(long, short = 't')]
    text: Option<String>,

    /// Query with the text of this file (HTML files are reduced to their main text).
    #[arg(long, short = 'f', value_name = "PATH")]
    file: Option<PathBuf>,

    /// Query with the fingerprint of the document stored under this key (URL, path).
    #[arg(long)]
    key: Option<String>,

    /// Query with this fingerprint (up to 16 hex digits).
    #[arg(long, value_name = "HEX")]
    fingerprint: Option<String>,

    /// The largest Hamming distance to report (0..=64).
    #[arg(long, short = 'k', default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=64))]
    max_distance: u32,

    /// At most this many matches are printed (the nearest).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,

    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// The text of `path`: HTML reduced to its main text, anything else decoded.
fn file_text(path: &Path) -> anyhow::Result<String> {
    let opts = ReaderOptions::default();
    let mut records =
        read_input(path, &opts).with_context(|| format!("cannot read {}", path.display()))?;
    let record = match records.next() {
        Some(Ok(r)) => r,
        Some(Err(bad)) => anyhow::bail!("cannot read {}: {bad}", path.display()),
        None => anyhow::bail!("{} holds no document", path.display()),
    };
    if records.next().is_some() {
        anyhow::bail!(
            "{} holds more than one document: query one text at a time, or use `simhash-store fingerprint` and \
             --fingerprint",
            path.display()
        );
    }
    let text = record
        .text(&opts)
        .map_err(|bad| anyhow::anyhow!("cannot read {bad}"))?;
    let Some(text) = text else {
        anyhow::bail!(
            "{} holds a fingerprint, not a text: pass it with --fingerprint",
            path.display()
        );
    };
    let text = text.into_owned();
    Ok(text)
}

/// Runs `query`.
///
/// # Errors
/// The store cannot be opened, the file cannot be read, the key is not stored, the text has
/// nothing to fingerprint.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.store.open_read_only()?;
    let mut exclude = None;
    let fp: Fingerprint = if let Some(hex) = &args.fingerprint {
        hex.parse().map_err(|e: Error| usage(e.to_string()))?
    } else if let Some(key) = &args.key {
        let id = store.id_for_key(key)?.ok_or_else(|| {
            anyhow::anyhow!("no document is stored under the key {key:?}: check it with `simhash-store get --key`")
        })?;
        exclude = Some(id);
        store.get(id)?.ok_or_else(|| anyhow::anyhow!("the key {key:?} points to document {id}, which is missing: run `simhash-store verify`"))?
    } else {
        let text = match (&args.text, &args.file) {
            (Some(t), _) => t.clone(),
            (None, Some(path)) => file_text(path)?,
            (None, None) => {
                return Err(usage("give one of --text, --file, --key or --fingerprint"))
            }
        };
        match store.simhasher().fingerprint(&text) {
            Ok(fp) => fp,
            Err(Error::NoFeatures) => anyhow::bail!(
                "the query text has nothing to fingerprint (empty, or only punctuation and stop words): give a longer text"
            ),
            Err(e) => return Err(e.into()),
        }
    };
    let mut matches = store.query(fp, args.max_distance)?;
    matches.retain(|m| Some(m.id) != exclude);
    if let Some(limit) = args.limit {
        matches.truncate(limit);
    }
    if args.json {
        let list: Vec<_> = matches
            .iter()
            .map(|m| serde_json::json!({"id": m.id, "key": m.key, "distance": m.distance, "fingerprint": m.fingerprint}))
            .collect();
        println!(
            "{}",
            serde_json::json!({"query": fp, "max_distance": args.max_distance, "matches": list})
        );
    } else {
        eprintln!(
            "query fingerprint {fp}: {} matches within distance {}",
            matches.len(),
            args.max_distance
        );
        for m in &matches {
            println!(
                "{}\t{}\t{}\t{}",
                m.distance,
                m.id,
                m.fingerprint,
                m.key.as_deref().unwrap_or("-")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
