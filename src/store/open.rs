//! Opening a store: the RocksDB options of each column family, creating or checking the
//! store's format version and fingerprint settings (`load_or_init_meta`), and finishing an
//! interrupted bulk ingestion (`journal::recover`). [`StoreBuilder`] is in `options.rs`,
//! read-only (secondary) opens in `secondary.rs`.

use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use rocksdb::{
    BlockBasedOptions, BlockBasedTablePinningTier, Cache, ColumnFamilyDescriptor,
    DBCompressionType, DataBlockIndexType, Options, WriteBatch, WriteOptions, DB,
};

use super::options::StoreBuilder;
use super::secondary::open_secondary;
use super::{journal, Store};
use crate::codec;
use crate::error::{Error, Result};
use crate::keys::{self, ALL_FAMILIES, DOCS_FAMILY, KEYS_FAMILY, META_FAMILY};
use crate::postings::{FoldCounters, Layout, PostingsCache};
use crate::settings;
use crate::simhash::{SimhashConfig, Simhasher};

/// The size of the MANIFEST at which the writer starts a new one (see `open_with`).
const MAX_MANIFEST_BYTES: usize = 256 * 1024;

/// The on-disk format this build writes. It changes only with the layout of keys or values:
/// fingerprint settings and built-in word lists are recorded by name (`src/settings/`).
pub const FORMAT_VERSION: u32 = 7;
/// The format before [`FORMAT_VERSION`], which [`StoreBuilder::create_format`] can also
/// create.
pub(crate) const PREVIOUS_FORMAT_VERSION: u32 = 6;
/// The oldest on-disk format this build reads.
pub const MIN_FORMAT_VERSION: u32 = 1;

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

/// The packed layout's block families: 4 KiB data blocks, a restart point every 4 keys. A
/// chunk is read whole, so a block smaller than the 16 KiB of the entries layout means fewer
/// bytes read and checksummed per fresh query (a group of more than 4 KiB is a block of its
/// own either way), and a seek finds its key among at most 4 instead of 16.
const PACKED_BLOCK_SIZE: usize = 4096;
const PACKED_RESTART_INTERVAL: i32 = 4;

/// Changes `table` (a block family's) to the packed layout's options.
pub(crate) fn packed_table_options(table: &mut BlockBasedOptions) {
    table.set_block_size(PACKED_BLOCK_SIZE);
    table.set_block_restart_interval(PACKED_RESTART_INTERVAL);
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
            format_version: FORMAT_VERSION,
            layout: Layout::of_format(FORMAT_VERSION),
            next_segment: AtomicU32::new(FIRST_SEGMENT),
            fold_counters: FoldCounters::new(),
            _secondary_dir: secondary_dir,
        };
        store.load_or_init_meta(builder.simhash_config, builder.create_format)?;
        journal::recover(&store)?;
        Ok(store)
    }

    /// Reads the format version, configuration and count, or writes them for a new store.
    fn load_or_init_meta(
        &mut self,
        requested: Option<SimhashConfig>,
        create_format: u32,
    ) -> Result<()> {
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
            let version = create_format;
            let mut batch = WriteBatch::default();
            let meta = self.cf(META_FAMILY)?;
            batch.put_cf(meta, keys::META_SIMHASHER, settings::encode(&config));
            batch.put_cf(meta, keys::META_DOC_COUNT, codec::encode_u64(0));
            if Layout::of_format(version) == Layout::Packed {
                batch.put_cf(
                    meta,
                    keys::META_NEXT_SEGMENT,
                    codec::encode_u32(FIRST_SEGMENT),
                );
            }
            // The version goes last in the same atomic batch: its presence means "initialised".
            batch.put_cf(meta, keys::META_FORMAT_VERSION, codec::encode_u32(version));
            let mut opts = WriteOptions::default();
            opts.set_sync(true);
            self.db.write_opt(batch, &opts).map_err(|e| {
                Error::rocks("initialise the store", Some(META_FAMILY), &self.path, e)
            })?;
            return self.use_format(version);
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
        let stored = settings::decode(&stored, version, &self.path)?;
        if let Some(requested) = requested {
            settings::check_requested(&self.path, &stored, &requested)?;
        }
        self.simhasher = Simhasher::new(stored)?;
        let count = match self.get_raw(META_FAMILY, keys::META_DOC_COUNT)? {
            Some(bytes) => codec::decode_u64(&bytes, keys::META_DOC_COUNT)?,
            None => 0,
        };
        self.doc_count.store(count, Ordering::SeqCst);
        self.use_format(version)
    }

    /// Sets up the store for format `version` and its layout: the packed layout reads
    /// `meta/next_segment`, stores its chunks uncompressed (they are bit-packed random bits:
    /// compression would find nothing and cost every read a decompression) and has no query
    /// cache.
    fn use_format(&mut self, version: u32) -> Result<()> {
        let layout = Layout::of_format(version);
        self.format_version = version;
        self.layout = layout;
        if layout == Layout::Entries {
            return Ok(());
        }
        self.postings = None;
        let next = match self.get_raw(META_FAMILY, keys::META_NEXT_SEGMENT)? {
            Some(bytes) => codec::decode_u32(&bytes, keys::META_NEXT_SEGMENT)?,
            None => FIRST_SEGMENT,
        };
        self.next_segment.store(next, Ordering::SeqCst);
        if !self.read_only {
            for i in 0..crate::fingerprint::BLOCKS {
                self.db
                    .set_options_cf(
                        self.block_cf(i)?,
                        &[
                            ("compression", "kNoCompression"),
                            ("bottommost_compression", "kNoCompression"),
                            (
                                "block_based_table_factory",
                                &format!(
                                    "{{block_size={PACKED_BLOCK_SIZE};block_restart_interval={PACKED_RESTART_INTERVAL}}}"
                                ),
                            ),
                        ],
                    )
                    .map_err(|e| self.rocks_err("set options", Some(keys::BLOCK_FAMILIES[i]), e))?;
            }
        }
        Ok(())
    }
}

/// The first segment number of bulk runs; segment 0 holds folded chunks
/// (`src/postings/fold.rs`).
pub(crate) const FIRST_SEGMENT: u32 = 1;
