//! A text's [`Sketch`] by one-permutation b-bit MinHash (Li, Owen and Zhang 2012; b-bit codes,
//! Li and König 2010) with optimal densification (Shrivastava 2017) over the text's token
//! bigrams. Chosen on the labelled development set (`docs/guide.md`, "Verified
//! near-duplicates"), where [`SketchKind::MinHash`](super::SketchKind::MinHash) describes it.
//!
//! 1. **Text**: what the fingerprint reads: without boilerplate lines when the configuration
//!    drops them, normalized as the fingerprint normalizes (lowercase, and with `normalize`
//!    the fold of full-width forms, ligatures and look-alike letters).
//! 2. **Tokens**: every ideograph alone; every maximal run of other word characters (letters,
//!    digits, `_` and the combining marks U+0300..U+036F); everything else only separates.
//!    No jieba, no stop words.
//! 3. **Shingles**: every pair of consecutive tokens, across lines and punctuation; a text of
//!    one token has that token as its only shingle, a text of none has none. They form a set:
//!    a repeated shingle changes nothing.
//! 4. **Hash**: each token's hash is the one the fingerprint gives it (xxh3-64 of its UTF-8,
//!    an ideograph with seed `seed ^ CHAR_SHINGLE_SALT`, a run with `seed`), and the hash of
//!    the pair `(a, b)` is `fmix64(rotl(h(a), 21) ^ h(b) ^ SKETCH_SALT)` (MurmurHash3's
//!    finalizer), of a lone token `fmix64(h(t) ^ SKETCH_SALT)`: one hash per token, which the
//!    fingerprint's table of ideograph hashes already holds.
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
use crate::simhash::{
    drop_lines, is_cjk, normalize_into, IdeographHashes, SeedHashes, SeededXxh3, SimhashConfig,
};

/// Codes per sketch (a power of two).
pub(crate) const SKETCH_BINS: usize = 512;
/// Bits per code (1, 2, 4 or 8).
pub(crate) const SKETCH_BITS: usize = 1;
/// Salts of the shingles' hashes and of the densification's seed, so that the sketch's hashes
/// are not the fingerprint's (`b"sketch21"` and `b"probes21"` as big-endian `u64`s).
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
    } else if matches!(c, '\u{2014}' | '\u{2018}'..='\u{201F}' | '\u{2026}' | '\u{3001}' | '\u{3002}' | '\u{3008}'..='\u{3011}')
    {
        // The commonest punctuation of Chinese text that normalization keeps (dashes, quotes,
        // the ellipsis, 、。 and the angle and corner brackets), answered before the Unicode
        // tables: none of them is alphanumeric.
        false
    } else {
        c.is_alphanumeric() || ('\u{300}'..='\u{36f}').contains(&c)
    }
}

/// MurmurHash3's 64-bit finalizer: every input bit flips each output bit with probability
/// about 1/2.
#[inline]
fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The hash of the shingle of tokens hashed `a` then `b`.
#[inline]
fn pair_hash(a: u64, b: u64) -> u64 {
    fmix64(a.rotate_left(21) ^ b ^ SKETCH_SALT)
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
pub(super) struct SketchBuilder<'a> {
    bins: Bins,
    /// The token hashes: the fingerprint's (see the module's step 4).
    ideographs: IdeographHashes<'a>,
    words: SeededXxh3,
    /// `seed ^ PROBE_SALT`.
    probe_seed: u64,
    /// The hash of the last token completed.
    previous: u64,
    /// Tokens completed.
    tokens: usize,
}

impl<'a> SketchBuilder<'a> {
    /// A builder for the sketch with the token hashes of `seeds` (the configuration's seed).
    pub(super) fn new(seeds: &'a SeedHashes, seed: u64) -> SketchBuilder<'a> {
        SketchBuilder {
            bins: Bins::new(),
            ideographs: seeds.ideograph_hashes(true),
            words: seeds.word_hasher(),
            probe_seed: seed ^ PROBE_SALT,
            previous: 0,
            tokens: 0,
        }
    }

    /// Adds the shingles of the next piece of the normalized text.
    pub(super) fn feed(&mut self, norm: &str) {
        // Where the current run of word characters started, if in one.
        let mut run: Option<usize> = None;
        let bytes = norm.as_bytes();
        for (i, c) in norm.char_indices() {
            if is_cjk(c) {
                if let Some(start) = run.take() {
                    self.run(bytes.get(start..i).unwrap_or_default());
                }
                let utf8 = bytes.get(i..i + c.len_utf8()).unwrap_or_default();
                self.token(self.ideographs.hash(c as u32, utf8));
            } else if is_word_char(c) {
                run.get_or_insert(i);
            } else if let Some(start) = run.take() {
                self.run(bytes.get(start..i).unwrap_or_default());
            }
        }
        if let Some(start) = run {
            self.run(bytes.get(start..).unwrap_or_default());
        }
    }

    #[inline]
    fn run(&mut self, token: &[u8]) {
        self.token(self.words.hash(token));
    }

    #[inline]
    fn token(&mut self, hash: u64) {
        if self.tokens > 0 {
            self.bins.add(pair_hash(self.previous, hash));
        }
        self.previous = hash;
        self.tokens += 1;
    }

    /// The sketch of the text fed.
    pub(super) fn finish(mut self) -> Sketch {
        if self.tokens == 1 {
            self.bins.add(fmix64(self.previous ^ SKETCH_SALT));
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
                            (xxh3_64_with_seed(&key, self.probe_seed) % SKETCH_BINS as u64) as usize
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
/// a pass of its own; `seeds` are `SeedHashes::new(config.seed)`.
pub(super) fn sketch(text: &str, config: &SimhashConfig, seeds: &SeedHashes) -> Sketch {
    let text = if config.drop_boilerplate {
        drop_lines(text)
    } else {
        Cow::Borrowed(text)
    };
    let mut norm = String::new();
    normalize_into(&text, config.normalize, &mut norm);
    of_normalized(&norm, config.seed, seeds)
}

/// The sketch of a text already filtered and normalized.
fn of_normalized(norm: &str, seed: u64, seeds: &SeedHashes) -> Sketch {
    let mut builder = SketchBuilder::new(seeds, seed);
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
    use crate::simhash::CHAR_SHINGLE_SALT;

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
        let token_hash = |t: &String| {
            let one_ideograph = t.chars().count() == 1 && t.chars().all(is_cjk);
            let salt = if one_ideograph { CHAR_SHINGLE_SALT } else { 0 };
            xxh3_64_with_seed(t.as_bytes(), seed ^ salt)
        };
        let hashes: Vec<u64> = tokens.iter().map(token_hash).collect();
        let shingles: std::collections::BTreeSet<u64> = match hashes.len() {
            1 => [fmix64(hashes[0] ^ SKETCH_SALT)].into(),
            _ => hashes
                .windows(2)
                .map(|w| fmix64(w[0].rotate_left(21) ^ w[1] ^ SKETCH_SALT))
                .collect(),
        };
        let mut mins: Vec<Option<u64>> = vec![None; SKETCH_BINS];
        for &h in &shingles {
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
        sketch(
            text,
            &SimhashConfig::default().with_seed(seed),
            &SeedHashes::new(seed),
        )
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
                    of_normalized(&norm, seed, &SeedHashes::new(seed)).0,
                    pack(&reference(&norm, seed)),
                    "{text:?} {seed}"
                );
            }
        }
    }

    /// Sketches pinned by value: the definition must not change under stores that keep them.
    #[test]
    fn pinned_vectors() {
        let zero = "00".repeat(64);
        let ones = "ff".repeat(64);
        for (text, seed, hex) in [
            ("", 0, zero.as_str()),
            ("Hello", 0, zero.as_str()),
            ("Hello, World!", 0, ones.as_str()),
            ("Hello, Wоrld!", 0, ones.as_str()),
            ("北京今天下雨了，气温比昨天低五度。", 0, "9ac3e6534ffe7c4fb60e3e43f8de1e39b85518de7c3db1c5fefd9b8fb43eff3ff91dfff926d6995b4f15570e26f6f32c738f8716bccd8ed7e75d707ad5dbc3fe"),
            ("北京今天下雨了，气温比昨天低五度。", 7, "8880993144ac245c0105862802844103280062bcc010804091a85680790103c8f40421090249a134a9209804200040a05818584017a0242054e1080010042148"),
            ("第 12 章 高级管理：ＲＡＩＤ 和 LVM", 0, "05000d160cc4b406213dc250464c8d00822812260256a4148058e00445122c440f12c08903280482dc0784a21200212a8052440120082029fd8d06000a571d17"),
            ("The quick brown fox jumps over the lazy dog near the river bank.", 0, "79e73cfe567b9ebecb9dff8f37f63fe65f7e8edeff1e9db8f7ffbd27f4f197f3dbc6d5d4f64fde6de5be29ecef97c5f31774b77e46127a0ffc99fc96fffa1777"),
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
        assert_eq!(SKETCH_BINS as u32 - equal_codes(&a.0, &b.0), 79);
    }

    /// The sketch made in the fingerprint's pass, chunk by chunk, is the sketch of the whole
    /// text, for every path of the fingerprint and texts longer than a chunk.
    #[test]
    fn the_fingerprints_pass_gives_the_same_sketch() {
        use crate::simhash::TfScaling;
        use crate::sketch::SketchKind;
        use crate::Simhasher;
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
            SimhashConfig::default()
                .with_latin_count_pieces(0)
                .with_seed(3),
            SimhashConfig::default().with_tf(TfScaling::LengthAdaptive),
            SimhashConfig::default()
                .with_drop_boilerplate(false)
                .with_normalize(false),
        ] {
            let hasher = Simhasher::new(config.clone().with_sketch(SketchKind::MinHash)).unwrap();
            for text in &texts {
                match hasher.fingerprint_and_sketch(text) {
                    Ok((fp, sketch)) => {
                        assert_eq!(fp, hasher.fingerprint(text).unwrap());
                        let seeds = SeedHashes::new(config.seed);
                        let separate = super::sketch(text, &config, &seeds);
                        assert_eq!(sketch, Some(separate), "{config:?}");
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
        let seeds = SeedHashes::new(0);
        assert_ne!(
            sketch(body, &kept, &seeds),
            sketch(&with_banner, &kept, &seeds)
        );
    }

    #[test]
    fn the_punctuation_shortcut_agrees_with_the_unicode_tables() {
        for c in ['\u{2014}', '\u{2026}', '\u{3001}', '\u{3002}']
            .into_iter()
            .chain('\u{2018}'..='\u{201F}')
            .chain('\u{3008}'..='\u{3011}')
        {
            assert!(!c.is_alphanumeric(), "{c:?}");
            assert!(!is_word_char(c), "{c:?}");
        }
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
