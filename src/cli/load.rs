//! `simhash-store load`: read inputs, then fingerprint (on all cores, in chunks of texts) and
//! store through the library's bulk loader ([`BulkLoader::add_entry`]). Fingerprinting here
//! rather than in the loader keeps where each text was read, to name the ones with nothing to
//! fingerprint.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use indicatif::ProgressBar;
use rayon::prelude::*;
use roaring::RoaringTreemap;
use simhash_store::bulk::{BulkPhase, BulkSummary};
use simhash_store::readers::{ExportHeader, Location, Position};
use simhash_store::{BulkLoader, BulkOptions, Entry, IdAssigner, SimhashConfig, Store};

use super::progress::Progress;
use super::read::{self, Content, Doc, NoText, NoTextReason, NoTexts, Tally};
use super::stopped::{self, LoadState};
use super::{
    open_for_writing, plural, ConfigArgs, Exit, InputArgs, StoreArg, EXIT_ERROR, EXIT_PROBLEMS,
};

#[cfg(feature = "postgres")]
mod postgres;

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
the output of `export` into a new store gives it the exported store's settings (the first
line of the export records them) and the documents' fingerprints, text lengths and sketches,
without fingerprinting again; an existing store must have the same settings. Fingerprints
with no such record go only into a store with the default settings, unless you pass
--trust-fingerprints.
A document whose key (URL, path) is already stored replaces it under the same id, so loading
the same files twice leaves the store as it was. JSON Lines may give ids (--id-field); a given
id that is stored replaces that document. Documents without an id get new ids after the
largest one stored or given so far in the load; ids never wrap. A document that gives an id
this load already gave a document without one stops the load there (what came before is
loaded), naming both: list inputs that give ids before the others. The summary counts new
documents, replaced ones (same id or key), stored documents removed (a loaded document took
their key) and documents superseded within the load (a later one had the same id or key).

With --postgres URL the documents go to the index in that PostgreSQL database (made in an
empty one, recording the settings given), in transactions of --postgres-batch documents. A
load that stops (an error, a kill, a lost server) leaves the batches before it in the index
and nothing of the one in flight: run the same command again to finish. Documents with a key
or an id replace themselves, so none is stored twice; documents with neither get new ids again.
  simhash-store load docs.jsonl --postgres postgres://app@db.example/dedup

Exit codes: 0 loaded (bad records, if any, were skipped and reported), 1 error, 2 usage,
3 stopped at a bad record under --strict (what came before it is loaded).";

/// Arguments of `load`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The store directory; `load` creates a store there if there is none.
    #[arg(
        long,
        short = 's',
        value_name = "DIR",
        env = "SIMHASH_STORE",
        required_unless_present = "postgres"
    )]
    store: Option<std::path::PathBuf>,

    /// Load into the index in this PostgreSQL database instead of a store directory
    /// (`postgres://user:password@host:port/db`; made in an empty database).
    #[arg(long, value_name = "URL")]
    postgres: Option<String>,

    /// Documents per transaction with --postgres: each batch's entries are packed into the
    /// index's groups (merged with the parts of recent batches) and committed whole.
    #[arg(
        long,
        value_name = "DOCS",
        default_value_t = 1_000_000,
        requires = "postgres"
    )]
    postgres_batch: usize,

    #[command(flatten)]
    input: InputArgs,

    /// Print the summary as one JSON object on standard output.
    #[arg(long)]
    json: bool,

    /// Load fingerprints that come without a record of the settings they were made with
    /// (JSON Lines with a `fingerprint` field and no export header line) into a store whose
    /// settings are not the default: you vouch that they were made with the store's settings.
    /// Without it such a load is refused, since fingerprints made otherwise would silently
    /// answer queries wrong.
    #[arg(long)]
    trust_fingerprints: bool,

    /// How a new store fingerprints texts (recorded in it).
    #[command(flatten)]
    #[command(next_help_heading = "Fingerprint settings (recorded by a new store)")]
    settings: ConfigArgs,
}

/// Keys remembered to give a key repeated within one load one id. Past this many the memory
/// is cleared: a key repeated after that gets a new id, and the bulk loader's "last add of a
/// key wins" still leaves one document for it.
const MAX_REMEMBERED_KEYS: usize = 1 << 20;

/// Bytes of text gathered before they are fingerprinted on all cores (each text counts 64
/// bytes more): about one or two batches of records (`read.rs`), so that the reading thread,
/// which stays at most two batches ahead, keeps reading while the texts before are
/// fingerprinted.
const TEXT_CHUNK_BYTES: usize = /* 1 MiB */ 1 << 20;

/// A text waiting to be fingerprinted, with what it is stored under.
struct PendingText {
    id: u64,
    key: Option<String>,
    location: Location,
    text: String,
}

/// Where a load writes: the store at `path`, opened (or created) when the first record
/// arrives, so that an export's header line can give a new store its settings.
pub struct Target<'a> {
    path: &'a Path,
    /// The settings asked for on the command line.
    settings: &'a ConfigArgs,
    /// Accept fingerprints that come with no record of their settings (`--trust-fingerprints`).
    trust_fingerprints: bool,
    store: OnceCell<Store>,
    /// The number of documents in the store when it was opened.
    before: OnceCell<u64>,
    /// How far the load has come, for a load that stops early (`stopped.rs`).
    state: Option<Arc<LoadState>>,
}

impl<'a> Target<'a> {
    /// The store at `path`, to be opened when the first record arrives.
    pub fn new(path: &'a Path, settings: &'a ConfigArgs, trust_fingerprints: bool) -> Target<'a> {
        Target {
            path,
            settings,
            trust_fingerprints,
            store: OnceCell::new(),
            before: OnceCell::new(),
            state: None,
        }
    }

    /// Keeps `state` up to date as the load goes on.
    pub fn with_state(mut self, state: Arc<LoadState>) -> Target<'a> {
        self.state = Some(state);
        self
    }

    /// A store opened already (its settings stand; exports must agree with them).
    pub fn opened(store: Store, settings: &'a ConfigArgs) -> Target<'a> {
        let target = Target::new(Path::new(""), settings, false);
        target.keep(store);
        target
    }

    /// Keeps `store`, just opened, as the target's.
    fn keep(&self, store: Store) -> &Store {
        let _ = self.before.set(store.len());
        if let Some(state) = &self.state {
            state.opened(store.len());
        }
        self.store.get_or_init(|| store)
    }

    /// The number of documents the store held when it was opened (0 before).
    pub fn documents_before(&self) -> u64 {
        self.before.get().copied().unwrap_or(0)
    }

    /// The store, opened with the command line's settings if it is not open yet.
    fn store(&self) -> anyhow::Result<&Store> {
        if let Some(store) = self.store.get() {
            return Ok(store);
        }
        let store = open_for_writing(self.path, self.settings).with_context(|| {
            format!("cannot open or create the store at {}", self.path.display())
        })?;
        Ok(self.keep(store))
    }

    /// The store, once a record or [`Target::into_store`] opened it.
    pub fn into_store(self) -> anyhow::Result<Store> {
        if self.store.get().is_none() {
            self.store()?;
        }
        self.store.into_inner().context("the store was not opened")
    }

    /// Takes an export's header: a new store is created with its settings; an open one must
    /// have them.
    fn accept_header(&self, location: &Location, header: &ExportHeader) -> anyhow::Result<()> {
        if let Some(store) = self.store.get() {
            let stored = store.simhasher().config();
            if *stored != header.settings {
                anyhow::bail!(
                    "{location}: this export was made from a store with other fingerprint settings than the store at {} ({}): \
                     load it into a new store (another --store directory), which takes the export's settings",
                    self.path.display(),
                    stored.differences(&header.settings)
                );
            }
            return Ok(());
        }
        if let Some(asked) = self.settings.requested() {
            if !self.settings.agrees_with(&header.settings) {
                anyhow::bail!(
                    "{location}: this export records other fingerprint settings than the command line asks for ({}): \
                     leave out the settings flags, and the new store takes the export's",
                    header.settings.differences(&asked)
                );
            }
        }
        let store = match Store::builder()
            .simhash_config(header.settings.clone())
            .open(self.path)
        {
            Err(simhash_store::Error::ConfigMismatch { differences, .. }) => anyhow::bail!(
                "{location}: this export was made from a store with other fingerprint settings than the store at {} ({differences}): \
                 load it into a new store (another --store directory), which takes the export's settings",
                self.path.display()
            ),
            other => other.with_context(|| {
                format!("cannot open or create the store at {}", self.path.display())
            })?,
        };
        self.keep(store);
        Ok(())
    }

    /// Fails unless fingerprints with no record of their settings may go into the store:
    /// the user vouches for them (`--trust-fingerprints`, or settings given for them), or the
    /// store has the default settings, which such fingerprints are taken to have.
    fn check_unrecorded_fingerprints(&self, location: &Location) -> anyhow::Result<()> {
        if self.trust_fingerprints || self.settings.given() {
            return Ok(());
        }
        let store = self.store()?;
        let stored = store.simhasher().config();
        let default = SimhashConfig::default();
        if *stored != default {
            anyhow::bail!(
                "{location}: a fingerprint with no record of the settings it was made with (an export's first line records them), \
                 and the store at {} fingerprints with non-default settings ({}): export the source store again with this \
                 version of simhash-store, or pass --trust-fingerprints if these fingerprints were made with the store's settings",
                self.path.display(),
                stored.differences(&default)
            );
        }
        Ok(())
    }
}

/// Assigns ids and hands documents to the store's bulk loader.
struct Writer<'a> {
    store: &'a Store,
    loader: BulkLoader<'a>,
    /// The ids of documents that give none.
    ids: IdAssigner,
    /// Keys added in this load and their ids (not yet visible through `id_for_key`).
    keys: HashMap<String, u64>,
    /// The ids this load gave documents without one, and where.
    new_ids: NewIds,
    /// The ids documents of this load gave.
    given_ids: RoaringTreemap,
    /// Texts not fingerprinted yet, in the order they came, and their bytes (64 more each).
    texts: Vec<PendingText>,
    text_bytes: usize,
    /// The texts that had no feature to fingerprint.
    no_features: NoTexts,
}

/// Ids given to documents without one, in increasing order: runs of consecutive ids given
/// in one input, each with the location of its first document.
#[derive(Default)]
struct NewIds {
    /// First id, last id (inclusive: a run may end at 2^64-1), where the first was read.
    runs: Vec<(u64, u64, Location)>,
}

impl NewIds {
    fn push(&mut self, id: u64, location: &Location) {
        if let Some((_, last, first)) = self.runs.last_mut() {
            if last.checked_add(1) == Some(id) && first.path == location.path {
                *last = id;
                return;
            }
        }
        self.runs.push((id, id, location.clone()));
    }

    /// The document that got `id`: its location if it was the first of its run, else the
    /// input it came from.
    fn who_got(&self, id: u64) -> Option<String> {
        let at = self.runs.partition_point(|&(_, last, _)| last < id);
        let (start, _, first) = self.runs.get(at).filter(|(start, _, _)| *start <= id)?;
        Some(if *start == id && first.position == Position::File {
            first.path.display().to_string()
        } else if *start == id {
            format!("the document at {first}")
        } else {
            format!(
                "document {} of those without an id in {}",
                id - start + 1,
                first.path.display()
            )
        })
    }
}

impl<'a> Writer<'a> {
    fn new(
        store: &'a Store,
        bar: ProgressBar,
        state: Option<Arc<LoadState>>,
    ) -> anyhow::Result<Writer<'a>> {
        let ids =
            IdAssigner::for_store(store).context("cannot read the largest id of the store")?;
        let watch = state.clone();
        let options = BulkOptions::new().progress(move |p| {
            if let Some(state) = &state {
                state.progress(p);
            }
            match p.phase {
                BulkPhase::Writing => bar.set_prefix("writing a sorted run"),
                BulkPhase::Ingesting => bar.set_prefix("ingesting"),
                _ => bar.set_prefix("loading"),
            }
        });
        let loader = store.bulk_loader_with(options).with_context(|| {
            format!(
                "cannot start loading into the store at {}",
                store.path().display()
            )
        })?;
        if let Some(state) = &watch {
            state.loading();
        }
        Ok(Writer {
            store,
            loader,
            ids,
            keys: HashMap::new(),
            new_ids: NewIds::default(),
            given_ids: RoaringTreemap::new(),
            texts: Vec::new(),
            text_bytes: 0,
            no_features: NoTexts::default(),
        })
    }

    /// The id `doc` is stored under: the one it gives; else the id its key has in this load
    /// or in the store (unless this load gave that id to another document); else a new one.
    fn id_for(&mut self, doc: &Doc) -> anyhow::Result<u64> {
        if let Some(id) = doc.id {
            if let Some(other) = self.new_ids.who_got(id) {
                anyhow::bail!(
                    "{}: this document gives id {id}, which this load already gave to {other} (a document without an id); \
                     the load stops here so that neither replaces the other (the documents before it are loaded). \
                     List the inputs that give ids before those that do not (new ids then come after the given ones), \
                     or give every document an id",
                    doc.location
                );
            }
            self.given_ids.insert(id);
            self.ids.give(id);
            return Ok(id);
        }
        let holder = match &doc.key {
            Some(key) => match self.keys.get(key) {
                Some(&id) => return Ok(id),
                None => self.store.id_for_key(key)?,
            },
            None => None,
        };
        // A stored document whose id this load gave another document is replaced by that
        // one: this key's document is new.
        let given = &self.given_ids;
        let Some(id) = self.ids.for_key(holder, |id| given.contains(id)) else {
            anyhow::bail!(
                "{}: no new id is left for this document: the store holds, or this load gave, id 18446744073709551615 \
                 (2^64-1), the largest there is, and ids never wrap to a stored one; give the documents ids explicitly",
                doc.location
            );
        };
        // The key's holder keeps its id: only a fresh id is this load's to account for.
        if holder != Some(id) {
            self.new_ids.push(id, &doc.location);
        }
        Ok(id)
    }

    fn add(&mut self, doc: Doc) -> anyhow::Result<()> {
        let id = self.id_for(&doc)?;
        if let Some(key) = &doc.key {
            if self.keys.len() >= MAX_REMEMBERED_KEYS {
                self.keys.clear();
            }
            self.keys.insert(key.clone(), id);
        }
        match doc.content {
            Content::Text(text) => {
                self.text_bytes += text.len() + 64;
                self.texts.push(PendingText {
                    id,
                    key: doc.key,
                    location: doc.location,
                    text,
                });
                if self.text_bytes >= TEXT_CHUNK_BYTES {
                    self.fingerprint_texts()?;
                }
                Ok(())
            }
            Content::Exported(exported) => {
                // Adds keep their order, which decides which add of an id or key wins.
                self.fingerprint_texts()?;
                self.loader
                    .add_entry(&Entry {
                        id,
                        fingerprint: exported.fingerprint,
                        key: doc.key,
                        text_len: exported.text_len,
                        sketch: exported.sketch,
                    })
                    .with_context(|| format!("cannot load the document of {}", doc.location))
            }
            Content::ExportHeader(_) => Ok(()),
        }
    }

    /// Fingerprints the pending texts on all cores and adds them in order; a text with no
    /// feature is counted and named instead.
    fn fingerprint_texts(&mut self) -> anyhow::Result<()> {
        let texts = std::mem::take(&mut self.texts);
        self.text_bytes = 0;
        let hasher = self.store.simhasher();
        let fingerprints: Vec<_> = texts
            .par_iter()
            .map(|t| hasher.fingerprint_and_sketch(&t.text))
            .collect();
        for (t, fingerprinted) in texts.into_iter().zip(fingerprints) {
            let (fingerprint, sketch) = match fingerprinted {
                Ok(f) => f,
                Err(simhash_store::Error::NoFeatures) => {
                    self.no_features.push(NoText {
                        location: t.location,
                        reason: NoTextReason::NoFeatures,
                    });
                    continue;
                }
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("cannot fingerprint the document of {}", t.location)
                    })
                }
            };
            self.loader
                .add_entry(&Entry {
                    id: t.id,
                    fingerprint,
                    key: t.key,
                    text_len: Some(t.text.len() as u64),
                    sketch,
                })
                .with_context(|| format!("cannot load the document of {}", t.location))?;
        }
        Ok(())
    }

    /// Adds the pending texts and finishes the load; returns what the load did and the texts
    /// that had no feature to fingerprint.
    fn finish(mut self) -> anyhow::Result<(BulkSummary, NoTexts)> {
        self.fingerprint_texts()?;
        let path = self.store.path().display().to_string();
        let summary = self
            .loader
            .finish()
            .with_context(|| format!("cannot write to the store at {path}"))?;
        Ok((summary, self.no_features))
    }
}

/// Loads `input` into the store of `target`: returns what was read (documents loaded, texts
/// without features counted as empty) and what the load did to the store (documents new,
/// replaced, removed, superseded). What was read before an error is written before the error
/// is returned.
///
/// # Errors
/// An input cannot be opened, the store cannot be opened or written, an export does not
/// agree with the store's settings.
pub fn load_inputs(
    target: &Target<'_>,
    input: &InputArgs,
    progress: &mut Progress,
) -> anyhow::Result<(Tally, BulkSummary)> {
    let bar = progress.bar();
    let mut writer: Option<Writer<'_>> = None;
    // The input whose header recorded the settings of its fingerprints, and the last input
    // whose unrecorded fingerprints were accepted.
    let mut recorded: Option<Arc<Path>> = None;
    let mut accepted: Option<Arc<Path>> = None;
    let result = read::run(input, progress, |docs| {
        for doc in docs {
            match &doc.content {
                Content::ExportHeader(header) => {
                    target.accept_header(&doc.location, header)?;
                    recorded = Some(doc.location.path.clone());
                    continue;
                }
                Content::Exported(_)
                    if recorded.as_ref() != Some(&doc.location.path)
                        && accepted.as_ref() != Some(&doc.location.path) =>
                {
                    target.check_unrecorded_fingerprints(&doc.location)?;
                    accepted = Some(doc.location.path.clone());
                }
                _ => {}
            }
            let writer = match &mut writer {
                Some(w) => w,
                None => writer.insert(Writer::new(
                    target.store()?,
                    bar.clone(),
                    target.state.clone(),
                )?),
            };
            writer.add(doc)?;
        }
        Ok(())
    });
    let (summary, no_features) = match writer {
        Some(writer) => writer.finish()?,
        None => {
            // Nothing was read: the store is still created (or opened), as asked.
            target.store()?;
            (BulkSummary::default(), NoTexts::default())
        }
    };
    progress.finish();
    let mut tally = result?;
    tally.docs -= no_features.count;
    tally.empty.absorb(no_features);
    Ok((tally, summary))
}

/// Runs `load`.
///
/// # Errors
/// An input or the store cannot be opened or written.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(url) = &args.postgres {
        #[cfg(feature = "postgres")]
        return postgres::run(&args, url);
        #[cfg(not(feature = "postgres"))]
        anyhow::bail!(
            "cannot load into {url}: this simhash-store was built without PostgreSQL support; build it with --features postgres"
        );
    }
    let store = StoreArg {
        store: args
            .store
            .clone()
            .context("give --store DIR or --postgres URL")?,
    };
    args.input.check_exist()?;
    store.check_can_hold_a_store()?;
    let state = LoadState::new(&store.store);
    stopped::say_state_on_interrupt(Arc::clone(&state))
        .context("cannot watch for Ctrl-C (SIGINT)")?;
    let target = Target::new(&store.store, &args.settings, args.trust_fingerprints)
        .with_state(Arc::clone(&state));
    let mut progress = Progress::new("loading", args.input.quiet);
    let (tally, summary) = match load_inputs(&target, &args.input, &mut progress) {
        Ok(loaded) => loaded,
        // Say what the store holds after a load that stopped in the middle.
        Err(e) if state.stopped_midway() => {
            return Err(Exit {
                code: e.downcast_ref::<Exit>().map_or(EXIT_ERROR, |x| x.code),
                message: format!("{}\n{}", super::message(&e), state.describe()),
            }
            .into())
        }
        Err(e) => return Err(e),
    };
    let elapsed = progress.elapsed().as_secs_f64();
    let before = target.documents_before();
    let after = target.into_store()?.len();
    if args.json {
        let summary = serde_json::json!({
            "loaded": tally.docs,
            "added": summary.added,
            "replaced": summary.replaced,
            "removed": summary.removed,
            "superseded": summary.superseded,
            "empty": tally.empty.count,
            "empty_documents": tally.empty.to_json(),
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
            "loaded {} in {:.2} s: {:.0} docs/s, {:.1} MB/s",
            plural(tally.docs, "document", "documents"),
            elapsed,
            tally.docs as f64 / elapsed.max(1e-6),
            progress.bytes() as f64 / 1e6 / elapsed.max(1e-6)
        );
        println!(
            "  {} new, {} replaced a stored document (same id or key), {} superseded by a later document of this load; \
             {} removed (a loaded document took their key)",
            summary.added,
            summary.replaced,
            summary.superseded,
            plural(summary.removed, "stored document", "stored documents"),
        );
        println!("skipped: {}", tally.skipped_summary());
        for line in tally.empty.lines() {
            println!("  {line}");
        }
        println!(
            "the store at {} holds {} (was {before})",
            store.store.display(),
            plural(after, "document", "documents"),
        );
    }
    strict_exit(&tally)
}

/// How a load ends once its summary is printed, into a store or into PostgreSQL: exit 2
/// naming the bad record a `--strict` load stopped at, else success.
fn strict_exit(tally: &Tally) -> anyhow::Result<ExitCode> {
    if let Some(bad) = &tally.stopped {
        return Err(Exit {
            code: EXIT_PROBLEMS,
            message: format!(
                "stopped at a bad record (--strict): {bad}\nthe {} before it are loaded; fix or remove the record, \
                 or run without --strict to skip such records",
                plural(tally.docs, "document", "documents")
            ),
        }
        .into());
    }
    Ok(ExitCode::SUCCESS)
}
