//! `simhash-store load --postgres URL`: the same inputs, readers and fingerprinting as a load
//! into a store directory, numbered here a batch at a time and written to the index in
//! PostgreSQL by a [`PgLoader`], each batch one transaction ([`PgIndex::load_batch`]: binary
//! COPY of the new documents, groups packed here). A load that stops leaves the batches
//! before it committed and nothing of the one in flight; running the same command again
//! finishes it, since documents with a key or an id replace themselves.

use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::Context;
use rayon::prelude::*;
use roaring::RoaringTreemap;
use simhash_store::postgres::{PgIndex, PgLoader};
use simhash_store::readers::Location;
use simhash_store::{Entry, Fingerprint, IdAssigner, SimhashConfig};

use super::super::progress::Progress;
use super::super::read::{self, Content, Doc, NoText, NoTextReason, NoTexts};
use super::super::{plural, Exit, EXIT_ERROR};
use super::{strict_exit, Args};

/// What running the same command again does after a load that stopped.
const RESUME: &str =
    "Run the same command again to finish: documents with a key or an id replace themselves, \
so none is stored twice (documents with neither get new ids again)";

/// Bytes of text gathered before they are fingerprinted on all cores (each text counts 64
/// bytes more), as `load` does: a batch keeps fingerprints, not texts.
const TEXT_CHUNK_BYTES: usize = /* 1 MiB */ 1 << 20;

/// A fingerprint, the length of its text, its sketch.
type Fingerprinted = (
    Fingerprint,
    Option<u64>,
    Option<simhash_store::sketch::Sketch>,
);

/// A document of the batch being gathered: its id if it gives one, its key, where it was
/// read, and its text until it is fingerprinted.
struct Pending {
    id: Option<u64>,
    key: Option<String>,
    location: Location,
    content: PendingContent,
}

enum PendingContent {
    Text(String),
    Fingerprinted(simhash_store::Result<Fingerprinted>),
}

/// Gathers documents into batches, gives them ids and loads each batch.
struct Loader<'a> {
    index: &'a PgIndex,
    runtime: &'a tokio::runtime::Runtime,
    batch_docs: usize,
    trust_fingerprints: bool,
    pending: Vec<Pending>,
    /// How many of `pending` (the first ones) are fingerprinted, and the bytes of the others.
    fingerprinted: usize,
    text_bytes: usize,
    ids: IdAssigner,
    /// Keys of the batch in flight and their ids (not yet in the index).
    keys: HashMap<String, u64>,
    /// Ids this load gave documents without one, and the ids documents gave.
    new_ids: RoaringTreemap,
    given_ids: RoaringTreemap,
    /// The batches' transactions, and what they did.
    loads: PgLoader<'a>,
    no_features: NoTexts,
    bar: indicatif::ProgressBar,
}

impl Loader<'_> {
    fn add(&mut self, doc: Doc) -> anyhow::Result<()> {
        let content = match doc.content {
            Content::ExportHeader(header) => {
                let stored = self.index.simhasher().config();
                if *stored != header.settings {
                    anyhow::bail!(
                        "{}: this export was made from a store with other fingerprint settings than the index in {} ({}): \
                         load it into a new database, opened with the export's settings flags",
                        doc.location,
                        self.index.database(),
                        stored.differences(&header.settings)
                    );
                }
                return Ok(());
            }
            Content::Text(text) => {
                self.text_bytes += text.len() + 64;
                PendingContent::Text(text)
            }
            Content::Exported(e) => {
                PendingContent::Fingerprinted(Ok((e.fingerprint, e.text_len, e.sketch)))
            }
        };
        self.pending.push(Pending {
            id: doc.id,
            key: doc.key,
            location: doc.location,
            content,
        });
        if self.pending.len() >= self.batch_docs {
            self.flush()?;
        } else if self.text_bytes >= TEXT_CHUNK_BYTES {
            self.fingerprint_texts();
        }
        Ok(())
    }

    /// Fingerprints the gathered texts on all cores.
    fn fingerprint_texts(&mut self) {
        let hasher = self.index.simhasher();
        let from = self.fingerprinted.min(self.pending.len());
        self.pending[from..].par_iter_mut().for_each(|p| {
            if let PendingContent::Text(text) = &p.content {
                let done = hasher
                    .fingerprint_and_sketch(text)
                    .map(|(fp, sketch)| (fp, Some(text.len() as u64), sketch));
                p.content = PendingContent::Fingerprinted(done);
            }
        });
        self.fingerprinted = self.pending.len();
        self.text_bytes = 0;
    }

    /// Fingerprints, numbers and loads the gathered documents in one transaction.
    fn flush(&mut self) -> anyhow::Result<()> {
        self.fingerprint_texts();
        self.fingerprinted = 0;
        let pending = std::mem::take(&mut self.pending);
        if pending.is_empty() {
            return Ok(());
        }
        // The holders of the keys of documents that give no id, in one statement.
        let wanted: Vec<&str> = pending
            .iter()
            .filter(|p| p.id.is_none())
            .filter_map(|p| p.key.as_deref())
            .collect();
        let holders: HashMap<String, u64> = {
            let found = self
                .runtime
                .block_on(self.index.ids_for_keys(&wanted))
                .with_context(|| format!("cannot read keys from {}", self.index.database()))?;
            wanted
                .iter()
                .zip(found)
                .filter_map(|(k, id)| Some(((*k).to_owned(), id?)))
                .collect()
        };
        let mut entries = Vec::with_capacity(pending.len());
        for p in pending {
            let done = match p.content {
                PendingContent::Fingerprinted(done) => done,
                // Every text was fingerprinted above.
                PendingContent::Text(_) => Err(simhash_store::Error::NoFeatures),
            };
            let (fingerprint, text_len, sketch) = match done {
                Ok(f) => f,
                Err(simhash_store::Error::NoFeatures) => {
                    self.no_features.push(NoText {
                        location: p.location,
                        reason: NoTextReason::NoFeatures,
                    });
                    continue;
                }
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("cannot fingerprint the document of {}", p.location)
                    })
                }
            };
            let id = self.id_for(p.id, p.key.as_deref(), &holders, &p.location)?;
            if let Some(key) = &p.key {
                self.keys.insert(key.clone(), id);
            }
            entries.push(Entry {
                id,
                fingerprint,
                key: p.key,
                text_len,
                sketch,
            });
        }
        self.bar.set_prefix("writing to PostgreSQL");
        // One transaction: the batch holds at most `batch_docs` entries, the loader's size.
        let loads = &mut self.loads;
        self.runtime
            .block_on(async move {
                loads.add_all(entries).await?;
                loads.flush().await
            })
            .with_context(|| format!("cannot load a batch into {}", self.index.database()))?;
        self.keys.clear();
        self.bar.set_prefix("loading");
        Ok(())
    }

    /// The id of a document: the one it gives; else the id its key has in this batch or in
    /// the index (unless this load gave that id to another document); else a new one.
    fn id_for(
        &mut self,
        given: Option<u64>,
        key: Option<&str>,
        holders: &HashMap<String, u64>,
        location: &Location,
    ) -> anyhow::Result<u64> {
        if let Some(id) = given {
            if self.new_ids.contains(id) {
                anyhow::bail!(
                    "{location}: this document gives id {id}, which this load already gave a document without an id; \
                     the load stops here so that neither replaces the other. List the inputs that give ids before \
                     those that do not, or give every document an id"
                );
            }
            self.given_ids.insert(id);
            self.ids.give(id);
            return Ok(id);
        }
        let holder = match key {
            Some(key) => match self.keys.get(key) {
                Some(&id) => return Ok(id),
                None => holders.get(key).copied(),
            },
            None => None,
        };
        let given = &self.given_ids;
        let Some(id) = self.ids.for_key(holder, |id| given.contains(id)) else {
            anyhow::bail!(
                "{location}: no new id is left for this document: the index holds, or this load gave, id 2^64-1; \
                 give the documents ids explicitly"
            );
        };
        if holder != Some(id) {
            self.new_ids.insert(id);
        }
        Ok(id)
    }
}

/// Fails unless fingerprints with no record of their settings may go into `index`.
fn check_unrecorded(index: &PgIndex, args: &Args, location: &Location) -> anyhow::Result<()> {
    let stored = index.simhasher().config();
    let default = SimhashConfig::default();
    if args.trust_fingerprints || args.settings.given() || *stored == default {
        return Ok(());
    }
    anyhow::bail!(
        "{location}: a fingerprint with no record of the settings it was made with (an export's first line records them), \
         and the index in {} fingerprints with non-default settings ({}): export again with this version of \
         simhash-store, or pass --trust-fingerprints if these fingerprints were made with the index's settings",
        index.database(),
        stored.differences(&default)
    )
}

/// Runs `load --postgres URL`.
///
/// # Errors
/// An input cannot be read, the database cannot be reached or written, settings disagree.
pub fn run(args: &Args, url: &str) -> anyhow::Result<ExitCode> {
    args.input.check_exist()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the PostgreSQL client")?;
    let index = runtime
        .block_on(PgIndex::open(url, args.settings.requested()))
        .context("cannot open the index in PostgreSQL")?;
    let before = runtime.block_on(index.len())?;
    let largest = runtime.block_on(index.largest_id())?;
    let mut progress = Progress::new("loading", args.input.quiet);
    let mut loader = Loader {
        index: &index,
        runtime: &runtime,
        batch_docs: args.postgres_batch.max(1),
        trust_fingerprints: args.trust_fingerprints,
        pending: Vec::new(),
        fingerprinted: 0,
        text_bytes: 0,
        ids: IdAssigner::starting_at(match largest {
            Some(id) => id.checked_add(1),
            None => Some(0),
        }),
        keys: HashMap::new(),
        new_ids: RoaringTreemap::new(),
        given_ids: RoaringTreemap::new(),
        loads: PgLoader::new(&index, args.postgres_batch),
        no_features: NoTexts::default(),
        bar: progress.bar(),
    };
    let mut recorded: Option<std::sync::Arc<std::path::Path>> = None;
    let mut accepted: Option<std::sync::Arc<std::path::Path>> = None;
    let read = read::run(&args.input, &mut progress, |docs| {
        for doc in docs {
            match &doc.content {
                Content::ExportHeader(_) => recorded = Some(doc.location.path.clone()),
                Content::Exported(_)
                    if !loader.trust_fingerprints
                        && recorded.as_ref() != Some(&doc.location.path)
                        && accepted.as_ref() != Some(&doc.location.path) =>
                {
                    check_unrecorded(&index, args, &doc.location)?;
                    accepted = Some(doc.location.path.clone());
                }
                _ => {}
            }
            loader.add(doc)?;
        }
        Ok(())
    });
    let flushed = read.and_then(|tally| loader.flush().map(|()| tally));
    progress.finish();
    let mut tally = match flushed {
        Ok(tally) => tally,
        Err(e) => {
            let holds = runtime
                .block_on(index.len())
                .map(|n| {
                    format!(
                        "the index in {} holds {}",
                        index.database(),
                        plural(n, "document", "documents")
                    )
                })
                .unwrap_or_else(|_| format!("the index in {}", index.database()));
            return Err(Exit {
                code: e.downcast_ref::<Exit>().map_or(EXIT_ERROR, |x| x.code),
                message: format!(
                    "{}\n{holds}; {}. {RESUME}",
                    super::super::message(&e),
                    loader.loads.stopped(),
                ),
            }
            .into());
        }
    };
    tally.docs -= loader.no_features.count;
    tally.empty.absorb(std::mem::take(&mut loader.no_features));
    let summary = loader.loads.summary();
    let elapsed = progress.elapsed().as_secs_f64();
    let after = runtime.block_on(index.len())?;
    if args.json {
        let json = serde_json::json!({
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
            "batches": loader.loads.batches(),
            "seconds": elapsed,
            "input_bytes": progress.bytes(),
        });
        println!("{json}");
    } else {
        println!(
            "loaded {} in {:.2} s: {:.0} docs/s, {:.1} MB/s, {}",
            plural(tally.docs, "document", "documents"),
            elapsed,
            tally.docs as f64 / elapsed.max(1e-6),
            progress.bytes() as f64 / 1e6 / elapsed.max(1e-6),
            plural(loader.loads.batches(), "transaction", "transactions"),
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
            "the index in {} holds {} (was {before})",
            index.database(),
            plural(after, "document", "documents"),
        );
    }
    strict_exit(&tally)
}
