//! A run: the documents gathered in memory up to the budget, packed for sorting. The store's
//! upsert planner (`src/upsert/plan/`) reads it through [`Adds`] and plans its net
//! effect on the store, which `sst/` writes.

use rayon::prelude::*;

use super::prefault::Ahead;
use crate::codec::DocumentRef;
use crate::fingerprint::Fingerprint;
use crate::sketch::Sketch;
use crate::upsert::apply;
use crate::upsert::plan::Adds;

/// `text_len` of a document that has none.
const NO_TEXT_LEN: u64 = u64::MAX;

/// One add: what every task of the write phase reads (each block task scans all of them).
/// Keys and text lengths, which most loads do not have, are kept beside it, so that a load of
/// fingerprints holds 16 bytes per add, not 32 (at 100M 1.6 GB less memory to fault in).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rec {
    pub(crate) id: u64,
    pub(crate) fp: u64,
}

/// The adds of one run, in add order (the index of an add is its sequence number).
#[derive(Debug, Default)]
pub(crate) struct RunBuffer {
    pub(crate) recs: Vec<Rec>,
    /// The external keys of the adds, by sequence number, each packed as
    /// `offset << 16 | length` into `arena` (length 0: no key; keys have 1..=4096 bytes):
    /// empty while no add has had one.
    keys: Vec<u64>,
    arena: Vec<u8>,
    /// The text lengths of the adds, by sequence number ([`NO_TEXT_LEN`]: none): empty while
    /// no add has had one.
    text_lens: Vec<u64>,
    /// The sketches of the adds, by sequence number: empty while no add has had one.
    sketches: Vec<Option<Sketch>>,
    /// The `added` times the adds carry (`push_document`), by sequence number: empty while
    /// no add has had one. An add's own time is stored instead of the planner's.
    added: Vec<Option<u64>>,
    keyed: usize,
    /// Whether ids so far are strictly increasing (then no id repeats and no sort is needed).
    ascending: bool,
    /// Faults `recs`' reserved memory in ahead of the adds.
    ahead: Ahead,
}

/// Memory counted per add besides its key, which sizes a run: the 16-byte record and the
/// write phase's sort vectors take about 40 bytes, but larger runs were slower at a billion
/// documents (5 runs of 205M: loads of 319 and 329 s, first queries after them p50 0.56 ms;
/// 7 runs of 146M with the same records: 294 s, 0.51 ms), so a run counts what a 32-byte
/// record did.
pub(crate) const BYTES_PER_ADD: usize = 56;

impl RunBuffer {
    pub(crate) fn new() -> Self {
        RunBuffer {
            ascending: true,
            ..Default::default()
        }
    }

    /// A buffer with room for as many adds as `budget` bytes hold, so that it is never
    /// moved while it fills (a run ends before the budget is exceeded); if that much address
    /// space cannot be reserved, for at most 64 Mi adds, or none. Pages become resident as the
    /// adds reach them: another thread faults them in a window ahead ([`Ahead`]).
    pub(crate) fn with_budget(budget: usize) -> Self {
        let mut buf = RunBuffer::new();
        let adds = budget / BYTES_PER_ADD + 1;
        if buf.recs.try_reserve_exact(adds).is_err() {
            // The vector grows as it fills instead.
            let _ = buf.recs.try_reserve_exact(adds.min(1 << 26));
        }
        buf
    }

    /// Empties the buffer for the next run, keeping its memory (already faulted in).
    pub(crate) fn clear(&mut self) {
        let mut recs = std::mem::take(&mut self.recs);
        let ahead = std::mem::take(&mut self.ahead);
        recs.clear();
        *self = RunBuffer {
            recs,
            ahead,
            ..RunBuffer::new()
        };
    }

    pub(crate) fn len(&self) -> usize {
        self.recs.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// Approximate memory held and to be needed to write the run.
    pub(crate) fn bytes(&self) -> usize {
        self.recs.len() * BYTES_PER_ADD
            + (self.keys.len() + self.text_lens.len()) * std::mem::size_of::<u64>()
            + self.arena.len()
            + self.sketches.len() * std::mem::size_of::<Option<Sketch>>()
            + self.added.len() * std::mem::size_of::<Option<u64>>()
    }

    /// Adds a document without a sketch; the key must have passed `upsert::check_key`.
    #[cfg(test)]
    pub(crate) fn push(
        &mut self,
        id: u64,
        fp: Fingerprint,
        key: Option<&str>,
        text_len: Option<u64>,
    ) {
        self.push_sketched(id, fp, key, text_len, None);
    }

    /// Adds a document; the key must have passed `upsert::check_key`.
    pub(crate) fn push_sketched(
        &mut self,
        id: u64,
        fp: Fingerprint,
        key: Option<&str>,
        text_len: Option<u64>,
        sketch: Option<&Sketch>,
    ) {
        if let Some(last) = self.recs.last() {
            self.ascending &= last.id < id;
        }
        let seq = self.recs.len();
        push_beside(&mut self.sketches, seq, None, sketch.map(|s| Some(*s)));
        let key = key.map(|k| {
            let packed = ((self.arena.len() as u64) << 16) | k.len() as u64;
            self.arena.extend_from_slice(k.as_bytes());
            self.keyed += 1;
            packed
        });
        push_beside(&mut self.keys, seq, 0, key);
        let text_len = text_len.map(|l| l.min(NO_TEXT_LEN - 1));
        push_beside(&mut self.text_lens, seq, NO_TEXT_LEN, text_len);
        if self.recs.len() == self.recs.capacity() {
            // Moved: what was faulted in is behind.
            self.ahead.reset();
        }
        self.recs.push(Rec { id, fp: fp.0 });
        self.ahead.keep_ahead(&self.recs);
        if !self.added.is_empty() {
            self.added.push(None);
        }
    }

    /// What [`RunBuffer::bytes`] grows by with each add without a key, text length or sketch.
    pub(crate) fn bytes_per_plain_add(&self) -> usize {
        let beside = |used: bool, bytes: usize| if used { bytes } else { 0 };
        BYTES_PER_ADD
            + beside(!self.keys.is_empty(), std::mem::size_of::<u64>())
            + beside(!self.text_lens.is_empty(), std::mem::size_of::<u64>())
            + beside(
                !self.sketches.is_empty(),
                std::mem::size_of::<Option<Sketch>>(),
            )
            + beside(!self.added.is_empty(), std::mem::size_of::<Option<u64>>())
    }

    /// Adds documents without keys, text lengths or sketches: `ids[i]` with fingerprint
    /// `fingerprints[i]` (equal lengths), copied into the run on all cores.
    pub(crate) fn extend_fingerprints(&mut self, ids: &[u64], fingerprints: &[u64]) {
        if let (Some(last), Some(&first)) = (self.recs.last(), ids.first()) {
            self.ascending &= last.id < first;
        }
        self.ascending = self.ascending && ids.par_windows(2).all(|w| w[0] < w[1]);
        let len = self.recs.len() + ids.len();
        if !self.sketches.is_empty() {
            self.sketches.resize(len, None);
        }
        if !self.keys.is_empty() {
            self.keys.resize(len, 0);
        }
        if !self.text_lens.is_empty() {
            self.text_lens.resize(len, NO_TEXT_LEN);
        }
        if !self.added.is_empty() {
            self.added.resize(len, None);
        }
        if self.recs.capacity() < len {
            // Moved: what was faulted in is behind.
            self.ahead.reset();
        }
        self.recs.par_extend(
            ids.par_iter()
                .zip(fingerprints.par_iter())
                .map(|(&id, &fp)| Rec { id, fp }),
        );
        self.ahead.keep_ahead(&self.recs);
    }

    /// Adds a stored document as it is, its `added` time included (a store's upgrade); the
    /// key must have passed `upsert::check_key`.
    pub(crate) fn push_document(&mut self, id: u64, doc: &DocumentRef<'_>) {
        self.push_sketched(id, doc.fingerprint, doc.key, doc.text_len, doc.sketch);
        self.added.resize(self.recs.len() - 1, None);
        self.added.push(Some(doc.added));
    }

    /// The external key of add `seq`.
    pub(crate) fn key_of(&self, seq: u32) -> Option<&[u8]> {
        let packed = *self.keys.get(seq as usize)?;
        let len = (packed & 0xffff) as usize;
        if len == 0 {
            return None;
        }
        let start = (packed >> 16) as usize;
        self.arena.get(start..start + len)
    }

    /// The external key of add `seq` as text (keys came in as `&str`: always valid UTF-8).
    fn key_str(&self, seq: u32) -> Option<&str> {
        self.key_of(seq).and_then(|k| std::str::from_utf8(k).ok())
    }

    /// The text length of add `seq`, if it has one.
    fn text_len(&self, seq: u32) -> Option<u64> {
        let len = *self.text_lens.get(seq as usize)?;
        (len != NO_TEXT_LEN).then_some(len)
    }

    /// The document that surviving add `seq`, `rec`, stores: `added` is the planner's time,
    /// unless the add carries its own.
    pub(crate) fn document(&self, seq: u32, rec: &Rec, added: u64) -> DocumentRef<'_> {
        DocumentRef {
            fingerprint: Fingerprint(rec.fp),
            key: self.key_str(seq),
            text_len: self.text_len(seq),
            added: self
                .added
                .get(seq as usize)
                .copied()
                .flatten()
                .unwrap_or(added),
            sketch: self.sketches.get(seq as usize).and_then(Option::as_ref),
        }
    }
}

/// Records `value` of add `seq` in `column`, a vector kept beside the records that stays empty
/// while no add has had a value: the first value fills the adds before it with `none`.
fn push_beside<T: Clone>(column: &mut Vec<T>, seq: usize, none: T, value: Option<T>) {
    if value.is_some() || !column.is_empty() {
        column.resize(seq, none.clone());
        column.push(value.unwrap_or(none));
    }
}

impl Adds for RunBuffer {
    fn len(&self) -> usize {
        self.recs.len()
    }

    fn id(&self, seq: u32) -> u64 {
        self.recs[seq as usize].id
    }

    fn fingerprint(&self, seq: u32) -> u64 {
        self.recs[seq as usize].fp
    }

    fn key(&self, seq: u32) -> Option<&[u8]> {
        self.key_of(seq)
    }

    fn ids_ascending(&self) -> bool {
        self.ascending
    }

    fn has_keys(&self) -> bool {
        self.keyed > 0
    }
}

impl apply::Documents for RunBuffer {
    #[inline]
    fn document(&self, seq: u32, added: u64) -> Option<(u64, DocumentRef<'_>)> {
        let rec = self.recs.get(seq as usize)?;
        Some((rec.id, RunBuffer::document(self, seq, rec, added)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_unpack() {
        let mut b = RunBuffer::new();
        for (id, key) in [(1, Some("xy")), (2, None), (3, Some("z"))] {
            b.push(id, Fingerprint(id * 7), key, None);
        }
        assert_eq!(b.key_of(0), Some(&b"xy"[..]));
        assert_eq!(b.key_of(1), None);
        assert_eq!(b.key_of(2), Some(&b"z"[..]));
        assert!(b.ascending && b.has_keys());
    }

    #[test]
    fn keys_and_text_lengths_are_kept_from_the_first_add_that_has_one() {
        let mut b = RunBuffer::new();
        b.push(1, Fingerprint(1), None, None);
        b.push(2, Fingerprint(2), None, None);
        assert!(
            b.keys.is_empty() && b.text_lens.is_empty(),
            "16 bytes per add without them"
        );
        b.push(3, Fingerprint(3), Some("k3"), None);
        b.push(4, Fingerprint(4), None, Some(40));
        b.push(5, Fingerprint(5), Some("k5"), Some(u64::MAX));
        b.push(6, Fingerprint(6), None, None);
        let doc = |seq: u32| b.document(seq, &b.recs[seq as usize], 0);
        let got: Vec<(Option<&str>, Option<u64>)> = (0..6)
            .map(|seq| (doc(seq).key, doc(seq).text_len))
            .collect();
        assert_eq!(
            got,
            [
                (None, None),
                (None, None),
                (Some("k3"), None),
                (None, Some(40)),
                (Some("k5"), Some(u64::MAX - 1)),
                (None, None)
            ]
        );
        assert_eq!((b.keys.len(), b.text_lens.len()), (6, 6));
    }

    #[test]
    fn a_cleared_buffer_keeps_its_memory_and_nothing_else() {
        let mut b = RunBuffer::with_budget(1 << 20);
        let capacity = b.recs.capacity();
        assert!(capacity > (1 << 20) / BYTES_PER_ADD);
        for id in 0..5_000u64 {
            b.push(
                id,
                Fingerprint(id.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                Some("k"),
                None,
            );
        }
        // Filled past the reservation: moved once, every add kept.
        assert!(b.recs.iter().enumerate().all(
            |(i, r)| r.id == i as u64 && r.fp == (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ));
        b.push(1, Fingerprint(1), None, None);
        assert!(!b.ascending && b.has_keys());
        let capacity = b.recs.capacity();
        b.clear();
        assert!(b.is_empty() && b.arena.is_empty() && b.ascending && !b.has_keys());
        assert_eq!(b.recs.capacity(), capacity);
        assert_eq!(b.bytes(), 0);
    }

    #[test]
    fn an_add_keeps_its_own_added_time() {
        let mut b = RunBuffer::new();
        b.push(1, Fingerprint(1), None, None);
        let doc = DocumentRef {
            fingerprint: Fingerprint(2),
            key: Some("k"),
            text_len: Some(9),
            added: 42,
            sketch: None,
        };
        b.push_document(2, &doc);
        b.push(3, Fingerprint(3), None, None);
        let at = |seq: u32| b.document(seq, &b.recs[seq as usize], 7).added;
        assert_eq!((at(0), at(1), at(2)), (7, 42, 7));
        assert_eq!(b.document(1, &b.recs[1], 7), doc);
    }
}
