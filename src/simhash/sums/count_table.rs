//! [`CountTable`]: how many times each feature of a text occurs, by its hash, for the weights
//! that are not linear in the count (the count pieces of `piece_sums.rs`).

/// Occurrence counts by feature hash: open addressing with linear probing, indexed by the
/// hash's low bits. Hash 0 marks an empty slot, so the feature whose hash is 0 is counted
/// apart.
pub(crate) struct CountTable {
    slots: Vec<(u64, u32)>,
    /// Occupied slots.
    len: usize,
    zero: u32,
}

impl CountTable {
    /// The smallest table; it grows fourfold at half full (fewer rounds of rehashing, each
    /// with a branch per slot that follows no pattern).
    const MIN_SLOTS: usize = 256;
    /// A guess from the text's length is capped: a long text repeats its features, and the
    /// table grows when it must.
    const MAX_GUESS: usize = 1 << 16;

    pub(crate) fn with_capacity(distinct: usize) -> Self {
        let slots = (distinct.min(Self::MAX_GUESS) * 2)
            .next_power_of_two()
            .max(Self::MIN_SLOTS);
        CountTable {
            slots: vec![(0, 0); slots],
            len: 0,
            zero: 0,
        }
    }

    #[inline]
    pub(crate) fn bump(&mut self, hash: u64) {
        if hash == 0 {
            self.zero = self.zero.saturating_add(1);
            return;
        }
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let slot = &mut self.slots[i];
            if slot.0 == hash {
                slot.1 = slot.1.saturating_add(1);
                return;
            }
            if slot.0 == 0 {
                *slot = (hash, 1);
                self.len += 1;
                if self.len * 2 > self.slots.len() {
                    self.grow();
                }
                return;
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    fn grow(&mut self) {
        let grown = vec![(0, 0); self.slots.len() * 4];
        let old = std::mem::replace(&mut self.slots, grown);
        let mask = self.slots.len() - 1;
        for (hash, count) in old.into_iter().filter(|&(hash, _)| hash != 0) {
            let mut i = hash as usize & mask;
            while self.slots[i].0 != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = (hash, count);
        }
    }

    /// Every slot as `(hash, count)`, an empty one as `(0, 0)`, then the feature of hash 0
    /// if it was counted: a caller that adds `count` of something for each can go through
    /// them all alike, without a branch on whether a slot is empty (which follows no
    /// pattern).
    pub(crate) fn slots(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        let zero = (self.zero > 0).then_some((0, self.zero));
        self.slots.iter().copied().chain(zero)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_survive_growth_and_hash_zero() {
        let mut t = CountTable::with_capacity(0);
        // Hashes that collide on their low bits, to exercise probing.
        let hashes: Vec<u64> = (0..2000u64).map(|i| (i << 20) | 5).collect();
        for (i, &h) in hashes.iter().enumerate() {
            for _ in 0..=(i % 3) {
                t.bump(h);
            }
        }
        for _ in 0..4 {
            t.bump(0);
        }
        let mut repeated: Vec<(u64, u32)> = t.slots().filter(|&(_, c)| c > 1).collect();
        repeated.sort_unstable();
        let mut expected: Vec<(u64, u32)> = hashes
            .iter()
            .enumerate()
            .map(|(i, &h)| (h, (i % 3) as u32 + 1))
            .filter(|&(_, c)| c > 1)
            .chain([(0, 4)])
            .collect();
        expected.sort_unstable();
        assert_eq!(repeated, expected);
        assert_eq!(t.len, hashes.len());
    }
}
