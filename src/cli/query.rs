//! `simhash-store query`: stored documents within `k` bits of a text, a file, a stored key or a
//! fingerprint.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use simhash_store::readers::ReaderOptions;
use simhash_store::verified::{Verification, DEFAULT_MIN_SIMILARITY, DEFAULT_VERIFIED_K};
use simhash_store::{read_input, Error, Fingerprint};

use super::{usage, QuietArg, StoreArg};

use simhash_store::DEFAULT_K;

const EXAMPLES: &str = "\
Examples:
  simhash-store query --store pages.db --text \"a paragraph of a page\"
  simhash-store query --store pages.db --file new-page.html -k 5
  simhash-store query --store pages.db --key https://example.com/a --json
  simhash-store query --store pages.db --fingerprint 3f2a9c0e11d4b788
  simhash-store query --store pages.db --file new-page.html --verified

Output: one line per match, nearest first: distance, id, fingerprint, key, and with --verified
the sketch similarity last. With --json, one object: {\"query\": FINGERPRINT,
\"matches\": [{\"id\", \"key\", \"distance\", \"fingerprint\"}]} (and \"similarity\" with
--verified). With --key, the document itself is left out of the matches.

Choosing k: 3 suits pages of a few hundred words or more; short texts (titles, comments) need
more, and a larger k also finds more unrelated texts. See docs/guide.md.";

/// Arguments of `query`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["text", "file", "key", "fingerprint"])))]
pub struct Args {
    #[command(flatten)]
    store: StoreArg,

    #[command(flatten)]
    quiet: QuietArg,

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

    /// The largest Hamming distance to report (0..=64). Default: 3; with --verified, 8 (the
    /// candidates' distance).
    #[arg(long, short = 'k', value_parser = clap::value_parser!(u32).range(0..=64))]
    max_distance: Option<u32>,

    /// Verified near-duplicates: candidates within k bits (8 by default) kept only where the
    /// documents' sketches agree (a store loaded with --sketch). Needs the query's text
    /// (--text, --file, or --key of a document stored with its sketch).
    #[arg(long)]
    verified: bool,

    /// With --verified: the smallest sketch similarity (0 to 1) of a match. Default: 0.75.
    #[arg(long, value_name = "SIMILARITY", requires = "verified")]
    min_similarity: Option<f64>,

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
/// nothing to fingerprint; with --verified, the store keeps no sketches or the query has none.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.store.open_read_only()?;
    if args.verified {
        // Checked first, so that the answer names the fix whatever the query.
        if !store.keeps_sketches() {
            return Err(Error::NoSketches {
                path: store.path().to_path_buf(),
            }
            .into());
        }
    } else if args.min_similarity.is_some() {
        return Err(usage("--min-similarity applies to --verified queries only"));
    }
    let mut exclude = None;
    let mut sketch = None;
    let fp: Fingerprint = if let Some(hex) = &args.fingerprint {
        if args.verified {
            return Err(usage(
                "--verified needs the query's sketch, which a fingerprint does not carry: give --text, --file or --key",
            ));
        }
        hex.parse().map_err(|e: Error| usage(e.to_string()))?
    } else if let Some(key) = &args.key {
        let id = store.id_for_key(key)?.ok_or_else(|| {
            anyhow::anyhow!("no document is stored under the key {key:?}: check it with `simhash-store get --key`")
        })?;
        exclude = Some(id);
        let doc = store.document(id)?.ok_or_else(|| anyhow::anyhow!("the key {key:?} points to document {id}, which is missing: run `simhash-store verify`"))?;
        sketch = doc.sketch;
        if args.verified && sketch.is_none() {
            anyhow::bail!("document {id} ({key:?}) was stored without a sketch (as a bare fingerprint), so it cannot be verified: query with its text (--text or --file)");
        }
        doc.fingerprint
    } else {
        let text = match (&args.text, &args.file) {
            (Some(t), _) => t.clone(),
            (None, Some(path)) => file_text(path)?,
            (None, None) => {
                return Err(usage("give one of --text, --file, --key or --fingerprint"))
            }
        };
        match store.simhasher().fingerprint_and_sketch(&text) {
            Ok((fp, s)) => {
                sketch = s;
                fp
            }
            Err(Error::NoFeatures) => anyhow::bail!(
                "the query text has nothing to fingerprint (empty, or only punctuation and stop words): give a longer text"
            ),
            Err(e) => return Err(e.into()),
        }
    };
    let matches: Vec<Found> = match (args.verified, &sketch) {
        (true, Some(sketch)) => {
            let verification = Verification::new(
                args.max_distance.unwrap_or(DEFAULT_VERIFIED_K),
                args.min_similarity.unwrap_or(DEFAULT_MIN_SIMILARITY),
            )
            .map_err(|e| usage(e.to_string()))?;
            store
                .query_verified(fp, sketch, verification)?
                .into_iter()
                .map(|m| Found {
                    id: m.id,
                    fingerprint: m.fingerprint,
                    distance: m.distance,
                    key: m.key,
                    similarity: Some(m.similarity),
                })
                .collect()
        }
        _ => store
            .query(fp, args.max_distance.unwrap_or(DEFAULT_K))?
            .into_iter()
            .map(|m| Found {
                id: m.id,
                fingerprint: m.fingerprint,
                distance: m.distance,
                key: m.key,
                similarity: None,
            })
            .collect(),
    };
    let max_distance = match args.verified {
        true => args.max_distance.unwrap_or(DEFAULT_VERIFIED_K),
        false => args.max_distance.unwrap_or(DEFAULT_K),
    };
    let mut matches = matches;
    matches.retain(|m| Some(m.id) != exclude);
    let found = matches.len() as u64;
    if let Some(limit) = args.limit {
        matches.truncate(limit);
    }
    let shown = if (matches.len() as u64) < found {
        format!(" (showing the first {})", matches.len())
    } else {
        String::new()
    };
    if args.json {
        let list: Vec<_> = matches
            .iter()
            .map(|m| {
                let mut o = serde_json::json!({"id": m.id, "key": m.key, "distance": m.distance, "fingerprint": m.fingerprint});
                if let Some(s) = m.similarity {
                    o["similarity"] = serde_json::json!(s);
                }
                o
            })
            .collect();
        let mut out =
            serde_json::json!({"query": fp, "max_distance": max_distance, "matches": list});
        if args.verified {
            out["min_similarity"] =
                serde_json::json!(args.min_similarity.unwrap_or(DEFAULT_MIN_SIMILARITY));
        }
        println!("{out}");
    } else {
        match args.verified {
            _ if args.quiet.quiet => {}
            true => eprintln!(
                "query fingerprint {fp}: {} within distance {max_distance} and sketch similarity {}{shown}",
                super::plural(found, "verified match", "verified matches"),
                args.min_similarity.unwrap_or(DEFAULT_MIN_SIMILARITY)
            ),
            false => eprintln!(
                "query fingerprint {fp}: {} within distance {max_distance}{shown}",
                super::plural(found, "match", "matches"),
            ),
        }
        for m in &matches {
            let similarity = m
                .similarity
                .map(|s| format!("\t{s:.3}"))
                .unwrap_or_default();
            println!(
                "{}\t{}\t{}\t{}{similarity}",
                m.distance,
                m.id,
                m.fingerprint,
                m.key.as_deref().unwrap_or("-")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One match, plain or verified.
struct Found {
    id: u64,
    fingerprint: Fingerprint,
    distance: u32,
    key: Option<String>,
    similarity: Option<f64>,
}
