//! The features stage: normalized words -> the hashed feature occurrences, with their IDF,
//! handed to a [`Sink`](sink::Sink) of the sums stage.
//!
//! `extract.rs` walks the text and takes its features; `hash.rs` is the xxh3-64 they are
//! hashed with and `seed_hashes.rs` what of it depends only on the seed; `idf.rs` jieba's IDF
//! table; `count_pieces.rs` the pieces a non-CJK feature's count is cut into;
//! `unit_batch.rs` batches the features of weight 1; `feature_map.rs` is the map of distinct
//! features that the general path weighs.

pub(crate) mod count_pieces;
pub(crate) mod extract;
pub(crate) mod feature_map;
mod hash;
pub(crate) mod idf;
pub(crate) mod seed_hashes;
pub(crate) mod sink;
pub(crate) mod unit_batch;

pub(crate) use hash::SeededXxh3;
