//! Backups: [`Store::backup`], a consistent copy of an open store as a new store directory.
//!
//! Everything a store is lives in its RocksDB database: the documents, the block families,
//! and in `meta` the format version, the fingerprint settings, the document count and the
//! records of a bulk load in progress. Outside it the directory holds only what a writable
//! open makes or removes by itself: RocksDB's `LOCK` and info logs, and temporary files
//! (`bulk-tmp` of the bulk loader, `backup-tmp` below). So a checkpoint of the database
//! (`Database::checkpoint`), taken while no bulk load is in progress, is the whole store.
//!
//! Writes wait while the checkpoint is taken: a flush, then a hard link per file. To another
//! file system the files cannot be linked; they are linked into `backup-tmp` inside the store
//! first (writes waiting), then copied from there while writes go on, and the links removed.
//!
//! The copy is written into a hidden sibling of the destination and renamed into place once
//! complete and synced: an interrupted backup leaves the destination absent (and, if the
//! process was killed, a `.NAME.backup-partial-*` directory to remove; links in `backup-tmp`
//! are removed by the store's next writable open), never a directory that looks like a store
//! but lacks files.

use std::path::{Path, PathBuf};

use super::Store;
use crate::error::{Error, Result};
use crate::failpoint::{self, Point};
use crate::keys::{self, META_FAMILY};
use crate::storage::files::{copy_dir_synced, sync_dir};

/// Where a backup to another file system links its checkpoint first, inside the store;
/// removed when a writable store opens.
pub(super) const BACKUP_TEMP_DIR: &str = "backup-tmp";

/// What [`Store::backup`] made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Backup {
    /// The backup's directory: a store that opens, verifies and serves like the original.
    pub path: PathBuf,
    /// The documents it holds: every write acknowledged before the backup began is in it.
    pub documents: u64,
}

impl Store {
    /// Writes a consistent copy of the store into `dest`, a new directory, while the store
    /// stays open: queries go on, and writes wait only while the memtables are flushed and the
    /// store's files are hard-linked (a fraction of a second). The copy is a store of its own
    /// (open it, verify it, serve it; to restore, use or move its directory in place of the
    /// original) holding every write that completed before the call.
    ///
    /// Where `dest` is on the store's file system, each SST file is a hard link: the backup
    /// takes no space until the store compacts those files away. A hard-linked backup shares
    /// its files' blocks with the store: it guards against deletion and mistakes, not
    /// against a failing disk. Elsewhere the files are linked inside the store first
    /// (`backup-tmp`), then copied while writes go on, as fast as the disks allow.
    ///
    /// The copy is made in a hidden directory beside `dest` (`.NAME.backup-partial-*`) and
    /// renamed to `dest` once complete and synced: a failed backup leaves no `dest`, and a
    /// killed one leaves only that hidden directory, to be removed.
    ///
    /// ```
    /// use simhash_store::Store;
    /// let dir = tempfile::tempdir()?;
    /// let store = Store::open(dir.path().join("pages.db"))?;
    /// store.insert_text(1, Some("https://example.com/a"), "A page about harbours and ferries.")?;
    /// let backup = store.backup(dir.path().join("pages-backup.db"))?;
    /// assert_eq!(backup.documents, 1);
    ///
    /// let copy = Store::open(&backup.path)?;
    /// assert_eq!(copy.id_for_key("https://example.com/a")?, Some(1));
    /// assert!(copy.verify()?.is_clean());
    /// # Ok::<_, simhash_store::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::DestinationExists`] if `dest` exists; [`Error::UnusableDestination`] if it
    /// lies inside the store or its parent directory does not exist; [`Error::ReadOnly`] for
    /// a store opened read-only (back up through the process that writes it);
    /// [`Error::BulkLoadInProgress`] on the thread of a bulk load that holds the store's
    /// writes; [`Error::LoaderFailed`] when a failed bulk load left work for the next open;
    /// RocksDB and I/O errors (the disk is full, ...).
    pub fn backup(&self, dest: impl AsRef<Path>) -> Result<Backup> {
        let dest = dest.as_ref();
        if self.is_read_only() {
            return Err(Error::ReadOnly {
                path: self.path().to_path_buf(),
            });
        }
        let parent = check_destination(self.path(), dest)?;
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let partial = tempfile::Builder::new()
            .prefix(&format!(".{name}.backup-partial-"))
            .tempdir_in(&parent)
            .map_err(|e| Error::io("creating a directory for the backup in", &parent, e))?;
        let copy = partial.path().join("store");
        let documents = if same_file_system(self.path(), &parent)? {
            let documents = self.checkpoint(&copy)?;
            // The links are durable once the directory holding them is.
            sync_dir(&copy)?;
            documents
        } else {
            let staging_root = self.path().join(BACKUP_TEMP_DIR);
            std::fs::create_dir_all(&staging_root)
                .map_err(|e| Error::io("creating the directory", &staging_root, e))?;
            let staging = tempfile::tempdir_in(&staging_root)
                .map_err(|e| Error::io("creating a directory in", &staging_root, e))?;
            let linked = staging.path().join("store");
            let documents = self.checkpoint(&linked)?;
            copy_dir_synced(&linked, &copy)?;
            documents
        };
        failpoint::hit(Point::BeforeBackupRename)?;
        publish(&copy, dest)?;
        sync_dir(&parent)?;
        // Only the hidden directory is left, empty: dropping it removes it.
        drop(partial);
        Ok(Backup {
            path: dest.to_path_buf(),
            documents,
        })
    }

    /// Takes a checkpoint into the new directory `dest` (on the store's file system: hard
    /// links) while writes wait; returns the documents it holds.
    fn checkpoint(&self, dest: &Path) -> Result<u64> {
        // Writes wait here (a bulk load's runs too): the checkpoint holds no journal or load
        // record whose files are the store's alone, and `len` is the copy's count.
        let _writes = self.lock_writes()?;
        self.check_no_load_left()?;
        self.db.checkpoint(dest)?;
        Ok(self.len())
    }

    /// Fails if a bulk load that failed in this process left its journal or load record for
    /// the next open to finish: a copy would name files that only the store has.
    fn check_no_load_left(&self) -> Result<()> {
        for key in [keys::META_BULK_JOURNAL, keys::META_BULK_LOAD] {
            if self.get_raw(META_FAMILY, key)?.is_some() {
                return Err(Error::LoaderFailed);
            }
        }
        Ok(())
    }
}

/// Checks that `dest` does not exist, lies outside the store at `store` and has an existing
/// parent directory, which it returns.
fn check_destination(store: &Path, dest: &Path) -> Result<PathBuf> {
    let unusable = |reason: String| Error::UnusableDestination {
        path: dest.to_path_buf(),
        reason,
        what: "the backup",
    };
    match std::fs::symlink_metadata(dest) {
        Ok(_) => {
            return Err(Error::DestinationExists {
                path: dest.to_path_buf(),
                what: "the backup",
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("checking the backup's destination", dest, e)),
    }
    if dest.file_name().is_none() {
        return Err(unusable("does not end in a directory name".into()));
    }
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let parent = parent.canonicalize().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            unusable(format!(
                "is in a directory that does not exist ({}; create it)",
                parent.display()
            ))
        } else {
            Error::io("resolving the path", &parent, e)
        }
    })?;
    let store = store
        .canonicalize()
        .map_err(|e| Error::io("resolving the path", store, e))?;
    if parent.starts_with(&store) {
        return Err(unusable(format!(
            "lies inside the store {}",
            store.display()
        )));
    }
    Ok(parent)
}

/// Whether the directories `a` and `b` are on one file system (so files hard-link).
fn same_file_system(a: &Path, b: &Path) -> Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let device = |p: &Path| {
            std::fs::metadata(p)
                .map(|m| m.dev())
                .map_err(|e| Error::io("reading the metadata of", p, e))
        };
        Ok(device(a)? == device(b)?)
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        Ok(true)
    }
}

/// Renames the complete copy to `dest`; a `dest` made meanwhile (by another backup of the
/// same name) is [`Error::DestinationExists`].
fn publish(copy: &Path, dest: &Path) -> Result<()> {
    if std::fs::symlink_metadata(dest).is_ok() {
        return Err(Error::DestinationExists {
            path: dest.to_path_buf(),
            what: "the backup",
        });
    }
    std::fs::rename(copy, dest).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::DirectoryNotEmpty => {
            Error::DestinationExists {
                path: dest.to_path_buf(),
                what: "the backup",
            }
        }
        _ => Error::io("renaming the finished backup to", dest, e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::Fingerprint;
    use crate::upsert::Entry;

    type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

    fn filled(dir: &Path) -> Result<Store> {
        let store = Store::open(dir)?;
        store.insert_batch((0..500u64).map(|id| {
            Entry::new(id, Fingerprint(id.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
                .with_key(format!("k{id}"))
        }))?;
        Ok(store)
    }

    #[test]
    fn a_backup_opens_verifies_and_holds_every_document() -> TestResult {
        let dir = tempfile::tempdir()?;
        let store = filled(&dir.path().join("store"))?;
        let dest = dir.path().join("backup");
        let backup = store.backup(&dest)?;
        assert_eq!(
            backup,
            Backup {
                path: dest.clone(),
                documents: 500
            }
        );
        // Writes after the backup are the store's alone.
        store.insert(1000, Fingerprint(7))?;
        let copy = Store::open(&dest)?;
        assert!(copy.verify()?.is_clean());
        assert_eq!(copy.len(), 500);
        assert_eq!(copy.get(1000)?, None);
        for id in [0u64, 250, 499] {
            assert_eq!(copy.document(id)?, store.document(id)?);
            assert_eq!(copy.id_for_key(&format!("k{id}"))?, Some(id));
        }
        // Nothing but the backup is left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path())?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<std::io::Result<_>>()?;
        assert_eq!(names.len(), 2, "{names:?}");
        Ok(())
    }

    #[test]
    fn a_backup_on_the_same_file_system_links_the_sst_files() -> TestResult {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir()?;
        let store = filled(&dir.path().join("store"))?;
        store.flush()?;
        let dest = dir.path().join("backup");
        store.backup(&dest)?;
        let mut linked = 0;
        for entry in std::fs::read_dir(&dest)? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "sst") {
                let original = store.path().join(path.file_name().ok_or("no name")?);
                if original.exists() {
                    assert_eq!(
                        std::fs::metadata(&path)?.ino(),
                        std::fs::metadata(&original)?.ino()
                    );
                    linked += 1;
                }
            }
        }
        assert!(linked > 0, "no SST file is shared");
        Ok(())
    }

    #[test]
    fn a_backup_to_another_file_system_copies_the_files() -> TestResult {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir()?;
        let other = std::path::Path::new("/dev/shm");
        if !other.is_dir()
            || std::fs::metadata(other)?.dev() == std::fs::metadata(dir.path())?.dev()
        {
            eprintln!("skipped: /dev/shm is not another file system here");
            return Ok(());
        }
        let store = filled(&dir.path().join("store"))?;
        store.insert(600, Fingerprint(1))?; // in the memtable only
        let elsewhere = tempfile::tempdir_in(other)?;
        let dest = elsewhere.path().join("backup");
        assert_eq!(store.backup(&dest)?.documents, 501);
        for entry in std::fs::read_dir(&dest)? {
            assert_eq!(entry?.metadata()?.nlink(), 1, "a copy, not a link");
        }
        // The links made on the store's file system are gone.
        let staging = store.path().join(BACKUP_TEMP_DIR);
        assert_eq!(std::fs::read_dir(&staging)?.count(), 0);
        drop(store);
        let copy = Store::open(&dest)?;
        assert!(copy.verify()?.is_clean());
        assert_eq!((copy.len(), copy.get(600)?), (501, Some(Fingerprint(1))));
        drop(copy);
        // The next writable open of the store removes `backup-tmp`.
        drop(Store::open(dir.path().join("store"))?);
        assert!(!staging.exists());
        Ok(())
    }

    #[test]
    fn an_existing_destination_or_one_inside_the_store_is_refused() -> TestResult {
        let dir = tempfile::tempdir()?;
        let store = filled(&dir.path().join("store"))?;
        let taken = dir.path().join("taken");
        std::fs::create_dir(&taken)?;
        let refused = store.backup(&taken);
        assert!(
            matches!(&refused, Err(Error::DestinationExists { path, .. }) if *path == taken),
            "{refused:?}"
        );
        assert_eq!(std::fs::read_dir(&taken)?.count(), 0);
        let inside = store.backup(store.path().join("backup"));
        assert!(
            matches!(inside, Err(Error::UnusableDestination { .. })),
            "{inside:?}"
        );
        let orphan = store.backup(dir.path().join("missing").join("backup"));
        assert!(
            matches!(orphan, Err(Error::UnusableDestination { .. })),
            "{orphan:?}"
        );
        Ok(())
    }

    #[test]
    fn a_read_only_store_is_not_backed_up() -> TestResult {
        let dir = tempfile::tempdir()?;
        drop(filled(&dir.path().join("store"))?);
        let store = Store::builder()
            .read_only(true)
            .open(dir.path().join("store"))?;
        let refused = store.backup(dir.path().join("backup"));
        assert!(
            matches!(refused, Err(Error::ReadOnly { .. })),
            "{refused:?}"
        );
        assert!(!dir.path().join("backup").exists());
        Ok(())
    }

    #[test]
    fn an_interrupted_backup_leaves_no_destination() -> TestResult {
        let dir = tempfile::tempdir()?;
        let store = filled(&dir.path().join("store"))?;
        let dest = dir.path().join("backup");
        failpoint::arm(Some(Point::BeforeBackupRename));
        let stopped = store.backup(&dest);
        failpoint::arm(None);
        assert!(
            matches!(stopped, Err(Error::InvalidArgument(_))),
            "{stopped:?}"
        );
        assert!(!dest.exists(), "a stopped backup made its destination");
        // The hidden directory it wrote into is gone too; the next backup succeeds.
        assert_eq!(std::fs::read_dir(dir.path())?.count(), 1);
        assert_eq!(store.backup(&dest)?.documents, 500);
        Ok(())
    }
}
