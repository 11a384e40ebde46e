//! Text -> 64-bit SimHash fingerprint.
//!
//! [`Simhasher`] turns a text into a [`Fingerprint`](crate::Fingerprint) under a
//! [`SimhashConfig`]: leave out boilerplate lines (`boilerplate.rs`), normalize
//! (`normalize.rs`), split into words with jieba for CJK and runs of letters and digits for
//! other scripts (`tokenize.rs`), drop stop words (`stopwords.rs`), count features and weigh
//! them by term frequency (`features.rs`; jieba's IDF as an option, `idf.rs`), and take the
//! sign of the weighted sum of the features' xxh3-64 bits (`hash.rs`, `sums.rs`,
//! `hasher.rs`; `count_pieces.rs` for the count pieces of non-CJK features, `adaptive.rs` for
//! the length-adaptive TF option, both on `count_table.rs`). A long text goes through in
//! pieces that give exactly the features of the whole (`pieces.rs`), so memory does not grow
//! with it. What depends only
//! on the seed (the stop words' hashes, the keys of short hashes, the hashes of the common
//! ideographs as features) is computed once per hasher (`seeded.rs`).
//! How the defaults were chosen is in `docs/design.md`, "Fingerprint quality".

mod adaptive;
mod boilerplate;
mod config;
mod count_pieces;
mod count_table;
mod features;
mod hash;
mod hasher;
mod idf;
mod normalize;
mod pieces;
mod seeded;
mod stopwords;
mod sums;
mod tokenize;
mod unit_batch;

pub use config::{IdfWeighting, SimhashConfig, TfScaling};
pub use hasher::Simhasher;

// What the sketch (`crate::sketch`) reads: the text without boilerplate lines, normalized.
pub(crate) use boilerplate::drop_lines;
pub(crate) use normalize::{is_cjk, normalize_into};
