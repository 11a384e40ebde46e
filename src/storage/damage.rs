//! Reading a damaged store: each family scanned in key order, stepping over what cannot be
//! read, each table file that failed named once ([`Damage`]).
//!
//! The database is opened for salvage ([`super::Access::Salvage`]): RocksDB then opens a table
//! file only when a read needs it, so a file whose footer, index or properties are damaged
//! fails the reads that touch it, not the open. When a scan fails after key `k`, the file its
//! error names is looked up among the live files, and the scan goes on from the first key it
//! can seek to past `k`: found by bisection between `k` and the end of that file (a seek
//! into a damaged block fails, a seek past it does not), so a damaged data block loses only
//! its own entries and a file that cannot be opened only its own range. A file the scan
//! cannot step over (one of level 0 that cannot be opened takes part in every read of its
//! family) ends the scan of that family, named.

use rocksdb::{DBRawIteratorWithThreadMode, LiveFile, DB};

use super::families::in_key_order;
use super::{Database, Family, ReadOptions};
use crate::error::Result;

/// A table file a scan could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Damage {
    /// The file's name in the store directory (`000012.sst`), or the family's name when
    /// RocksDB's error named no file of it.
    pub(crate) file: String,
    /// RocksDB's error.
    pub(crate) message: String,
}

impl Database {
    /// Calls `each(key, value)` for every entry of `family` that can be read, in key order,
    /// and returns the files it could not read.
    pub(crate) fn scan_over_damage(
        &self,
        family: &'static str,
        mut each: impl FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<Vec<Damage>> {
        let files: Vec<LiveFile> = self
            .rocks()
            .live_files()
            .map_err(|e| self.error("list live files", None, e))?
            .into_iter()
            .filter(|f| f.column_family_name == family)
            .collect();
        let cf = self.family(family)?;
        let mut damaged: Vec<Damage> = Vec::new();
        // Where the next pass starts: a key it seeks to (`None`: the first).
        let mut from: Option<Vec<u8>> = None;
        loop {
            let mut it = iterator(self.rocks(), cf);
            match &from {
                Some(key) => it.seek(key),
                None => it.seek_to_first(),
            }
            // The smallest key the failed read may have been after.
            let mut failed_after = from.clone().unwrap_or_default();
            while let (Some(key), Some(value)) = (it.key(), it.value()) {
                each(key, value)?;
                failed_after = successor(key);
                it.next();
            }
            let Err(e) = it.status() else {
                return Ok(damaged);
            };
            let message = e.to_string();
            let file = files
                .iter()
                .find(|f| message.contains(f.name.trim_start_matches('/')));
            let name = file.map_or(family.to_string(), |f| {
                f.name.trim_start_matches('/').to_string()
            });
            if !damaged.iter().any(|d| d.file == name) {
                damaged.push(Damage {
                    file: name,
                    message,
                });
            }
            let past_file = file.and_then(|f| f.end_key.as_deref()).map(successor);
            match past_file {
                Some(hi) if hi > failed_after && seeks(self.rocks(), cf, &hi) => {
                    from = Some(first_seekable(self.rocks(), cf, failed_after, hi));
                }
                // Nothing to step over to: the rest of the family cannot be read.
                _ => return Ok(damaged),
            }
        }
    }
}

fn iterator<'a>(db: &'a DB, cf: &Family) -> DBRawIteratorWithThreadMode<'a, DB> {
    let mut options = in_key_order(ReadOptions::default());
    options.fill_cache(false);
    db.raw_iterator_cf_opt(cf, options)
}

/// Whether a seek to `key` reads without an error.
fn seeks(db: &DB, cf: &Family, key: &[u8]) -> bool {
    let mut it = iterator(db, cf);
    it.seek(key);
    it.status().is_ok()
}

/// The smallest key of the form the bisection reaches in `(lo, hi]` that a seek reads
/// without an error, where a seek to `lo` fails and one to `hi` does not.
fn first_seekable(db: &DB, cf: &Family, mut lo: Vec<u8>, mut hi: Vec<u8>) -> Vec<u8> {
    loop {
        let mid = midpoint(&lo, &hi);
        if mid <= lo || mid >= hi {
            return hi;
        }
        if seeks(db, cf, &mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
}

/// The smallest key after `key`.
fn successor(key: &[u8]) -> Vec<u8> {
    let mut next = key.to_vec();
    next.push(0);
    next
}

/// A key between `a` and `b` (`a < b`) in byte order: their mean as big-endian numbers of
/// one byte more than the longer, trailing zeros dropped.
fn midpoint(a: &[u8], b: &[u8]) -> Vec<u8> {
    let len = a.len().max(b.len()) + 1;
    let digit = |s: &[u8], i: usize| u32::from(s.get(i).copied().unwrap_or(0));
    // a + b, from the last byte, with the carry in front.
    let mut sum = vec![0u32; len + 1];
    let mut carry = 0;
    for i in (0..len).rev() {
        let d = digit(a, i) + digit(b, i) + carry;
        sum[i + 1] = d & 0xff;
        carry = d >> 8;
    }
    sum[0] = carry;
    // Halved, from the first digit.
    let mut out = Vec::with_capacity(len);
    let mut rest = 0;
    for (i, d) in sum.iter().enumerate() {
        let v = (rest << 8) | d;
        if i > 0 {
            out.push((v >> 1) as u8);
        }
        rest = v & 1;
    }
    while out.last() == Some(&0) && out.len() > 1 {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_midpoint_lies_between() {
        let pairs: [(&[u8], &[u8]); 5] = [
            (b"a", b"c"),
            (b"a", b"b"),
            (b"\x00\x00\x01", b"\x00\x00\x02"),
            (b"https://example.com/1", b"https://example.com/2"),
            (&[0xff, 0xff], &[0xff, 0xff, 0x00, 0x01]),
        ];
        for (a, b) in pairs {
            let mut lo = a.to_vec();
            // Bisection ends: every midpoint lies strictly between, until none does.
            for _ in 0..200 {
                let m = midpoint(&lo, b);
                if m <= lo || m.as_slice() >= b {
                    break;
                }
                assert!(lo.as_slice() < m.as_slice() && m.as_slice() < b);
                lo = m;
            }
        }
        assert_eq!(midpoint(b"a", b"c"), b"b");
    }
}
