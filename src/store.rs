//! The [`Store`]: opening, metadata, point reads. Writes are in `write.rs`, queries in
//! `query.rs`, the consistency check in `verify.rs`, read-only (secondary) opens in
//! `secondary.rs`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use rocksdb::{
    BlockBasedOptions, BlockBasedTablePinningTier, Cache, ColumnFamily, ColumnFamilyDescriptor,
    DBCompressionType, DataBlockIndexType, Options, WriteBatch, WriteOptions, DB,
};

use crate::codec::{self, Document};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::keys::{self, ALL_FAMILIES, BLOCK_FAMILIES, DOCS_FAMILY, KEYS_FAMILY, META_FAMILY};
use crate::options::{Durability, StoreBuilder};
use crate::postings::PostingsCache;
use crate::secondary::open_secondary;
use crate::simhash::{SimhashConfig, Simhasher, TfScaling};
use crate::sketch::SketchKind;

/// The size of the MANIFEST at which the writer starts a new one (see `open_with`).
const MAX_MANIFEST_BYTES: usize = 256 * 1024;

/// The newest on-disk format this build writes (a new store records the oldest version that
/// can hold it: see `format_version_for` in `src/store.rs`).
pub const FORMAT_VERSION: u32 = 6;
/// The oldest on-disk format this build reads.
pub const MIN_FORMAT_VERSION: u32 = 1;

/// The format version a new store with this configuration records: the oldest that can hold
/// it, so that it stays readable by older builds when it can, and they refuse the others
/// with [`Error::UnsupportedFormat`] instead of failing to decode the configuration.
/// 6 if it keeps sketches (format 6 records the setting and appends them to document
/// records), else 5 if it sets a count pieces ratio (the default since 0.5), else 4 if it takes Latin
/// shingles within words or count pieces (format 4 records both), else 3 if it drops
/// boilerplate lines (format 3 records `drop_boilerplate`), else 2 with
/// [`TfScaling::LengthAdaptive`] (which format 1 readers cannot decode), else 1.
fn format_version_for(config: &SimhashConfig) -> u32 {
    if config.sketch != SketchKind::None {
        return 6;
    }
    if config.latin_count_pieces_ratio > 0 {
        return 5;
    }
    if config.word_char_shingles_within_words || config.latin_count_pieces > 0 {
        return 4;
    }
    if config.drop_boilerplate {
        return 3;
    }
    match config.tf {
        TfScaling::LengthAdaptive => 2,
        TfScaling::Raw | TfScaling::Sqrt | TfScaling::Log | TfScaling::Binary => 1,
    }
}

/// A persistent near-duplicate index: documents (a `u64` id, a [`Fingerprint`], an optional
/// external key) in RocksDB, indexed by the four 16-bit blocks of the fingerprint.
///
/// `Store` is `Send + Sync`: share it in an `Arc` and query from many threads while others
/// write. Writes are serialised internally; each is atomic across all column families.
pub struct Store {
    pub(crate) db: DB,
    pub(crate) path: PathBuf,
    pub(crate) simhasher: Simhasher,
    pub(crate) durability: Durability,
    pub(crate) read_only: bool,
    /// Held by every write so that read-modify-write upserts and the document count stay
    /// consistent. Readers never take it.
    pub(crate) write_lock: Mutex<()>,
    /// The number of documents; persisted in `meta/doc_count` by every write batch.
    pub(crate) doc_count: AtomicU64,
    /// Block-family key ranges read by queries (`None` when turned off).
    pub(crate) postings: Option<PostingsCache>,
    /// A read-only store's own directory (RocksDB secondary instance), removed on drop.
    /// Declared after `db`, so the database closes first.
    _secondary_dir: Option<tempfile::TempDir>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("documents", &self.len())
            .field("durability", &self.durability)
            .field("read_only", &self.read_only)
            .finish()
    }
}

pub(crate) fn column_family_options(name: &str, cache: &Cache) -> Options {
    let mut opts = Options::default();
    opts.set_block_based_table_factory(&table_options(name, cache));
    opts.set_compression_type(DBCompressionType::Lz4);
    opts.set_bottommost_compression_type(DBCompressionType::Zstd);
    opts.set_level_compaction_dynamic_level_bytes(true);
    opts
}

/// The table options of family `name` (the bulk loader starts from these for its SST files).
pub(crate) fn table_options(name: &str, cache: &Cache) -> BlockBasedOptions {
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(cache);
    // Index and filter blocks live in the block cache (memory stays bounded at billions of
    // documents), at high priority, with the top level of partitioned ones pinned.
    table.set_cache_index_and_filter_blocks(true);
    table.set_cache_index_and_filter_blocks_with_high_priority(true);
    table.set_pin_l0_filter_and_index_blocks_in_cache(true);
    table.set_pin_top_level_index_and_filter(true);
    table.set_format_version(6);
    if name == DOCS_FAMILY || name == KEYS_FAMILY {
        // Point lookups by id and by key: a Bloom filter spares a disk read for absent ones
        // (every new id or key is looked up before it is written). Filter and index blocks
        // are pinned in the block cache (about 1.3 bytes per document for the filter), so
        // the churn of data blocks can never evict a filter of megabytes that every lookup
        // needs; a hash index inside each data block makes the lookup a hash probe instead of
        // a binary search. (Partitioned filters and indexes cost more instructions per
        // matched document: docs/design.md.)
        table.set_bloom_filter(10.0, false);
        table.set_unpartitioned_pinning_tier(BlockBasedTablePinningTier::All);
        table.set_data_block_index_type(DataBlockIndexType::BinaryAndHash);
    }
    // Block families are only range-scanned by a 2-byte prefix that nearly always exists,
    // so a filter would cost space and buy nothing.
    // 16 KiB data blocks instead of 4: Zstandard builds its tables once per block, so the
    // bulk loader spends 7% fewer instructions and the files are 4% smaller; a query reads
    // its range from one block either way (docs/design.md).
    if !(name == DOCS_FAMILY || name == KEYS_FAMILY || name == META_FAMILY) {
        table.set_block_size(16 * 1024);
    }
    table
}

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

    pub(crate) fn open_with(builder: StoreBuilder, path: &Path) -> Result<Store> {
        let exists = path.join("CURRENT").exists();
        if !exists {
            if builder.read_only {
                return Err(Error::NotAStore {
                    path: path.to_path_buf(),
                    reason: "no store there (read-only open does not create one)".into(),
                });
            }
            if let Ok(mut entries) = std::fs::read_dir(path) {
                if entries.next().is_some() {
                    return Err(Error::NotAStore {
                        path: path.to_path_buf(),
                        reason: "the directory is not empty and holds no RocksDB database; \
                                 choose an empty or new directory"
                            .into(),
                    });
                }
            }
        }
        let mut db_opts = Options::default();
        db_opts.create_if_missing(true);
        db_opts.create_missing_column_families(true);
        db_opts.set_max_background_jobs(2);
        db_opts.set_keep_log_file_num(4);
        // Start a new, compacted MANIFEST once the current one passes this (RocksDB also
        // allows up to six times the compacted size, for stores of many files). Its default
        // is 1 GiB: a writer that keeps flushing and compacting grows the MANIFEST without
        // bound, and every read-only open replays it all (4.3 s after 3,000 flushes,
        // `docs/reliability.md`).
        db_opts.set_max_manifest_file_size(MAX_MANIFEST_BYTES);
        // Flush all column families together: without a write-ahead log (Durability::NoWal)
        // this is what keeps a crash from leaving a document in `docs` but not in `block2`.
        db_opts.set_atomic_flush(true);
        if exists {
            let present = DB::list_cf(&db_opts, path)
                .map_err(|e| Error::rocks("list column families", None, path, e))?;
            if !present.iter().any(|name| name == META_FAMILY) {
                return Err(Error::NotAStore {
                    path: path.to_path_buf(),
                    reason: format!("a RocksDB database without the `{META_FAMILY}` column family"),
                });
            }
        }
        let cache = Cache::new_lru_cache(builder.block_cache_bytes);
        let descriptors = || -> Vec<ColumnFamilyDescriptor> {
            ALL_FAMILIES
                .iter()
                .map(|name| ColumnFamilyDescriptor::new(*name, column_family_options(name, &cache)))
                .collect()
        };
        // A read-only store is a RocksDB *secondary* instance: unlike a plain read-only open
        // it is meant to run beside a writer (which may flush, compact and delete files
        // meanwhile) and sees a consistent state of every column family. Its own small
        // files (an info log) go to a temporary directory.
        let secondary_dir = if builder.read_only {
            Some(tempfile::tempdir().map_err(|e| {
                Error::io("create a temporary directory for", std::env::temp_dir(), e)
            })?)
        } else {
            None
        };
        let db = match &secondary_dir {
            Some(secondary) => {
                db_opts.set_max_open_files(-1);
                open_secondary(&db_opts, path, secondary.path(), descriptors)?
            }
            None => DB::open_cf_descriptors(&db_opts, path, descriptors())
                .map_err(|e| Error::rocks("open the store", None, path, e))?,
        };

        let mut store = Store {
            db,
            path: path.to_path_buf(),
            simhasher: Simhasher::default(),
            durability: builder.durability,
            read_only: builder.read_only,
            write_lock: Mutex::new(()),
            doc_count: AtomicU64::new(0),
            postings: PostingsCache::new(builder.query_cache_bytes),
            _secondary_dir: secondary_dir,
        };
        store.load_or_init_meta(builder.simhash_config)?;
        crate::bulk::recover(&store)?;
        Ok(store)
    }

    /// Reads the format version, configuration and count, or writes them for a new store.
    fn load_or_init_meta(&mut self, requested: Option<SimhashConfig>) -> Result<()> {
        let version = self.get_raw(META_FAMILY, keys::META_FORMAT_VERSION)?;
        let Some(version) = version else {
            // A new store, or one whose creation was interrupted before its first write:
            // refuse if it somehow holds documents.
            if self.raw_iter(DOCS_FAMILY)?.next().is_some() {
                return Err(Error::NotAStore {
                    path: self.path.clone(),
                    reason: "documents but no format version".into(),
                });
            }
            if self.read_only {
                return Err(Error::NotAStore {
                    path: self.path.clone(),
                    reason: "no format version recorded".into(),
                });
            }
            let config = requested.unwrap_or_default();
            self.simhasher = Simhasher::new(config.clone())?;
            let version = format_version_for(&config);
            let mut batch = WriteBatch::default();
            let meta = self.cf(META_FAMILY)?;
            batch.put_cf(
                meta,
                keys::META_SIMHASHER,
                codec::encode_config(&config, version),
            );
            batch.put_cf(meta, keys::META_DOC_COUNT, codec::encode_u64(0));
            // The version goes last in the same atomic batch: its presence means "initialised".
            batch.put_cf(meta, keys::META_FORMAT_VERSION, codec::encode_u32(version));
            let mut opts = WriteOptions::default();
            opts.set_sync(true);
            self.db.write_opt(batch, &opts).map_err(|e| {
                Error::rocks("initialise the store", Some(META_FAMILY), &self.path, e)
            })?;
            return Ok(());
        };
        let version = codec::decode_u32(&version, keys::META_FORMAT_VERSION)?;
        if !(MIN_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(Error::UnsupportedFormat {
                path: self.path.clone(),
                found: version,
                supported: format!("{MIN_FORMAT_VERSION}..={FORMAT_VERSION}"),
            });
        }
        let stored = self
            .get_raw(META_FAMILY, keys::META_SIMHASHER)?
            .ok_or_else(|| Error::NotAStore {
                path: self.path.clone(),
                reason: "no fingerprint configuration recorded".into(),
            })?;
        let stored = codec::decode_config(&stored, version)?;
        if let Some(requested) = requested {
            if requested != stored {
                let json =
                    |c: &SimhashConfig| serde_json::to_string(c).unwrap_or_else(|e| e.to_string());
                return Err(Error::ConfigMismatch {
                    path: self.path.clone(),
                    stored: json(&stored),
                    requested: json(&requested),
                });
            }
        }
        self.simhasher = Simhasher::new(stored)?;
        let count = match self.get_raw(META_FAMILY, keys::META_DOC_COUNT)? {
            Some(bytes) => codec::decode_u64(&bytes, keys::META_DOC_COUNT)?,
            None => 0,
        };
        self.doc_count.store(count, Ordering::SeqCst);
        Ok(())
    }

    /// The directory of the store.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The fingerprinter configured as recorded in the store: use it for every text that goes
    /// into or is queried against this store.
    pub fn simhasher(&self) -> &Simhasher {
        &self.simhasher
    }

    /// The durability of writes, as opened.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// The number of documents.
    pub fn len(&self) -> u64 {
        self.doc_count.load(Ordering::SeqCst)
    }

    /// Whether the store holds no document.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The fingerprint of document `id`, if it is stored.
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`] for a damaged value.
    pub fn get(&self, id: u64) -> Result<Option<Fingerprint>> {
        Ok(self.document(id)?.map(|d| d.fingerprint))
    }

    /// Everything stored about document `id`.
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`] for a damaged value.
    pub fn document(&self, id: u64) -> Result<Option<Document>> {
        let key = keys::doc_key(id);
        self.get_raw(DOCS_FAMILY, &key)?
            .map(|bytes| codec::decode_document(&bytes, &key))
            .transpose()
    }

    /// The id of the document stored under external key `key` (a URL, a path), if any.
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`] for a damaged value.
    pub fn id_for_key(&self, key: &str) -> Result<Option<u64>> {
        match self.get_raw(KEYS_FAMILY, key.as_bytes())? {
            None => Ok(None),
            Some(v) => keys::decode_id_value(&v)
                .map(Some)
                .ok_or_else(|| Error::Decode {
                    column_family: KEYS_FAMILY,
                    key: keys::hex(key.as_bytes()),
                    what: "document id",
                    message: format!("expected 8 bytes, found {}", v.len()),
                }),
        }
    }

    /// The smallest id greater than every stored id (0 for an empty store): where a loader
    /// that assigns ids can start.
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`] if the last key of `docs` is not an id (ids
    /// counted from 0 would overwrite stored documents).
    pub fn next_id(&self) -> Result<u64> {
        let mut it = self.db.raw_iterator_cf(self.cf(DOCS_FAMILY)?);
        it.seek_to_last();
        it.status()
            .map_err(|e| self.rocks_err("read the last document", Some(DOCS_FAMILY), e))?;
        let Some(key) = it.key() else {
            return Ok(0);
        };
        let id = keys::decode_doc_key(key).ok_or_else(|| Error::Decode {
            column_family: DOCS_FAMILY,
            key: keys::hex(key),
            what: "document id",
            message: format!("expected an 8-byte key, found {} bytes", key.len()),
        })?;
        Ok(id.saturating_add(1))
    }

    /// Every document, in id order. Reads a consistent snapshot.
    ///
    /// # Errors
    /// Each item is an error if RocksDB fails or a value does not decode.
    pub fn documents(&self) -> Result<impl Iterator<Item = Result<(u64, Document)>> + '_> {
        let iter = self.raw_iter(DOCS_FAMILY)?;
        Ok(iter.map(move |item| {
            let (key, value) =
                item.map_err(|e| self.rocks_err("iterate documents", Some(DOCS_FAMILY), e))?;
            let id = keys::decode_doc_key(&key).ok_or_else(|| Error::Decode {
                column_family: DOCS_FAMILY,
                key: keys::hex(&key),
                what: "document id",
                message: format!("expected an 8-byte key, found {} bytes", key.len()),
            })?;
            Ok((id, codec::decode_document(&value, &key)?))
        }))
    }

    /// Writes all memtables to SST files (and so makes [`Durability::NoWal`] writes durable).
    ///
    /// # Errors
    /// RocksDB I/O errors.
    pub fn flush(&self) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        // One call for all families: with `atomic_flush` RocksDB then commits their new files
        // in one step. Flushing them one by one would let a crash (without a write-ahead log)
        // or a read-only reader see `block0` flushed and `docs` not.
        let families = ALL_FAMILIES
            .iter()
            .map(|name| self.cf(name))
            .collect::<Result<Vec<_>>>()?;
        self.db
            .flush_cfs_opt(&families, &rocksdb::FlushOptions::default())
            .map_err(|e| self.rocks_err("flush", None, e))
    }

    /// Compacts every column family fully: smaller on disk, faster to scan. Takes a while on
    /// a large store.
    ///
    /// # Errors
    /// RocksDB I/O errors, or [`Error::ReadOnly`].
    pub fn compact(&self) -> Result<()> {
        self.check_writable()?;
        for name in ALL_FAMILIES {
            self.db
                .compact_range_cf(self.cf(name)?, None::<&[u8]>, None::<&[u8]>);
        }
        Ok(())
    }

    /// Bytes the query cache holds now ([`StoreBuilder::query_cache_size`]).
    pub fn query_cache_usage(&self) -> u64 {
        self.postings.as_ref().map_or(0, |c| c.weight())
    }

    /// Bytes on disk per column family (live SST files), in [`ALL_FAMILIES`] order.
    ///
    /// # Errors
    /// RocksDB errors.
    pub fn disk_usage(&self) -> Result<Vec<(&'static str, u64)>> {
        let files = self
            .db
            .live_files()
            .map_err(|e| self.rocks_err("list live files", None, e))?;
        Ok(ALL_FAMILIES
            .iter()
            .map(|name| {
                let bytes = files
                    .iter()
                    .filter(|f| f.column_family_name == *name)
                    .map(|f| f.size as u64)
                    .sum();
                (*name, bytes)
            })
            .collect())
    }

    // ---- crate-internal plumbing ----

    pub(crate) fn cf(&self, name: &'static str) -> Result<&ColumnFamily> {
        self.db.cf_handle(name).ok_or_else(|| Error::NotAStore {
            path: self.path.clone(),
            reason: format!("column family `{name}` is missing"),
        })
    }

    pub(crate) fn block_cf(&self, i: usize) -> Result<&ColumnFamily> {
        self.cf(BLOCK_FAMILIES[i])
    }

    pub(crate) fn rocks_err(
        &self,
        operation: &'static str,
        cf: Option<&'static str>,
        e: rocksdb::Error,
    ) -> Error {
        Error::rocks(operation, cf, &self.path, e)
    }

    pub(crate) fn get_raw(&self, family: &'static str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.db
            .get_cf(self.cf(family)?, key)
            .map_err(|e| self.rocks_err("read", Some(family), e))
    }

    pub(crate) fn raw_iter(
        &self,
        family: &'static str,
    ) -> Result<rocksdb::DBIteratorWithThreadMode<'_, DB>> {
        Ok(self
            .db
            .iterator_cf(self.cf(family)?, rocksdb::IteratorMode::Start))
    }

    pub(crate) fn check_writable(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly {
                path: self.path.clone(),
            });
        }
        Ok(())
    }

    pub(crate) fn write_options(&self) -> WriteOptions {
        let mut opts = WriteOptions::default();
        match self.durability {
            Durability::Sync => opts.set_sync(true),
            Durability::Buffered => {}
            Durability::NoWal => opts.disable_wal(true),
        }
        opts
    }

    /// Takes the write lock. A poisoned lock only means another writer panicked between
    /// RocksDB writes, each of which is atomic, so the store is still consistent.
    pub(crate) fn lock_writes(&self) -> MutexGuard<'_, ()> {
        self.write_lock.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Microseconds since the Unix epoch (0 if the clock is before it).
    pub(crate) fn now_micros() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_record_the_oldest_format_that_holds_them() {
        assert_eq!(format_version_for(&SimhashConfig::default()), 5);
        assert_eq!(FORMAT_VERSION, 6);
        for config in [
            SimhashConfig::default(),
            SimhashConfig::release_default(2).unwrap(),
        ] {
            let sketched = config.with_sketch(SketchKind::MinHash);
            assert_eq!(format_version_for(&sketched), FORMAT_VERSION);
        }
        let release = |minor| SimhashConfig::release_default(minor).unwrap();
        for (minor, format) in [(2, 1), (3, 3), (4, 4), (5, 5)] {
            assert_eq!(format_version_for(&release(minor)), format, "0.{minor}");
        }
        let (v4, v3, keep) = (release(4), release(3), release(2));
        for tf in [
            TfScaling::Raw,
            TfScaling::Sqrt,
            TfScaling::Log,
            TfScaling::Binary,
        ] {
            assert_eq!(format_version_for(&keep.clone().with_tf(tf)), 1);
            assert_eq!(format_version_for(&v3.clone().with_tf(tf)), 3);
            assert_eq!(format_version_for(&v4.clone().with_tf(tf)), 4);
            assert_eq!(format_version_for(&SimhashConfig::default().with_tf(tf)), 5);
        }
        let adaptive = keep.with_tf(TfScaling::LengthAdaptive);
        assert_eq!(format_version_for(&adaptive), 2);
        assert_eq!(
            format_version_for(&adaptive.clone().with_drop_boilerplate(true)),
            3
        );
        assert_eq!(
            format_version_for(&adaptive.clone().with_latin_count_pieces(8)),
            4
        );
        assert_eq!(
            format_version_for(&adaptive.clone().with_word_char_shingles_within_words(true)),
            4
        );
        // A ratio is recorded even without pieces, where it changes nothing: the store
        // must give back the configuration it was given.
        assert_eq!(
            format_version_for(&adaptive.with_latin_count_pieces_ratio(2)),
            5
        );
    }

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn store_is_send_and_sync() {
        assert_send_sync::<Store>();
    }
}
