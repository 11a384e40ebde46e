//! The text stage: raw text -> normalized words.
//!
//! `boilerplate.rs` leaves out boilerplate lines; `chunks.rs` cuts the text into chunks that
//! give exactly the features of the whole; `normalize.rs` lowercases and folds characters;
//! `tokenize.rs` splits into words (jieba for CJK) and character shingles; `stopwords.rs`
//! (with `stopwords_zh.txt` and `stopwords_en.txt`) holds the built-in stop words.

pub(crate) mod boilerplate;
pub(crate) mod chunks;
pub(crate) mod normalize;
pub(crate) mod stopwords;
pub(crate) mod tokenize;
