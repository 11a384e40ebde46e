//! Keeping the pages of an SST file in the page cache while RocksDB's SST writer drops them.
//!
//! RocksDB's `SstFileWriter` drops the pages of the file it writes from the page cache as it
//! goes (`posix_fadvise(POSIX_FADV_DONTNEED)` after every megabyte, and over the whole file
//! once it is synced), and the C API it is reached through has no switch for that. A load
//! that fits in memory then reads its files back ([`super::warm`]) so that the first queries
//! do not find the store cold: a second copy of every page through the disk, and on a virtual
//! machine that hands freed memory back to its host (as this project's benchmark machine
//! does) about 5 µs for the first touch of each page the disk read into, 6 s at 100M
//! documents.
//!
//! `POSIX_FADV_DONTNEED` leaves alone the pages some process has mapped. [`KeptPages`] maps
//! the file as it grows and has the kernel map each new page
//! (`madvise(MADV_POPULATE_READ)`) while it is still in the cache, written a moment before;
//! the mappings are dropped once the file is finished and the pages stay in the cache, as
//! pages of any file read once do (the kernel evicts them as it needs memory). The tail the
//! writer adds in its last step (the last data blocks, the index and the filter) is dropped
//! as before, and the read-back reads only that. Best effort: a page dropped before it is
//! mapped is read back later, as without this; elsewhere than Linux 5.14 nothing is kept.

use std::fs::File;
use std::path::Path;

use memmap2::{Mmap, MmapOptions};

/// Bytes of file per mapping: the file is mapped a window at a time as it grows.
const WINDOW: u64 = /* 64 MiB */ 64 << 20;
/// Bytes put between two looks at the file's size. RocksDB drops what it wrote after every
/// megabyte (once written back), so pages are mapped well before their turn comes.
pub(crate) const CHECK_EVERY: usize = /* 128 KiB */ 128 << 10;
const PAGE: u64 = 4096;

/// The mapped windows of a file being written, and how much of it is kept.
pub(crate) struct KeptPages {
    file: File,
    windows: Vec<Mmap>,
    /// Bytes from the start of the file whose pages were mapped.
    kept: u64,
}

impl KeptPages {
    /// Starts keeping the pages of the file at `path`; `None` where nothing can be kept (not
    /// Linux, or the file cannot be opened).
    pub(crate) fn open(path: &Path) -> Option<Self> {
        if !cfg!(target_os = "linux") {
            return None;
        }
        let file = File::open(path).ok()?;
        Some(KeptPages {
            file,
            windows: Vec::new(),
            kept: 0,
        })
    }

    /// Maps the pages written since the last call, whole pages only. Stops keeping (and
    /// returns false) at the first call that fails: the rest is read back later.
    pub(crate) fn keep_up(&mut self) -> bool {
        let Ok(meta) = self.file.metadata() else {
            return false;
        };
        let end = meta.len() / PAGE * PAGE;
        while self.kept < end {
            let window = self.kept / WINDOW;
            if self.windows.len() as u64 <= window {
                // SAFETY: the mapping is never read by this process: the kernel maps its pages
                // (`populate`) and nothing else touches it. It may extend past the end of the
                // file, which is harmless while no page past the end is accessed; only pages
                // below the file's size are populated.
                let map = unsafe {
                    MmapOptions::new()
                        .offset(window * WINDOW)
                        .len(WINDOW as usize)
                        .map(&self.file)
                };
                match map {
                    Ok(map) => self.windows.push(map),
                    Err(_) => return false,
                }
            }
            let to = end.min((window + 1) * WINDOW);
            let map = &self.windows[window as usize];
            let at = (self.kept - window * WINDOW) as usize;
            let len = (to - self.kept) as usize;
            if !populate(map, at, len) {
                return false;
            }
            self.kept = to;
        }
        true
    }
}

/// Has the kernel map `len` bytes at `at` of `map` (pages in the cache are mapped, others
/// read); false if it cannot (a kernel before 5.14, or the range is past the file's end).
fn populate(map: &Mmap, at: usize, len: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        map.advise_range(memmap2::Advice::PopulateRead, at, len)
            .is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (map, at, len);
        false
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// How many pages of `path` are in the page cache, and of how many (Linux).
    #[cfg(target_os = "linux")]
    pub(crate) fn resident_pages(path: &Path) -> (usize, usize) {
        let file = File::open(path).unwrap();
        // SAFETY: mapped only for `mincore`, which reads no page.
        let map = unsafe { Mmap::map(&file) }.unwrap();
        let pages = map.len().div_ceil(PAGE as usize);
        let mut v = vec![0u8; pages];
        // SAFETY: `v` has one byte per page of the mapping.
        let ok =
            unsafe { libc::mincore(map.as_ptr() as *mut libc::c_void, map.len(), v.as_mut_ptr()) };
        assert_eq!(ok, 0);
        (v.iter().filter(|&&b| b & 1 == 1).count(), pages)
    }

    /// Writes and syncs `n` bytes to `file`, then drops its pages as RocksDB's writer does.
    #[cfg(target_os = "linux")]
    fn write_and_drop(file: &mut File, n: usize) {
        use std::os::fd::AsRawFd;
        file.write_all(&vec![7u8; n]).unwrap();
        file.sync_all().unwrap();
        // SAFETY: a plain system call on an open descriptor.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn pages_mapped_as_the_file_grows_survive_the_writer_dropping_them() {
        let dir = tempfile::tempdir().unwrap();
        let (kept_path, plain_path) = (dir.path().join("kept"), dir.path().join("plain"));
        let (mut kept_file, mut plain_file) = (
            File::create(&kept_path).unwrap(),
            File::create(&plain_path).unwrap(),
        );
        let mut kept = KeptPages::open(&kept_path).unwrap();
        // Three writes, one across a window boundary.
        for n in [1 << 20, WINDOW as usize, 3 << 20] {
            kept_file.write_all(&vec![7u8; n]).unwrap();
            let keeping = kept.keep_up();
            write_and_drop(&mut kept_file, 0);
            write_and_drop(&mut plain_file, n);
            if !keeping {
                // A kernel before 5.14: nothing is kept, and nothing else happens.
                assert_eq!(kept.kept, 0);
                return;
            }
        }
        assert_eq!(kept.windows.len(), 2);
        drop(kept);
        let (resident, pages) = resident_pages(&kept_path);
        assert_eq!(resident, pages, "every page kept");
        let (resident, pages) = resident_pages(&plain_path);
        assert!(
            resident < pages,
            "without the mapping the pages go: {resident} of {pages}"
        );
    }

    #[test]
    fn only_whole_pages_below_the_end_are_mapped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut file = File::create(&path).unwrap();
        let Some(mut kept) = KeptPages::open(&path) else {
            return;
        };
        file.write_all(&[1u8; 5000]).unwrap();
        file.flush().unwrap();
        if kept.keep_up() {
            assert_eq!(kept.kept, PAGE);
        }
    }
}
