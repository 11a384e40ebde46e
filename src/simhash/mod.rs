//! Text -> 64-bit SimHash fingerprint.
//!
//! [`Simhasher`] (`hasher.rs`) turns a text into a [`Fingerprint`](crate::Fingerprint) under a
//! [`SimhashConfig`] (`config.rs`), in three stages:
//! - `text/`: leave out boilerplate lines, cut the text into chunks that give exactly the
//!   features of the whole (so memory does not grow with it), normalize, split into words
//!   (jieba for CJK, runs of letters and digits for other scripts) and character shingles,
//!   and tell stop words;
//! - `features/`: take the features of the words, hash them (xxh3-64 with the seed), give
//!   them their IDF and cut the counts of non-CJK features into count pieces;
//! - `sums/`: add the features' weighted bits and take their signs as the fingerprint.
//!
//! [`SketchKind`] (`sketch_kind.rs`), the setting of which sketch a store keeps beside the
//! fingerprint, is recorded with the others; the sketch itself is `crate::sketch`'s.
//!
//! How the defaults were chosen is in `docs/design.md`, "Fingerprint quality".

mod config;
mod features;
mod hasher;
mod sketch_kind;
mod sums;
mod text;

pub use config::{IdfWeighting, SimhashConfig, TfScaling};
pub use hasher::Simhasher;
pub use sketch_kind::SketchKind;

// What the sketch (`crate::sketch`) reads: the text without boilerplate lines, normalized.
#[cfg(test)]
pub(crate) use features::seed_hashes::CHAR_SHINGLE_SALT;
pub(crate) use features::seed_hashes::{IdeographHashes, SeedHashes};
pub(crate) use features::SeededXxh3;
pub(crate) use text::boilerplate::drop_lines;
pub(crate) use text::normalize::{is_cjk, normalize_into};
// What the HTML reader (`crate::readers`) shares with the fingerprinter: which lines are
// boilerplate, and which characters are written without spaces between words.
#[cfg(feature = "readers")]
pub(crate) use text::{boilerplate, normalize::is_word_char};
