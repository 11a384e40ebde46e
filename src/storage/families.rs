//! The column families' RocksDB options: the one place they are set, for the store's column
//! families ([`column_family_options`]) and the SST files the bulk loader writes
//! ([`sst_file_options`]), so that a bulk-written file is a file the store itself would write.

use rocksdb::{
    BlockBasedOptions, BlockBasedTablePinningTier, Cache, DBCompressionType, DataBlockIndexType,
    MemtableFactory, Options, ReadOptions, SliceTransform,
};

use crate::keys::{BLOCK_FAMILIES, DOCS_FAMILY, KEYS_FAMILY};

/// 4 KiB data blocks: a chunk is read whole, so a small block means fewer bytes read and
/// checksummed per fresh query (a group of more than 4 KiB is a block of its own either way).
const BLOCK_SIZE: usize = 4096;
/// A restart point every 4 keys: a seek finds its key among at most 4 instead of 16.
const RESTART_INTERVAL: i32 = 4;
/// The size of a block family's memtable: see [`block_family_options`].
const WRITE_BUFFER_BYTES: usize = 8 << 20;
/// The hash buckets of a block family's memtable, one per block value: 4,096 (16 values a
/// bucket) gave 89k single inserts/s instead of 120k.
const HASH_BUCKETS: usize = 1 << 16;

/// The options of a block family, from the table options every family shares (`table`:
/// block cache, pinning, table format). Block families are only range-scanned by a 2-byte
/// prefix that nearly always exists, so they have no filter: it would cost space and buy
/// nothing.
pub(crate) fn block_family_options(mut table: BlockBasedOptions) -> Options {
    table.set_block_size(BLOCK_SIZE);
    table.set_block_restart_interval(RESTART_INTERVAL);
    // Every seek reads the file's index block. Pinned in the block cache, it is read and
    // checksummed once per open file; unpinned, mapped reads checksummed it again on every
    // seek (57% of a query's time at 10M documents). A fresh k = 3 query at 10M takes 16 us
    // instead of 40 with mapped reads, 24 instead of 28 with positioned ones; the index takes
    // about 20 bytes per chunk (25 MB at 1B).
    table.set_unpartitioned_pinning_tier(BlockBasedTablePinningTier::All);
    let mut opts = Options::default();
    opts.set_block_based_table_factory(&table);
    // Packed chunks are bit-packed random bits: compression would find nothing and cost
    // every read a decompression.
    opts.set_compression_type(DBCompressionType::None);
    opts.set_bottommost_compression_type(DBCompressionType::None);
    opts.set_level_compaction_dynamic_level_bytes(true);
    // A single write puts one delta per family under a random block value. In RocksDB's
    // default memtable (one skiplist per family, 64 MiB) finding its place took half of an
    // insert's time, chasing pointers through memory no cache holds. Here the memtable hashes
    // keys by block value (the 2-byte prefix of every key) into small skiplists, and holds
    // 8 MiB. The price: an iterator reads a memtable only within the block value of its last
    // seek, unless made in key order (`total_order_seek`), which copies the memtable; scans
    // of many groups choose between the two (`groups::for_each_key`).
    opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(2));
    opts.set_memtable_factory(MemtableFactory::HashSkipList {
        bucket_count: HASH_BUCKETS,
        height: 4,
        branching_factor: 4,
    });
    opts.set_write_buffer_size(WRITE_BUFFER_BYTES);
    opts
}

/// `options` for an iterator over many block values of a block family: in key order
/// (`total_order_seek`). A default iterator reads a hashed memtable ([`block_family_options`]) only
/// within the block value of its last seek; this one copies the memtables into one sorted
/// list when it is made.
pub(crate) fn in_key_order(mut options: ReadOptions) -> ReadOptions {
    options.set_total_order_seek(true);
    options
}

/// The RocksDB options of column family `name`: the one place they are set, for every store
/// this build opens. The block families get the packed layout's
/// ([`block_family_options`]), the only one this build writes; a store of an older
/// format is only read, and its files keep the options they were written with.
pub(crate) fn column_family_options(name: &str, cache: &Cache) -> Options {
    if BLOCK_FAMILIES.contains(&name) {
        return block_family_options(base_table_options(cache));
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

/// The options of an SST file of `family` written outside the store and ingested into it
/// (a bulk run, a spool merge): the family's own, with the compression `dest` asks for.
pub(crate) fn sst_file_options(family: &str, dest: Destination) -> Options {
    // The family's options (format, Bloom filters, block size); the cache is only a
    // placeholder.
    let cache = Cache::new_lru_cache(1 << 20);
    if BLOCK_FAMILIES.contains(&family) {
        // Exactly the store's.
        block_family_options(base_table_options(&cache))
    } else {
        let mut table = table_options(family, &cache);
        if family == DOCS_FAMILY {
            // Binary search inside data blocks instead of the family's hash index: 1.4 bytes
            // per document less and 2% fewer instructions to write; a point lookup in a 4 KiB
            // block does a few more key comparisons (no measurable change in query cost).
            table.set_data_block_index_type(DataBlockIndexType::BinarySearch);
        }
        let mut opts = Options::default();
        opts.set_block_based_table_factory(&table);
        let compression = match dest {
            Destination::Bottom => DBCompressionType::Zstd,
            Destination::Upper => DBCompressionType::Lz4,
        };
        opts.set_compression_type(compression);
        opts.set_bottommost_compression_type(compression);
        if compression == DBCompressionType::Zstd {
            // window bits -14 and strategy 0 are RocksDB's defaults; no dictionary.
            opts.set_compression_options(-14, ZSTD_LEVEL, 0, 0);
            opts.set_bottommost_compression_options(-14, ZSTD_LEVEL, 0, 0, true);
        }
        opts
    }
}

/// How an SST file written outside the store is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Destination {
    /// The file will not overlap anything in the store and goes to the bottom level: written
    /// with the bottom level's compression (Zstandard), never rewritten.
    Bottom,
    /// The file overlaps stored data and goes to level 0, from where compaction rewrites it:
    /// written with the cheaper upper-level compression (LZ4).
    Upper,
}

/// Zstandard level of bottom-level `docs` and `keys` files. Level 1 compresses these values
/// about as well as RocksDB's default level 3, at twice the speed.
const ZSTD_LEVEL: i32 = 1;
