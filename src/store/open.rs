//! Opening a store: the RocksDB options of each column family, creating or checking the
//! store's format version and fingerprint settings ([`Meta`]), and finishing an interrupted
//! bulk ingestion (`journal::recover`). [`StoreBuilder`] is in `options.rs`,
//! read-only (secondary) opens in `secondary.rs`.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use rocksdb::{
    BlockBasedOptions, BlockBasedTablePinningTier, Cache, ColumnFamilyDescriptor,
    DBCompressionType, DataBlockIndexType, Options, WriteBatch, WriteOptions, DB,
};

use super::options::StoreBuilder;
use super::secondary::open_secondary;
use super::{journal, CacheFill, ConcurrentReads, Format, Store};
use crate::codec;
use crate::error::{Error, Result};
use crate::keys::{self, ALL_FAMILIES, BLOCK_FAMILIES, DOCS_FAMILY, KEYS_FAMILY, META_FAMILY};
use crate::postings::{self, Postings, FIRST_SEGMENT};
use crate::settings;
use crate::simhash::{SimhashConfig, Simhasher};

/// The size of the MANIFEST at which the writer starts a new one (see `open_with`).
const MAX_MANIFEST_BYTES: usize = 256 * 1024;

/// The on-disk format this build writes: [`Format::CURRENT`] as its number.
pub const FORMAT_VERSION: u32 = Format::CURRENT.version();
/// The oldest on-disk format this build reads: [`Format::OLDEST`] as its number.
pub const MIN_FORMAT_VERSION: u32 = Format::OLDEST.version();

/// The RocksDB options of column family `name`: the one place they are set, for every store
/// this build opens. The block families get the packed layout's
/// ([`postings::family_options`]), the only one this build writes; a store of an older
/// format is only read, and its files keep the options they were written with.
pub(crate) fn column_family_options(name: &str, cache: &Cache) -> Options {
    if BLOCK_FAMILIES.contains(&name) {
        return postings::family_options(base_table_options(cache));
    }
    let mut opts = Options::default();
    opts.set_block_based_table_factory(&table_options(name, cache));
    opts.set_compression_type(DBCompressionType::Lz4);
    opts.set_bottommost_compression_type(DBCompressionType::Zstd);
    opts.set_level_compaction_dynamic_level_bytes(true);
    opts
}

/// The table options every column family shares.
pub(crate) fn base_table_options(cache: &Cache) -> BlockBasedOptions {
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(cache);
    // Index and filter blocks live in the block cache (memory stays bounded at billions of
    // documents), at high priority, with the top level of partitioned ones pinned.
    table.set_cache_index_and_filter_blocks(true);
    table.set_cache_index_and_filter_blocks_with_high_priority(true);
    table.set_pin_l0_filter_and_index_blocks_in_cache(true);
    table.set_pin_top_level_index_and_filter(true);
    table.set_format_version(6);
    table
}

/// The table options of `docs`, `keys` and `meta` (the bulk loader starts from these for its
/// SST files): part of [`column_family_options`].
pub(crate) fn table_options(name: &str, cache: &Cache) -> BlockBasedOptions {
    let mut table = base_table_options(cache);
    if name == DOCS_FAMILY || name == KEYS_FAMILY {
        // Point lookups by id and by key: a Bloom filter spares a disk read for absent ones
        // (every new id or key is looked up before it is written); 7 bits per document
        // (0.9 bytes) let through 3% of absent ones, against 1% for 10 bits (1.25 bytes).
        // Filter and index blocks are pinned in the block cache, so the churn of data blocks
        // can never evict a filter of megabytes that every lookup needs; a hash index inside
        // each data block makes the lookup a hash probe instead of a binary search.
        // (Partitioned filters and indexes cost more instructions per matched document.)
        table.set_bloom_filter(FILTER_BITS_PER_KEY, false);
        table.set_unpartitioned_pinning_tier(BlockBasedTablePinningTier::All);
        table.set_data_block_index_type(DataBlockIndexType::BinaryAndHash);
    }
    if name == DOCS_FAMILY {
        // Queries read `docs` only for their matches' keys (not at all in a store without
        // keys); `get`, `verify` and exports read it by id or whole. 16 KiB blocks compress
        // better and cost fewer index entries than 4 KiB ones: 0.7 bytes per document less,
        // and 10% less time to write them in a bulk load.
        table.set_block_size(DOCS_BLOCK_SIZE);
    }
    table
}

/// Bloom filter bits per key of `docs` and `keys`.
const FILTER_BITS_PER_KEY: f64 = 7.0;
/// Data block size of `docs`.
const DOCS_BLOCK_SIZE: usize = 16 * 1024;

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
        // The block families' hashed memtables (`postings::family_options`) take one writer at
        // a time; so does the store (its write lock).
        db_opts.set_allow_concurrent_memtable_write(false);
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
        // How queries read: from memory (mapped files, one family after another) or from
        // disk (positioned reads of all a query's groups at once); StoreBuilder::mmap_reads. A
        // new store is read with positioned reads: nothing says yet whether it will fit.
        let fits = || files_fit_in_memory(path);
        let mapped = builder.mmap_reads.unwrap_or_else(|| exists && fits());
        db_opts.set_allow_mmap_reads(mapped);
        let concurrent_reads = ConcurrentReads::new(builder.concurrent_reads, fits);
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

        // Everything the store needs from `meta` is read first, then the store is built.
        let meta = Meta::read_or_create(&db, path, &builder)?;
        let store = Store {
            db,
            path: path.to_path_buf(),
            simhasher: meta.simhasher,
            durability: builder.durability,
            read_only: builder.read_only,
            write_lock: parking_lot::Mutex::new(()),
            write_lock_holder: Mutex::new(None),
            doc_count: AtomicU64::new(meta.doc_count),
            // Until recovery has run: it may ingest a `keys` file.
            keys_present: AtomicBool::new(true),
            format: meta.format,
            postings: Postings::new(
                meta.format.layout(),
                meta.next_segment,
                builder.query_cache_bytes,
            ),
            concurrent_reads,
            cache_fill: CacheFill::new(builder.block_cache_bytes, mapped),
            _secondary_dir: secondary_dir,
            clock: builder.clock.clone(),
        };
        journal::recover(&store)?;
        let keys_present = store.keys_family_has_entries()?;
        store.keys_present.store(keys_present, Ordering::SeqCst);
        store.choose_cache_fill();
        Ok(store)
    }
}

impl Store {
    /// Whether `keys` holds an entry (one seek, at open).
    fn keys_family_has_entries(&self) -> Result<bool> {
        let mut it = self
            .db
            .raw_iterator_cf_opt(self.cf(KEYS_FAMILY)?, rocksdb::ReadOptions::default());
        it.seek_to_first();
        it.status()
            .map_err(|e| self.rocks_err("scan", Some(KEYS_FAMILY), e))?;
        Ok(it.valid())
    }
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
    fn read_or_create(db: &DB, path: &Path, builder: &StoreBuilder) -> Result<Meta> {
        let get = |key: &[u8]| -> Result<Option<Vec<u8>>> {
            let meta = meta_family(db, path)?;
            db.get_cf(meta, key)
                .map_err(|e| Error::rocks("read", Some(META_FAMILY), path, e))
        };
        let requested = builder.simhash_config.clone();
        let Some(version) = get(keys::META_FORMAT_VERSION)? else {
            return Meta::create(db, path, builder.read_only, requested);
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
        let doc_count = match get(keys::META_DOC_COUNT)? {
            Some(bytes) => codec::decode_u64(&bytes, keys::META_DOC_COUNT)?,
            None => 0,
        };
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
    fn create(
        db: &DB,
        path: &Path,
        read_only: bool,
        requested: Option<SimhashConfig>,
    ) -> Result<Meta> {
        // A new store, or one whose creation was interrupted before its first write:
        // refuse if it somehow holds documents.
        let docs = db.cf_handle(DOCS_FAMILY).ok_or_else(|| Error::NotAStore {
            path: path.to_path_buf(),
            reason: format!("column family `{DOCS_FAMILY}` is missing"),
        })?;
        if db
            .iterator_cf(docs, rocksdb::IteratorMode::Start)
            .next()
            .is_some()
        {
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
        let meta = meta_family(db, path)?;
        let mut batch = WriteBatch::default();
        batch.put_cf(meta, keys::META_SIMHASHER, settings::encode(&config));
        batch.put_cf(meta, keys::META_DOC_COUNT, codec::encode_u64(0));
        batch.put_cf(
            meta,
            keys::META_NEXT_SEGMENT,
            codec::encode_u32(FIRST_SEGMENT),
        );
        // The version goes last in the same atomic batch: its presence means "initialised".
        batch.put_cf(
            meta,
            keys::META_FORMAT_VERSION,
            codec::encode_u32(format.version()),
        );
        let mut opts = WriteOptions::default();
        opts.set_sync(true);
        db.write_opt(batch, &opts)
            .map_err(|e| Error::rocks("initialise the store", Some(META_FAMILY), path, e))?;
        Ok(Meta {
            format,
            simhasher,
            doc_count: 0,
            next_segment: Some(FIRST_SEGMENT),
        })
    }
}

fn meta_family<'a>(db: &'a DB, path: &Path) -> Result<&'a rocksdb::ColumnFamily> {
    db.cf_handle(META_FAMILY).ok_or_else(|| Error::NotAStore {
        path: path.to_path_buf(),
        reason: format!("column family `{META_FAMILY}` is missing"),
    })
}
