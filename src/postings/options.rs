//! The block families' RocksDB options: the one place they are set, for the store's column
//! families (`src/store/open.rs`) and the bulk loader's SST files (`src/bulk/sst/`), so
//! that a bulk-written file is a file the store itself would write.

use rocksdb::{
    BlockBasedOptions, BlockBasedTablePinningTier, DBCompressionType, MemtableFactory, Options,
    ReadOptions, SliceTransform,
};

/// 4 KiB data blocks: a chunk is read whole, so a small block means fewer bytes read and
/// checksummed per fresh query (a group of more than 4 KiB is a block of its own either way).
const BLOCK_SIZE: usize = 4096;
/// A restart point every 4 keys: a seek finds its key among at most 4 instead of 16.
const RESTART_INTERVAL: i32 = 4;
/// The size of a block family's memtable: see [`family_options`].
const WRITE_BUFFER_BYTES: usize = 8 << 20;
/// The hash buckets of a block family's memtable, one per block value: 4,096 (16 values a
/// bucket) gave 89k single inserts/s instead of 120k.
const HASH_BUCKETS: usize = 1 << 16;

/// The options of a block family, from the table options every family shares (`table`:
/// block cache, pinning, table format). Block families are only range-scanned by a 2-byte
/// prefix that nearly always exists, so they have no filter: it would cost space and buy
/// nothing.
pub(crate) fn family_options(mut table: BlockBasedOptions) -> Options {
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
/// (`total_order_seek`). A default iterator reads a hashed memtable ([`family_options`]) only
/// within the block value of its last seek; this one copies the memtables into one sorted
/// list when it is made.
pub(crate) fn in_key_order(mut options: ReadOptions) -> ReadOptions {
    options.set_total_order_seek(true);
    options
}
