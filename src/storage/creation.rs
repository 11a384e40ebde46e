//! A store directory before its store is whole. RocksDB creates a database in steps (its info
//! log and lock file, then `CURRENT` and the MANIFEST, then each column family) and the store
//! then records its format in `meta`; a second writer that looks in between must not take
//! the directory for something else. Only the lock decides who creates the store: the
//! other writer gets [`Error::Locked`].

use std::path::Path;

use rocksdb::{IteratorMode, Options, DB};

use super::database::error;
use crate::error::{Error, Result};
use crate::keys::{ALL_FAMILIES, META_FAMILY};

/// RocksDB's column family that every database has; a store keeps it empty.
const DEFAULT_FAMILY: &str = "default";

/// Whether `name` is a file RocksDB makes in a database directory: `LOCK`, `LOG` and its
/// old copies, `IDENTITY`, `CURRENT`, `MANIFEST-N`, `OPTIONS-N`, and `N.log`, `N.sst`,
/// `N.blob`, `N.dbtmp` (N: digits).
fn is_database_file(name: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    matches!(name, "LOCK" | "LOG" | "IDENTITY" | "CURRENT")
        || name.starts_with("LOG.old.")
        || name.strip_prefix("MANIFEST-").is_some_and(digits)
        || name
            .strip_prefix("OPTIONS-")
            .map(|rest| rest.strip_suffix(".dbtmp").unwrap_or(rest))
            .is_some_and(digits)
        || [".log", ".sst", ".blob", ".dbtmp"]
            .iter()
            .any(|ext| name.strip_suffix(ext).is_some_and(digits))
}

/// Whether the directory `path` holds an entry that no store makes: then it is neither a
/// store nor a store being created, and a store is not created there. False when `path` is
/// not a directory that can be listed.
pub(crate) fn holds_other_files(path: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(path) else {
        return false;
    };
    entries.flatten().any(|entry| {
        !entry.path().is_file() || !entry.file_name().to_str().is_some_and(is_database_file)
    })
}

/// Checks the database at `path` whose column families (`present`) lack `meta`: a store
/// that another process is creating, one whose creation stopped, or another program's
/// database. Ok when it is the store's to finish: its families are the store's, this
/// process can take its lock (a process creating it holds the lock: [`Error::Locked`]) and
/// `default` is empty. The caller then opens it, which creates the missing families.
///
/// # Errors
/// [`Error::Locked`] while another process holds it; [`Error::NotAStore`] for another
/// program's database.
pub(crate) fn check_unfinished(options: &Options, path: &Path, present: &[String]) -> Result<()> {
    let not_a_store = |reason: String| Error::NotAStore {
        path: path.to_path_buf(),
        reason,
    };
    if let Some(other) = present
        .iter()
        .find(|name| *name != DEFAULT_FAMILY && !ALL_FAMILIES.contains(&name.as_str()))
    {
        return Err(not_a_store(format!(
            "a RocksDB database with column family `{other}` and without `{META_FAMILY}`"
        )));
    }
    let mut probe = options.clone();
    probe.create_if_missing(false);
    probe.create_missing_column_families(false);
    let db = match DB::open_cf(&probe, path, present) {
        Ok(db) => db,
        Err(e) => {
            let e = error("open the store", None, path, e);
            // The creator finished between the listing and this open: the caller's open
            // decides.
            let created = DB::list_cf(&Options::default(), path)
                .is_ok_and(|now| now.iter().any(|name| name == META_FAMILY));
            return if created && !matches!(e, Error::Locked { .. }) {
                Ok(())
            } else {
                Err(e)
            };
        }
    };
    if db.iterator(IteratorMode::Start).next().is_some() {
        return Err(not_a_store(format!(
            "a RocksDB database with entries in its `{DEFAULT_FAMILY}` column family and \
             without `{META_FAMILY}`"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_files_are_told_from_others() {
        for name in [
            "LOCK",
            "LOG",
            "LOG.old.1732844551234567",
            "IDENTITY",
            "CURRENT",
            "MANIFEST-000005",
            "OPTIONS-000007",
            "OPTIONS-000007.dbtmp",
            "000004.log",
            "000012.sst",
            "000001.dbtmp",
        ] {
            assert!(is_database_file(name), "{name}");
        }
        for name in [
            "notes.txt",
            "app.log",
            "MANIFEST-",
            "OPTIONS-x",
            ".sst",
            "lock",
            "bulk-tmp",
        ] {
            assert!(!is_database_file(name), "{name}");
        }
    }

    #[test]
    fn a_directory_with_another_file_holds_other_files() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        assert!(!holds_other_files(dir.path()));
        std::fs::write(dir.path().join("LOCK"), "")?;
        std::fs::write(dir.path().join("LOG"), "")?;
        assert!(!holds_other_files(dir.path()));
        std::fs::write(dir.path().join("notes.txt"), "")?;
        assert!(holds_other_files(dir.path()));
        assert!(!holds_other_files(&dir.path().join("missing")));
        Ok(())
    }
}
