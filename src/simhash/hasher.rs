//! [`Simhasher`]: text or weighted features -> [`Fingerprint`].

use std::sync::Arc;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::config::{IdfWeighting, SimhashConfig, TfScaling};
use super::features::count_pieces::PieceGrid;
use super::features::extract::extract_observing;
use super::features::feature_map::Features;
use super::features::seed_hashes::SeedHashes;
use super::sums::{feature_weights, PieceSums, Sums};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;

/// The most distinct features [`Simhasher::fingerprint_with_count`] reserves room for.
const MAX_RESERVED_FEATURES: usize = 1 << 14;

/// Computes 64-bit SimHash fingerprints of texts under one [`SimhashConfig`].
///
/// Cheap to clone (the configuration is shared) and `Send + Sync`: one hasher can serve
/// every thread. The jieba dictionary and the IDF table are loaded once per process, on the
/// first fingerprint.
///
/// ```
/// use simhash_store::{Error, Simhasher};
/// let hasher = Simhasher::default();
/// let a = hasher.fingerprint("PostgreSQL 使用多版本并发控制（MVCC）来保证数据一致性，读不阻塞写。")?;
/// let b = hasher.fingerprint("PostgreSQL使用多版本并发控制(MVCC)来保证数据一致性, 读不阻塞写.")?;
/// assert_eq!(a.distance(b), 0); // punctuation and spacing are not features
/// assert!(matches!(hasher.fingerprint("，。！"), Err(Error::NoFeatures)));
/// # Ok::<_, simhash_store::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Simhasher {
    inner: Arc<Inner>,
}

/// What a hasher shares between its clones.
#[derive(Debug)]
struct Inner {
    config: SimhashConfig,
    seeds: SeedHashes,
}

impl Default for Simhasher {
    /// A hasher with the default configuration.
    fn default() -> Self {
        Simhasher::from_valid(SimhashConfig::default())
    }
}

impl Simhasher {
    /// A hasher for `config`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the configuration has no kind of feature or a shingle
    /// size out of range (see [`SimhashConfig::validate`]).
    pub fn new(config: SimhashConfig) -> Result<Simhasher> {
        config.validate()?;
        Ok(Simhasher::from_valid(config))
    }

    fn from_valid(config: SimhashConfig) -> Simhasher {
        let seeds = SeedHashes::new(config.seed);
        Simhasher {
            inner: Arc::new(Inner { config, seeds }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &SimhashConfig {
        &self.inner.config
    }

    /// The hashes of the configuration's seed (the sketch hashes its tokens with them).
    pub(crate) fn seed_hashes(&self) -> &SeedHashes {
        &self.inner.seeds
    }

    /// The fingerprint of `text`.
    ///
    /// # Errors
    /// [`Error::NoFeatures`] if the text has no feature: it is empty or holds only
    /// whitespace, punctuation and stop words.
    pub fn fingerprint(&self, text: &str) -> Result<Fingerprint> {
        self.fingerprint_with_count(text).map(|(fp, _)| fp)
    }

    /// The fingerprint of `text` and its number of features, counted with repeats (a word
    /// that occurs three times counts three times; each character shingle counts). A small
    /// count means a fingerprint that says little: texts with a handful of features collide
    /// easily.
    ///
    /// # Errors
    /// [`Error::NoFeatures`] if the text has no feature.
    pub fn fingerprint_with_count(&self, text: &str) -> Result<(Fingerprint, usize)> {
        self.fingerprint_observing(text, &mut |_| ())
    }

    /// [`fingerprint_with_count`](Self::fingerprint_with_count), also handing `observe` each
    /// chunk of the normalized text (boilerplate lines dropped), in order: what a sketch is
    /// made of, in the fingerprint's pass.
    pub(crate) fn fingerprint_observing(
        &self,
        text: &str,
        observe: &mut impl FnMut(&str),
    ) -> Result<(Fingerprint, usize)> {
        let Inner { config, seeds } = &*self.inner;
        let no_idf = config.idf == IdfWeighting::None;
        let grid = PieceGrid::of(config.latin_count_pieces, config.latin_count_pieces_ratio);
        match (config.tf, grid) {
            (TfScaling::Raw, None) => {
                // A weight linear in the count is the sum of one weight per occurrence: no
                // need to count first.
                let mut sums = Sums::default();
                extract_observing(config, seeds, text, &mut sums, observe);
                Ok((sums.fingerprint()?, sums.occurrences()))
            }
            (TfScaling::Raw, Some(grid)) if no_idf => {
                // The default: raw sums, plus counts of the non-CJK features only
                // (`sums/piece_sums.rs`).
                let mut sums = PieceSums::new(text.len(), grid, config.seed);
                extract_observing(config, seeds, text, &mut sums, observe);
                sums.fingerprint()
            }
            _ => self.fingerprint_through_map(text, observe),
        }
    }

    /// [`fingerprint_with_count`](Self::fingerprint_with_count) through a map of the text's
    /// distinct features, each weighed once (`sums/feature_weights.rs`): every configuration
    /// goes this way but the ones with a faster path of their own, which must agree with it.
    fn fingerprint_through_map(
        &self,
        text: &str,
        observe: &mut impl FnMut(&str),
    ) -> Result<(Fingerprint, usize)> {
        let Inner { config, seeds } = &*self.inner;
        let mut features = Features::default();
        // About one feature per character or two, but far fewer distinct ones in a long
        // text: reserve for a short text's features, bounded so that a long one does not
        // get a map sized from its length.
        features.reserve((text.len() / 3).min(MAX_RESERVED_FEATURES) + 16);
        extract_observing(config, seeds, text, &mut features, observe);
        feature_weights::fingerprint(config, &features)
    }

    /// The fingerprint of features chosen and weighted by the caller: each feature string is
    /// hashed as it is (no normalization, no stop words) with the configured seed, and a
    /// feature given more than once has the sum of its weights.
    ///
    /// ```
    /// use simhash_store::Simhasher;
    /// let hasher = Simhasher::default();
    /// let a = hasher.fingerprint_features([("kernel", 2.0), ("panic", 1.0)])?;
    /// let b = hasher.fingerprint_features([("panic", 1.0), ("kernel", 1.0), ("kernel", 1.0)])?;
    /// assert_eq!(a, b);
    /// # Ok::<_, simhash_store::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::NoFeatures`] if there is no feature or every weight is zero;
    /// [`Error::InvalidArgument`] if a weight is negative or not finite.
    pub fn fingerprint_features<I, S>(&self, features: I) -> Result<Fingerprint>
    where
        I: IntoIterator<Item = (S, f64)>,
        S: AsRef<str>,
    {
        let mut sums: rustc_hash::FxHashMap<u64, f64> = Default::default();
        for (feature, weight) in features {
            let feature = feature.as_ref();
            if !weight.is_finite() || weight < 0.0 {
                return Err(Error::InvalidArgument(format!(
                    "feature {:?} has weight {weight}: weights must be finite and >= 0",
                    feature.chars().take(40).collect::<String>()
                )));
            }
            *sums
                .entry(xxh3_64_with_seed(
                    feature.as_bytes(),
                    self.inner.config.seed,
                ))
                .or_default() += weight;
        }
        let mut acc = Sums::default();
        for (hash, weight) in sums {
            acc.add_weighted(hash, weight);
        }
        acc.fingerprint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simhash::features::extract::extract;

    #[test]
    fn weights_decide_each_bit() {
        let h = Simhasher::default();
        let (a, b) = (xxh3_64_with_seed(b"a", 0), xxh3_64_with_seed(b"b", 0));
        // The heavier feature wins every bit where the two disagree.
        assert_eq!(
            h.fingerprint_features([("a", 2.0), ("b", 1.0)]).unwrap(),
            Fingerprint(a)
        );
        assert_eq!(
            h.fingerprint_features([("a", 1.0), ("b", 2.0)]).unwrap(),
            Fingerprint(b)
        );
        // A tie leaves a disputed bit clear.
        assert_eq!(
            h.fingerprint_features([("a", 1.0), ("b", 1.0)]).unwrap(),
            Fingerprint(a & b)
        );
    }

    #[test]
    fn single_feature_fingerprint_is_its_hash() {
        let h = Simhasher::default();
        let fp = h.fingerprint_features([("kernel", 1.0)]).unwrap();
        assert_eq!(fp, Fingerprint(xxh3_64_with_seed(b"kernel", 0)));
    }

    #[test]
    fn no_features_and_zero_weights_are_errors() {
        let h = Simhasher::default();
        let none: [(&str, f64); 0] = [];
        assert!(matches!(
            h.fingerprint_features(none),
            Err(Error::NoFeatures)
        ));
        assert!(matches!(
            h.fingerprint_features([("a", 0.0), ("b", 0.0)]),
            Err(Error::NoFeatures)
        ));
        assert!(matches!(
            h.fingerprint_features([("a", -1.0)]),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            h.fingerprint_features([("a", f64::NAN)]),
            Err(Error::InvalidArgument(_))
        ));
        for text in ["", "  \n\t ", "，。！？……——", "的了是", "the of and"] {
            assert!(
                matches!(h.fingerprint(text), Err(Error::NoFeatures)),
                "{text:?}"
            );
        }
    }

    #[test]
    fn count_is_occurrences() {
        let words = SimhashConfig::default()
            .with_cjk_char_shingles(0)
            .with_word_char_shingles(0);
        let h = Simhasher::new(words).unwrap();
        let (_, n) = h.fingerprint_with_count("server client server").unwrap();
        assert_eq!(n, 3);
        // With the default trigrams of each word too (4 + 4 + 4), and pieces (which do not
        // change the count).
        let (_, n) = Simhasher::default()
            .fingerprint_with_count("server client server")
            .unwrap();
        assert_eq!(n, 3 + 12);
        // Across words: the trigrams of "serverclientserver".
        let across = SimhashConfig::default().with_word_char_shingles_within_words(false);
        let (_, n) = Simhasher::new(across.clone())
            .unwrap()
            .fingerprint_with_count("server client server")
            .unwrap();
        assert_eq!(n, 3 + 16);
        // Other TF scalings count the same way.
        let log = Simhasher::new(across.with_tf(TfScaling::Log)).unwrap();
        assert_eq!(
            log.fingerprint_with_count("server client server")
                .unwrap()
                .1,
            3 + 16
        );
    }

    #[test]
    fn new_validates() {
        let bad = SimhashConfig::default()
            .with_words(false)
            .with_cjk_char_shingles(0)
            .with_word_char_shingles(0);
        assert!(matches!(
            Simhasher::new(bad),
            Err(Error::InvalidArgument(_))
        ));
        let h = Simhasher::new(SimhashConfig::default().with_seed(3)).unwrap();
        assert_eq!(h.config().seed, 3);
    }

    #[test]
    fn is_send_sync_and_cheap_to_clone() {
        fn check<T: Send + Sync + Clone>() {}
        check::<Simhasher>();
        let a = Simhasher::default();
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.inner, &b.inner));
    }

    /// Tokens that random test texts are made of: Chinese words and stop characters, Latin
    /// words and stop words, punctuation, whitespace, digits, full-width letters.
    const MIXED_TOKENS: [&str; 22] = [
        "数据库",
        "备份",
        "恢复",
        "服务器",
        "的",
        "了",
        "查询",
        "索引",
        "PostgreSQL",
        "backup",
        "restore",
        "the",
        "server",
        "index",
        "query",
        "vacuum",
        "，",
        "。",
        " ",
        "\n",
        "12",
        "ＡＢＣ",
    ];

    /// A xorshift generator from `state` (not 0): `next(n)` is in `0..n`.
    fn xorshift(mut state: u64) -> impl FnMut(usize) -> usize {
        move |n| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        }
    }

    /// Under raw TF without count pieces (and without IDF, whose weights are not whole
    /// numbers) the occurrences go straight to the bit sums: exactly the fingerprint and the
    /// count of the map path, for texts short and long and every kind of feature.
    #[test]
    fn raw_tf_path_matches_the_map_path() {
        let vocabulary: Vec<&str> = MIXED_TOKENS.iter().copied().chain(["Ωμέγα"]).collect();
        let mut next = xorshift(0x0bad_5eed_1234_5678);
        let mut texts = 0;
        let configs = [
            SimhashConfig::default().with_latin_count_pieces(0),
            SimhashConfig::release_default(3).unwrap(),
            SimhashConfig::default()
                .with_latin_count_pieces(0)
                .with_word_shingles(3)
                .with_cjk_char_shingles(2),
        ];
        for config in configs {
            let hasher = Simhasher::new(config).unwrap();
            for round in 0..100 {
                let len = [3, 12, 60, 400, 3000][round % 5];
                let text: String = (0..len)
                    .map(|_| vocabulary[next(vocabulary.len())])
                    .collect();
                let Ok(fast) = hasher.fingerprint_with_count(&text) else {
                    continue;
                };
                assert_eq!(
                    hasher.fingerprint_through_map(&text, &mut |_| ()).unwrap(),
                    fast,
                    "{text:?}"
                );
                texts += 1;
            }
        }
        assert!(texts > 250, "{texts}");
    }

    /// The fast path of count pieces under raw TF (raw sums of the CJK features, and each
    /// non-CJK feature's pieces added from a count table at the end) gives exactly the
    /// fingerprint of the map path, which weighs every piece of every feature, for grids of
    /// every shape; and pieces change fingerprints only through the features that reach
    /// `base`.
    #[test]
    fn count_pieces_fast_path_matches_the_map_path() {
        let vocabulary: Vec<&str> = MIXED_TOKENS.iter().copied().chain(["Ωμέγα"]).collect();
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let (mut texts, mut moved) = (0, 0);
        for (base, ratio) in [(2u8, 0u8), (4, 0), (8, 0), (4, 2), (3, 5)] {
            let config = SimhashConfig::default()
                .with_latin_count_pieces(base)
                .with_latin_count_pieces_ratio(ratio);
            let hasher = Simhasher::new(config.clone()).unwrap();
            let without = Simhasher::new(config.with_latin_count_pieces(0)).unwrap();
            for round in 0..150 {
                let len = [3, 12, 60, 400, 3000][round % 5];
                let text: String = (0..len)
                    .map(|_| vocabulary[next(vocabulary.len())])
                    .collect();
                let Ok(fast) = hasher.fingerprint_with_count(&text) else {
                    continue;
                };
                assert_eq!(
                    hasher.fingerprint_through_map(&text, &mut |_| ()).unwrap(),
                    fast,
                    "{text:?}"
                );
                texts += 1;
                moved += usize::from(without.fingerprint(&text).unwrap() != fast.0);
            }
            // A Latin word seen fewer than `base` times: the pieces change nothing.
            let few = "backup 数据库 ".repeat(usize::from(base) - 1);
            assert_eq!(
                hasher.fingerprint(&few).unwrap(),
                without.fingerprint(&few).unwrap()
            );
        }
        assert!(texts > 700, "{texts}");
        // Long texts repeat their words far beyond `base`: the option is not a no-op.
        assert!(moved * 3 > texts, "{moved} of {texts} moved");
    }

    /// The fast path adds a piece of up to 64 occurrences as that many unit occurrences and a
    /// bigger one as a weighted correction: both agree with the map path, on either side of
    /// that limit and far beyond it.
    #[test]
    fn count_pieces_fast_path_matches_the_map_path_for_big_pieces() {
        for (base, ratio) in [(4u8, 2u8), (4, 0), (16, 16)] {
            let config = SimhashConfig::default()
                .with_latin_count_pieces(base)
                .with_latin_count_pieces_ratio(ratio);
            let hasher = Simhasher::new(config).unwrap();
            // With (4, 2), "vacuum" seen 127 times ends with a piece of 64 occurrences
            // (64-127), 128 and 129 times add one and two in the next, and 1000 times holds
            // pieces of 128, 256 and 489.
            for repeats in [63, 64, 65, 127, 128, 129, 300, 1000, 5000] {
                let text = format!("数据库备份 {} index", "vacuum ".repeat(repeats));
                let fast = hasher.fingerprint_with_count(&text).unwrap();
                let map = hasher.fingerprint_through_map(&text, &mut |_| ()).unwrap();
                assert_eq!(fast, map, "base {base} ratio {ratio}, {repeats} repeats");
            }
        }
    }

    /// The ratio moves the fingerprints of texts whose Latin features are seen `base · ratio`
    /// times or more, and only those.
    #[test]
    fn the_count_pieces_ratio_matters_from_base_times_ratio() {
        let fingerprint = |ratio: u8, text: &str| {
            let config = SimhashConfig::default().with_latin_count_pieces_ratio(ratio);
            Simhasher::new(config).unwrap().fingerprint(text).unwrap()
        };
        let words = "vacuum index tuple freeze ";
        // Seen 7 times: pieces 1-3 and 4-7 under either ratio.
        let seven = words.repeat(7);
        assert_eq!(fingerprint(2, &seven), fingerprint(0, &seven));
        assert_eq!(fingerprint(2, &seven), fingerprint(4, &seven));
        // Seen 12 times: 1-3, 4-7, 8-12 with ratio 2; 1-3, 4-12 with ratio 4.
        let twelve = words.repeat(12);
        assert_ne!(fingerprint(2, &twelve), fingerprint(0, &twelve));
        assert_eq!(fingerprint(4, &twelve), fingerprint(0, &twelve));
    }

    /// `LengthAdaptive` gives the fingerprint of the weights `count^a` computed the plain way:
    /// every bit agrees, except where the plain sum is within rounding of zero.
    #[test]
    fn length_adaptive_matches_the_plain_weights() {
        let config = SimhashConfig::default()
            .with_tf(TfScaling::LengthAdaptive)
            .with_latin_count_pieces(0);
        let hasher = Simhasher::new(config).unwrap();
        let Inner { config, seeds } = &*hasher.inner;
        let vocabulary = MIXED_TOKENS;
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let (mut texts, mut bits, mut near_zero) = (0, 0, 0);
        for _ in 0..400 {
            // Short and long texts, so that the exponent spans its range.
            let len = [5, 40, 300, 2000, 8000][next(5)];
            let text: String = (0..len)
                .map(|_| vocabulary[next(vocabulary.len())])
                .collect();
            let Ok((fast, occurrences)) = hasher.fingerprint_with_count(&text) else {
                continue;
            };
            let mut features = Features::default();
            extract(config, seeds, &text, &mut features);
            let n: u64 = features.values().map(|f| u64::from(f.count)).sum();
            assert_eq!(n as usize, occurrences);
            let mut sums = [0f64; 64];
            for (&hash, f) in &features {
                let w = TfScaling::LengthAdaptive.apply(f.count, n);
                for (bit, sum) in sums.iter_mut().enumerate() {
                    *sum += if hash >> bit & 1 == 1 { w } else { -w };
                }
            }
            texts += 1;
            for (bit, sum) in sums.iter().enumerate() {
                bits += 1;
                if sum.abs() < 1e-6 {
                    near_zero += 1;
                    continue;
                }
                assert_eq!(
                    fast.0 >> bit & 1 == 1,
                    *sum > 0.0,
                    "bit {bit}, sum {sum}: {text:?}"
                );
            }
        }
        assert!(texts > 300, "{texts}");
        // Ties come from the shortest texts (a handful of features); the check must not be
        // vacuous.
        assert!(
            near_zero * 20 < bits,
            "{near_zero} of {bits} bits near zero"
        );
    }
}
