//! The 64-bit SimHash fingerprint and its four 16-bit blocks.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

use crate::pigeonhole;
/// Number of 16-bit blocks a fingerprint is split into for indexing.
pub use crate::pigeonhole::BLOCKS;

/// A 64-bit SimHash fingerprint.
///
/// Block 0 is the most significant 16 bits, block 3 the least significant. Two fingerprints
/// within Hamming distance 3 share at least one block exactly (pigeonhole), which is what the
/// store's index is built on.
///
/// Displayed and parsed as 16 lowercase hex digits (`FromStr` also takes a `0x` prefix and
/// fewer digits). In human-readable serde formats (JSON) it is that hex string, so values above
/// 2^53 survive JavaScript; in binary formats it is a `u64`.
///
/// ```
/// use simhash_store::Fingerprint;
/// let a: Fingerprint = "0x00000000000000ff".parse()?;
/// let b = Fingerprint::from(0x0fu64);
/// assert_eq!(a.distance(b), 4);
/// assert_eq!(a.to_string(), "00000000000000ff");
/// assert_eq!(a.blocks(), [0, 0, 0, 0xff]);
/// # Ok::<_, simhash_store::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Fingerprint(pub u64);

impl Fingerprint {
    /// Hamming distance: the number of bits that differ.
    #[inline]
    pub fn distance(self, other: Fingerprint) -> u32 {
        (self.0 ^ other.0).count_ones()
    }

    /// Block `i` (0..4): bits 63..48 for block 0, down to bits 15..0 for block 3.
    ///
    /// # Panics
    /// If `i >= 4`.
    #[inline]
    pub fn block(self, i: usize) -> u16 {
        assert!(i < BLOCKS, "block index {i} out of range 0..4");
        pigeonhole::block(self.0, i)
    }

    /// The four 16-bit blocks, most significant first.
    #[inline]
    pub fn blocks(self) -> [u16; BLOCKS] {
        std::array::from_fn(|i| pigeonhole::block(self.0, i))
    }

    /// Builds a fingerprint from its four blocks, most significant first.
    #[inline]
    pub fn from_blocks(blocks: [u16; BLOCKS]) -> Fingerprint {
        Fingerprint((0..BLOCKS).fold(0, |x, i| x | pigeonhole::placed(blocks[i], i)))
    }

    /// The raw 64-bit value.
    #[inline]
    pub fn as_u64(self) -> u64 {
        self.0
    }
}

impl From<u64> for Fingerprint {
    fn from(v: u64) -> Self {
        Fingerprint(v)
    }
}

impl From<Fingerprint> for u64 {
    fn from(f: Fingerprint) -> Self {
        f.0
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({:016x})", self.0)
    }
}

impl FromStr for Fingerprint {
    type Err = Error;

    /// Parses 1..=16 hex digits, with or without a `0x`/`0X` prefix.
    fn from_str(s: &str) -> Result<Self, Error> {
        let digits = s
            .strip_prefix("0x")
            .or_else(|| s.strip_prefix("0X"))
            .unwrap_or(s);
        let bad = || Error::ParseFingerprint {
            input: s.chars().take(40).collect(),
        };
        if digits.is_empty() || digits.len() > 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Err(bad());
        }
        u64::from_str_radix(digits, 16)
            .map(Fingerprint)
            .map_err(|_| bad())
    }
}

impl serde::Serialize for Fingerprint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.collect_str(self)
        } else {
            s.serialize_u64(self.0)
        }
    }
}

impl<'de> serde::Deserialize<'de> for Fingerprint {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Fingerprint;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a 64-bit fingerprint as hex digits or an unsigned integer")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Fingerprint, E> {
                Ok(Fingerprint(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Fingerprint, E> {
                Ok(Fingerprint(v as u64))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Fingerprint, E> {
                v.parse().map_err(E::custom)
            }
        }
        if d.is_human_readable() {
            d.deserialize_any(Visitor)
        } else {
            d.deserialize_u64(Visitor)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip_most_significant_first() {
        let f = Fingerprint(0x0123_4567_89ab_cdef);
        assert_eq!(f.blocks(), [0x0123, 0x4567, 0x89ab, 0xcdef]);
        assert_eq!(Fingerprint::from_blocks(f.blocks()), f);
        for i in 0..BLOCKS {
            assert_eq!(f.block(i), f.blocks()[i]);
        }
    }

    #[test]
    fn parse_and_display() {
        let f: Fingerprint = "0xFF".parse().unwrap();
        assert_eq!(f, Fingerprint(255));
        assert_eq!(f.to_string(), "00000000000000ff");
        assert_eq!("00000000000000ff".parse::<Fingerprint>().unwrap(), f);
        assert!(matches!(
            "".parse::<Fingerprint>(),
            Err(Error::ParseFingerprint { .. })
        ));
        assert!(matches!(
            "0x".parse::<Fingerprint>(),
            Err(Error::ParseFingerprint { .. })
        ));
        assert!(matches!(
            "12345678901234567".parse::<Fingerprint>(),
            Err(Error::ParseFingerprint { .. })
        ));
        assert!(matches!(
            "+1".parse::<Fingerprint>(),
            Err(Error::ParseFingerprint { .. })
        ));
        assert!(matches!(
            "xyz".parse::<Fingerprint>(),
            Err(Error::ParseFingerprint { .. })
        ));
    }

    #[test]
    fn serde_json_is_hex_and_accepts_integers() {
        let f = Fingerprint(u64::MAX - 1);
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(json, "\"fffffffffffffffe\"");
        assert_eq!(serde_json::from_str::<Fingerprint>(&json).unwrap(), f);
        assert_eq!(
            serde_json::from_str::<Fingerprint>("18446744073709551614").unwrap(),
            f
        );
        assert_eq!(serde_json::from_str::<Fingerprint>("-2").unwrap(), f);
    }

    #[test]
    fn distance_is_popcount_of_xor() {
        assert_eq!(Fingerprint(0).distance(Fingerprint(u64::MAX)), 64);
        assert_eq!(Fingerprint(0b1011).distance(Fingerprint(0b0001)), 2);
    }
}
