//! `simhash-store load`: read inputs, then fingerprint (on all cores) and store through the
//! library's bulk loader ([`BulkLoader::add_text`]).

use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::Context;
use simhash_store::{BulkLoader, BulkOptions, BulkPhase, BulkSummary, Entry, Store};

use super::progress::Progress;
use super::read::{self, Content, Doc, Tally};
use super::{open_for_writing, ConfigArgs, Exit, InputArgs, StoreArg, EXIT_PROBLEMS};

const EXAMPLES: &str = "\
Examples:
  simhash-store load CC-MAIN-*.warc.gz --store pages.db
  simhash-store load site-mirror/ --store pages.db          # a folder of HTML/text files
  simhash-store load docs.jsonl --key-field url --text-field content --store docs.db
  simhash-store load pages/ --store pages.db --tf length-adaptive  # new store, better zh recall at k=3
  cat titles.txt | simhash-store load - --format lines --store titles.db
  simhash-store export --store a.db | simhash-store load - --store b.db  # copy without re-fingerprinting

A new store records how texts are fingerprinted (--tf, --keep-boilerplate-lines,
--shingles-across-words, --count-pieces, --count-pieces-ratio; every later load and query
uses it). With an existing store, the settings given must match what it recorded. Loading
exported fingerprints into a new store needs the source store's settings, since they are
not recomputed.
A document whose key (URL, path) is already stored replaces it under the same id, so loading
the same files twice leaves the store as it was. New documents get ids after the largest one
stored; JSON Lines may give ids (--id-field).

Exit codes: 0 loaded (bad records, if any, were skipped and reported), 1 error, 2 usage,
3 stopped at a bad record under --strict (what came before it is loaded).";

/// Arguments of `load`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    store: StoreArg,

    #[command(flatten)]
    input: InputArgs,

    /// Print the summary as one JSON object on standard output.
    #[arg(long)]
    json: bool,

    /// How a new store fingerprints texts (recorded in it).
    #[command(flatten)]
    #[command(next_help_heading = "Fingerprint settings (recorded by a new store)")]
    settings: ConfigArgs,
}

/// Keys remembered to give a key repeated within one load one id. Past this many the memory
/// is cleared: a key repeated after that gets a new id, and the bulk loader's "last add of a
/// key wins" still leaves one document for it.
const MAX_REMEMBERED_KEYS: usize = 1 << 20;

/// Bytes of text the bulk loader gathers before it fingerprints them on all cores: about one
/// or two batches of records (`read.rs`), so that the reading thread, which stays at most two
/// batches ahead, keeps reading while the texts before are fingerprinted.
const TEXT_CHUNK_BYTES: usize = /* 1 MiB */ 1 << 20;

/// Assigns ids and hands documents to the store's bulk loader.
struct Writer<'a> {
    store: &'a Store,
    loader: BulkLoader<'a>,
    next_id: u64,
    /// Keys added in this load and their ids (not yet visible through `id_for_key`).
    keys: HashMap<String, u64>,
}

impl<'a> Writer<'a> {
    fn new(store: &'a Store, progress: &Progress) -> anyhow::Result<Writer<'a>> {
        let next_id = store
            .next_id()
            .context("cannot read the largest id of the store")?;
        let bar = progress.bar();
        let options = BulkOptions::new()
            .text_chunk_size(TEXT_CHUNK_BYTES)
            .progress(move |p| match p.phase {
                BulkPhase::Writing => bar.set_prefix("writing a sorted run"),
                BulkPhase::Ingesting => bar.set_prefix("ingesting"),
                _ => bar.set_prefix("loading"),
            });
        let loader = store.bulk_loader_with(options).with_context(|| {
            format!(
                "cannot start loading into the store at {}",
                store.path().display()
            )
        })?;
        Ok(Writer {
            store,
            loader,
            next_id,
            keys: HashMap::new(),
        })
    }

    fn id_for(&mut self, doc: &Doc) -> anyhow::Result<u64> {
        if let Some(id) = doc.id {
            self.next_id = self.next_id.max(id.saturating_add(1));
            return Ok(id);
        }
        if let Some(key) = &doc.key {
            if let Some(&id) = self.keys.get(key) {
                return Ok(id);
            }
            if let Some(id) = self.store.id_for_key(key)? {
                return Ok(id);
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        Ok(id)
    }

    fn add(&mut self, docs: Vec<Doc>) -> anyhow::Result<()> {
        for doc in docs {
            let id = self.id_for(&doc)?;
            if let Some(key) = &doc.key {
                if self.keys.len() >= MAX_REMEMBERED_KEYS {
                    self.keys.clear();
                }
                self.keys.insert(key.clone(), id);
            }
            let added = match doc.content {
                Content::Text(text) => self.loader.add_text(id, doc.key.as_deref(), &text),
                Content::Fingerprint(fingerprint) => self.loader.add_entry(&Entry {
                    id,
                    fingerprint,
                    key: doc.key,
                    text_len: None,
                    sketch: None,
                }),
            };
            added.with_context(|| format!("cannot load the document of {}", doc.location))?;
        }
        Ok(())
    }

    fn finish(self) -> anyhow::Result<BulkSummary> {
        let path = self.store.path().display().to_string();
        self.loader
            .finish()
            .with_context(|| format!("cannot write to the store at {path}"))
    }
}

/// Loads `input` into `store`: returns what happened (documents loaded, texts without
/// features counted as empty) and how many documents replaced a stored one (same id, or same
/// key and so the same id). What was read before an error is written before the error is
/// returned.
///
/// # Errors
/// An input cannot be opened, the store cannot be written.
pub fn load_inputs(
    store: &Store,
    input: &InputArgs,
    progress: &mut Progress,
) -> anyhow::Result<(Tally, u64)> {
    let mut writer = Writer::new(store, progress)?;
    let result = read::run(input, progress, |docs| writer.add(docs));
    let summary = writer.finish()?;
    progress.finish();
    let mut tally = result?;
    // The bulk loader skipped the texts that have no features.
    tally.docs -= summary.skipped;
    tally.empty += summary.skipped;
    Ok((tally, summary.replaced))
}

/// Runs `load`.
///
/// # Errors
/// An input or the store cannot be opened or written.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    args.input.check_exist()?;
    let store = open_for_writing(&args.store.store, &args.settings).with_context(|| {
        format!(
            "cannot open or create the store at {}",
            args.store.store.display()
        )
    })?;
    let before = store.len();
    let mut progress = Progress::new("loading", args.input.quiet);
    let (tally, replaced) = load_inputs(&store, &args.input, &mut progress)?;
    let elapsed = progress.elapsed().as_secs_f64();
    let after = store.len();
    if args.json {
        let summary = serde_json::json!({
            "loaded": tally.docs,
            "replaced": replaced,
            "empty": tally.empty,
            "not_documents": tally.not_documents,
            "bad_records": tally.bad.iter().map(|(k, n)| (k.as_str(), *n)).collect::<HashMap<_, _>>(),
            "documents_before": before,
            "documents_after": after,
            "seconds": elapsed,
            "input_bytes": progress.bytes(),
        });
        println!("{summary}");
    } else {
        println!(
            "loaded {} documents ({} replaced a stored document with the same key) in {:.2} s: {:.0} docs/s, {:.1} MB/s",
            tally.docs,
            replaced,
            elapsed,
            tally.docs as f64 / elapsed.max(1e-6),
            progress.bytes() as f64 / 1e6 / elapsed.max(1e-6)
        );
        println!("skipped: {}", tally.skipped_summary());
        println!(
            "the store at {} holds {} documents (was {})",
            args.store.store.display(),
            after,
            before
        );
    }
    if let Some(bad) = tally.stopped {
        return Err(Exit {
            code: EXIT_PROBLEMS,
            message: format!(
                "stopped at a bad record (--strict): {bad}\nthe {} documents before it are loaded; fix or remove the record, \
                 or run without --strict to skip such records",
                tally.docs
            ),
        }
        .into());
    }
    Ok(ExitCode::SUCCESS)
}
