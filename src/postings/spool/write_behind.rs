//! A file written once and read much later, whose pages are written back and dropped from
//! the page cache as the writing goes on, as RocksDB's SST writer does with its own files.
//!
//! A load of many runs writes about 5 GB of spool files per run (`spool.rs`), read again only
//! at the merge. Left in the page cache, they push the store's other files out, and the page
//! cache grows by fresh pages while memory lasts: on a virtual machine that hands freed memory
//! back to its host each such page costs about 5 µs at its first write, and the first runs of
//! a billion-document load took 38 to 41 s to write against 29 to 31 s for the later ones,
//! whose spools reused pages the cache had freed. Here each 16 MiB written is handed to the
//! disk (`sync_file_range`), and the 16 MiB before it, written by then, is dropped
//! (`posix_fadvise(POSIX_FADV_DONTNEED)`): at most 32 MiB of a file stays in the cache.

use std::fs::File;
use std::io::{BufWriter, Write};

/// Bytes handed to the disk at a time.
const WINDOW: u64 = /* 16 MiB */ 16 << 20;

/// A buffered writer of `file` that drops what it wrote from the page cache as it goes.
pub(crate) struct WriteBehind {
    out: BufWriter<File>,
    /// Bytes written to the buffer.
    written: u64,
    /// Bytes handed to the disk: `[dropped, started)` may still be in the page cache.
    started: u64,
    /// Bytes dropped from the page cache.
    dropped: u64,
}

impl WriteBehind {
    pub(crate) fn new(file: File) -> Self {
        WriteBehind {
            out: BufWriter::with_capacity(1 << 20, file),
            written: 0,
            started: 0,
            dropped: 0,
        }
    }

    /// Appends `bytes`.
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.write_all(bytes)?;
        self.written += bytes.len() as u64;
        if self.written - self.started >= WINDOW {
            self.out.flush()?;
            self.hand_to_disk();
        }
        Ok(())
    }

    /// Starts writing back what was written since the last call, and drops the window
    /// before it from the page cache once it is on disk. Best effort: errors are left for
    /// `sync_all` to report.
    fn hand_to_disk(&mut self) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let fd = self.out.get_ref().as_raw_fd();
            let off = |x: u64| libc::off64_t::try_from(x).unwrap_or(libc::off64_t::MAX);
            // SAFETY: plain system calls on a file descriptor this writer owns; they read
            // and write no memory of this process.
            unsafe {
                libc::sync_file_range(
                    fd,
                    off(self.started),
                    off(self.written - self.started),
                    libc::SYNC_FILE_RANGE_WRITE,
                );
                if self.started > self.dropped {
                    let (at, len) = (off(self.dropped), off(self.started - self.dropped));
                    libc::sync_file_range(
                        fd,
                        at,
                        len,
                        libc::SYNC_FILE_RANGE_WAIT_BEFORE
                            | libc::SYNC_FILE_RANGE_WRITE
                            | libc::SYNC_FILE_RANGE_WAIT_AFTER,
                    );
                    libc::posix_fadvise(fd, at, len, libc::POSIX_FADV_DONTNEED);
                }
            }
        }
        self.dropped = self.started;
        self.started = self.written;
    }

    /// Flushes the buffer and returns the file (to be synced by the caller).
    pub(crate) fn into_inner(self) -> std::io::Result<File> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn what_is_written_is_in_the_file() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("spool");
        let mut w = WriteBehind::new(File::create(&path)?);
        // Several windows, in writes of odd sizes.
        let mut want = Vec::new();
        let mut x = 7u64;
        while want.len() < 3 * WINDOW as usize + 12_345 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let piece: Vec<u8> = x.to_le_bytes().repeat(1 + (x >> 50) as usize);
            w.write_all(&piece)?;
            want.extend_from_slice(&piece);
        }
        w.into_inner()?.sync_all()?;
        let mut got = Vec::new();
        File::open(&path)?.read_to_end(&mut got)?;
        assert_eq!(got.len(), want.len());
        assert!(got == want);
        Ok(())
    }
}
