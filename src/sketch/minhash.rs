//! A text's [`Sketch`] by one-permutation b-bit MinHash (Li, Owen and Zhang 2012; b-bit codes,
//! Li and König 2010) with optimal densification (Shrivastava 2017) over the text's character
//! shingles.
//!
//! 1. **Characters**: each character of the text lowercased; of the result, only word
//!    characters are kept (ASCII letters, digits and `_`; other alphanumeric characters and the
//!    combining diacritics U+0300..U+036F). Spacing, punctuation and line breaks are dropped,
//!    so re-flowed or re-punctuated text keeps its shingles.
//! 2. **Shingles**: every run of [`SHINGLE_CHARS`] consecutive kept characters (a text of
//!    fewer has one shingle, itself; a text of none has none).
//! 3. **Hash**: xxh3-64 of the shingle's UTF-8 bytes with seed `seed ^ SKETCH_SALT`.
//! 4. **Bins**: the top `log2(BINS)` bits of a hash choose its bin; a bin keeps its smallest
//!    hash, and its code is the lowest `BITS` bits of that hash. A shingle repeated changes
//!    nothing: the sketch is one of the *set* of shingles.
//! 5. **Densification**: an empty bin `j` takes the code of bin `probe(j, a)` for the first
//!    attempt `a = 0, 1, ...` that lands on a non-empty bin, where `probe(j, a)` is xxh3-64 of
//!    `le_u32(j) ++ le_u32(a)` with seed `seed ^ PROBE_SALT`, modulo `BINS`. So two texts
//!    whose sets agree agree on empty bins too. The empty set has every code 0.
//!
//! The probability that a code of two sketches is equal is `J + (1 - J) 2^-BITS` for the
//! Jaccard similarity `J` of the two shingle sets, which [`similarity_of`] inverts.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::{Sketch, SKETCH_BYTES};

/// Codes per sketch (a power of two).
pub(crate) const SKETCH_BINS: usize = 64;
/// Bits per code (1, 2, 4 or 8).
pub(crate) const SKETCH_BITS: usize = 8;
/// Characters per shingle.
const SHINGLE_CHARS: usize = 4;
/// Salts of the two seeds, so that the sketch's hashes are not the fingerprint's
/// (`b"sketch21"` and `b"probes21"` as big-endian `u64`s).
const SKETCH_SALT: u64 = 0x736B_6574_6368_3231;
const PROBE_SALT: u64 = 0x7072_6F62_6573_3231;
/// Attempts of the densification before an empty bin takes the first non-empty bin's code
/// (reached with probability below `(63/64)^4096`, about 1e-28, with one bin filled).
const MAX_PROBES: u32 = 4096;

const _: () = assert!(SKETCH_BINS.is_power_of_two() && 8 % SKETCH_BITS == 0);
const BIN_SHIFT: u32 = 64 - SKETCH_BINS.trailing_zeros();
const CODE_MASK: u64 = (1 << SKETCH_BITS) - 1;
const CODES_PER_BYTE: usize = 8 / SKETCH_BITS;

/// Whether `c` (already lowercased) is kept.
#[inline]
fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        c.is_alphanumeric() || ('\u{300}'..='\u{36f}').contains(&c)
    }
}

/// The sketch of `text` under `seed`.
pub(super) fn sketch(text: &str, seed: u64) -> Sketch {
    let hash_seed = seed ^ SKETCH_SALT;
    let mut mins = [u64::MAX; SKETCH_BINS];
    let mut filled: u64 = 0;
    let mut add = |h: u64| {
        let bin = (h >> BIN_SHIFT) as usize;
        filled |= 1 << bin;
        if h < mins[bin] {
            mins[bin] = h;
        }
    };
    let mut shingles = Shingles::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            if let Some(shingle) = shingles.push(c.to_ascii_lowercase()) {
                add(xxh3_64_with_seed(shingle, hash_seed));
            }
        } else {
            for l in c.to_lowercase() {
                if let Some(shingle) = shingles.push(l) {
                    add(xxh3_64_with_seed(shingle, hash_seed));
                }
            }
        }
    }
    let (kept, count) = (shingles.kept.as_bytes(), shingles.count);
    if (1..SHINGLE_CHARS).contains(&count) {
        add(xxh3_64_with_seed(kept, hash_seed));
    }
    let mut codes = [0u8; SKETCH_BINS];
    if filled != 0 {
        for (j, code) in codes.iter_mut().enumerate() {
            if filled & (1 << j) != 0 {
                *code = (mins[j] & CODE_MASK) as u8;
            }
        }
        let probe_seed = seed ^ PROBE_SALT;
        let original = codes;
        for (j, code) in codes.iter_mut().enumerate() {
            if filled & (1 << j) != 0 {
                continue;
            }
            let from = (0..MAX_PROBES)
                .map(|a| {
                    let mut key = [0u8; 8];
                    key[..4].copy_from_slice(&(j as u32).to_le_bytes());
                    key[4..].copy_from_slice(&a.to_le_bytes());
                    (xxh3_64_with_seed(&key, probe_seed) % SKETCH_BINS as u64) as usize
                })
                .find(|&k| filled & (1 << k) != 0)
                .unwrap_or(filled.trailing_zeros() as usize);
            *code = original[from];
        }
    }
    Sketch(pack(&codes))
}

/// The kept characters of a text, and its shingles as they complete.
struct Shingles {
    kept: String,
    /// Byte offsets in `kept` of the last `SHINGLE_CHARS` kept characters (a ring).
    starts: [usize; SHINGLE_CHARS],
    /// Characters kept so far.
    count: usize,
}

impl Shingles {
    fn with_capacity(bytes: usize) -> Shingles {
        Shingles {
            kept: String::with_capacity(bytes),
            starts: [0; SHINGLE_CHARS],
            count: 0,
        }
    }

    /// Keeps `c` (lowercased) if it is a word character; returns the shingle it completes.
    #[inline]
    fn push(&mut self, c: char) -> Option<&[u8]> {
        if !is_word_char(c) {
            return None;
        }
        self.starts[self.count % SHINGLE_CHARS] = self.kept.len();
        self.kept.push(c);
        self.count += 1;
        if self.count < SHINGLE_CHARS {
            return None;
        }
        // The oldest of the ring is the first character of the last SHINGLE_CHARS.
        let first = self.starts[self.count % SHINGLE_CHARS];
        self.kept.as_bytes().get(first..)
    }
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
    if SKETCH_BITS == 8 {
        return a.iter().zip(b).filter(|(x, y)| x == y).count() as u32;
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

/// The Jaccard similarity estimated from `equal` codes of `BINS`.
#[inline]
pub(super) fn similarity_of(equal: u32) -> f64 {
    let chance = (-(SKETCH_BITS as f64)).exp2();
    (f64::from(equal) / SKETCH_BINS as f64 - chance) / (1.0 - chance)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition above, written out plainly: kept characters, the set of shingles, the
    /// minimum per bin, densification.
    fn reference(text: &str, seed: u64) -> [u8; SKETCH_BINS] {
        let kept: Vec<char> = text
            .chars()
            .flat_map(char::to_lowercase)
            .filter(|&c| is_word_char(c))
            .collect();
        let mut shingles = std::collections::BTreeSet::new();
        if kept.len() < SHINGLE_CHARS {
            if !kept.is_empty() {
                shingles.insert(kept.iter().collect::<String>());
            }
        } else {
            for w in kept.windows(SHINGLE_CHARS) {
                shingles.insert(w.iter().collect::<String>());
            }
        }
        let mut mins: [Option<u64>; SKETCH_BINS] = [None; SKETCH_BINS];
        for s in &shingles {
            let h = xxh3_64_with_seed(s.as_bytes(), seed ^ SKETCH_SALT);
            let bin = (h >> BIN_SHIFT) as usize;
            mins[bin] = Some(mins[bin].map_or(h, |m| m.min(h)));
        }
        let mut codes = [0u8; SKETCH_BINS];
        if shingles.is_empty() {
            return codes;
        }
        for j in 0..SKETCH_BINS {
            let mut a = 0u32;
            let h = loop {
                let k = if mins[j].is_some() {
                    j
                } else {
                    let key = [(j as u32).to_le_bytes(), a.to_le_bytes()].concat();
                    (xxh3_64_with_seed(&key, seed ^ PROBE_SALT) % SKETCH_BINS as u64) as usize
                };
                if let Some(h) = mins[k] {
                    break h;
                }
                a += 1;
            };
            codes[j] = (h & CODE_MASK) as u8;
        }
        codes
    }

    #[test]
    fn equals_the_plain_definition() {
        for text in [
            "",
            "  ,. ",
            "ab",
            "abcd",
            "The Quick, brown fox!\njumps over the lazy dog",
            "PostgreSQL 使用多版本并发控制（MVCC）来保证数据一致性，读不阻塞写。",
            "İstanbul ÉCOLE Straße ﬁne café",
            &"lorem ipsum dolor sit amet ".repeat(40),
        ] {
            for seed in [0, 7, u64::MAX] {
                assert_eq!(sketch(text, seed).0, pack(&reference(text, seed)), "{text:?} {seed}");
            }
        }
    }

    #[test]
    fn spacing_case_and_punctuation_do_not_count() {
        assert_eq!(
            sketch("Hello, World! Near duplicates.", 0),
            sketch("hello world\n\nnear-duplicates", 0)
        );
    }

    #[test]
    fn equal_codes_and_similarity() {
        let a = [1u8; SKETCH_BYTES];
        let mut b = a;
        assert_eq!(equal_codes(&a, &b), SKETCH_BINS as u32);
        assert_eq!(similarity_of(SKETCH_BINS as u32), 1.0);
        b[0] = 2;
        assert_eq!(equal_codes(&a, &b), SKETCH_BINS as u32 - 1);
        assert!(similarity_of(0) < 0.0);
    }
}
