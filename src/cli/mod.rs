//! The subcommands of `simhash-store`, one file each (an `Args` struct and a `run` function
//! returning the exit code), and what they share: opening the store, input options, reading
//! and extracting the inputs' texts (`read.rs`), progress bars and exit codes.

pub mod compact;
pub mod completions;
pub mod dedup;
pub mod demo;
pub mod export;
pub mod fingerprint;
pub mod get;
pub mod load;
pub mod progress;
pub mod query;
pub mod read;
pub mod remove;
#[cfg(feature = "server")]
pub mod serve;
pub mod stats;
pub mod stopped;
pub mod upgrade;
pub mod verify;

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use simhash_store::readers::{Format, ReaderOptions};
use simhash_store::simhash::TfScaling;
use simhash_store::sketch::SketchKind;
use simhash_store::{SimhashConfig, Store};

/// Success.
pub const EXIT_OK: u8 = 0;
/// An error: the store cannot be opened, an input cannot be read, a write failed.
pub const EXIT_ERROR: u8 = 1;
/// The command line is wrong (clap uses the same code).
pub const EXIT_USAGE: u8 = 2;
/// Problems found: `verify` found inconsistencies, or a bad record stopped `--strict`.
pub const EXIT_PROBLEMS: u8 = 3;

/// What `simhash-store --version` prints after the name: the crate version, the commit it
/// was built from (see `build.rs`) and the store formats it writes and reads.
pub fn version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| {
        format!(
            "{} (commit {}, writes store format {}, reads formats {}-{})",
            env!("CARGO_PKG_VERSION"),
            env!("SIMHASH_STORE_COMMIT"),
            simhash_store::upgrade::FORMAT_VERSION,
            simhash_store::upgrade::MIN_FORMAT_VERSION,
            simhash_store::upgrade::FORMAT_VERSION,
        )
    })
}

/// The examples at the end of `simhash-store --help`.
pub const MAIN_EXAMPLES: &str = "\
Examples:
  simhash-store demo                                   # a synthetic crawl, loaded and scored
  simhash-store load crawl/*.warc.gz --store pages.db  # WARC/WET, HTML, JSONL, text, folders
  simhash-store query --store pages.db --key https://example.com/a
  simhash-store query --store pages.db --file new.html -k 5 --json
  simhash-store stats --store pages.db
  simhash-store export --store pages.db > pages.jsonl  # rebuild with `load pages.jsonl`

The store directory can also be given as SIMHASH_STORE=DIR.

Exit codes:
  0  success
  1  error (the message names the file and what to do)
  2  usage error
  3  problems found: `verify` found inconsistencies, or a bad input record under --strict";

/// `n` and the noun in the number it takes: "1 document", "2 documents".
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// An error that exits with a code other than [`EXIT_ERROR`].
#[derive(Debug)]
pub struct Exit {
    /// The exit code.
    pub code: u8,
    /// What to print.
    pub message: String,
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Exit {}

/// A usage error (exit code 2) with a message saying what to pass.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    Exit {
        code: EXIT_USAGE,
        message: message.into(),
    }
    .into()
}

/// Prints an error and turns the result into the process exit code.
pub fn exit(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            let code = e.downcast_ref::<Exit>().map_or(EXIT_ERROR, |x| x.code);
            eprintln!("error: {}", message(&e));
            ExitCode::from(code)
        }
    }
}

/// The error's contexts and cause, joined by ": ". A library error ends the chain: its
/// message already holds its source (an I/O error's), and the advice in it is put in the
/// command's terms.
pub fn message(e: &anyhow::Error) -> String {
    let mut parts = Vec::new();
    for cause in e.chain() {
        if let Some(inner) = cause.downcast_ref::<simhash_store::Error>() {
            parts.push(in_command_terms(inner));
            break;
        }
        parts.push(cause.to_string());
    }
    parts.join(": ")
}

/// A library error's message, with advice given as flags and commands instead of Rust calls.
fn in_command_terms(e: &simhash_store::Error) -> String {
    use simhash_store::Error;
    match e {
        Error::Locked { path, .. } => format!(
            "the store at {} is in use by another process that writes to it (a `simhash-store serve`, \
             `load`, `remove`, `compact` or `upgrade`, or a program): a store has one writer at a time. \
             If it is a `serve`, send the writes to the service instead (`POST /v1/insert`, \
             `DELETE /v1/documents/ID`, or Python's `Client`; docs/service.md); otherwise run this \
             again when that process has finished. `query`, `get`, `stats`, `export`, `dedup`, \
             `verify` and `serve --read-only` read beside a writer",
            path.display()
        ),
        Error::LegacyFormat {
            path,
            found,
            current,
        } => format!(
            "the store at {path} is of format {found}, which this version reads but does not write \
             (it writes format {current}): copy it into a new store of format {current} with \
             `simhash-store upgrade {path} NEW_DIR` and write to that one, or replace it with \
             `simhash-store upgrade --in-place {path}`",
            path = path.display()
        ),
        Error::NoSketches { path } => format!(
            "the store at {} keeps no sketches, so it cannot verify near-duplicates: load the texts \
             into a new store with `simhash-store load --sketch`, or run without --verified",
            path.display()
        ),
        other => other.to_string(),
    }
}

/// `--tf`: how a feature's count becomes its weight (`simhash_store::simhash::TfScaling`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum TfArg {
    /// The count (the default configuration): fastest.
    Raw,
    /// count^a, the exponent falling with the text's length: finds more near-duplicates of
    /// Chinese text at k = 3 (F1 0.851 -> 0.867 on the labelled set, mean of twenty hash
    /// seeds) but not of English (0.862 -> 0.856); about 1.5x the fingerprinting time of raw.
    /// Keep k at 3 with it (docs/guide.md, "Weighting").
    LengthAdaptive,
    /// sqrt(count).
    Sqrt,
    /// 1 + ln(count).
    Log,
    /// 1 per distinct feature.
    Binary,
}

impl TfArg {
    fn tf(self) -> TfScaling {
        match self {
            TfArg::Raw => TfScaling::Raw,
            TfArg::LengthAdaptive => TfScaling::LengthAdaptive,
            TfArg::Sqrt => TfScaling::Sqrt,
            TfArg::Log => TfScaling::Log,
            TfArg::Binary => TfScaling::Binary,
        }
    }
}

/// How texts are fingerprinted, as asked on the command line: `load` records it in a new
/// store, `fingerprint` uses it without `--store`. Each setting left out is the default's
/// (or, for an existing store, the store's own).
#[derive(clap::Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigArgs {
    /// How feature counts are weighted. Default: `raw`.
    #[arg(long, value_enum, value_name = "WEIGHTING")]
    pub tf: Option<TfArg>,

    /// Keep boilerplate lines (copyright notices, share buttons, previous/next links,
    /// breadcrumbs, adverts, repost notices) as features, as stores before 0.3 did. By
    /// default short lines of those kinds are left out of the fingerprint, so a page crawled
    /// again with another banner stays a duplicate. (--keep-boilerplate is about HTML pages:
    /// it keeps their navigation and link lists when the text is extracted.)
    #[arg(long)]
    pub keep_boilerplate_lines: bool,

    /// Take the character trigrams of Latin (non-CJK) words across the words run together,
    /// as stores before 0.4 did, instead of within each word. Across words, lines run
    /// together by a text extractor (`foo\nbar` -> `foobar`) keep their trigrams; within
    /// words, word order does not count, so moved paragraphs cost nothing.
    #[arg(long)]
    pub shingles_across_words: bool,

    /// Count pieces for Latin (non-CJK) features: with base B, the occurrences 1 to B-1 of a
    /// word or trigram are one feature, and the later ones are cut into pieces that grow by
    /// --count-pieces-ratio (B to 2B-1, 2B to 4B-1, ... by default), so that deleted or
    /// replaced text shows in the counts (0: none, as stores before 0.4; 2 to 16). Default: 4.
    #[arg(long, value_name = "BASE")]
    pub count_pieces: Option<u8>,

    /// How many times longer each count piece after the first is than the one before (0: B
    /// itself, pieces B to B²-1, B² to B³-1, ... as stores of 0.4; 2 to 16). Default: 2;
    /// with --count-pieces 0 and no ratio given, 0.
    #[arg(long, value_name = "RATIO")]
    pub count_pieces_ratio: Option<u8>,

    /// Keep a 64-byte sketch of each text in its document record, so that `query --verified`
    /// and `dedup --verified` can confirm near-duplicates found at a wider k (a new store
    /// only: sketches come from the texts, so an existing store cannot gain them).
    #[arg(long)]
    pub sketch: bool,
}

impl ConfigArgs {
    /// `config` with each setting given on the command line. A new flag adds its line here;
    /// what is given, asked for and checked below follows from it.
    fn apply(&self, mut config: SimhashConfig) -> SimhashConfig {
        if let Some(tf) = self.tf {
            config.tf = tf.tf();
        }
        if self.keep_boilerplate_lines {
            config.drop_boilerplate = false;
        }
        if self.shingles_across_words {
            config.word_char_shingles_within_words = false;
        }
        if let Some(base) = self.count_pieces {
            config.latin_count_pieces = base;
        }
        if let Some(ratio) = self.count_pieces_ratio {
            config.latin_count_pieces_ratio = ratio;
        }
        if self.sketch {
            config.sketch = SketchKind::MinHash;
        }
        config
    }

    /// Whether any setting is given.
    pub fn given(&self) -> bool {
        *self != ConfigArgs::default()
    }

    /// The configuration asked for: the default with the settings given, or `None` when none
    /// is given.
    pub fn requested(&self) -> Option<SimhashConfig> {
        if !self.given() {
            return None;
        }
        let mut base = SimhashConfig::default();
        if self.count_pieces == Some(0) {
            // No pieces, no ratio (unless one is given): the record of a store before 0.4.
            base.latin_count_pieces_ratio = 0;
        }
        Some(self.apply(base))
    }

    /// Whether the settings given agree with a store's configuration (those not given
    /// always do): they change nothing in it.
    pub fn agrees_with(&self, stored: &SimhashConfig) -> bool {
        self.apply(stored.clone()) == *stored
    }
}

/// Opens (or creates) the store at `path` for writing, with the configuration `settings`
/// ask for when it is new. An existing store keeps its own; only the settings actually given
/// must agree with it (`--tf raw` on a store of 0.2, which kept boilerplate lines, is fine),
/// else the store's refusal naming both configurations stands.
pub fn open_for_writing(
    path: &std::path::Path,
    settings: &ConfigArgs,
) -> simhash_store::Result<Store> {
    let Some(config) = settings.requested() else {
        return Store::open(path);
    };
    match Store::builder().simhash_config(config).open(path) {
        Err(mismatch @ simhash_store::Error::ConfigMismatch { .. }) => {
            let store = Store::open(path)?;
            if settings.agrees_with(store.simhasher().config()) {
                Ok(store)
            } else {
                Err(mismatch)
            }
        }
        other => other,
    }
}

/// What `-q`/`--quiet` does, the same on every subcommand.
pub const QUIET_HELP: &str = "No progress bar and no notes on standard error (counts, what \
                              was not found); errors and warnings are still printed";

/// `-q`/`--quiet`, for the subcommands that have no other reason to take it (those that read
/// inputs take it with [`InputArgs`]).
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct QuietArg {
    #[arg(long, short = 'q', help = QUIET_HELP)]
    pub quiet: bool,
}

/// The store directory, shared by every subcommand that uses a store.
#[derive(clap::Args, Debug, Clone)]
pub struct StoreArg {
    /// The store directory. `load` and `serve` (unless --read-only) create a store there if
    /// there is none; the other commands need one.
    #[arg(long, short = 's', value_name = "DIR", env = "SIMHASH_STORE")]
    pub store: PathBuf,
}

impl StoreArg {
    /// Opens an existing store for reading and writing.
    pub fn open(&self) -> anyhow::Result<Store> {
        self.require_existing()?;
        Store::open(&self.store)
            .with_context(|| format!("cannot open the store at {}", self.store.display()))
    }

    /// Opens an existing store read-only (works beside a process that writes to it).
    pub fn open_read_only(&self) -> anyhow::Result<Store> {
        self.require_existing()?;
        Store::builder()
            .read_only(true)
            .open(&self.store)
            .with_context(|| format!("cannot open the store at {}", self.store.display()))
    }

    fn require_existing(&self) -> anyhow::Result<()> {
        if self.store.join("CURRENT").exists() {
            return Ok(());
        }
        self.check_can_hold_a_store()?;
        anyhow::bail!(
            "there is no store at {}: create one with `simhash-store load INPUT --store {}`",
            self.store.display(),
            self.store.display()
        );
    }

    /// Fails, saying what to do, when `--store` names something that neither is a store nor
    /// can become one: a file, or a directory that holds other things.
    pub fn check_can_hold_a_store(&self) -> anyhow::Result<()> {
        let path = &self.store;
        if path.join("CURRENT").exists() {
            return Ok(());
        }
        if path.is_file() {
            anyhow::bail!(
                "{} is a file, not a store: --store takes a directory (`load` creates a store in a new or empty one)",
                path.display()
            );
        }
        if Store::holds_other_files(path) {
            anyhow::bail!(
                "{} is a directory that holds other files but no store: give --store a new or empty directory \
                 (`simhash-store load INPUT --store NEW_DIR` creates one there)",
                path.display()
            );
        }
        Ok(())
    }
}

/// How inputs are read: shared by `load` and `fingerprint`.
#[derive(clap::Args, Debug, Clone)]
pub struct InputArgs {
    /// Input files or folders (`-` for standard input). Formats: WARC/WET (`.warc`, `.wet`,
    /// gzipped or not), JSON Lines (`.jsonl`), HTML files, text files; a folder is read
    /// recursively, each file by its own format.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,

    /// The format of every input instead of detecting it: warc, jsonl, html, text (one
    /// document per file) or lines (one document per line).
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub format: Option<Format>,

    /// JSON Lines: the field holding the id (a non-negative integer).
    #[arg(long, default_value = "id", value_name = "FIELD")]
    pub id_field: String,

    /// JSON Lines: the field holding the key (URL, path); repeat to give fallbacks.
    #[arg(long, value_name = "FIELD", default_values = ["key", "url"])]
    pub key_field: Vec<String>,

    /// JSON Lines: the field holding the text.
    #[arg(long, default_value = "text", value_name = "FIELD")]
    pub text_field: String,

    /// The largest document accepted, in bytes; larger ones are skipped and reported.
    #[arg(long, default_value_t = 16 * 1024 * 1024, value_name = "BYTES")]
    pub max_doc_bytes: usize,

    /// Keep all visible text of HTML pages instead of extracting the main text (navigation,
    /// headers, footers and link lists are removed by default).
    #[arg(long)]
    pub keep_boilerplate: bool,

    /// Stop at the first bad record (exit code 3) instead of reporting it and going on.
    /// What was loaded before it stays loaded.
    #[arg(long)]
    pub strict: bool,

    #[arg(long, short = 'q', help = QUIET_HELP)]
    pub quiet: bool,
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(s).map_err(|e| e.to_string())
}

impl InputArgs {
    /// The reader options these arguments say.
    pub fn reader_options(&self) -> ReaderOptions {
        let mut opts = ReaderOptions::default();
        opts.format = self.format;
        opts.max_doc_bytes = self.max_doc_bytes;
        opts.id_field = self.id_field.clone();
        opts.key_fields = self.key_field.clone();
        opts.text_field = self.text_field.clone();
        opts.extract_main_text = !self.keep_boilerplate;
        opts
    }

    /// The size in bytes of every input file (those in folders included, hidden ones left
    /// out as the readers do), or `None` when an input is standard input.
    pub fn total_bytes(&self) -> Option<u64> {
        fn size(path: &Path) -> u64 {
            match std::fs::metadata(path) {
                Ok(m) if m.is_dir() => std::fs::read_dir(path)
                    .map(|entries| {
                        entries
                            .flatten()
                            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                            .map(|e| size(&e.path()))
                            .sum()
                    })
                    .unwrap_or(0),
                Ok(m) => m.len(),
                Err(_) => 0,
            }
        }
        if self.inputs.iter().any(|i| i == Path::new("-")) {
            return None;
        }
        Some(self.inputs.iter().map(|i| size(i)).sum())
    }

    /// Fails with a message naming the first input that does not exist.
    pub fn check_exist(&self) -> anyhow::Result<()> {
        for input in &self.inputs {
            if input != Path::new("-") && !input.exists() {
                anyhow::bail!("input {} does not exist: check the path", input.display());
            }
        }
        Ok(())
    }
}
