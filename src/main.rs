//! `simhash-store`: the command-line tool. Each subcommand lives in its own file under
//! `src/cli/` with an `Args` struct and a `run` function; this file only dispatches.
//!
//! Exit codes: 0 success, 1 error, 2 usage error, 3 problems found (`verify` found
//! inconsistencies, or a bad input record under `--strict`).

mod cli;
#[cfg(feature = "server")]
mod server;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// A persistent near-duplicate index for text: load crawled pages, ask which stored documents
/// are within a few bits of a new one.
#[derive(Parser)]
#[command(name = "simhash-store", version = cli::version(), after_long_help = cli::MAIN_EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Load documents (WARC/WET, HTML, JSON Lines, text) into a store.
    Load(cli::load::Args),
    /// Find stored documents near a text, a file, a stored key or a fingerprint.
    Query(cli::query::Args),
    /// Print the fingerprint of each input document as JSON lines, without storing anything.
    Fingerprint(cli::fingerprint::Args),
    /// Show stored documents by id or key.
    Get(cli::get::Args),
    /// Remove documents by id or key.
    Remove(cli::remove::Args),
    /// Check that the store's indexes agree (exit code 3 when they do not).
    Verify(cli::verify::Args),
    /// Fold single writes and bulk runs into packed chunks, and compact the store.
    Compact(cli::compact::Args),
    /// Make a consistent copy of a store (hard links on its file system): a store of its own.
    Backup(cli::backup::Args),
    /// Documents, disk usage and the distribution of documents over block values.
    Stats(cli::stats::Args),
    /// Write every document's id, key and fingerprint as JSON lines.
    Export(cli::export::Args),
    /// Generate a synthetic crawl with planted near-duplicates, load it, query it, and report
    /// precision and recall.
    Demo(cli::demo::Args),
    /// Find every near-duplicate pair in the store, cluster them, and write the pairs,
    /// clusters, the documents to drop and a summary picture.
    Dedup(cli::dedup::Args),
    /// Copy a store into a new one of the newest on-disk format (or replace it, --in-place).
    Upgrade(cli::upgrade::Args),
    /// Serve the store over HTTP: a JSON API for many clients (see docs/service.md).
    #[cfg(feature = "server")]
    Serve(cli::serve::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cli::completions::Args),
}

fn main() -> ExitCode {
    restore_sigpipe();
    let args = Cli::parse();
    let result = match args.command {
        Command::Load(a) => cli::load::run(a),
        Command::Query(a) => cli::query::run(a),
        Command::Fingerprint(a) => cli::fingerprint::run(a),
        Command::Get(a) => cli::get::run(a),
        Command::Remove(a) => cli::remove::run(a),
        Command::Verify(a) => cli::verify::run(a),
        Command::Compact(a) => cli::compact::run(a),
        Command::Backup(a) => cli::backup::run(a),
        Command::Stats(a) => cli::stats::run(a),
        Command::Export(a) => cli::export::run(a),
        Command::Demo(a) => cli::demo::run(a),
        Command::Dedup(a) => cli::dedup::run(a),
        Command::Upgrade(a) => cli::upgrade::run(a),
        #[cfg(feature = "server")]
        Command::Serve(a) => cli::serve::run(a),
        Command::Completions(a) => cli::completions::run(a, &mut Cli::command()),
    };
    cli::exit(result)
}

/// Rust ignores SIGPIPE, so printing to a closed pipe (`simhash-store export | head`) fails
/// and `println!` panics. A command-line tool should end quietly instead, as `cat` does.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any other thread exists; setting a signal's
    // disposition to its default is async-signal-safe and touches no Rust state.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
