//! The block families' RocksDB options: the one place they are set, for the store's column
//! families (`src/store/open.rs`) and the bulk loader's SST files (`src/bulk/sst.rs`), so
//! that a bulk-written file is a file the store itself would write.

use rocksdb::{BlockBasedOptions, BlockBasedTablePinningTier, DBCompressionType, Options};

/// 4 KiB data blocks: a chunk is read whole, so a small block means fewer bytes read and
/// checksummed per fresh query (a group of more than 4 KiB is a block of its own either way).
const BLOCK_SIZE: usize = 4096;
/// A restart point every 4 keys: a seek finds its key among at most 4 instead of 16.
const RESTART_INTERVAL: i32 = 4;

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
    opts
}
