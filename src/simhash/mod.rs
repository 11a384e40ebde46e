//! Text -> 64-bit SimHash fingerprint.
//!
//! [`Simhasher`] turns a text into a [`Fingerprint`](crate::Fingerprint) under a
//! [`SimhashConfig`]: normalize (`normalize.rs`), split into words with jieba for CJK and
//! runs of letters and digits for other scripts (`tokenize.rs`), drop stop words
//! (`stopwords.rs`), count features and weigh them with TF-IDF (`features.rs`, `idf.rs`),
//! and take the sign of the weighted sum of the features' xxh3-64 bits (`hasher.rs`). The
//! hashes that depend only on the seed (stop words, single ideographs) are computed once per
//! hasher (`seeded.rs`).
//! How the defaults were chosen is in `docs/design.md`, "Fingerprint quality".

mod config;
mod features;
mod hasher;
mod idf;
mod normalize;
mod seeded;
mod stopwords;
mod tokenize;

pub use config::{IdfWeighting, SimhashConfig, TfScaling};
pub use hasher::Simhasher;
