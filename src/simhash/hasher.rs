//! [`Simhasher`]: text or weighted features -> [`Fingerprint`].

use std::sync::Arc;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::config::{SimhashConfig, TfScaling};
use super::features::{extract, Features, Sink};
use super::seeded::SeedHashes;
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;

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
        let Inner { config, seeds } = &*self.inner;
        if config.tf == TfScaling::Raw {
            // A weight linear in the count is the sum of one weight per occurrence: no need
            // to count first.
            let mut sums = Sums::default();
            extract(config, seeds, text, &mut sums);
            return Ok((sums.fingerprint()?, sums.occurrences()));
        }
        let mut features = Features::default();
        // About one feature per character or two: reserve once instead of rehashing.
        features.reserve(text.len() / 3 + 16);
        extract(config, seeds, text, &mut features);
        let mut sums = Sums::default();
        // Weighted features are summed in hash order, so that the result does not depend
        // on the map's iteration order.
        let mut weighted: Vec<(u64, f64)> = features
            .iter()
            .map(|(&hash, f)| (hash, config.tf.apply(f.count) * f64::from(f.idf)))
            .collect();
        weighted.sort_unstable_by_key(|&(hash, _)| hash);
        for (hash, weight) in weighted {
            sums.add_weighted(hash, weight);
        }
        let occurrences = features.values().map(|f| f.count as usize).sum();
        Ok((sums.fingerprint()?, occurrences))
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

/// The per-bit weighted sums of SimHash: bit `i` of the fingerprint is set when the weights
/// of the features whose hash has bit `i` set outweigh those whose hash has it clear.
///
/// Features of weight exactly 1 (every feature under the default configuration) take a fast
/// path: per bit position, a count of the hashes with that bit set, kept as 8-bit lanes of
/// `lanes[j]` for bits `8j..8j + 8` and added a byte of the hash at a time from [`SPREAD`],
/// instead of 64 floating-point operations per feature. Their contribution,
/// `2 * ones - units`, is an exact integer, so the result does not depend on the order of
/// the features.
struct Sums {
    /// Sums of the features with weights other than 1.
    sums: [f64; 64],
    /// Per bit, 8-bit counts of set bits among the unit-weight hashes not yet in `ones`.
    lanes: [u64; 8],
    /// Unit-weight hashes added to `lanes` since the last flush (at most 255).
    pending: u32,
    /// Per bit, the number of flushed unit-weight hashes with that bit set.
    ones: [u64; 64],
    /// Unit-weight hashes added in all.
    units: u64,
    /// Features added with a weight other than 1, positive.
    weighted: usize,
    /// Feature occurrences added with a weight that is not positive.
    ignored: usize,
}

impl Default for Sums {
    fn default() -> Self {
        Sums {
            sums: [0.0; 64],
            lanes: [0; 8],
            pending: 0,
            ones: [0; 64],
            units: 0,
            weighted: 0,
            ignored: 0,
        }
    }
}

impl Sums {
    #[inline]
    fn add_weighted(&mut self, hash: u64, weight: f64) {
        if weight == 1.0 {
            self.add_unit(hash);
            return;
        }
        if weight <= 0.0 || !weight.is_finite() {
            self.ignored += 1;
            return;
        }
        self.weighted += 1;
        // Byte j of the hash adds `weight * SIGNS[byte]` to bits 8j..8j+8: eight contiguous
        // lanes, which the compiler vectorizes.
        for (j, lanes) in self.sums.chunks_exact_mut(8).enumerate() {
            let signs = &SIGNS[((hash >> (8 * j)) & 0xff) as usize];
            for (sum, sign) in lanes.iter_mut().zip(signs) {
                *sum += weight * sign;
            }
        }
    }

    #[inline]
    fn add_unit(&mut self, hash: u64) {
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            // No lane overflows: each gains at most 1 per hash, and they are flushed at 255.
            *lane += SPREAD[((hash >> (8 * j)) & 0xff) as usize];
        }
        self.units += 1;
        self.pending += 1;
        if self.pending == 255 {
            self.flush();
        }
    }

    /// Moves the 8-bit lane counts into `ones`.
    fn flush(&mut self) {
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            for (k, ones) in self.ones.iter_mut().skip(8 * j).take(8).enumerate() {
                *ones += (*lane >> (8 * k)) & 0xff;
            }
            *lane = 0;
        }
        self.pending = 0;
    }

    /// Feature occurrences added, whatever their weight.
    fn occurrences(&self) -> usize {
        self.units as usize + self.weighted + self.ignored
    }

    /// # Errors
    /// [`Error::NoFeatures`] if no feature had a positive weight.
    fn fingerprint(&mut self) -> Result<Fingerprint> {
        if self.units == 0 && self.weighted == 0 {
            return Err(Error::NoFeatures);
        }
        self.flush();
        let mut v = 0u64;
        for (bit, (sum, ones)) in self.sums.iter().zip(&self.ones).enumerate() {
            // Exact in f64 below 2^53 unit features.
            let units = 2.0 * *ones as f64 - self.units as f64;
            if sum + units > 0.0 {
                v |= 1 << bit;
            }
        }
        Ok(Fingerprint(v))
    }
}

/// `SPREAD[b]` has byte `k` equal to bit `k` of `b`: one byte's bits as eight 8-bit lanes.
static SPREAD: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 8 {
            table[b] |= (((b >> k) & 1) as u64) << (8 * k);
            k += 1;
        }
        b += 1;
    }
    table
};

impl Sink for Sums {
    #[inline]
    fn add(&mut self, hash: u64, idf: impl FnOnce() -> f64) {
        self.add_weighted(hash, idf());
    }

    /// The unit-weight fast path over a batch: the lane counts stay in registers for up
    /// to 255 hashes at a time.
    fn add_units(&mut self, hashes: &[u64]) {
        self.flush();
        for chunk in hashes.chunks(255) {
            let mut lanes = [0u64; 8];
            for &hash in chunk {
                for (j, lane) in lanes.iter_mut().enumerate() {
                    *lane += SPREAD[((hash >> (8 * j)) & 0xff) as usize];
                }
            }
            self.lanes = lanes;
            self.flush();
        }
        self.units += hashes.len() as u64;
    }
}

/// `SIGNS[b][k]` is `+1.0` if bit `k` of the byte `b` is set, else `-1.0`.
static SIGNS: [[f64; 8]; 256] = {
    let mut table = [[0f64; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 8 {
            table[b][k] = if (b >> k) & 1 == 1 { 1.0 } else { -1.0 };
            k += 1;
        }
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_fast_path_matches_float_path() {
        let mut rng = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for n in [1usize, 2, 3, 10, 1000, 70_000] {
            let hashes: Vec<u64> = (0..n).map(|_| next()).collect();
            let mut fast = Sums::default();
            let mut slow = [0f64; 64];
            for &h in &hashes {
                fast.add_weighted(h, 1.0);
                for (bit, s) in slow.iter_mut().enumerate() {
                    *s += if (h >> bit) & 1 == 1 { 1.0 } else { -1.0 };
                }
            }
            let expected =
                slow.iter()
                    .enumerate()
                    .fold(0u64, |v, (bit, s)| if *s > 0.0 { v | 1 << bit } else { v });
            assert_eq!(
                fast.fingerprint().unwrap(),
                Fingerprint(expected),
                "{n} hashes"
            );
            // Mixed with weighted features.
            fast.add_weighted(hashes[0], 2.5);
            let mut mixed = slow;
            for (bit, s) in mixed.iter_mut().enumerate() {
                *s += if (hashes[0] >> bit) & 1 == 1 {
                    2.5
                } else {
                    -2.5
                };
            }
            let expected =
                mixed
                    .iter()
                    .enumerate()
                    .fold(0u64, |v, (bit, s)| if *s > 0.0 { v | 1 << bit } else { v });
            assert_eq!(
                fast.fingerprint().unwrap(),
                Fingerprint(expected),
                "{n} hashes, mixed"
            );
        }
    }

    #[test]
    fn batch_matches_one_at_a_time() {
        let mut rng = 0x0ddc_0ffe_e0dd_f00du64;
        let hashes: Vec<u64> = (0..1000)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng
            })
            .collect();
        for n in [0usize, 1, 254, 255, 256, 1000] {
            let mut one = Sums::default();
            let mut batch = Sums::default();
            for &h in &hashes[..3] {
                one.add_weighted(h, 1.0);
                batch.add_weighted(h, 1.0);
            }
            for &h in &hashes[..n] {
                one.add_weighted(h, 1.0);
            }
            batch.add_units(&hashes[..n]);
            assert_eq!(one.occurrences(), batch.occurrences(), "{n}");
            assert_eq!(
                one.fingerprint().unwrap(),
                batch.fingerprint().unwrap(),
                "{n}"
            );
        }
    }

    #[test]
    fn spread_table_matches_bits() {
        for (b, spread) in SPREAD.iter().enumerate() {
            for k in 0..8 {
                assert_eq!((spread >> (8 * k)) & 0xff, ((b >> k) & 1) as u64);
            }
        }
    }

    #[test]
    fn sign_table_matches_bits() {
        for (b, signs) in SIGNS.iter().enumerate() {
            for (k, &sign) in signs.iter().enumerate() {
                assert_eq!(sign > 0.0, (b >> k) & 1 == 1);
            }
        }
    }

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
        // With the default trigrams of "serverclientserver" too.
        let (_, n) = Simhasher::default()
            .fingerprint_with_count("server client server")
            .unwrap();
        assert_eq!(n, 3 + 16);
        // Other TF scalings count the same way.
        let log = Simhasher::new(SimhashConfig::default().with_tf(TfScaling::Log)).unwrap();
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
}
