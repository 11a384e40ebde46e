//! A packed chunk: up to [`MAX_ENTRIES`] `(remainder, id)` entries of one block value, sorted,
//! bit-packed, and scanned without decoding it; its ids either inline (format 7, and the bulk
//! loader's spool files) or *apart*, in a value of their own (format 8).
//!
//! A *remainder* is the 48 bits of a fingerprint outside the family's block (the other three
//! blocks in order, [`crate::keys::split`]). Entries are sorted by (remainder, id). The top
//! `h` bits of a remainder pick its *bucket*; buckets are contiguous in sorted order, so the
//! chunk stores where each bucket starts instead of those bits.
//!
//! | bytes          | field                                                              |
//! |----------------|--------------------------------------------------------------------|
//! | 2              | `n`: entries, 1..=4096 (little-endian, like every field here)      |
//! | 1              | `h`: bucket bits, 0..=12; plus 128 if the chunk is *final*          |
//! | 1              | `w`: id width in bits, 0..=64; plus 128 if the ids are *apart*      |
//! | 8              | `base`: the smallest id                                            |
//! | 2 · 2^h        | start of each bucket (entry index), ascending                      |
//! | ⌈n · (48 − h) / 8⌉ | the low `48 − h` bits of each remainder, bit-packed, first entry in the lowest bits |
//! | ⌈n · w / 8⌉    | `id − base` of each entry, bit-packed the same way (inline ids only) |
//! | 16             | zero padding, so that every field is read with whole-word loads    |
//!
//! Ids apart are the value of their own key ([`crate::keys::ids_key`]): the `⌈n · w / 8⌉`
//! bytes of packed ids, then 16 bytes of padding ([`Ids`]). A query scans remainders only and
//! reads the ids of a chunk only for a match its family reports: at a billion documents a
//! group's chunks take 78 KB and their ids 57 KB, so a query that reads its four groups from
//! disk reads 0.32 MB instead of 0.55.
//!
//! `h` is about `log2(n / 11)`, which minimises the bits per entry (the table costs `16 · 2^h`
//! bits and saves `h` per entry): 42.3 bits per remainder at 1,526 entries (a block value of a
//! 100M-document store) against 48 in a key. A scan XORs each low part with the query's and
//! adds the bucket's popcount distance, which is computed once per bucket (and skips the
//! bucket when it alone exceeds `k`): no branch per entry other than the rare match.
//!
//! A *final* chunk is the last chunk of its group, and stays so: it is written only when
//! nothing else of the group can follow it (by a bulk run into empty block families, or by a
//! fold, which rewrites the group), and every chunk written later sorts before it
//! ([`crate::keys`]). A reader stops there instead of stepping to the next key, which would
//! read the next group's block (or the group's ids).

/// The most entries a chunk holds.
pub(crate) const MAX_ENTRIES: usize = 4096;
/// Bits of a remainder.
pub(crate) const REMAINDER_BITS: u32 = 48;
const HEADER: usize = 12;
const PADDING: usize = 16;
const MAX_BUCKET_BITS: u32 = 12;
/// The bit of the `h` byte that marks a final chunk.
const FINAL: u8 = 0x80;
/// The bit of the `w` byte that marks a chunk whose ids are apart.
const APART: u8 = 0x80;

/// The bucket bits for a chunk of `n` entries.
pub(crate) fn bucket_bits(n: usize) -> u32 {
    let mut h = 0;
    while h < MAX_BUCKET_BITS && (11usize << (h + 1)) <= n {
        h += 1;
    }
    h
}

/// Writes bit fields one after another from the start of a byte slice, least significant bit
/// first (the layout [`get_bits57`] and [`get_bits64`] read), a 64-bit word at a time.
struct BitWriter<'a> {
    out: &'a mut [u8],
    /// The byte where the next whole word goes.
    at: usize,
    /// Bits not yet written, in the low `pending` bits.
    word: u64,
    pending: u32,
}

impl<'a> BitWriter<'a> {
    fn new(out: &'a mut [u8]) -> Self {
        BitWriter {
            out,
            at: 0,
            word: 0,
            pending: 0,
        }
    }

    /// Appends the low `bits` (at most 64) bits of `value` (below `2^bits`).
    #[inline(always)]
    fn put(&mut self, value: u64, bits: u32) {
        if bits == 0 {
            return;
        }
        self.word |= value << self.pending;
        let total = self.pending + bits;
        if total >= 64 {
            self.out[self.at..self.at + 8].copy_from_slice(&self.word.to_le_bytes());
            self.at += 8;
            // The bits of `value` that did not fit (none if the word was empty).
            self.word = if self.pending == 0 {
                0
            } else {
                value >> (64 - self.pending)
            };
            self.pending = total - 64;
        } else {
            self.pending = total;
        }
    }

    /// Writes the bits still pending, in whole bytes.
    fn finish(self) {
        let bytes = self.pending.div_ceil(8) as usize;
        self.out[self.at..self.at + bytes].copy_from_slice(&self.word.to_le_bytes()[..bytes]);
    }
}

/// Reads `bits` (at most 57) bits at bit `at`; `bytes` has at least 8 bytes from `at / 8`.
#[inline(always)]
fn get_bits57(bytes: &[u8], at: usize, mask: u64) -> u64 {
    let byte = at / 8;
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[byte..byte + 8]);
    (u64::from_le_bytes(word) >> (at % 8)) & mask
}

/// Reads `bits` (at most 64) bits at bit `at`; `bytes` has at least 16 bytes from `at / 8`.
#[inline]
fn get_bits64(bytes: &[u8], at: usize, bits: u32) -> u64 {
    let byte = at / 8;
    let mut word = [0u8; 16];
    word.copy_from_slice(&bytes[byte..byte + 16]);
    let v = u128::from_le_bytes(word) >> (at % 8);
    if bits == 64 {
        v as u64
    } else {
        (v as u64) & ((1u64 << bits) - 1)
    }
}

fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Appends the chunk of `entries` (sorted by (remainder, id), each remainder below 2^48,
/// 1..=[`MAX_ENTRIES`] of them) to `out` with its ids inline, marked final if `is_final`.
pub(crate) fn encode(entries: &[(u64, u64)], is_final: bool, out: &mut Vec<u8>) {
    encode_into(entries, is_final, out, None);
}

/// Appends the chunk of `entries` (as [`encode`]) to `out` with its ids apart: the value of
/// its ids key goes to `ids`.
pub(crate) fn encode_apart(
    entries: &[(u64, u64)],
    is_final: bool,
    out: &mut Vec<u8>,
    ids: &mut Vec<u8>,
) {
    encode_into(entries, is_final, out, Some(ids));
}

fn encode_into(
    entries: &[(u64, u64)],
    is_final: bool,
    out: &mut Vec<u8>,
    apart: Option<&mut Vec<u8>>,
) {
    debug_assert!(!entries.is_empty() && entries.len() <= MAX_ENTRIES);
    debug_assert!(entries.windows(2).all(|w| w[0] <= w[1]));
    let n = entries.len();
    let h = bucket_bits(n);
    let low_bits = REMAINDER_BITS - h;
    let base = entries.iter().map(|e| e.1).min().unwrap_or(0);
    let top = entries.iter().map(|e| e.1 - base).max().unwrap_or(0);
    let w = 64 - top.leading_zeros();
    let buckets = 1usize << h;
    let lows_len = (n * low_bits as usize).div_ceil(8);
    let ids_len = (n * w as usize).div_ceil(8);
    let inline_ids_len = if apart.is_some() { 0 } else { ids_len };
    let start = out.len();
    out.resize(
        start + HEADER + 2 * buckets + lows_len + inline_ids_len + PADDING,
        0,
    );
    let chunk = &mut out[start..];
    chunk[0..2].copy_from_slice(&(n as u16).to_le_bytes());
    chunk[2] = h as u8 | if is_final { FINAL } else { 0 };
    chunk[3] = w as u8 | if apart.is_some() { APART } else { 0 };
    chunk[4..12].copy_from_slice(&base.to_le_bytes());
    let (table, fields) = chunk[HEADER..].split_at_mut(2 * buckets);
    let (lows, inline_ids) = fields.split_at_mut(lows_len);
    let ids = match apart {
        Some(ids) => {
            let at = ids.len();
            ids.resize(at + ids_len + PADDING, 0);
            &mut ids[at..]
        }
        None => inline_ids,
    };
    let (mut lows, mut ids) = (BitWriter::new(lows), BitWriter::new(ids));
    let mut next_bucket = 0usize;
    for (j, &(rem, id)) in entries.iter().enumerate() {
        let bucket = (rem >> low_bits) as usize;
        while next_bucket <= bucket && next_bucket < buckets {
            table[2 * next_bucket..2 * next_bucket + 2].copy_from_slice(&(j as u16).to_le_bytes());
            next_bucket += 1;
        }
        lows.put(rem & low_mask(low_bits), low_bits);
        ids.put(id - base, w);
    }
    lows.finish();
    ids.finish();
    while next_bucket < buckets {
        table[2 * next_bucket..2 * next_bucket + 2].copy_from_slice(&(n as u16).to_le_bytes());
        next_bucket += 1;
    }
}

/// A chunk read from its bytes: checked once by [`Chunk::parse`], then read without bounds
/// failures.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chunk<'a> {
    n: usize,
    is_final: bool,
    h: u32,
    ids: IdsLayout,
    table: &'a [u8],
    /// The packed low parts, through the end of the value (the padding included).
    lows: &'a [u8],
    /// The packed ids if inline, through the end of the value.
    inline_ids: Option<&'a [u8]>,
}

/// What reading a chunk's ids takes from the chunk: its entries, id width and smallest id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IdsLayout {
    n: usize,
    w: u32,
    base: u64,
}

/// The ids of a chunk's entries, in entry order: inline ([`Chunk::ids`]) or apart
/// ([`Ids::parse`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ids<'a> {
    layout: IdsLayout,
    /// The packed ids, through the end of the value (the padding included).
    bytes: &'a [u8],
}

impl<'a> Ids<'a> {
    /// Checks `bytes`, the value of an ids key, against the chunk whose ids they are.
    pub(crate) fn parse(
        bytes: &'a [u8],
        layout: IdsLayout,
    ) -> std::result::Result<Ids<'a>, String> {
        let want = (layout.n * layout.w as usize).div_ceil(8) + PADDING;
        if bytes.len() != want {
            return Err(format!(
                "{} bytes of ids, expected {want} for {} entries of {} bits",
                bytes.len(),
                layout.n,
                layout.w
            ));
        }
        Ok(Ids { layout, bytes })
    }

    /// The id of entry `j` (below the chunk's entry count).
    #[inline]
    pub(crate) fn get(&self, j: usize) -> u64 {
        let w = self.layout.w;
        // Wraps only in a damaged chunk (an encoded one holds `id - base`).
        self.layout
            .base
            .wrapping_add(get_bits64(self.bytes, j * w as usize, w))
    }
}

impl<'a> Chunk<'a> {
    /// Checks the layout of `bytes` and returns the chunk, or what is wrong with it.
    pub(crate) fn parse(bytes: &'a [u8]) -> std::result::Result<Chunk<'a>, String> {
        if bytes.len() < HEADER {
            return Err(format!(
                "{} bytes, shorter than a chunk header",
                bytes.len()
            ));
        }
        let n = usize::from(u16::from_le_bytes([bytes[0], bytes[1]]));
        let is_final = bytes[2] & FINAL != 0;
        let apart = bytes[3] & APART != 0;
        let (h, w) = (u32::from(bytes[2] & !FINAL), u32::from(bytes[3] & !APART));
        let mut base = [0u8; 8];
        base.copy_from_slice(&bytes[4..12]);
        let base = u64::from_le_bytes(base);
        if n == 0 || n > MAX_ENTRIES || h > MAX_BUCKET_BITS || w > 64 {
            return Err(format!(
                "bad header: {n} entries, {h} bucket bits, {w}-bit ids"
            ));
        }
        let buckets = 1usize << h;
        let lows_len = (n * (REMAINDER_BITS - h) as usize).div_ceil(8);
        let ids_len = if apart {
            0
        } else {
            (n * w as usize).div_ceil(8)
        };
        let want = HEADER + 2 * buckets + lows_len + ids_len + PADDING;
        if bytes.len() != want {
            return Err(format!("{} bytes, expected {want}", bytes.len()));
        }
        let table = &bytes[HEADER..HEADER + 2 * buckets];
        let mut last = 0;
        for b in 0..buckets {
            let s = usize::from(u16::from_le_bytes([table[2 * b], table[2 * b + 1]]));
            if s < last || s > n {
                return Err(format!("bucket {b} starts at {s}, after {last} of {n}"));
            }
            last = s;
        }
        let lows_at = HEADER + 2 * buckets;
        Ok(Chunk {
            n,
            is_final,
            h,
            ids: IdsLayout { n, w, base },
            table,
            lows: &bytes[lows_at..],
            inline_ids: (!apart).then(|| &bytes[lows_at + lows_len..]),
        })
    }

    /// The number of entries.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    /// Whether this is the last chunk of its group (see the module documentation).
    pub(crate) fn is_final(&self) -> bool {
        self.is_final
    }

    /// The chunk's ids if they are inline; `None` if they are apart (read them with
    /// [`Ids::parse`] and [`Chunk::ids_layout`]).
    pub(crate) fn ids(&self) -> Option<Ids<'a>> {
        self.inline_ids.map(|bytes| Ids {
            layout: self.ids,
            bytes,
        })
    }

    /// What [`Ids::parse`] needs to read this chunk's ids apart.
    pub(crate) fn ids_layout(&self) -> IdsLayout {
        self.ids
    }

    fn bucket_start(&self, b: usize) -> usize {
        if b >= 1 << self.h {
            return self.n;
        }
        usize::from(u16::from_le_bytes([
            self.table[2 * b],
            self.table[2 * b + 1],
        ]))
    }

    /// Calls `found(remainder, entry, distance)` for every entry whose remainder is within
    /// `k` bits of `query` (a 48-bit remainder), in entry order; `entry` is the entry's index,
    /// for its id ([`Ids::get`]).
    pub(crate) fn scan(&self, query: u64, k: u32, found: impl FnMut(u64, usize, u32)) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU has the `popcnt` instruction, checked just above.
            return unsafe { self.scan_popcnt(query, k, found) };
        }
        self.scan_entries(query, k, found);
    }

    /// [`Chunk::scan`] compiled with the `popcnt` instruction (the default x86-64 target lacks
    /// it, and `count_ones` then costs a dozen instructions per entry).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn scan_popcnt(&self, query: u64, k: u32, found: impl FnMut(u64, usize, u32)) {
        self.scan_entries(query, k, found);
    }

    /// The scan's loop: the hot loop of a query.
    #[inline(always)]
    fn scan_entries(&self, query: u64, k: u32, mut found: impl FnMut(u64, usize, u32)) {
        let low_bits = REMAINDER_BITS - self.h;
        let mask = low_mask(low_bits);
        let (q_high, q_low) = (query >> low_bits, query & mask);
        let mut start = self.bucket_start(0);
        for b in 0..1usize << self.h {
            let end = self.bucket_start(b + 1);
            let high_distance = (b as u64 ^ q_high).count_ones();
            if high_distance > k || start == end {
                start = end;
                continue;
            }
            let budget = k - high_distance;
            // A match is rare (a few per query among thousands of entries), so the one branch
            // per entry is predicted right nearly always.
            let mut at = start * low_bits as usize;
            for e in start..end {
                let byte = at >> 3;
                // In bounds: the value ends with 16 bytes of padding (`parse` checked).
                let word = self
                    .lows
                    .get(byte..byte + 8)
                    .and_then(|b| <[u8; 8]>::try_from(b).ok())
                    .map_or(0, u64::from_le_bytes);
                let low = (word >> (at & 7)) & mask;
                if (low ^ q_low).count_ones() <= budget {
                    let remainder = ((b as u64) << low_bits) | low;
                    found(remainder, e, (remainder ^ query).count_ones());
                }
                at += low_bits as usize;
            }
            start = end;
        }
    }

    /// Calls `each(remainder, id)` for every entry, in order, with the chunk's `ids`.
    pub(crate) fn for_each(&self, ids: &Ids<'_>, mut each: impl FnMut(u64, u64)) {
        let low_bits = REMAINDER_BITS - self.h;
        let mask = low_mask(low_bits);
        let mut start = self.bucket_start(0);
        for b in 0..1usize << self.h {
            let end = self.bucket_start(b + 1);
            for e in start..end {
                let low = get_bits57(self.lows, e * low_bits as usize, mask);
                each(((b as u64) << low_bits) | low, ids.get(e));
            }
            start = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The entries of `entries` encoded and read back, with ids inline and apart (the two
    /// must agree).
    fn round_trip(entries: &[(u64, u64)]) -> Vec<(u64, u64)> {
        let mut bytes = vec![0xAA];
        let is_final = entries.len() % 2 == 1;
        encode(entries, is_final, &mut bytes);
        let chunk = Chunk::parse(&bytes[1..]).expect("a chunk just encoded parses");
        assert_eq!(chunk.len(), entries.len());
        assert_eq!(chunk.is_final(), is_final);
        let mut out = Vec::new();
        let ids = chunk.ids().expect("inline ids");
        chunk.for_each(&ids, |r, id| out.push((r, id)));

        let (mut apart, mut id_bytes) = (vec![0xAA], vec![0xBB]);
        encode_apart(entries, is_final, &mut apart, &mut id_bytes);
        let chunk = Chunk::parse(&apart[1..]).expect("a chunk just encoded parses");
        assert_eq!(chunk.is_final(), is_final);
        assert!(chunk.ids().is_none());
        // Without the ids, the chunk is the inline one less its ids.
        assert_eq!(apart.len() + id_bytes.len() - 1 - 16, bytes.len());
        let ids = Ids::parse(&id_bytes[1..], chunk.ids_layout()).expect("ids just encoded");
        let mut again = Vec::new();
        chunk.for_each(&ids, |r, id| again.push((r, id)));
        assert_eq!(again, out);
        out
    }

    fn sorted(mut entries: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
        for e in &mut entries {
            e.0 &= (1 << REMAINDER_BITS) - 1;
        }
        entries.sort_unstable();
        entries
    }

    #[test]
    fn bucket_bits_grow_with_the_count() {
        assert_eq!(bucket_bits(1), 0);
        assert_eq!(bucket_bits(21), 0);
        assert_eq!(bucket_bits(22), 1);
        assert_eq!(bucket_bits(1526), 7);
        assert_eq!(bucket_bits(MAX_ENTRIES), 8);
    }

    #[test]
    fn extreme_ids_and_remainders() {
        let top = (1u64 << REMAINDER_BITS) - 1;
        for entries in [
            vec![(0, 0)],
            vec![(top, u64::MAX)],
            vec![(0, 0), (top, u64::MAX)],
            vec![(5, 7); 3],
            (0..MAX_ENTRIES as u64)
                .map(|j| (top - 4095 + j, j * 3))
                .collect(),
        ] {
            assert_eq!(round_trip(&entries), entries);
        }
    }

    /// The bytes of chunks of 1 to 4,096 entries, ids of 0 to 64 bits, inline and apart:
    /// one hash each, so that a change to the encoder cannot change the format unnoticed.
    #[test]
    fn the_encoding_is_stable() {
        let (mut bytes, mut apart, mut ids) = (Vec::new(), Vec::new(), Vec::new());
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x ^ (x >> 29)
        };
        for n in [1usize, 2, 3, 21, 22, 100, 1526, 4095, MAX_ENTRIES] {
            for id_bits in [0u32, 1, 7, 31, 63, 64] {
                let entries: Vec<(u64, u64)> = (0..n)
                    .map(|_| {
                        let id = if id_bits == 0 {
                            42
                        } else {
                            next() >> (64 - id_bits)
                        };
                        (next(), id)
                    })
                    .collect();
                let entries = sorted(entries);
                encode(&entries, n % 2 == 0, &mut bytes);
                encode_apart(&entries, n % 2 == 0, &mut apart, &mut ids);
            }
        }
        assert_eq!(
            (bytes.len(), xxhash_rust::xxh3::xxh3_64(&bytes)),
            (511_858, 9_160_146_723_110_157_394)
        );
        let hash = |b: &[u8]| (b.len(), xxhash_rust::xxh3::xxh3_64(b));
        assert_eq!(
            (hash(&apart), hash(&ids)),
            (
                (307_146, 13_606_139_610_033_038_045),
                (205_576, 17_990_603_788_257_509_890)
            )
        );
    }

    #[test]
    fn damaged_chunks_are_refused() {
        let mut bytes = Vec::new();
        encode(&[(1, 2), (3, 4)], false, &mut bytes);
        assert!(Chunk::parse(&bytes[..bytes.len() - 1]).is_err());
        let mut zero = bytes.clone();
        zero[0] = 0;
        zero[1] = 0;
        assert!(Chunk::parse(&zero).is_err());
        let mut wide = bytes.clone();
        wide[3] = 65;
        assert!(Chunk::parse(&wide).is_err());
        // Inline ids read as apart: the length is wrong.
        let mut apart = bytes.clone();
        apart[3] |= APART;
        assert!(Chunk::parse(&apart).is_err());
        assert!(Chunk::parse(&[]).is_err());
        // Ids apart of the wrong length.
        let (mut chunk, mut ids) = (Vec::new(), Vec::new());
        encode_apart(&[(1, 2), (3, 40)], false, &mut chunk, &mut ids);
        let layout = Chunk::parse(&chunk).expect("a chunk").ids_layout();
        assert!(Ids::parse(&ids, layout).is_ok());
        assert!(Ids::parse(&ids[1..], layout).is_err());
        assert!(Ids::parse(&[], layout).is_err());
        let many: Vec<(u64, u64)> = (0..100).map(|j| (j << 40, j)).collect();
        let mut bytes = Vec::new();
        encode(&many, true, &mut bytes);
        // Bucket starts out of order.
        bytes[HEADER] = 0xff;
        assert!(Chunk::parse(&bytes).is_err());
    }

    proptest! {
        #[test]
        fn round_trips(entries in prop::collection::vec((any::<u64>(), any::<u64>()), 1..600)) {
            let entries = sorted(entries);
            prop_assert_eq!(round_trip(&entries), entries);
        }

        #[test]
        fn round_trips_clustered(
            high in any::<u64>(),
            entries in prop::collection::vec((0u64..1 << 20, 0u64..1000), 1..3000),
        ) {
            let entries = sorted(entries.into_iter().map(|(r, id)| (high << 20 | r, id)).collect());
            prop_assert_eq!(round_trip(&entries), entries);
        }

        /// The scan equals checking every entry, at every distance, with planted neighbours.
        #[test]
        fn scan_equals_brute_force(
            entries in prop::collection::vec((any::<u64>(), any::<u64>()), 1..2000),
            query in any::<u64>(),
            flips in prop::collection::vec((0u32..48, 0u32..48, 0u32..48), 0..40),
            k in 0u32..10,
        ) {
            let query = query & ((1 << REMAINDER_BITS) - 1);
            let mut entries = entries;
            for (j, &(a, b, c)) in flips.iter().enumerate() {
                let near = query ^ (1 << a) ^ ((j as u64 % 2) << b) ^ ((j as u64 % 3 / 2) << c);
                entries.push((near, j as u64));
            }
            entries.push((query, 9));
            let entries = sorted(entries);
            let entries = &entries[..entries.len().min(MAX_ENTRIES)];
            let (mut bytes, mut ids) = (Vec::new(), Vec::new());
            encode_apart(entries, false, &mut bytes, &mut ids);
            let chunk = Chunk::parse(&bytes).map_err(TestCaseError::fail)?;
            let ids = Ids::parse(&ids, chunk.ids_layout()).map_err(TestCaseError::fail)?;
            let mut got = Vec::new();
            chunk.scan(query, k, |r, e, d| got.push((r, ids.get(e), d)));
            let want: Vec<(u64, u64, u32)> = entries
                .iter()
                .map(|&(r, id)| (r, id, (r ^ query).count_ones()))
                .filter(|&(_, _, d)| d <= k)
                .collect();
            prop_assert_eq!(got, want);
        }
    }
}
