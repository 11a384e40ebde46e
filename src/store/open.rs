//! Opening a store: opening its database (`src/storage/`), creating or checking the store's
//! format version and fingerprint settings ([`Meta`]), and finishing a bulk load that a crash
//! interrupted (the journal's run, then the spool merge) before the [`Store`] is built.
//! [`StoreBuilder`] is in `options.rs`.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Mutex;

use super::backup::BACKUP_TEMP_DIR;
use super::options::StoreBuilder;
use super::{CacheFill, ConcurrentReads, Format, Store};
use crate::codec;
use crate::error::{Error, Result};
use crate::keys::{self, DOCS_FAMILY, KEYS_FAMILY, META_FAMILY};
use crate::postings::{spool, Postings, FIRST_SEGMENT};
use crate::settings;
use crate::simhash::{SimhashConfig, Simhasher};
use crate::storage::{
    holds_other_files, journal, Access, BatchSink, Database, OpenOptions, Persist, DEFAULT_TEMP_DIR,
};

/// The on-disk format this build writes: [`Format::CURRENT`] as its number.
pub const FORMAT_VERSION: u32 = Format::CURRENT.version();
/// The oldest on-disk format this build reads: [`Format::OLDEST`] as its number.
pub const MIN_FORMAT_VERSION: u32 = Format::OLDEST.version();

impl Store {
    /// Opens (or creates) the store at `path` with default options.
    /// Shorthand for `Store::builder().open(path)`.
    ///
    /// ```
    /// use simhash_store::Store;
    /// let dir = tempfile::tempdir()?;
    /// let store = Store::open(dir.path())?;
    /// let fp = store.simhasher().fingerprint("The quick brown fox jumps over the lazy dog")?;
    /// store.insert(1, fp)?;
    /// assert_eq!(store.get(1)?, Some(fp));
    /// # Ok::<_, simhash_store::Error>(())
    /// ```
    ///
    /// # Errors
    /// See [`StoreBuilder::open`].
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        StoreBuilder::default().open(path)
    }

    /// Options for opening a store.
    pub fn builder() -> StoreBuilder {
        StoreBuilder::default()
    }

    /// Whether `path` is a directory that holds files no store makes, so that
    /// [`Store::open`] refuses to create a store there ([`Error::NotAStore`]). A store's
    /// directory, and one whose store another process is creating right now (RocksDB's
    /// files only), do not; nor does an empty directory or a path that does not exist.
    pub fn holds_other_files(path: impl AsRef<Path>) -> bool {
        let path = path.as_ref();
        !path.join("CURRENT").exists() && holds_other_files(path)
    }

    pub(crate) fn open_with(builder: StoreBuilder, path: &Path) -> Result<Store> {
        if path.is_file() {
            return Err(Error::NotAStore {
                path: path.to_path_buf(),
                reason: "it is a file; a store is a directory (give a new or empty one to create a store)"
                    .into(),
            });
        }
        let exists = path.join("CURRENT").exists();
        if !exists {
            if builder.read_only {
                return Err(Error::NotAStore {
                    path: path.to_path_buf(),
                    reason: "no store there (read-only open does not create one)".into(),
                });
            }
            // RocksDB's own files without `CURRENT` are a store that another process is
            // creating (its lock decides below) or whose creation stopped (finished here).
            if holds_other_files(path) {
                return Err(Error::NotAStore {
                    path: path.to_path_buf(),
                    reason: "the directory is not empty and holds no RocksDB database; \
                             choose an empty or new directory"
                        .into(),
                });
            }
        }
        // How queries read: from memory (mapped files, one family after another) or from
        // disk (positioned reads of all a query's groups at once); StoreBuilder::mmap_reads. A
        // new store is read with positioned reads: nothing says yet whether it will fit.
        let fits = || files_fit_in_memory(path);
        let mapped = builder.mmap_reads.unwrap_or_else(|| exists && fits());
        let concurrent_reads = ConcurrentReads::new(builder.concurrent_reads, fits);
        let db = Database::open(
            path,
            exists,
            OpenOptions {
                access: match (builder.read_only, builder.salvage) {
                    (_, true) => Access::Salvage,
                    (true, false) => Access::Read,
                    (false, false) => Access::Write,
                },
                mmap_reads: mapped,
                block_cache_bytes: builder.block_cache_bytes,
            },
        )?;
        // What the store needs from `meta` is read first; a writable store then finishes a
        // bulk load that a crash interrupted (its count and keys change), then the store is
        // built, complete.
        let meta = Meta::read_or_create(&db, &builder)?;
        let postings = Postings::new(
            meta.format.layout(),
            meta.next_segment,
            builder.query_cache_bytes,
            builder.split_groups_above,
        );
        let mut doc_count = meta.doc_count;
        if !builder.read_only {
            if journal::recover(&db)? {
                doc_count = read_doc_count(&db)?;
            }
            if postings.packed().is_some() && meta.format.is_writable() {
                spool::recover(&db, &postings, doc_count)?;
            }
            remove_temp_dir(path)?;
        }
        // (A salvage reads no family before it is asked to: the keys' file may be damaged.)
        let keys_present = builder.salvage || db.has_entries(KEYS_FAMILY)?;
        let store = Store {
            db,
            simhasher: meta.simhasher,
            durability: builder.durability,
            write_lock: parking_lot::Mutex::new(()),
            write_lock_holder: Mutex::new(None),
            doc_count: AtomicU64::new(doc_count),
            keys_present: AtomicBool::new(keys_present),
            format: meta.format,
            postings,
            concurrent_reads,
            cache_fill: CacheFill::new(builder.block_cache_bytes, mapped),
            clock: builder.clock.clone(),
        };
        store.choose_cache_fill();
        Ok(store)
    }
}

/// The document count recorded in `meta` (0 if none).
fn read_doc_count(db: &Database) -> Result<u64> {
    match db.get(META_FAMILY, keys::META_DOC_COUNT)? {
        Some(bytes) => codec::decode_u64(&bytes, keys::META_DOC_COUNT),
        None => Ok(0),
    }
}

/// Removes the temporary files a killed bulk load or backup left in the store directory.
fn remove_temp_dir(path: &Path) -> Result<()> {
    for (dir, whose) in [
        (
            DEFAULT_TEMP_DIR,
            "removing the bulk loader's temporary files in",
        ),
        (BACKUP_TEMP_DIR, "removing a backup's temporary files in"),
    ] {
        let tmp = path.join(dir);
        match std::fs::remove_dir_all(&tmp) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(whose, tmp, e)),
        }
    }
    Ok(())
}

/// Whether the store's SST files at `path` take at most half the memory available (true for
/// none): then they stay in the OS page cache and queries read them from memory.
pub(crate) fn files_fit_in_memory(path: &Path) -> bool {
    crate::memory::files_fit(
        std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|file| file.extension().is_some_and(|e| e == "sst")),
    )
}

/// What a store records in `meta` about itself, read (or written, for a new store) before
/// the [`Store`] is built.
struct Meta {
    format: Format,
    simhasher: Simhasher,
    doc_count: u64,
    /// `meta/next_segment` (formats 7 and 8), if recorded.
    next_segment: Option<u32>,
}

impl Meta {
    /// Reads the format, settings and counters of the store `db` at `path`, or records them
    /// for a new store.
    fn read_or_create(db: &Database, builder: &StoreBuilder) -> Result<Meta> {
        let path = db.path();
        let get = |key: &[u8]| db.get(META_FAMILY, key);
        let requested = builder.simhash_config.clone();
        let Some(version) = get(keys::META_FORMAT_VERSION)? else {
            return Meta::create(db, builder.read_only, requested);
        };
        let version = codec::decode_u32(&version, keys::META_FORMAT_VERSION)?;
        let format = Format::from_version(version).ok_or_else(|| Error::UnsupportedFormat {
            path: path.to_path_buf(),
            found: version,
            supported: format!("{MIN_FORMAT_VERSION}..={FORMAT_VERSION}"),
        })?;
        let stored = get(keys::META_SIMHASHER)?.ok_or_else(|| Error::NotAStore {
            path: path.to_path_buf(),
            reason: "no fingerprint configuration recorded".into(),
        })?;
        let stored = settings::decode(&stored, format, path)?;
        if let Some(requested) = requested {
            settings::check_requested(path, &stored, &requested)?;
        }
        let doc_count = read_doc_count(db)?;
        let next_segment = match get(keys::META_NEXT_SEGMENT)? {
            Some(bytes) if format.has_segments() => {
                Some(codec::decode_u32(&bytes, keys::META_NEXT_SEGMENT)?)
            }
            _ => None,
        };
        Ok(Meta {
            format,
            simhasher: Simhasher::new(stored)?,
            doc_count,
            next_segment,
        })
    }

    /// Records a new store of [`Format::CURRENT`]: its settings, a count of 0, the first
    /// segment and, last, the format version, in one synced batch.
    fn create(db: &Database, read_only: bool, requested: Option<SimhashConfig>) -> Result<Meta> {
        let path = db.path();
        // A new store, or one whose creation was interrupted before its first write:
        // refuse if it somehow holds documents.
        if db.has_entries(DOCS_FAMILY)? {
            return Err(Error::NotAStore {
                path: path.to_path_buf(),
                reason: "documents but no format version".into(),
            });
        }
        if read_only {
            return Err(Error::NotAStore {
                path: path.to_path_buf(),
                reason: "no format version recorded".into(),
            });
        }
        let config = requested.unwrap_or_default();
        let simhasher = Simhasher::new(config.clone())?;
        let format = Format::CURRENT;
        let mut batch = BatchSink::new(db);
        batch.put(
            META_FAMILY,
            keys::META_SIMHASHER,
            &settings::encode(&config),
        )?;
        batch.put(META_FAMILY, keys::META_DOC_COUNT, &codec::encode_u64(0))?;
        let segment = codec::encode_u32(FIRST_SEGMENT);
        batch.put(META_FAMILY, keys::META_NEXT_SEGMENT, &segment)?;
        // The version goes last in the same atomic batch: its presence means "initialised".
        let version = codec::encode_u32(format.version());
        batch.put(META_FAMILY, keys::META_FORMAT_VERSION, &version)?;
        batch.commit(Persist::Synced, "initialise the store")?;
        Ok(Meta {
            format,
            simhasher,
            doc_count: 0,
            next_segment: Some(FIRST_SEGMENT),
        })
    }
}
