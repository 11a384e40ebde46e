//! `simhash-store backup`: a consistent copy of a store, as a new store directory.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use super::{QuietArg, StoreArg};

const EXAMPLES: &str = "\
Examples:
  simhash-store backup --store pages.db backups/pages-2026-11-29.db
  simhash-store verify --store backups/pages-2026-11-29.db

DEST must not exist; its parent directory must. On the store's file system the backup hard-links
the store's table files (no extra space until the store compacts them away; well under a second);
on another file system it copies them. The copy is made in a hidden directory beside DEST and
renamed to DEST once complete: an interrupted backup leaves no DEST (a killed one leaves a hidden
`.DEST.backup-partial-*` directory to remove). The backup is a store: open, verify, query or serve
it; to restore, stop the writer and put the backup's directory in the store's place.

The store must not be open for writing elsewhere. To back up a store that `serve` holds, start
the service with --backup-dir and POST /v1/backup (docs/service.md).";

/// Arguments of `backup`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    store: StoreArg,

    // (`backup` writes its one line, the result, on standard output, -q or not.)
    #[command(flatten)]
    _quiet: QuietArg,

    /// The new directory to write the backup to (must not exist).
    #[arg(value_name = "DEST")]
    dest: PathBuf,
}

/// Runs `backup`.
///
/// # Errors
/// The store cannot be opened (it is held by another writer), DEST exists or cannot be
/// written.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args
        .store
        .open()
        .map_err(|e| match e.downcast_ref::<simhash_store::Error>() {
            Some(simhash_store::Error::Locked { path, .. }) => anyhow::anyhow!(
                "the store at {0} is held by another process that writes to it (a `serve`, \
                 `load`, `remove`, `compact` or `upgrade`, or a program), so no consistent \
                 copy can be made from here: for a store that `serve` holds, start the \
                 service with --backup-dir DIR and send POST /v1/backup \
                 {{\"name\": NAME}} (docs/service.md); otherwise run this again when the \
                 writer has finished",
                path.display()
            ),
            _ => e,
        })?;
    let started = Instant::now();
    let backup = store.backup(&args.dest)?;
    println!(
        "backed up {} from {} to {} in {:.2} s",
        super::plural(backup.documents, "document", "documents"),
        store.path().display(),
        backup.path.display(),
        started.elapsed().as_secs_f64(),
    );
    Ok(ExitCode::SUCCESS)
}
