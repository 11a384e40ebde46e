//! Reading inputs for `load` and `fingerprint`: records, decoded and with the main text of
//! HTML pages extracted, checked, in input order. Fingerprinting is the caller's: `load` hands
//! the texts to the library's bulk loader ([`simhash_store::BulkLoader::add_text`]).
//!
//! One thread reads the inputs in order and sends batches of records; the calling thread
//! decodes and extracts each batch on all cores (rayon), then hands the documents to the
//! caller's sink in input order. Memory is bounded by two batches in flight.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::mpsc;

use rayon::prelude::*;
use simhash_store::readers::{
    html_to_text, BadRecord, BadRecordKind, Body, ExportHeader, ExportedDocument, Location,
    ReaderOptions,
};
use simhash_store::{read_input, Error, Record, MAX_EXTERNAL_KEY_LEN};

use super::progress::Progress;
use super::InputArgs;

/// Records per batch.
const BATCH_RECORDS: usize = 256;
/// Input bytes per batch.
const BATCH_BYTES: usize = 32 * 1024 * 1024;

/// A document read from an input, not yet stored.
#[derive(Debug, Clone)]
pub struct Doc {
    /// The external key.
    pub key: Option<String>,
    /// The id given by the input.
    pub id: Option<u64>,
    /// Where it was read.
    pub location: Location,
    /// Its text, or the fingerprint the input gave.
    pub content: Content,
}

/// What a [`Doc`] holds.
#[derive(Debug, Clone)]
pub enum Content {
    /// The text to fingerprint: decoded, and the main text of an HTML page.
    Text(String),
    /// A fingerprint computed before (a document line of `simhash-store export`).
    Exported(ExportedDocument),
    /// The header line of `simhash-store export`: the settings of the fingerprints after it
    /// in the same input. Not a document: it is not counted in [`Tally::docs`].
    ExportHeader(ExportHeader),
}

impl Doc {
    /// Whether this is a document (not an export's header).
    pub fn is_document(&self) -> bool {
        !matches!(self.content, Content::ExportHeader(_))
    }
}

/// How many documents with no text to fingerprint a summary names.
pub const NAMED_NO_TEXT: usize = 20;

/// Why a document has no text to fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoTextReason {
    /// Its text, or the visible text of its page, is empty.
    Empty,
    /// Main-text extraction dropped all of its page's visible text, `chars` characters
    /// besides whitespace.
    AllBoilerplate { chars: usize },
    /// Its text holds only punctuation and stop words: no feature.
    NoFeatures,
}

impl fmt::Display for NoTextReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoTextReason::Empty => f.write_str("no text"),
            NoTextReason::AllBoilerplate { chars } => write!(
                f,
                "main-text extraction dropped all {chars} characters of the page's visible text \
                 as boilerplate (--keep-boilerplate keeps them)"
            ),
            NoTextReason::NoFeatures => f.write_str("only punctuation and stop words"),
        }
    }
}

/// A document that ended with no text to fingerprint: where it was read, and why.
#[derive(Debug, Clone)]
pub struct NoText {
    pub location: Location,
    pub reason: NoTextReason,
}

/// The documents that ended with no text to fingerprint: how many, and the first
/// [`NAMED_NO_TEXT`] found.
#[derive(Debug, Default)]
pub struct NoTexts {
    pub count: u64,
    pub named: Vec<NoText>,
}

impl NoTexts {
    pub fn push(&mut self, doc: NoText) {
        self.count += 1;
        if self.named.len() < NAMED_NO_TEXT {
            self.named.push(doc);
        }
    }

    /// Adds the documents of `other`, naming its first ones while there is room.
    pub fn absorb(&mut self, other: NoTexts) {
        let unnamed = other.count - other.named.len() as u64;
        for doc in other.named {
            self.push(doc);
        }
        self.count += unnamed;
    }

    /// One line per named document (`FILE:POSITION: REASON`), and one for those not named.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .named
            .iter()
            .map(|d| format!("no text to fingerprint: {}: {}", d.location, d.reason))
            .collect();
        let unnamed = self.count - self.named.len() as u64;
        if unnamed > 0 {
            lines.push(format!(
                "no text to fingerprint: {unnamed} more (the first {NAMED_NO_TEXT} are named)"
            ));
        }
        lines
    }

    /// The named documents as JSON: `[{"source": "FILE:POSITION", "reason": "..."}]`.
    pub fn to_json(&self) -> serde_json::Value {
        self.named
            .iter()
            .map(|d| {
                serde_json::json!({
                    "source": d.location.to_string(),
                    "reason": d.reason.to_string(),
                })
            })
            .collect()
    }
}

/// What happened to the records read.
#[derive(Debug, Default)]
pub struct Tally {
    /// Documents handed to the sink.
    pub docs: u64,
    /// Bad records skipped, by kind.
    pub bad: BTreeMap<BadRecordKind, u64>,
    /// Documents with no text to fingerprint: the empty ones found here, those of only
    /// punctuation and stop words by the caller, which fingerprints.
    pub empty: NoTexts,
    /// Records that hold no document (WARC responses that are not 2xx HTML), by reason.
    pub not_documents: BTreeMap<&'static str, u64>,
    /// The bad record that stopped a `--strict` run.
    pub stopped: Option<BadRecord>,
}

impl Tally {
    /// Bad records in all.
    pub fn bad_total(&self) -> u64 {
        self.bad.values().sum()
    }

    /// "3 truncated, 1 too large", or "none".
    pub fn bad_summary(&self) -> String {
        if self.bad.is_empty() {
            return "none".into();
        }
        self.bad
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// What was skipped, for the summary line: "2 bad records (2 truncated), 1 with no text
    /// to fingerprint, 5 WARC responses that are not documents (3 not HTML, 2 HTTP status
    /// not 2xx)"; the last part only when there were such records.
    pub fn skipped_summary(&self) -> String {
        let mut line = format!(
            "{} bad records ({}), {} with no text to fingerprint",
            self.bad_total(),
            self.bad_summary(),
            self.empty.count
        );
        if !self.not_documents.is_empty() {
            let total: u64 = self.not_documents.values().sum();
            let reasons: Vec<String> = self
                .not_documents
                .iter()
                .map(|(reason, n)| format!("{n} {reason}"))
                .collect();
            line.push_str(&format!(
                ", {total} WARC responses that are not documents ({})",
                reasons.join(", ")
            ));
        }
        line
    }
}

enum Outcome {
    Doc(Doc),
    Bad(BadRecord),
    Empty(NoText),
    NotADocument(&'static str),
}

/// Why `record`, whose text is empty, has no text to fingerprint: for a page, whether it had
/// visible text that main-text extraction dropped.
fn why_empty(record: &Record, opts: &ReaderOptions) -> NoTextReason {
    if let Body::Html { bytes, charset } = &record.body {
        if opts.extract_main_text {
            let chars = html_to_text(bytes, charset.as_deref(), false)
                .map_or(0, |all| all.chars().filter(|c| !c.is_whitespace()).count());
            if chars > 0 {
                return NoTextReason::AllBoilerplate { chars };
            }
        }
    }
    NoTextReason::Empty
}

fn extract(record: Record, opts: &ReaderOptions) -> Outcome {
    if let Body::Skipped(skipped) = &record.body {
        return Outcome::NotADocument(skipped.reason());
    }
    if let Some(key) = &record.key {
        if key.len() > MAX_EXTERNAL_KEY_LEN {
            return Outcome::Bad(BadRecord {
                location: record.location.clone(),
                kind: BadRecordKind::TooLarge,
                message: format!(
                    "its key has {} bytes, over the limit of {MAX_EXTERNAL_KEY_LEN}",
                    key.len()
                ),
            });
        }
    }
    let content = match record.body {
        Body::Exported(doc) => Content::Exported(doc),
        Body::ExportHeader(header) => Content::ExportHeader(header),
        Body::Text(text) => Content::Text(text),
        _ => match record.text(opts) {
            Ok(Some(text)) if text.trim().is_empty() => {
                return Outcome::Empty(NoText {
                    reason: why_empty(&record, opts),
                    location: record.location.clone(),
                })
            }
            Ok(Some(text)) => Content::Text(text.into_owned()),
            Ok(None) => {
                return Outcome::Empty(NoText {
                    reason: NoTextReason::Empty,
                    location: record.location,
                })
            }
            Err(bad) => return Outcome::Bad(bad),
        },
    };
    if matches!(&content, Content::Text(text) if text.trim().is_empty()) {
        // No features for certain: counted here, so it takes no id.
        return Outcome::Empty(NoText {
            reason: NoTextReason::Empty,
            location: record.location,
        });
    }
    Outcome::Doc(Doc {
        key: record.key,
        id: record.id,
        location: record.location,
        content,
    })
}

type Batch = Result<Vec<Result<Record, BadRecord>>, Error>;

/// Sends the records of every input in batches; returns the inputs read to the end that
/// held no record at all (an empty folder or file), for a warning.
fn read_all(args: &InputArgs, opts: &ReaderOptions, tx: mpsc::SyncSender<Batch>) -> Vec<PathBuf> {
    let mut empty = Vec::new();
    for input in &args.inputs {
        let records = match read_input(input, opts) {
            Ok(r) => r,
            Err(e) => {
                let _ = tx.send(Err(e));
                return empty;
            }
        };
        let mut batch = Vec::with_capacity(BATCH_RECORDS);
        let mut bytes = 0;
        let mut any = false;
        for item in records {
            any = true;
            bytes += item.as_ref().map_or(0, |r| r.body.len());
            batch.push(item);
            if batch.len() >= BATCH_RECORDS || bytes >= BATCH_BYTES {
                if tx.send(Ok(std::mem::take(&mut batch))).is_err() {
                    return empty;
                }
                bytes = 0;
            }
        }
        if !any {
            empty.push(input.clone());
        }
        if !batch.is_empty() && tx.send(Ok(batch)).is_err() {
            return empty;
        }
    }
    empty
}

/// Reads every input, decodes and extracts the documents' texts and hands them to `sink` in
/// input order, a batch at a time. Bad records are printed (above the progress bar) and
/// counted; under `--strict` the first one stops the run after the documents before it were
/// handed over. An input that holds no record at all (an empty folder or file) is named in
/// a warning on standard error.
///
/// # Errors
/// An input that cannot be opened, or an error of `sink`.
pub fn run(
    args: &InputArgs,
    progress: &mut Progress,
    mut sink: impl FnMut(Vec<Doc>) -> anyhow::Result<()>,
) -> anyhow::Result<Tally> {
    let mut opts = args.reader_options();
    opts.read_counter = progress.read_counter();
    if let Some(total) = args.total_bytes() {
        progress.expect_bytes(total);
    }
    let mut tally = Tally::default();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let (tx, rx) = mpsc::sync_channel::<Batch>(2);
        let opts_ref = &opts;
        let reader = scope.spawn(move || read_all(args, opts_ref, tx));
        for batch in &rx {
            let batch = batch?;
            let bytes: u64 = batch
                .iter()
                .map(|r| r.as_ref().map_or(0, |r| r.body.len() as u64))
                .sum();
            let outcomes: Vec<Outcome> = batch
                .into_par_iter()
                .map(|item| match item {
                    Ok(record) => extract(record, &opts),
                    Err(bad) => Outcome::Bad(bad),
                })
                .collect();
            let mut docs = Vec::with_capacity(outcomes.len());
            for outcome in outcomes {
                match outcome {
                    Outcome::Doc(d) => docs.push(d),
                    Outcome::Empty(doc) => tally.empty.push(doc),
                    Outcome::NotADocument(reason) => {
                        *tally.not_documents.entry(reason).or_default() += 1
                    }
                    Outcome::Bad(bad) => {
                        progress.println(&format!("bad record: {bad}"));
                        *tally.bad.entry(bad.kind).or_default() += 1;
                        if args.strict {
                            tally.stopped = Some(bad);
                            break;
                        }
                    }
                }
            }
            let n = docs.iter().filter(|d| d.is_document()).count() as u64;
            tally.docs += n;
            if !docs.is_empty() {
                sink(docs)?;
            }
            progress.inc(n, bytes);
            if tally.stopped.is_some() {
                break;
            }
        }
        // Dropping the receiver ends the reader thread at its next send.
        drop(rx);
        let empty = reader
            .join()
            .map_err(|_| anyhow::anyhow!("the thread reading the inputs panicked"))?;
        for input in empty {
            progress.println(&format!(
                "warning: no documents found in {} ({})",
                input.display(),
                if input.is_dir() {
                    "a folder with no files, or only empty or hidden ones"
                } else {
                    "an empty input"
                }
            ));
        }
        Ok(())
    })?;
    Ok(tally)
}
