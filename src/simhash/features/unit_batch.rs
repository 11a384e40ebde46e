//! [`UnitBatch`]: feature hashes of weight 1 collected for a [`Sink`](super::sink::Sink)
//! and handed over together: summing them in a tight loop is cheaper than one call per
//! occurrence.

/// How many hashes are handed over together: a multiple of 16, the bit counters' fastest
/// path (`sums/bit_counter.rs`).
pub(crate) const UNIT_BATCH: usize = 64;

/// Hashes of weight 1 not yet handed over: the batch is full at [`UNIT_BATCH`], and the
/// two slots beyond are for [`push_few`](UnitBatch::push_few).
pub(crate) struct UnitBatch {
    hashes: [u64; UNIT_BATCH + 2],
    len: usize,
}

impl UnitBatch {
    pub(crate) const fn new() -> Self {
        UnitBatch {
            hashes: [0; UNIT_BATCH + 2],
            len: 0,
        }
    }

    /// Adds `hash` if `keep`, without a branch on `keep`: whether a feature is kept (a stop
    /// word, a slot that holds a count) follows no pattern the processor could predict, and
    /// a mispredicted branch costs more than writing the hash anyway. Returns whether the
    /// batch is full, in which case it must be [taken](Self::take) before the next push.
    #[inline(always)]
    pub(crate) fn push_if(&mut self, hash: u64, keep: bool) -> bool {
        // `len < UNIT_BATCH` always holds here: a full batch is taken before the next push.
        // Through a local: with `self.len` read again after the store, the extractor's token
        // loop ran 1.2 M more instructions on the benchmark's corpus (callgrind).
        let len = self.len;
        if let Some(slot) = self.hashes.get_mut(len) {
            *slot = hash;
        }
        self.len = len + usize::from(keep);
        self.len >= UNIT_BATCH
    }

    /// Adds `copies` (at most 3) occurrences of `hash`: three slots are written whatever
    /// `copies`, without a branch on it. Returns whether the batch is full, as
    /// [`push_if`](Self::push_if).
    #[inline(always)]
    pub(crate) fn push_few(&mut self, hash: u64, copies: u32) -> bool {
        if let Some(slots) = self.hashes.get_mut(self.len..self.len + 3) {
            slots.fill(hash);
        }
        self.len += copies.min(3) as usize;
        self.len >= UNIT_BATCH
    }

    /// The hashes added since the last take; the batch is empty afterwards.
    #[inline]
    pub(crate) fn take(&mut self) -> &[u64] {
        let len = std::mem::take(&mut self.len);
        self.hashes.get(..len).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_is_kept_and_is_full_at_the_batch_size() {
        let mut batch = UnitBatch::new();
        assert!(!batch.push_if(1, true));
        assert!(!batch.push_if(2, false));
        assert!(!batch.push_if(3, true));
        assert_eq!(batch.take(), [1, 3]);
        assert_eq!(batch.take(), [] as [u64; 0]);
        let full: Vec<bool> = (0..UNIT_BATCH as u64)
            .map(|h| batch.push_if(h, true))
            .collect();
        assert_eq!(full.iter().filter(|&&f| f).count(), 1);
        assert_eq!(full.last(), Some(&true));
        assert_eq!(batch.take().len(), UNIT_BATCH);
        // Three at a time: the batch ends up to two past the batch size.
        let full: Vec<bool> = (0..22).map(|h| batch.push_few(h, 3)).collect();
        assert_eq!(full.iter().position(|&f| f), Some(21));
        assert_eq!(batch.take().len(), UNIT_BATCH + 2);
        assert!(!batch.push_few(7, 0));
        assert!(!batch.push_few(8, 2));
        assert_eq!(batch.take(), [8, 8]);
    }
}
