//! A text's [`Sketch`] by one-permutation b-bit MinHash (Li, Owen and Zhang 2012; b-bit codes,
//! Li and König 2010) with optimal densification (Shrivastava 2017) over the text's token
//! bigrams. Chosen on the labelled development set (`docs/guide.md`, "Verified
//! near-duplicates"); the reference definition it reproduces is written out in
//! [`SketchKind::MinHash`](super::SketchKind::MinHash).
//!
//! 1. **Text**: what the fingerprint reads: without boilerplate lines when the configuration
//!    drops them, normalized as the fingerprint normalizes (lowercase, and with `normalize`
//!    the fold of full-width forms, ligatures and look-alike letters).
//! 2. **Tokens**: every ideograph alone; every maximal run of other word characters (letters,
//!    digits, `_` and the combining marks U+0300..U+036F); everything else only separates.
//!    No jieba, no stop words.
//! 3. **Shingles**: every pair of consecutive tokens, as `token ++ " " ++ next`, across lines
//!    and punctuation; a text of one token has that token as its only shingle, a text of none
//!    has none. They form a set: a repeated shingle changes nothing.
//! 4. **Hash**: xxh3-64 of the shingle with seed `seed ^ SKETCH_SALT`.
//! 5. **Bins**: bin `h >> 55` (the top 9 bits of 512 bins) keeps the smallest hash it gets;
//!    its code is that hash's lowest bit.
//! 6. **Densification**: an empty bin `j` takes the minimum of bin `probe(j, a)` for the first
//!    attempt `a = 0, 1, ...` that lands on a non-empty bin, where `probe(j, a)` is xxh3-64 of
//!    `le_u32(j) ++ le_u32(a)` with seed `seed ^ PROBE_SALT`, modulo 512. Two texts whose
//!    shingle sets agree agree on empty bins too. No shingle: every code 0.
//! 7. **Layout**: code `j` is bit `j % 8` of byte `j / 8`.
//!
//! Two codes are equal with probability `J + (1 - J) / 2` for the Jaccard similarity `J` of
//! the shingle sets, so `1 - D / 256` estimates `J` from the number `D` of differing bits.

use std::borrow::Cow;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::{Sketch, SKETCH_BYTES};
use crate::simhash::{drop_lines, is_cjk, normalize_into, SimhashConfig};

/// Codes per sketch (a power of two).
pub(crate) const SKETCH_BINS: usize = 512;
/// Bits per code (1, 2, 4 or 8).
pub(crate) const SKETCH_BITS: usize = 1;
/// Salts of the two seeds, so that the sketch's hashes are not the fingerprint's
/// (`b"sketch21"` and `b"probes21"` as big-endian `u64`s).
const SKETCH_SALT: u64 = 0x736B_6574_6368_3231;
const PROBE_SALT: u64 = 0x7072_6F62_6573_3231;
/// Attempts of the densification before an empty bin takes the first non-empty bin's code
/// (reached with probability below `(511/512)^65536`, about 1e-56, with one bin filled).
const MAX_PROBES: u32 = 1 << 16;

const _: () = assert!(SKETCH_BINS.is_power_of_two() && matches!(SKETCH_BITS, 1 | 2 | 4 | 8));
const BIN_SHIFT: u32 = 64 - SKETCH_BINS.trailing_zeros();
const CODE_MASK: u64 = (1 << SKETCH_BITS) - 1;
const CODES_PER_BYTE: usize = 8 / SKETCH_BITS;

/// Whether `c` (normalized) belongs to a token of letters and digits.
#[inline]
fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        c.is_alphanumeric() || ('\u{300}'..='\u{36f}').contains(&c)
    }
}

/// The smallest hash per bin, and which bins have one.
struct Bins {
    mins: [u64; SKETCH_BINS],
    filled: [u64; SKETCH_BINS / 64],
}

impl Bins {
    fn new() -> Bins {
        Bins {
            mins: [u64::MAX; SKETCH_BINS],
            filled: [0; SKETCH_BINS / 64],
        }
    }

    #[inline]
    fn add(&mut self, h: u64) {
        let bin = (h >> BIN_SHIFT) as usize;
        self.filled[bin / 64] |= 1 << (bin % 64);
        if h < self.mins[bin] {
            self.mins[bin] = h;
        }
    }

    #[inline]
    fn is_filled(&self, bin: usize) -> bool {
        self.filled[bin / 64] & (1 << (bin % 64)) != 0
    }

    fn any(&self) -> bool {
        self.filled.iter().any(|&w| w != 0)
    }
}

/// A sketch being made from a normalized text handed over in pieces that never cut a token
/// (the fingerprint's chunks, `simhash/text/chunks.rs`: a chunk starts at punctuation or
/// whitespace), so that it is made in the fingerprint's pass.
pub(super) struct SketchBuilder {
    bins: Bins,
    /// `seed ^ SKETCH_SALT` and `seed ^ PROBE_SALT`.
    shingle_seed: u64,
    probe_seed: u64,
    /// The last token completed (owned: the chunk it came from is gone by the next one).
    previous: String,
    /// Tokens completed.
    tokens: usize,
    /// The shingle's bytes.
    buf: Vec<u8>,
}

impl SketchBuilder {
    /// A builder for the sketch with hash seed `seed` (the configuration's).
    pub(super) fn new(seed: u64) -> SketchBuilder {
        SketchBuilder {
            bins: Bins::new(),
            shingle_seed: seed ^ SKETCH_SALT,
            probe_seed: seed ^ PROBE_SALT,
            previous: String::new(),
            tokens: 0,
            buf: Vec::with_capacity(64),
        }
    }

    /// Adds the shingles of the next piece of the normalized text.
    pub(super) fn feed(&mut self, norm: &str) {
        // Where the current run of word characters started, if in one.
        let mut run: Option<usize> = None;
        for (i, c) in norm.char_indices() {
            if is_cjk(c) {
                if let Some(start) = run.take() {
                    self.token(norm.get(start..i).unwrap_or_default());
                }
                self.token(norm.get(i..i + c.len_utf8()).unwrap_or_default());
            } else if is_word_char(c) {
                run.get_or_insert(i);
            } else if let Some(start) = run.take() {
                self.token(norm.get(start..i).unwrap_or_default());
            }
        }
        if let Some(start) = run {
            self.token(norm.get(start..).unwrap_or_default());
        }
    }

    #[inline]
    fn token(&mut self, token: &str) {
        if self.tokens > 0 {
            self.buf.clear();
            self.buf.extend_from_slice(self.previous.as_bytes());
            self.buf.push(b' ');
            self.buf.extend_from_slice(token.as_bytes());
            self.bins.add(xxh3_64_with_seed(&self.buf, self.shingle_seed));
        }
        self.previous.clear();
        self.previous.push_str(token);
        self.tokens += 1;
    }

    /// The sketch of the text fed.
    pub(super) fn finish(mut self) -> Sketch {
        if self.tokens == 1 {
            let only = xxh3_64_with_seed(self.previous.as_bytes(), self.shingle_seed);
            self.bins.add(only);
        }
        let bins = &self.bins;
        let mut codes = [0u8; SKETCH_BINS];
        if bins.any() {
            for (j, code) in codes.iter_mut().enumerate() {
                let from = if bins.is_filled(j) {
                    j
                } else {
                    (0..MAX_PROBES)
                        .map(|a| {
                            let mut key = [0u8; 8];
                            key[..4].copy_from_slice(&(j as u32).to_le_bytes());
                            key[4..].copy_from_slice(&a.to_le_bytes());
                            (xxh3_64_with_seed(&key, self.probe_seed) % SKETCH_BINS as u64)
                                as usize
                        })
                        .find(|&k| bins.is_filled(k))
                        .unwrap_or_else(|| {
                            (0..SKETCH_BINS).find(|&k| bins.is_filled(k)).unwrap_or(j)
                        })
                };
                *code = (bins.mins[from] & CODE_MASK) as u8;
            }
        }
        Sketch(pack(&codes))
    }
}

/// The sketch of `text` under `config` (its boilerplate filter, normalization and seed), in
/// a pass of its own.
pub(super) fn sketch(text: &str, config: &SimhashConfig) -> Sketch {
    let text = if config.drop_boilerplate {
        drop_lines(text)
    } else {
        Cow::Borrowed(text)
    };
    let mut norm = String::new();
    normalize_into(&text, config.normalize, &mut norm);
    of_normalized(&norm, config.seed)
}

/// The sketch of a text already filtered and normalized.
fn of_normalized(norm: &str, seed: u64) -> Sketch {
    let mut builder = SketchBuilder::new(seed);
    builder.feed(norm);
    builder.finish()
}

/// Packs `BINS` codes of `BITS` bits into bytes, code `j` at bits `(j % per_byte) * BITS` of
/// byte `j / per_byte`.
fn pack(codes: &[u8; SKETCH_BINS]) -> [u8; SKETCH_BYTES] {
    let mut out = [0u8; SKETCH_BYTES];
    for (j, &c) in codes.iter().enumerate() {
        out[j / CODES_PER_BYTE] |= (c & CODE_MASK as u8) << ((j % CODES_PER_BYTE) * SKETCH_BITS);
    }
    out
}

/// How many codes of `a` and `b` are equal.
#[inline]
pub(super) fn equal_codes(a: &[u8; SKETCH_BYTES], b: &[u8; SKETCH_BYTES]) -> u32 {
    if SKETCH_BITS == 1 {
        let differing: u32 = a
            .chunks_exact(8)
            .zip(b.chunks_exact(8))
            .map(|(x, y)| {
                let word = |c: &[u8]| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
                (word(x) ^ word(y)).count_ones()
            })
            .sum();
        return SKETCH_BINS as u32 - differing;
    }
    let mut equal = 0;
    for (x, y) in a.iter().zip(b) {
        let d = x ^ y;
        for i in 0..CODES_PER_BYTE {
            equal += u32::from((d >> (i * SKETCH_BITS)) & CODE_MASK as u8 == 0);
        }
    }
    equal
}

/// The Jaccard similarity estimated from `equal` codes of `BINS`:
/// `(equal / BINS - 2^-BITS) / (1 - 2^-BITS)`, with one-bit codes `1 - D / 256` for `D`
/// differing bits (exact in `f64`).
#[inline]
pub(super) fn similarity_of(equal: u32) -> f64 {
    let chance = (-(SKETCH_BITS as f64)).exp2();
    (f64::from(equal) / SKETCH_BINS as f64 - chance) / (1.0 - chance)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition above, written out plainly over a normalized text: tokens, the set of
    /// bigrams, the minimum per bin, densification without a bound.
    fn reference(norm: &str, seed: u64) -> [u8; SKETCH_BINS] {
        let mut tokens: Vec<String> = Vec::new();
        let mut current = String::new();
        for c in norm.chars() {
            if is_cjk(c) || !is_word_char(c) {
                if !current.is_empty() {
                    tokens.push(std::mem::take(&mut current));
                }
                if is_cjk(c) {
                    tokens.push(c.to_string());
                }
            } else {
                current.push(c);
            }
        }
        if !current.is_empty() {
            tokens.push(current);
        }
        let shingles: std::collections::BTreeSet<String> = match tokens.len() {
            1 => [tokens[0].clone()].into(),
            _ => tokens
                .windows(2)
                .map(|w| format!("{} {}", w[0], w[1]))
                .collect(),
        };
        let mut mins: Vec<Option<u64>> = vec![None; SKETCH_BINS];
        for s in &shingles {
            let h = xxh3_64_with_seed(s.as_bytes(), seed ^ SKETCH_SALT);
            let bin = (h >> 55) as usize;
            mins[bin] = Some(mins[bin].map_or(h, |m| m.min(h)));
        }
        let mut codes = [0u8; SKETCH_BINS];
        if shingles.is_empty() {
            return codes;
        }
        for (j, code) in codes.iter_mut().enumerate() {
            let (mut m, mut a) = (mins[j], 0u32);
            while m.is_none() {
                let key = [(j as u32).to_le_bytes(), a.to_le_bytes()].concat();
                m = mins[(xxh3_64_with_seed(&key, seed ^ PROBE_SALT) % 512) as usize];
                a += 1;
            }
            *code = (m.unwrap() & 1) as u8;
        }
        codes
    }

    fn sketch_default(text: &str, seed: u64) -> Sketch {
        sketch(text, &SimhashConfig::default().with_seed(seed))
    }

    #[test]
    fn equals_the_plain_definition() {
        for text in [
            "",
            "  ,. ",
            "ab",
            "one two",
            "The Quick, brown fox!\njumps over the lazy dog",
            "PostgreSQL 使用多版本并发控制（MVCC）来保证数据一致性，读不阻塞写。",
            "İstanbul ÉCOLE Straße ﬁne café",
            &"lorem ipsum dolor sit amet ".repeat(40),
        ] {
            for seed in [0, 7, u64::MAX] {
                let mut norm = String::new();
                normalize_into(text, true, &mut norm);
                assert_eq!(
                    of_normalized(&norm, seed).0,
                    pack(&reference(&norm, seed)),
                    "{text:?} {seed}"
                );
            }
        }
    }

    /// The test vectors of the definition's reference implementation (Python, in the study
    /// that chose it).
    #[test]
    fn equals_the_reference_vectors() {
        let zero = "00".repeat(64);
        let ones = "ff".repeat(64);
        for (text, seed, hex) in [
            ("", 0, zero.as_str()),
            ("Hello", 0, zero.as_str()),
            ("Hello, World!", 0, ones.as_str()),
            ("Hello, Wоrld!", 0, ones.as_str()),
            ("北京今天下雨了，气温比昨天低五度。", 0, "07d22616fed5ac2346947b03a7816d7a03a4402b6b989e818962f43cc2c228dc8c3b9da4a180e5a4788699e0aa4259be7f19b50d4b320f32ad97c30c80ac9be3"),
            ("北京今天下雨了，气温比昨天低五度。", 7, "644eb614434c82926da139242a631ed443bb61c213138791294e231d61f1dcc8eadc4c3e63805d883f0eae42318cfb85e4eb7c9380df7fed149b6443219cd4e4"),
            ("第 12 章 高级管理：ＲＡＩＤ 和 LVM", 0, "5542077114ea213191b5834f35cccf1e20024340a171e0298212802cba38c5541e212a2e6ae9bbf4b54cb044037d800eb453c08ce954bc999a91cf75e1b19201"),
            ("The quick brown fox jumps over the lazy dog near the river bank.", 0, "ead2b6bd3afaee27fd33274521c963e49fbd035f078179178ca5b9612fb3f419e0b9b5cb2911fae29efb2a49f7ba3e69d69fc7b6fbeef3fb9abcf75fbea69f79"),
        ] {
            assert_eq!(sketch_default(text, seed).to_string(), hex, "{text:?} seed {seed}");
        }
        let a = sketch_default(
            "The quick brown fox jumps over the lazy dog near the river bank.",
            0,
        );
        let b = sketch_default(
            "The quick brown fox jumped over the lazy dog near the river bank.",
            0,
        );
        assert_eq!(SKETCH_BINS as u32 - equal_codes(&a.0, &b.0), 67);
    }

    /// The sketch made in the fingerprint's pass, chunk by chunk, is the sketch of the whole
    /// text, for every path of the fingerprint and texts longer than a chunk.
    #[test]
    fn the_fingerprints_pass_gives_the_same_sketch() {
        use crate::{Simhasher, SketchKind, TfScaling};
        let zh = "PostgreSQL 使用多版本并发控制（MVCC）来保证数据一致性，读不阻塞写。\n";
        let en = "The quick brown fox jumps over the lazy dog, near_the river-bank 42 times.\n";
        let banner = "Share on Facebook | Tweet | Email\n";
        let texts = [
            String::new(),
            "one".into(),
            "一".into(),
            format!("{zh}{en}"),
            zh.repeat(700),
            en.repeat(600),
            format!("{}{banner}{}", zh.repeat(300), en.repeat(300)).repeat(3),
            "。".repeat(9000) + "尾",
        ];
        for config in [
            SimhashConfig::default(),
            SimhashConfig::default().with_latin_count_pieces(0).with_seed(3),
            SimhashConfig::default().with_tf(TfScaling::LengthAdaptive),
            SimhashConfig::default().with_drop_boilerplate(false).with_normalize(false),
        ] {
            let hasher = Simhasher::new(config.clone().with_sketch(SketchKind::MinHash)).unwrap();
            for text in &texts {
                match hasher.fingerprint_and_sketch(text) {
                    Ok((fp, sketch)) => {
                        assert_eq!(fp, hasher.fingerprint(text).unwrap());
                        assert_eq!(sketch, Some(super::sketch(text, &config)), "{config:?}");
                    }
                    Err(e) => assert!(matches!(e, crate::Error::NoFeatures), "{e}"),
                }
            }
        }
    }

    #[test]
    fn boilerplate_lines_spacing_case_and_punctuation_do_not_count() {
        let body = "Hello, World! Near duplicates are found by their fingerprints.";
        assert_eq!(
            sketch_default(body, 0),
            sketch_default(
                "hello world\n\nnear-duplicates are found by their fingerprints",
                0
            )
        );
        let with_banner = format!(
            "{body}\nShare on Facebook | Tweet | Email\n© 2026 Example Inc. All rights reserved."
        );
        assert_eq!(sketch_default(body, 0), sketch_default(&with_banner, 0));
        let kept = SimhashConfig::default().with_drop_boilerplate(false);
        assert_ne!(sketch(body, &kept), sketch(&with_banner, &kept));
    }

    #[test]
    fn equal_codes_and_similarity() {
        let a = [1u8; SKETCH_BYTES];
        let mut b = a;
        assert_eq!(equal_codes(&a, &b), SKETCH_BINS as u32);
        assert_eq!(similarity_of(SKETCH_BINS as u32), 1.0);
        b[0] = 2;
        assert_eq!(equal_codes(&a, &b), SKETCH_BINS as u32 - 2);
        // 64 differing bits of 512 is a similarity of exactly 0.75.
        assert_eq!(similarity_of(SKETCH_BINS as u32 - 64), 0.75);
        assert_eq!(similarity_of(SKETCH_BINS as u32 / 2), 0.0);
        assert!(similarity_of(0) < 0.0);
    }
}
