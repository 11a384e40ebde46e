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
//! all the same, and the read-back reads only that. Best effort: a page dropped before it is
//! mapped is read back later, as without this; elsewhere than Linux 5.14 nothing is kept.
//!
//! A block family file can instead keep its chunks and not their ids, which a query reads
//! only for a match (`src/postings/chunk.rs`), so that the page cache holds the chunks of
//! more groups ([`ChunkPages`]). Pages cannot be left out as they are written: the page
//! cache holds a file written in large pieces in *folios* of many pages, kept or dropped
//! whole, and a mapped page keeps its neighbours in the cache. So the writer drops them all
//! and the file reads back its chunks once finished, on a thread of its own, with the
//! kernel's read-ahead off.

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

/// The byte ranges of a block family file that hold chunks, as it is written: everything but
/// the ranges of ids ([`ChunkPages::ids_from`], [`ChunkPages::ids_until`]).
#[derive(Debug, Default)]
pub(crate) struct ChunkPages {
    /// Ranges of ids, in file order; the last one's end is `u64::MAX` while it is open.
    ids: Vec<(u64, u64)>,
}

impl ChunkPages {
    /// Ids from byte `start` on, until [`ChunkPages::ids_until`].
    pub(crate) fn ids_from(&mut self, start: u64) {
        self.ids.push((start, u64::MAX));
    }

    /// Ends the range of ids [`ChunkPages::ids_from`] began, at byte `end`.
    pub(crate) fn ids_until(&mut self, end: u64) {
        if let Some(last) = self.ids.last_mut().filter(|r| r.1 == u64::MAX) {
            last.1 = end.max(last.0);
        }
    }

    /// The ranges of whole pages of a file of `len` bytes not wholly in a range of ids. A
    /// range still open runs to the file's end: the last group's ids are followed only by
    /// the index and the footer, which RocksDB reads once, when it opens the file, and keeps
    /// (the index pinned in the block cache).
    pub(crate) fn kept(&self, len: u64) -> Vec<(u64, u64)> {
        let mut kept = Vec::new();
        let mut at = 0;
        for &(start, end) in &self.ids {
            let end = end.min(len);
            let (first, past) = (start.div_ceil(PAGE) * PAGE, end / PAGE * PAGE);
            if past > first {
                if first > at {
                    kept.push((at, first));
                }
                at = past;
            }
        }
        let end = len.div_ceil(PAGE) * PAGE;
        if end > at {
            kept.push((at, end));
        }
        kept
    }

    /// Reads the kept ranges of the finished file at `path` into the page cache, on a thread
    /// of its own ([`wait_for_read_backs`] waits for it), and nothing else of the file:
    /// `POSIX_FADV_RANDOM` turns the kernel's read-ahead off. Best effort.
    pub(crate) fn read_back(&self, path: &Path) {
        // Opened now: the file is moved into the store while it is read.
        let Ok(file) = File::open(path) else {
            return;
        };
        let Ok(meta) = file.metadata() else {
            return;
        };
        let ranges = self.kept(meta.len());
        let spawned = std::thread::Builder::new()
            .name("simhash-store-read-back".into())
            .spawn(move || read_ranges(&file, &ranges));
        if let Ok(handle) = spawned {
            READ_BACKS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(handle);
        }
    }
}

/// The threads reading chunks back ([`ChunkPages::read_back`]) not yet waited for.
static READ_BACKS: std::sync::Mutex<Vec<std::thread::JoinHandle<()>>> =
    std::sync::Mutex::new(Vec::new());

/// Waits for every read-back begun so far to end.
pub(crate) fn wait_for_read_backs() {
    let handles = std::mem::take(
        &mut *READ_BACKS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    for handle in handles {
        let _ = handle.join();
    }
}

/// Tells the kernel `advice` (`libc::POSIX_FADV_*`) about `len` bytes of `file` from `offset`
/// (0: to the end). Best effort; nothing elsewhere than Linux.
pub(crate) fn advise(file: &File, offset: u64, len: u64, advice: i32) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let off = |n: u64| libc::off_t::try_from(n).unwrap_or(libc::off_t::MAX);
        // SAFETY: a plain system call on an open descriptor; it reads and writes no memory of
        // this process.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), off(offset), off(len), advice) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, len, advice);
}

/// Reads `ranges` of `file` and nothing else (read-ahead off), so that the page cache holds
/// them. Reading, unlike `POSIX_FADV_WILLNEED`, gets its pages even when memory is short.
fn read_ranges(file: &File, ranges: &[(u64, u64)]) {
    advise(file, 0, 0, libc::POSIX_FADV_RANDOM);
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 1 << 20];
    for &(from, to) in ranges {
        let mut at = from;
        while at < to {
            let n = buf.len().min((to - at) as usize);
            match file.read_at(&mut buf[..n], at) {
                Ok(0) | Err(_) => break,
                Ok(read) => at += read as u64,
            }
        }
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
        let resident = resident_map(path);
        (resident.iter().filter(|&&r| r).count(), resident.len())
    }

    /// Whether each page of `path` is in the page cache (Linux).
    #[cfg(target_os = "linux")]
    pub(crate) fn resident_map(path: &Path) -> Vec<bool> {
        let file = File::open(path).unwrap();
        // SAFETY: mapped only for `mincore`, which reads no page.
        let map = unsafe { Mmap::map(&file) }.unwrap();
        let pages = map.len().div_ceil(PAGE as usize);
        let mut v = vec![0u8; pages];
        // SAFETY: `v` has one byte per page of the mapping.
        let ok =
            unsafe { libc::mincore(map.as_ptr() as *mut libc::c_void, map.len(), v.as_mut_ptr()) };
        assert_eq!(ok, 0);
        v.iter().map(|&b| b & 1 == 1).collect()
    }

    /// Whether pages can be kept here (Linux 5.14 on).
    pub(crate) fn keeping_works(dir: &Path) -> bool {
        let probe = dir.join("probe");
        std::fs::write(&probe, vec![1u8; 1 << 16]).unwrap();
        KeptPages::open(&probe).is_some_and(|mut k| k.keep_up())
    }

    #[test]
    fn chunk_pages_are_the_whole_pages_outside_the_ids() {
        let page = PAGE;
        let mut pages = ChunkPages::default();
        // Ids at 2.5-5 pages (pages 3 and 4), 8.2-12 (9 to 11), 14.1-14.9 (no whole page),
        // and from 18.5 on (open: to the end of the file, its last partial page kept).
        for (from, to) in [(25, 50), (82, 120), (141, 149)] {
            pages.ids_from(from * page / 10);
            pages.ids_until(to * page / 10);
        }
        pages.ids_from(185 * page / 10);
        assert_eq!(
            pages.kept(20 * page + 100),
            vec![
                (0, 3 * page),
                (5 * page, 9 * page),
                (12 * page, 19 * page),
                (20 * page, 21 * page)
            ]
        );
        assert_eq!(ChunkPages::default().kept(page + 1), vec![(0, 2 * page)]);
        assert_eq!(ChunkPages::default().kept(0), vec![]);
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
