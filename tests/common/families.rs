//! The store's column family names, as `docs/design.md` ("Bytes on disk") lists them, for
//! tests that open the RocksDB database directly. The crate keeps its own constants private:
//! these strings are part of the on-disk format, not of the API.

/// The four block indexes, in block order.
pub const BLOCK_FAMILIES: [&str; 4] = ["block0", "block1", "block2", "block3"];
/// Documents: id -> fingerprint, external key, metadata.
pub const DOCS_FAMILY: &str = "docs";
/// External keys: key -> id.
pub const KEYS_FAMILY: &str = "keys";
/// Store metadata: format version, fingerprint configuration, counts.
pub const META_FAMILY: &str = "meta";
/// Every column family the store opens, besides RocksDB's `default`.
pub const ALL_FAMILIES: [&str; 7] = [
    "block0",
    "block1",
    "block2",
    "block3",
    DOCS_FAMILY,
    KEYS_FAMILY,
    META_FAMILY,
];
