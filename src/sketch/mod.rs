//! The per-document [`Sketch`]: a few dozen bytes kept in the document record by a store made
//! with [`SimhashConfig::with_sketch`](crate::SimhashConfig::with_sketch), which estimate how
//! much of two texts is the same. The index finds candidates by fingerprint; the sketch
//! confirms or rejects them (`src/verified/`).
//!
//! - [`SketchKind`], the setting a store records (which sketch, or none), is a fingerprint
//!   setting: `src/simhash/sketch_kind.rs`, re-exported here.
//! - `minhash.rs`: the computation from a text (shingles, one-permutation b-bit MinHash).
//! - What a store checks about sketches given to it and asked of it: `src/store/sketches.rs`.
//! - this file: the [`Sketch`] value, its similarity and its serde forms.

mod minhash;

use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::ser::SerializeTuple;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::Error;
use crate::fingerprint::Fingerprint;
use crate::simhash::Simhasher;

pub use crate::simhash::SketchKind;
pub(crate) use minhash::{SKETCH_BINS, SKETCH_BITS};

/// Bytes of a [`Sketch`]: what a document record grows by when it keeps one.
pub const SKETCH_BYTES: usize = SKETCH_BINS * SKETCH_BITS / 8;
// The document record may grow by at most 64 bytes.
const _: () = assert!(SKETCH_BYTES <= 64);

/// A document's sketch: [`Sketch::BINS`] codes of [`Sketch::BITS`] bits, [`SKETCH_BYTES`]
/// bytes in all.
///
/// [`Sketch::similarity`] of the sketches of two texts estimates the Jaccard similarity of
/// their sets of shingles (see [`SketchKind`] for which shingles): 1 for the same text, about
/// 0 for unrelated ones. Computed by [`Simhasher::sketch`] under the configuration of a store
/// that keeps sketches.
///
/// Displayed and parsed as hex; in human-readable serde formats (JSON) it is that hex string,
/// in binary ones its bytes.
///
/// ```
/// use simhash_store::{SimhashConfig, Simhasher};
/// use simhash_store::sketch::SketchKind;
/// let hasher = Simhasher::new(SimhashConfig::default().with_sketch(SketchKind::MinHash))?;
/// let a = hasher.sketch("The quick brown fox jumps over the lazy dog near the river bank.").unwrap();
/// let b = hasher.sketch("The quick brown fox jumps over the lazy cat near the river bank.").unwrap();
/// let c = hasher.sketch("Bulk loading writes sorted SST files and ingests them.").unwrap();
/// assert_eq!(a.similarity(&a), 1.0);
/// assert!(a.similarity(&b) > 0.5);
/// assert!(a.similarity(&c) < 0.3);
/// # Ok::<_, simhash_store::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sketch(pub(crate) [u8; SKETCH_BYTES]);

impl Sketch {
    /// Codes per sketch.
    pub const BINS: usize = SKETCH_BINS;
    /// Bits per code.
    pub const BITS: usize = SKETCH_BITS;

    /// The sketch with these bytes (as [`Sketch::as_bytes`] gives them).
    pub fn from_bytes(bytes: [u8; SKETCH_BYTES]) -> Sketch {
        Sketch(bytes)
    }

    /// Its bytes, as the document record keeps them.
    pub fn as_bytes(&self) -> &[u8; SKETCH_BYTES] {
        &self.0
    }

    /// How many of the codes are equal (0..=[`Sketch::BINS`]).
    #[inline]
    pub fn equal_codes(&self, other: &Sketch) -> u32 {
        minhash::equal_codes(&self.0, &other.0)
    }

    /// How many of the codes differ (0..=[`Sketch::BINS`]): with one-bit codes, the Hamming
    /// distance of the two sketches.
    #[inline]
    pub fn distance(&self, other: &Sketch) -> u32 {
        Self::BINS as u32 - self.equal_codes(other)
    }

    /// The estimated Jaccard similarity of the two texts' shingle sets: the share of equal
    /// codes corrected for the codes that are equal by chance (`2^-bits`),
    /// `(equal / bins - 2^-bits) / (1 - 2^-bits)`, which for the one-bit codes of
    /// [`SketchKind::MinHash`] is `1 - distance / 256`. 1 for equal sketches; about 0 (it can
    /// be negative) for unrelated texts.
    #[inline]
    pub fn similarity(&self, other: &Sketch) -> f64 {
        minhash::similarity_of(self.equal_codes(other))
    }
}

impl Simhasher {
    /// The sketch of `text` under this hasher's configuration, or `None` if it keeps no
    /// sketch ([`SketchKind::None`], the default). A text without a single word character
    /// has the sketch of the empty set (all codes 0).
    pub fn sketch(&self, text: &str) -> Option<Sketch> {
        match self.config().sketch {
            SketchKind::None => None,
            SketchKind::MinHash => Some(minhash::sketch(text, self.config(), self.seed_hashes())),
        }
    }

    /// The fingerprint of `text` and, if the configuration keeps sketches, its sketch: what
    /// a store that keeps sketches stores for a text. The sketch is made in the fingerprint's
    /// pass, from the text it normalizes.
    ///
    /// # Errors
    /// [`Error::NoFeatures`] if the text has no feature to fingerprint.
    pub fn fingerprint_and_sketch(
        &self,
        text: &str,
    ) -> crate::Result<(Fingerprint, Option<Sketch>)> {
        match self.config().sketch {
            SketchKind::None => Ok((self.fingerprint(text)?, None)),
            SketchKind::MinHash => {
                let mut builder =
                    minhash::SketchBuilder::new(self.seed_hashes(), self.config().seed);
                let (fp, _) = self.fingerprint_observing(text, &mut |chunk| builder.feed(chunk))?;
                Ok((fp, Some(builder.finish())))
            }
        }
    }
}

impl fmt::Debug for Sketch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sketch({self})")
    }
}

impl fmt::Display for Sketch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Sketch {
    type Err = Error;

    /// Parses exactly `2 * SKETCH_BYTES` hex digits.
    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = || {
            Error::InvalidArgument(format!(
                "not a sketch: expected {} hex digits, found {:?}",
                2 * SKETCH_BYTES,
                s.chars().take(20).collect::<String>()
            ))
        };
        if s.len() != 2 * SKETCH_BYTES || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let mut bytes = [0u8; SKETCH_BYTES];
        for (i, b) in bytes.iter_mut().enumerate() {
            let pair = s.get(2 * i..2 * i + 2).ok_or_else(bad)?;
            *b = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
        }
        Ok(Sketch(bytes))
    }
}

impl Serialize for Sketch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            return serializer.collect_str(self);
        }
        // A tuple: bincode writes the bytes as they are, without a length.
        let mut tuple = serializer.serialize_tuple(SKETCH_BYTES)?;
        for b in &self.0 {
            tuple.serialize_element(b)?;
        }
        tuple.end()
    }
}

impl<'de> Deserialize<'de> for Sketch {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            let s = String::deserialize(deserializer)?;
            return s.parse().map_err(de::Error::custom);
        }
        struct Bytes;
        impl<'de> Visitor<'de> for Bytes {
            type Value = Sketch;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{SKETCH_BYTES} bytes")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Sketch, A::Error> {
                let mut bytes = [0u8; SKETCH_BYTES];
                for (i, b) in bytes.iter_mut().enumerate() {
                    *b = seq
                        .next_element()?
                        .ok_or_else(|| de::Error::invalid_length(i, &self))?;
                }
                Ok(Sketch(bytes))
            }
        }
        deserializer.deserialize_tuple(SKETCH_BYTES, Bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SimhashConfig;

    fn hasher() -> Simhasher {
        Simhasher::new(SimhashConfig::default().with_sketch(SketchKind::MinHash)).unwrap()
    }

    #[test]
    fn fits_the_record_budget() {
        assert_eq!(std::mem::size_of::<Sketch>(), SKETCH_BYTES);
    }

    #[test]
    fn no_sketch_without_the_setting() {
        assert_eq!(Simhasher::default().sketch("some text here"), None);
        assert!(hasher().sketch("some text here").is_some());
    }

    #[test]
    fn text_and_json_forms_round_trip() {
        let s = hasher()
            .sketch("Near-duplicate detection finds web pages that are almost the same")
            .unwrap();
        assert_eq!(s.to_string().parse::<Sketch>().unwrap(), s);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Sketch>(&json).unwrap(), s);
        let config = bincode::config::standard();
        let bytes = bincode::serde::encode_to_vec(s, config).unwrap();
        assert_eq!(bytes, s.0);
        let (back, used): (Sketch, usize) =
            bincode::serde::decode_from_slice(&bytes, config).unwrap();
        assert_eq!((back, used), (s, SKETCH_BYTES));
        assert!("00".parse::<Sketch>().is_err());
        assert!("zz".repeat(SKETCH_BYTES).parse::<Sketch>().is_err());
    }

    #[test]
    fn similarity_falls_with_the_edits() {
        let h = hasher();
        let base: String = (0..60)
            .map(|i| format!("word{i} alpha{} ", i * 7 % 13))
            .collect();
        let a = h.sketch(&base).unwrap();
        let small = base.replacen("word10", "other", 1);
        let large: String = base.chars().take(base.len() / 2).collect();
        let s_small = a.similarity(&h.sketch(&small).unwrap());
        let s_large = a.similarity(&h.sketch(&large).unwrap());
        assert!(s_small > s_large, "{s_small} <= {s_large}");
        assert!(s_small > 0.8, "{s_small}");
        let other = h
            .sketch("completely different content about databases and storage")
            .unwrap();
        assert!(a.similarity(&other) < 0.2);
    }

    #[test]
    fn the_seed_changes_the_sketch() {
        let text = "the same text under two seeds";
        let a = hasher().sketch(text).unwrap();
        let seeded = Simhasher::new(
            SimhashConfig::default()
                .with_sketch(SketchKind::MinHash)
                .with_seed(1),
        )
        .unwrap();
        assert_ne!(a, seeded.sketch(text).unwrap());
    }
}
