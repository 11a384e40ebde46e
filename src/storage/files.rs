//! Files the store writes outside RocksDB and hands to it: making a directory's new entries
//! durable, reading files into the OS page cache before the store reads them, and copying a
//! checkpoint to another file system.

use std::path::Path;

use rayon::prelude::*;

use crate::error::{Error, Result};

/// Reads `files` into the OS page cache, in parallel, and returns when they are there. On
/// Linux each file is mapped and populated (`madvise(MADV_POPULATE_READ)`): the kernel reads
/// it with large sequential reads and nothing is copied into this process, which reading the
/// files would cost (a tenth of a load's CPU time). Then one byte of each page is read: in a
/// virtual machine that hands freed memory back to its host (free page reporting, as the
/// loader's own buffers are once freed), the first access to each page the disk read into
/// costs about 5 µs (1.3 s per GiB); paid here instead of in the first queries, it takes a
/// fresh query right after a load of 100M documents from 162 µs to 79 (p50 of 10,000).
/// Elsewhere touching costs about 0.03 s per GiB. Best effort: a file that cannot be read is
/// skipped (the queries read it later).
pub(crate) fn read_into_page_cache<'p>(files: impl Iterator<Item = &'p Path>) {
    let files: Vec<&Path> = files.collect();
    files.par_iter().for_each(|path| {
        if let Ok(file) = std::fs::File::open(path) {
            if !populate(&file) {
                read_through(file);
            }
        }
    });
}

/// Maps `file` and has the kernel read all of it into the page cache; false if it cannot
/// (not Linux, or a kernel before 5.14).
fn populate(file: &std::fs::File) -> bool {
    #[cfg(target_os = "linux")]
    {
        use memmap2::{Advice, Mmap};
        // SAFETY: the mapping is read only through the kernel's populate call, and only
        // while this function holds it; an SST file is never modified once written.
        match unsafe { Mmap::map(file) } {
            Ok(map) => {
                let _ = map.advise(Advice::Sequential);
                if map.advise(Advice::PopulateRead).is_err() {
                    return false;
                }
                // No page is smaller than 4 KiB.
                for offset in (0..map.len()).step_by(4096) {
                    // SAFETY: `offset` is inside the mapping; a volatile read is not optimised
                    // away.
                    unsafe { std::ptr::read_volatile(map.as_ptr().add(offset)) };
                }
                true
            }
            Err(_) => false,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        false
    }
}

/// Reads `file` to its end.
fn read_through(mut file: std::fs::File) {
    use std::io::Read;
    let mut buf = vec![0u8; 1 << 20];
    while matches!(file.read(&mut buf), Ok(n) if n > 0) {}
}

/// Makes the directory's entries (the new SST files) durable before the journal names them.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io("syncing the directory", dir, e))
}

/// Copies every file of the directory `from` (a checkpoint: files only) into the new
/// directory `to`, then syncs each copy and `to` itself.
pub(crate) fn copy_dir_synced(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir(to).map_err(|e| Error::io("creating the directory", to, e))?;
    let entries = std::fs::read_dir(from).map_err(|e| Error::io("listing", from, e))?;
    for entry in entries {
        let name = entry
            .map_err(|e| Error::io("listing", from, e))?
            .file_name();
        let (src, dst) = (from.join(&name), to.join(&name));
        std::fs::copy(&src, &dst).map_err(|e| Error::io("copying", &src, e))?;
        std::fs::File::open(&dst)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io("syncing", &dst, e))?;
    }
    sync_dir(to)
}
