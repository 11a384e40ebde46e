//! Feature extraction: text -> the occurrences of its hashed features, with their IDF, handed
//! to a [`Sink`] (the SimHash sums directly under raw TF, or a count per distinct feature).
//!
//! Features are kept by their 64-bit hash only: no per-token `String` is ever made. Two
//! distinct features with the same xxh3-64 hash would be merged, which at the sizes of a
//! document (thousands of features) has probability around 10^-12.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::config::{IdfWeighting, SimhashConfig, MAX_WORD_SHINGLES};
use super::idf::IDF;
use super::normalize::{is_cjk, is_kept, push_normalized};
use super::seeded::SeedHashes;
use super::stopwords::is_stop_char;
use super::tokenize::{for_each_word, CharShingles};

/// One distinct feature of a text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Feature {
    /// How many times it occurs.
    pub(crate) count: u32,
    /// Its IDF factor (1 without IDF weighting).
    pub(crate) idf: f32,
}

/// A `Hasher` for keys that are already uniform 64-bit hashes: the key is its own hash.
#[derive(Default)]
pub(crate) struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not used for u64 keys; a simple fold keeps it correct for anything else.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

pub(crate) type BuildIdentity = BuildHasherDefault<IdentityHasher>;

/// The distinct features of a text, by hash.
pub(crate) type Features = HashMap<u64, Feature, BuildIdentity>;

/// Where extracted feature occurrences go.
pub(crate) trait Sink {
    /// One occurrence of the feature with this hash; `idf` gives its IDF factor.
    fn add(&mut self, hash: u64, idf: impl FnOnce() -> f64);

    /// One occurrence of each of these features, of IDF factor 1.
    fn add_units(&mut self, hashes: &[u64]) {
        for &hash in hashes {
            self.add(hash, || 1.0);
        }
    }
}

impl Sink for Features {
    #[inline]
    fn add(&mut self, hash: u64, idf: impl FnOnce() -> f64) {
        self.entry(hash)
            .and_modify(|f| f.count = f.count.saturating_add(1))
            .or_insert_with(|| Feature {
                count: 1,
                idf: idf() as f32,
            });
    }
}

/// The hash and mean IDF of the word shingle made of the words at positions `range` (in text
/// order, kept in `ring` modulo `n`): xxh3-64 of the words' hashes, little-endian, in order.
fn shingle(ring: &[(u64, f64)], range: std::ops::Range<usize>, n: usize, seed: u64) -> (u64, f64) {
    let mut bytes = [0u8; 8 * MAX_WORD_SHINGLES as usize];
    let mut len = 0;
    let mut idf_sum = 0.0;
    let words = range.len().max(1);
    for k in range {
        let (h, idf) = ring.get(k % n).copied().unwrap_or_default();
        if let Some(dst) = bytes.get_mut(len..len + 8) {
            dst.copy_from_slice(&h.to_le_bytes());
            len += 8;
        }
        idf_sum += idf;
    }
    let hashed = bytes.get(..len).unwrap_or(&bytes);
    (xxh3_64_with_seed(hashed, seed), idf_sum / words as f64)
}

/// Extracts the feature occurrences of `text` under `config` into `sink`, in text order.
/// `seeds` must be `SeedHashes::new(config.seed)`.
pub(crate) fn extract(
    config: &SimhashConfig,
    seeds: &SeedHashes,
    text: &str,
    sink: &mut impl Sink,
) {
    let seed = config.seed;
    let table = seeds.ideographs();
    let char_seed = table.char_seed();

    // Normalize, copying runs of characters that normalization keeps as they are (most of
    // them) in one piece, and in the same pass take the ideograph shingles: segmentation-
    // free, the ideographs in order with single-character stop words dropped. Ideographs are
    // the same bytes in `text` and `norm`, so their shingles are taken from `text`. Single
    // ideographs (the default) are looked up in the table instead.
    let mut norm = String::with_capacity(text.len());
    // The features of weight 1 (all but IDF-weighted words), handed over at the end in one
    // batch: summing them in a tight loop is cheaper than one call per occurrence.
    let mut units: Vec<u64> = Vec::with_capacity(text.len() / 2 + 16);
    let single_ideographs = config.cjk_char_shingles == 1;
    let mut ideographs = CharShingles::new(usize::from(config.cjk_char_shingles));
    let mut kept_from = 0;
    for (i, c) in text.char_indices() {
        if is_cjk(c) {
            // Ideographs normalize to themselves.
            if config.cjk_char_shingles > 0 && !(config.stop_words && is_stop_char(c)) {
                if single_ideographs {
                    units.push(table.char(c));
                } else {
                    ideographs.push(text, i, c, |s| units.push(xxh3_64_with_seed(s, char_seed)));
                }
            }
        } else if !is_kept(c) {
            norm.push_str(text.get(kept_from..i).unwrap_or_default());
            push_normalized(c, config.normalize, &mut norm);
            kept_from = i + c.len_utf8();
        }
    }
    norm.push_str(text.get(kept_from..).unwrap_or_default());
    ideographs.finish(text, |s| units.push(xxh3_64_with_seed(s, char_seed)));

    let use_idf = config.idf == IdfWeighting::Jieba;
    let idf_of = |w: &str| if use_idf { IDF.get(w) } else { 1.0 };
    let n = usize::from(config.word_shingles);
    let word_chars = usize::from(config.word_char_shingles);

    if config.words || n >= 2 || word_chars > 0 {
        // Shingles of the non-CJK words' characters, stop words dropped, concatenated.
        let mut letters = CharShingles::new(word_chars);
        // The last n words' hashes and IDFs, as a ring.
        let mut ring = [(0u64, 0f64); MAX_WORD_SHINGLES as usize];
        let mut seen = 0usize;
        let segment_cjk = config.words || n >= 2;
        for_each_word(&norm, config.hmm, segment_cjk, |w, cjk| {
            let (h, stop) = if cjk && w.len() <= 4 {
                // One ideograph (3 or 4 bytes): from the table; the stop words among them
                // are the stop characters.
                let c = w.chars().next().unwrap_or_default();
                (table.word(c), is_stop_char(c))
            } else {
                let h = xxh3_64_with_seed(w.as_bytes(), seed);
                (h, seeds.is_stop(h))
            };
            if config.stop_words && stop {
                return;
            }
            if word_chars > 0 && !cjk {
                // `w` is a slice of `norm`: its offset there.
                let base = (w.as_ptr() as usize).wrapping_sub(norm.as_ptr() as usize);
                for (i, c) in w.char_indices() {
                    letters.push(&norm, base + i, c, |s| {
                        units.push(xxh3_64_with_seed(s, char_seed))
                    });
                }
            }
            if config.words {
                if use_idf {
                    sink.add(h, || idf_of(w));
                } else {
                    units.push(h);
                }
            }
            if n >= 2 {
                if let Some(slot) = ring.get_mut(seen % n) {
                    *slot = (h, idf_of(w));
                }
                seen += 1;
                if seen >= n {
                    let (h, idf) = shingle(&ring, seen - n..seen, n, seed);
                    if use_idf {
                        sink.add(h, || idf);
                    } else {
                        units.push(h);
                    }
                }
            }
        });
        letters.finish(&norm, |s| units.push(xxh3_64_with_seed(s, char_seed)));
        // A text with fewer words than the shingle size still gets one shingle of all of
        // them, unless single words are features anyway.
        if n >= 2 && seen > 0 && seen < n && !config.words {
            let (h, idf) = shingle(&ring, 0..seen, n, seed);
            sink.add(h, || idf);
        }
    }
    sink.add_units(&units);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn only_words() -> SimhashConfig {
        SimhashConfig::default()
            .with_cjk_char_shingles(0)
            .with_word_char_shingles(0)
    }

    fn extract(config: &SimhashConfig, text: &str, features: &mut Features) {
        features.clear();
        super::extract(config, &SeedHashes::new(config.seed), text, features);
    }

    fn count(config: &SimhashConfig, text: &str) -> usize {
        let mut f = Features::default();
        extract(config, text, &mut f);
        f.len()
    }

    #[test]
    fn stop_words_follow_the_seed() {
        assert_eq!(count(&SimhashConfig::default().with_seed(1), "的 the"), 0);
    }

    #[test]
    fn punctuation_and_stop_words_are_not_features() {
        let c = SimhashConfig::default();
        assert_eq!(count(&c, ""), 0);
        assert_eq!(
            count(&c, "，。！？、；：“”‘’（）《》 ,.!?;:\"'()<> \n\t"),
            0
        );
        assert_eq!(count(&c, "的 了 是 the of and"), 0);
        assert_eq!(
            count(&only_words().with_stop_words(false), "的 了 是 the of and"),
            6
        );
        assert_eq!(count(&only_words(), "Database DATABASE database"), 1);
    }

    #[test]
    fn counts_repeats_once_per_distinct_feature() {
        let mut f = Features::default();
        extract(&only_words(), "server server client", &mut f);
        let mut counts: Vec<u32> = f.values().map(|x| x.count).collect();
        counts.sort_unstable();
        assert_eq!(counts, [1, 2]);
    }

    #[test]
    fn shingles_add_features() {
        let c = only_words();
        let text = "alpha beta gamma delta";
        assert_eq!(count(&c, text), 4);
        assert_eq!(count(&c.clone().with_word_shingles(2), text), 4 + 3);
        assert_eq!(
            count(&c.clone().with_words(false).with_word_shingles(2), text),
            3
        );
        assert_eq!(
            count(&c.clone().with_words(false).with_word_shingles(8), text),
            1
        );
        // "ab" + "cd" (the stop word "the" dropped) -> abc, bcd
        assert_eq!(
            count(
                &c.clone().with_words(false).with_word_char_shingles(3),
                "ab, the cd"
            ),
            2
        );
        // 数据库的数据 -> 数据库数据 (的 dropped) -> 数据 据库 库数 (数据 twice)
        assert_eq!(
            count(
                &c.clone().with_words(false).with_cjk_char_shingles(2),
                "数据库的数据"
            ),
            3
        );
    }

    #[test]
    fn character_shingles_ignore_line_breaks_inside_words() {
        let c = SimhashConfig::default().with_words(false);
        let mut a = Features::default();
        let mut b = Features::default();
        extract(&c, "install the macos\npackage 安装\n软件包", &mut a);
        extract(&c, "install the macospackage 安装软件包", &mut b);
        let mut ka: Vec<_> = a.keys().collect();
        let mut kb: Vec<_> = b.keys().collect();
        ka.sort();
        kb.sort();
        assert_eq!(ka, kb);
    }

    #[test]
    fn idf_weights_chinese_words() {
        let c = only_words().with_idf(IdfWeighting::Jieba);
        let mut f = Features::default();
        extract(&c, "劳动防护", &mut f);
        let idf: Vec<f32> = f.values().map(|x| x.idf).collect();
        assert_eq!(idf.len(), 1);
        assert!((idf[0] - 13.9).abs() < 0.01, "{idf:?}");
        extract(&c.with_idf(IdfWeighting::None), "劳动防护", &mut f);
        assert!(f.values().all(|x| x.idf == 1.0));
    }
}
