//! The spool file: one run's chunks of one block family for the block values `lo..hi`,
//! written in value order ([`SpoolWriter`]) and read back value by value by a merge part
//! ([`SpoolReader`]). Its layout is in `mod.rs`.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::kernel::entry_key;
use super::write_behind::WriteBehind;
use crate::error::{Error, Result};
use crate::postings::chunk::Chunk;
use crate::storage::sst::kept_pages;

const MAGIC: &[u8; 8] = b"SHSPOOL1";
const FOOTER: usize = 24;
/// Read buffer per spool file in a merge part.
const READ_BUFFER: usize = 64 << 10;

fn invalid(path: &Path, message: String) -> Error {
    Error::io(
        "reading the spool file",
        path,
        std::io::Error::new(std::io::ErrorKind::InvalidData, message),
    )
}
/// Writes one spool file: the chunks of block values `lo..hi`, in value order.
pub(crate) struct SpoolWriter {
    out: WriteBehind,
    path: PathBuf,
    pub(super) lo: u32,
    hi: u32,
    /// The next value whose offset is not yet in `offsets`.
    next: u32,
    offsets: Vec<u64>,
    pos: u64,
}

impl SpoolWriter {
    pub(crate) fn create(path: &Path, lo: u32, hi: u32) -> Result<SpoolWriter> {
        let file = File::create(path).map_err(|e| Error::io("creating", path, e))?;
        Ok(SpoolWriter {
            out: WriteBehind::new(file),
            path: path.to_path_buf(),
            lo,
            hi,
            next: lo,
            offsets: Vec::with_capacity((hi - lo + 1) as usize),
            pos: 0,
        })
    }

    /// Appends a chunk of block value `value` (not below the last one's, inside `lo..hi`).
    pub(crate) fn put(&mut self, value: u16, bytes: &[u8]) -> Result<()> {
        let value = u32::from(value);
        debug_assert!(value >= self.lo && value < self.hi && value + 1 >= self.next);
        while self.next <= value {
            self.offsets.push(self.pos);
            self.next += 1;
        }
        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        self.out
            .write_all(&len.to_le_bytes())
            .and_then(|()| self.out.write_all(bytes))
            .map_err(|e| Error::io("writing", &self.path, e))?;
        self.pos += 4 + bytes.len() as u64;
        Ok(())
    }

    /// Writes the offset table and the footer, syncs the file and returns its size.
    pub(crate) fn finish(mut self) -> Result<u64> {
        while self.next <= self.hi {
            self.offsets.push(self.pos);
            self.next += 1;
        }
        let mut tail = Vec::with_capacity(self.offsets.len() * 8 + FOOTER);
        for o in &self.offsets {
            tail.extend_from_slice(&o.to_le_bytes());
        }
        tail.extend_from_slice(&self.lo.to_le_bytes());
        tail.extend_from_slice(&self.hi.to_le_bytes());
        tail.extend_from_slice(&self.pos.to_le_bytes());
        tail.extend_from_slice(MAGIC);
        self.out
            .write_all(&tail)
            .map_err(|e| Error::io("writing", &self.path, e))?;
        let file = self
            .out
            .into_inner()
            .map_err(|e| Error::io("writing", &self.path, e))?;
        file.sync_all()
            .map_err(|e| Error::io("syncing", &self.path, e))?;
        Ok(self.pos + tail.len() as u64)
    }
}

/// Reads one spool file, value by value in increasing order.
pub(super) struct SpoolReader {
    file: BufReader<File>,
    path: PathBuf,
    pub(super) lo: u32,
    hi: u32,
    offsets: Vec<u64>,
    /// The position of `file` in the data.
    pos: u64,
    /// Where the pages already read and dropped from the page cache end.
    dropped: u64,
    bytes: Vec<u8>,
}

/// Bytes a merge part reads from a spool file between two drops of what it has read from the
/// page cache: spools are read once, and their pages would push out the chunks the merge
/// keeps there.
const DROP_EVERY: u64 = 8 << 20;

impl SpoolReader {
    /// Opens `path` to read the values of `lo..hi` it holds.
    pub(super) fn open(path: &Path, lo: u32, hi: u32) -> Result<SpoolReader> {
        let mut file = File::open(path).map_err(|e| Error::io("opening", path, e))?;
        let io = |e| Error::io("reading", path, e);
        let len = file.metadata().map_err(io)?.len();
        if len < FOOTER as u64 {
            return Err(invalid(path, format!("{len} bytes, shorter than a footer")));
        }
        let mut footer = [0u8; FOOTER];
        file.seek(SeekFrom::Start(len - FOOTER as u64))
            .and_then(|_| file.read_exact(&mut footer))
            .map_err(io)?;
        let word = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&footer[at..at + 8]);
            u64::from_le_bytes(b)
        };
        let (file_lo, file_hi) = (word(0) as u32, (word(0) >> 32) as u32);
        let table_at = word(8);
        if &footer[16..24] != MAGIC || file_lo > file_hi || file_hi > 1 << 16 {
            return Err(invalid(path, "bad footer".into()));
        }
        let entries = u64::from(file_hi - file_lo + 1);
        if table_at + 8 * entries + FOOTER as u64 != len {
            return Err(invalid(
                path,
                "the offset table does not fit the file".into(),
            ));
        }
        // The offsets of the values of `lo..hi` in the file, and of the end of the last.
        let (lo, hi) = (lo.clamp(file_lo, file_hi), hi.clamp(file_lo, file_hi));
        let mut table = vec![0u8; 8 * (hi - lo + 1) as usize];
        file.seek(SeekFrom::Start(table_at + 8 * u64::from(lo - file_lo)))
            .and_then(|_| file.read_exact(&mut table))
            .map_err(io)?;
        let offsets: Vec<u64> = table
            .chunks_exact(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        let start = offsets.first().copied().unwrap_or(0);
        if offsets.windows(2).any(|w| w[0] > w[1]) || offsets.last().is_some_and(|&o| o > table_at)
        {
            return Err(invalid(path, "offsets out of order".into()));
        }
        file.seek(SeekFrom::Start(start)).map_err(io)?;
        Ok(SpoolReader {
            file: BufReader::with_capacity(READ_BUFFER, file),
            path: path.to_path_buf(),
            lo,
            hi,
            offsets,
            pos: start,
            dropped: start,
            bytes: Vec::new(),
        })
    }

    /// Drops the pages read so far from the page cache, every [`DROP_EVERY`] bytes.
    fn drop_behind(&mut self) {
        if self.pos - self.dropped < DROP_EVERY {
            return;
        }
        kept_pages::advise(
            self.file.get_ref(),
            self.dropped,
            self.pos - self.dropped,
            libc::POSIX_FADV_DONTNEED,
        );
        self.dropped = self.pos;
    }

    pub(super) fn covers(&self, value: u32) -> bool {
        self.lo <= value && value < self.hi
    }

    /// Appends the entries of block value `value` (covered, and not below the last one read)
    /// to `out`, in order, as [`entry_key`]s.
    pub(super) fn read_value(&mut self, value: u32, out: &mut Vec<u128>) -> Result<()> {
        let at = (value - self.lo) as usize;
        let (start, end) = (self.offsets[at], self.offsets[at + 1]);
        let io = |e| Error::io("reading", &self.path, e);
        if start != self.pos {
            let skip = start as i64 - self.pos as i64;
            self.file.seek_relative(skip).map_err(io)?;
            self.pos = start;
        }
        while self.pos < end {
            let mut len = [0u8; 4];
            self.file.read_exact(&mut len).map_err(io)?;
            let len = u32::from_le_bytes(len) as usize;
            if self.pos + 4 + len as u64 > end {
                return Err(invalid(
                    &self.path,
                    format!("a chunk of value {value} runs past it"),
                ));
            }
            self.bytes.resize(len, 0);
            self.file.read_exact(&mut self.bytes).map_err(io)?;
            self.pos += 4 + len as u64;
            let chunk = Chunk::parse(&self.bytes)
                .map_err(|m| invalid(&self.path, format!("a chunk of value {value}: {m}")))?;
            let ids = chunk.ids().ok_or_else(|| {
                invalid(
                    &self.path,
                    format!("a chunk of value {value} without its ids"),
                )
            })?;
            chunk.for_each(&ids, |rem, id| out.push(entry_key(rem, id)));
        }
        self.drop_behind();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spool_file_reads_back() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", "", e))?;
        let path = dir.path().join("x.spool");
        let mut w = SpoolWriter::create(&path, 10, 20)?;
        let mut want = Vec::new();
        for (value, n) in [(11u16, 3u64), (11, 2), (15, 5000), (19, 1)] {
            let entries: Vec<(u64, u64)> = (0..n).map(|j| (j * 7, j + 100)).collect();
            let mut bytes = Vec::new();
            crate::postings::chunk::encode(&entries[..n.min(4096) as usize], false, &mut bytes);
            w.put(value, &bytes)?;
            want.push((value, entries[..n.min(4096) as usize].to_vec()));
        }
        w.finish()?;
        let mut r = SpoolReader::open(&path, 0, 1 << 16)?;
        assert!(r.covers(10) && r.covers(19) && !r.covers(20) && !r.covers(9));
        let mut part = SpoolReader::open(&path, 12, 16)?;
        assert!(!part.covers(11) && part.covers(15) && !part.covers(16));
        let mut got = Vec::new();
        part.read_value(15, &mut got)?;
        assert_eq!(got.len(), 4096);
        for value in [10u32, 11, 15, 19] {
            let mut got = Vec::new();
            r.read_value(value, &mut got)?;
            let expect: Vec<u128> = want
                .iter()
                .filter(|(v, _)| u32::from(*v) == value)
                .flat_map(|(_, e)| e.iter().map(|&(a, b)| entry_key(a, b)))
                .collect();
            assert_eq!(got, expect, "value {value}");
        }
        Ok(())
    }
}
