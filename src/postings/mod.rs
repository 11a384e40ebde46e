//! Posting lists: for each block family *i* and 16-bit value *v*, the documents whose block *i*
//! is *v* (a *group*), with the other 48 bits of their fingerprints and their ids. A query
//! reads the groups of its own block values; the pair scan reads them all.
//!
//! Two layouts, chosen by the store's format version ([`Layout::of_format`]):
//! - **Entries** (formats 1-6): one 16-byte key per document and family, empty value. Reading
//!   a group steps a RocksDB iterator once per document, about a thousand instructions each.
//! - **Packed** (format 7): a group is a few *chunks*, each one value of up to 4,096 sorted,
//!   bit-packed entries ([`chunk`]) that a query scans in place, plus *deltas*: one key per
//!   single write not yet folded into chunks (the entries layout's key with a kind byte, whose
//!   value says added or removed). Chunks carry the *segment* they were written in: each bulk
//!   run writes a new segment (so loading into a full store rewrites nothing), and a removal
//!   delta hides its entry from the chunks of older segments only. A group reads as (entries of
//!   its chunks not hidden by a removal) ∪ (added deltas). [`Store::fold_groups`] merges a
//!   group's chunks and deltas into fresh chunks, atomically, when deltas pile up and on
//!   [`Store::compact`](crate::Store::compact).
//!
//! The query cache ([`cache`]) holds decoded groups of the entries layout. The packed layout
//! does without one: a cache cannot help a query of a fingerprint never asked before, and
//! the packed layout answers those faster than the entries layout does with its cache
//! (`docs/design.md`, "Packed posting blocks").

mod cache;
pub(crate) mod chunk;
mod fold;
mod groups;
mod probe;
mod write;

pub(crate) use cache::PostingsCache;
pub(crate) use fold::FoldCounters;
pub(crate) use groups::{malformed_error, Posting};

/// How a store lays out its block families.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// One key per document (formats 1-6).
    Entries,
    /// Packed chunks and deltas (format 7 on).
    Packed,
}

/// The first format with the packed layout.
pub(crate) const PACKED_FORMAT: u32 = 7;

impl Layout {
    /// The layout of a store of format `version`.
    pub(crate) fn of_format(version: u32) -> Layout {
        if version >= PACKED_FORMAT {
            Layout::Packed
        } else {
            Layout::Entries
        }
    }
}
