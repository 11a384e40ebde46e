//! [`BitCounter`]: 64 counters of the hashes with each bit set, kept as bit planes and added
//! to 16 hashes at a time by a carry-save adder tree (`bit_sums.rs` says why).

/// 64 counters, one per bit position, of the hashes with that bit set, bit-sliced: bit `i` of
/// `ones`, `twos`, `fours` and `eights` are the four low binary digits of counter `i`, byte
/// `i % 8` of `lanes[i / 8]` counts its recent sixteens, and `total[i]` the rest.
pub(crate) struct BitCounter {
    ones: u64,
    twos: u64,
    fours: u64,
    eights: u64,
    lanes: [u64; 8],
    /// Additions to `lanes` since they were moved to `total`: each adds at most 1 to a byte
    /// lane, so they are moved at 255.
    lane_adds: u32,
    total: [u64; 64],
}

impl Default for BitCounter {
    fn default() -> Self {
        BitCounter {
            ones: 0,
            twos: 0,
            fours: 0,
            eights: 0,
            lanes: [0; 8],
            lane_adds: 0,
            total: [0; 64],
        }
    }
}

/// Carry-save adder: `a + b + c` per bit position, as a carry (weight 2) and a sum (weight 1).
#[inline(always)]
fn csa(a: u64, b: u64, c: u64) -> (u64, u64) {
    let u = a ^ b;
    ((a & b) | (u & c), u ^ c)
}

impl BitCounter {
    /// Adds 16 hashes (Harley-Seal): 15 carry-save adders leave at most one carry of weight
    /// 16 per bit, which goes to the byte lanes.
    #[inline]
    pub(crate) fn add_16(&mut self, h: &[u64]) {
        let &[h0, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13, h14, h15] = h else {
            return;
        };
        let (twos_a, ones) = csa(self.ones, h0, h1);
        let (twos_b, ones) = csa(ones, h2, h3);
        let (fours_a, twos) = csa(self.twos, twos_a, twos_b);
        let (twos_a, ones) = csa(ones, h4, h5);
        let (twos_b, ones) = csa(ones, h6, h7);
        let (fours_b, twos) = csa(twos, twos_a, twos_b);
        let (eights_a, fours) = csa(self.fours, fours_a, fours_b);
        let (twos_a, ones) = csa(ones, h8, h9);
        let (twos_b, ones) = csa(ones, h10, h11);
        let (fours_a, twos) = csa(twos, twos_a, twos_b);
        let (twos_a, ones) = csa(ones, h12, h13);
        let (twos_b, ones) = csa(ones, h14, h15);
        let (fours_b, twos) = csa(twos, twos_a, twos_b);
        let (eights_b, fours) = csa(fours, fours_a, fours_b);
        let (sixteens, eights) = csa(self.eights, eights_a, eights_b);
        self.ones = ones;
        self.twos = twos;
        self.fours = fours;
        self.eights = eights;
        self.add_sixteens(sixteens);
    }

    /// Adds one hash: a carry rippling through the four planes.
    #[inline]
    pub(crate) fn add_1(&mut self, hash: u64) {
        let mut carry = hash;
        for plane in [
            &mut self.ones,
            &mut self.twos,
            &mut self.fours,
            &mut self.eights,
        ] {
            let next = *plane & carry;
            *plane ^= carry;
            carry = next;
        }
        if carry != 0 {
            self.add_sixteens(carry);
        }
    }

    /// Adds 16 to the counter of each bit set in `bits`.
    #[inline]
    fn add_sixteens(&mut self, bits: u64) {
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            *lane += SPREAD[((bits >> (8 * j)) & 0xff) as usize];
        }
        self.lane_adds += 1;
        if self.lane_adds == 255 {
            self.empty_lanes();
        }
    }

    fn empty_lanes(&mut self) {
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            for (k, total) in self.total.iter_mut().skip(8 * j).take(8).enumerate() {
                *total += 16 * ((*lane >> (8 * k)) & 0xff);
            }
            *lane = 0;
        }
        self.lane_adds = 0;
    }

    /// The 64 counts, bit 0 first.
    pub(crate) fn counts(&self) -> [u64; 64] {
        let mut counts = self.total;
        for (bit, count) in counts.iter_mut().enumerate() {
            let digit = |plane: u64| (plane >> bit) & 1;
            let lane = self
                .lanes
                .get(bit / 8)
                .map_or(0, |l| (l >> (8 * (bit % 8))) & 0xff);
            *count += digit(self.ones)
                + 2 * digit(self.twos)
                + 4 * digit(self.fours)
                + 8 * digit(self.eights)
                + 16 * lane;
        }
        counts
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simhash::sums::tests::random_hashes;

    #[test]
    fn bit_counts_match_a_plain_count() {
        // Sizes around the group of 16 and the lane limit of 255 sixteens.
        for n in [
            0usize,
            1,
            15,
            16,
            17,
            255,
            4079,
            4080,
            4081,
            16 * 255 * 3 + 7,
        ] {
            let hashes = random_hashes(n, 0x0123_4567_89ab_cdef ^ n as u64);
            let mut counter = BitCounter::default();
            let mut groups = hashes.chunks_exact(16);
            for group in &mut groups {
                counter.add_16(group);
            }
            for &h in groups.remainder() {
                counter.add_1(h);
            }
            for (bit, &count) in counter.counts().iter().enumerate() {
                let expected = hashes.iter().filter(|&&h| (h >> bit) & 1 == 1).count();
                assert_eq!(count, expected as u64, "{n} hashes, bit {bit}");
            }
        }
        // All ones: every counter reaches n.
        let mut counter = BitCounter::default();
        for _ in 0..300 {
            counter.add_16(&[u64::MAX; 16]);
            counter.add_1(u64::MAX);
        }
        assert!(counter.counts().iter().all(|&c| c == 300 * 17));
    }

    #[test]
    fn spread_table_matches_bits() {
        for (b, spread) in SPREAD.iter().enumerate() {
            for k in 0..8 {
                assert_eq!((spread >> (8 * k)) & 0xff, ((b >> k) & 1) as u64);
            }
        }
    }
}
