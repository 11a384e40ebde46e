//! `simhash-store upgrade`: copy a store into a new one of the newest format
//! ([`Store::upgrade`]), or replace it by one with `--in-place`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use simhash_store::upgrade::{UpgradeOptions, UpgradePhase, UpgradeSummary, FORMAT_VERSION};
use simhash_store::Store;

use super::progress::Progress;
use super::usage;

const EXAMPLES: &str = "\
Examples:
  simhash-store upgrade pages.db pages-new.db     # pages.db stays as it is
  simhash-store upgrade --in-place pages.db       # keeps the old one as pages.db.format-N.bak

What it does: reads every document of OLD at one snapshot (id, fingerprint, key, text length,
sketch, time added), writes them as sorted files into a new store of the newest format with
exactly OLD's fingerprint settings, and verifies the new store. Nothing is fingerprinted again.
It takes about as long as loading the documents again without fingerprinting them, most of it
the `verify` of the new store: a few seconds per million documents on 2 cores (measured in
docs/guide.md, \"Upgrading a store\"). The disk needs room for the new store beside the old.

This version opens stores of every older format read-only (queries, export, dedup): upgrade
one to write to it. OLD is opened for writing, so no other process may
have it open for writing meanwhile. A store already of the newest format is copied all the same
(a compact copy); with --in-place it is left alone.

--in-place, step by step, and what stopping at each step leaves:
  1. the new store is written and verified in OLD.upgrading beside OLD.
     Stopped here: OLD is whole; remove OLD.upgrading and run again.
  2. OLD is renamed OLD.format-N.bak (N: its format).
     Stopped here: OLD is absent, the old store is OLD.format-N.bak, the verified new one is
     OLD.upgrading; `mv OLD.upgrading OLD` finishes (running the command again says so).
  3. OLD.upgrading is renamed OLD, and opened there (its format and document count checked).
     Stopped here or after: the upgrade is done.
The old store is kept as OLD.format-N.bak: remove it when you no longer need it. Stop every
process that writes to OLD before an in-place upgrade: writes made to it meanwhile would stay in
the .bak.

Exit codes: 0 upgraded (or nothing to do), 1 error (the message says where each store is),
2 usage.";

/// Arguments of `upgrade`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The store to upgrade.
    #[arg(value_name = "OLD")]
    old: PathBuf,

    /// Where to write the upgraded store: a new or empty directory.
    #[arg(value_name = "NEW", required_unless_present = "in_place")]
    new: Option<PathBuf>,

    /// Replace OLD by its upgrade: write it beside OLD, then swap the directories by
    /// renaming, keeping the old store as OLD.format-N.bak.
    #[arg(long, conflicts_with = "new")]
    in_place: bool,

    #[arg(long, short = 'q', help = super::QUIET_HELP)]
    quiet: bool,
}

/// Runs `upgrade`.
///
/// # Errors
/// The old store cannot be opened, the new one cannot be written or does not verify, or a
/// directory of an in-place upgrade is in the way.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match (&args.new, args.in_place) {
        (Some(new), false) => copy(&args.old, new, args.quiet),
        (None, true) => in_place(&args.old, args.quiet),
        _ => Err(usage(
            "give the new store's directory (upgrade OLD NEW) or --in-place (upgrade --in-place OLD)",
        )),
    }
}

/// `upgrade OLD NEW`.
fn copy(old: &Path, new: &Path, quiet: bool) -> anyhow::Result<ExitCode> {
    require_store(old)?;
    let summary = upgrade(old, new, quiet)?;
    if summary.from_format == summary.to_format {
        println!(
            "{} was already of format {}: copied it all the same",
            old.display(),
            summary.to_format
        );
    }
    println!(
        "upgraded {} into {}: {summary}",
        old.display(),
        new.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `upgrade --in-place OLD`: the steps of `EXAMPLES`.
fn in_place(old: &Path, quiet: bool) -> anyhow::Result<ExitCode> {
    let (parent, name) = split(old)?;
    let old = &parent.join(&name);
    let temp = parent.join(format!("{name}.upgrading"));
    if !old.exists() {
        if let (true, Some(bak)) = (temp.exists(), find_backup(&parent, &name)?) {
            anyhow::bail!(
                "an in-place upgrade of {old} stopped between its two renames: the old store is {bak}, the verified new one {temp}; finish it with `mv {temp} {old}`",
                old = old.display(),
                bak = bak.display(),
                temp = temp.display()
            );
        }
    }
    require_store(old)?;
    if temp.exists() {
        anyhow::bail!(
            "{} is in the way: an in-place upgrade that was stopped while writing leaves it ({} is whole); remove it and run again",
            temp.display(),
            old.display()
        );
    }
    let format = Store::open(old)
        .map(|store| store.format_version())
        .with_context(|| format!("cannot open the store at {}", old.display()))?;
    if format == FORMAT_VERSION {
        println!(
            "{} is already of format {FORMAT_VERSION}, the newest: nothing to do",
            old.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let bak = parent.join(format!("{name}.format-{format}.bak"));
    if bak.exists() {
        anyhow::bail!(
            "{} is in the way (a backup of an earlier upgrade?): move it elsewhere and run again",
            bak.display()
        );
    }

    let summary = upgrade(old, &temp, quiet)?;
    rename(old, &bak, &parent)?;
    rename(&temp, old, &parent).with_context(|| {
        format!(
            "the old store is now {bak}, the verified new one {temp}: `mv {temp} {old}` finishes the upgrade",
            bak = bak.display(),
            temp = temp.display(),
            old = old.display()
        )
    })?;

    // The store was verified before the swap, and renames leave its files as they are: its
    // reopening under the old name, of the newest format and with every document, is checked.
    let put_back = format!(
        "the old store is {bak}: `rm -r {old}; mv {bak} {old}` puts it back",
        bak = bak.display(),
        old = old.display()
    );
    let store = Store::open(old).with_context(|| {
        format!(
            "cannot open the upgraded store at {}; {put_back}",
            old.display()
        )
    })?;
    let found = (store.format_version(), store.len());
    if found != (FORMAT_VERSION, summary.documents) {
        anyhow::bail!(
            "the upgraded store at {} has format {} and {} documents, not format {FORMAT_VERSION} and {}; {put_back}",
            old.display(),
            found.0,
            found.1,
            summary.documents
        );
    }
    println!("upgraded {} in place: {summary}", old.display());
    println!(
        "the old store is kept at {}: remove it when you no longer need it (rm -r {})",
        bak.display(),
        bak.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// [`Store::upgrade`] with a progress bar.
fn upgrade(old: &Path, new: &Path, quiet: bool) -> anyhow::Result<UpgradeSummary> {
    let progress = Progress::new("upgrading", quiet);
    let bar = progress.bar();
    let options = UpgradeOptions::new().progress(move |p| {
        bar.set_position(p.documents);
        bar.set_message(format!("of {}", p.total));
        bar.set_prefix(match p.phase {
            UpgradePhase::Writing => "writing a sorted run",
            UpgradePhase::Ingesting => "ingesting",
            UpgradePhase::Verifying => "verifying",
            _ => "upgrading",
        });
    });
    let summary = Store::upgrade(old, new, &options).with_context(|| {
        format!(
            "cannot upgrade the store at {} into {} (the old store is unchanged)",
            old.display(),
            new.display()
        )
    });
    progress.finish();
    summary
}

fn require_store(path: &Path) -> anyhow::Result<()> {
    if !path.join("CURRENT").exists() {
        anyhow::bail!("there is no store at {}", path.display());
    }
    Ok(())
}

/// The directory holding `path`, and its name.
fn split(path: &Path) -> anyhow::Result<(PathBuf, String)> {
    let absolute = std::path::absolute(path)
        .with_context(|| format!("cannot resolve the path {}", path.display()))?;
    match (
        absolute.parent(),
        absolute.file_name().and_then(|n| n.to_str()),
    ) {
        (Some(parent), Some(name)) if name != "." && name != ".." => {
            Ok((parent.to_path_buf(), name.to_string()))
        }
        _ => Err(usage(format!(
            "give the store's directory by its name (not {}): --in-place writes beside it",
            path.display()
        ))),
    }
}

/// A backup `NAME.format-N.bak` in `parent`, if there is one.
fn find_backup(parent: &Path, name: &str) -> anyhow::Result<Option<PathBuf>> {
    let prefix = format!("{name}.format-");
    for entry in std::fs::read_dir(parent)
        .with_context(|| format!("cannot read the directory {}", parent.display()))?
    {
        let entry = entry?;
        let file = entry.file_name();
        let file = file.to_string_lossy();
        if file.starts_with(&prefix) && file.ends_with(".bak") {
            return Ok(Some(entry.path()));
        }
    }
    Ok(None)
}

/// Renames `from` to `to` (both in `parent`) and makes the rename durable.
fn rename(from: &Path, to: &Path, parent: &Path) -> anyhow::Result<()> {
    std::fs::rename(from, to)
        .with_context(|| format!("cannot rename {} to {}", from.display(), to.display()))?;
    std::fs::File::open(parent)
        .and_then(|dir| dir.sync_all())
        .with_context(|| format!("cannot sync the directory {}", parent.display()))
}
