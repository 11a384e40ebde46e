//! `simhash-store fingerprint`: one JSON line per input document, nothing stored.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use simhash_store::{Fingerprint, Simhasher, Store};

use rayon::prelude::*;

use super::progress::Progress;
use super::read::{self, Content};
use super::{usage, ConfigArgs, Exit, InputArgs, EXIT_PROBLEMS};

const EXAMPLES: &str = "\
Examples:
  simhash-store fingerprint pages.warc.gz > fingerprints.jsonl
  simhash-store fingerprint --store pages.db new/*.html     # with the store's configuration
  echo 'a title to fingerprint' | simhash-store fingerprint - --format lines

Output, one line per document:
  {\"key\": \"https://example.com/a\", \"id\": null, \"fingerprint\": \"3f2a9c0e11d4b788\", \"features\": 212}
`features` is the number of feature occurrences (words, characters and trigrams, repeats
counted): a fingerprint of few features says little.
The output can be loaded with `simhash-store load` without fingerprinting again.";

/// Arguments of `fingerprint`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,

    /// Fingerprint with the configuration recorded in this store (default: the default
    /// configuration, the one new stores get).
    #[arg(long, short = 's', value_name = "DIR")]
    store: Option<std::path::PathBuf>,

    /// Without --store: how to fingerprint (as `load` would record it in a new store).
    #[command(flatten)]
    #[command(next_help_heading = "Fingerprint settings (without --store)")]
    settings: ConfigArgs,
}

/// What `fingerprint` prints of a document besides its key, id and location.
struct Fingerprinted {
    fingerprint: Fingerprint,
    /// The number of feature occurrences, for a text.
    features: Option<usize>,
    /// The text's length in bytes, for a text.
    text_len: Option<u64>,
}

impl Fingerprinted {
    /// The fingerprint of `content`; `None` for a text with no features.
    fn of(content: &Content, hasher: &Simhasher) -> simhash_store::Result<Option<Fingerprinted>> {
        match content {
            Content::Exported(doc) => Ok(Some(Fingerprinted {
                fingerprint: doc.fingerprint,
                features: None,
                text_len: doc.text_len,
            })),
            // Not a document: `run` leaves headers out.
            Content::ExportHeader(_) => Ok(None),
            Content::Text(text) => match hasher.fingerprint_with_count(text) {
                Ok((fingerprint, features)) => Ok(Some(Fingerprinted {
                    fingerprint,
                    features: Some(features),
                    text_len: Some(text.len() as u64),
                })),
                Err(simhash_store::Error::NoFeatures) => Ok(None),
                Err(e) => Err(e),
            },
        }
    }
}

/// Runs `fingerprint`.
///
/// # Errors
/// An input cannot be opened, standard output cannot be written.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    args.input.check_exist()?;
    if args.store.is_some() && args.settings.given() {
        return Err(usage(
            "--store fingerprints with the store's recorded settings: leave out --tf, \
             --keep-boilerplate-lines, --shingles-across-words, --count-pieces and \
             --count-pieces-ratio",
        ));
    }
    let hasher = match &args.store {
        Some(dir) => Store::builder()
            .read_only(true)
            .open(dir)
            .with_context(|| format!("cannot open the store at {}", dir.display()))?
            .simhasher()
            .clone(),
        None => Simhasher::new(args.settings.requested().unwrap_or_default())?,
    };
    let mut progress = Progress::new("fingerprinting", args.input.quiet);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut no_features = read::NoTexts::default();
    let mut tally = read::run(&args.input, &mut progress, |mut docs| {
        docs.retain(read::Doc::is_document);
        // `None`: the text has no features.
        let fingerprinted: Vec<simhash_store::Result<Option<Fingerprinted>>> = docs
            .par_iter()
            .map(|d| Fingerprinted::of(&d.content, &hasher))
            .collect();
        for (d, result) in docs.iter().zip(fingerprinted) {
            let Some(Fingerprinted {
                fingerprint,
                features,
                text_len,
            }) = result?
            else {
                no_features.push(read::NoText {
                    location: d.location.clone(),
                    reason: read::NoTextReason::NoFeatures,
                });
                continue;
            };
            let line = serde_json::json!({
                "key": d.key,
                "id": d.id,
                "fingerprint": fingerprint,
                "features": features,
                "text_len": text_len,
                "source": d.location.to_string(),
            });
            writeln!(out, "{line}").context("cannot write to standard output")?;
        }
        Ok(())
    })?;
    tally.docs -= no_features.count;
    tally.empty.absorb(no_features);
    out.flush().context("cannot write to standard output")?;
    progress.finish();
    eprintln!(
        "{} fingerprinted; skipped {}",
        super::plural(tally.docs, "document", "documents"),
        tally.skipped_summary()
    );
    for line in tally.empty.lines() {
        eprintln!("  {line}");
    }
    if let Some(bad) = tally.stopped {
        return Err(Exit {
            code: EXIT_PROBLEMS,
            message: format!("stopped at a bad record (--strict): {bad}"),
        }
        .into());
    }
    Ok(ExitCode::SUCCESS)
}
