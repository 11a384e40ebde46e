//! Faulting in a buffer's memory before it is written, so that the thread that fills it does
//! not stop at every new page.
//!
//! The first write to each 4 KiB page of fresh memory is a page fault: the kernel finds and
//! zeroes a page. In a virtual machine whose host takes freed memory back (free page
//! reporting, as on this project's benchmark machine) the host must also back the page, and
//! the first touch costs about 5 µs: writing 3 GB of fresh memory page by page took 1.6 to
//! 4.0 s there, and having the kernel fault the same range in with one call
//! (`madvise(MADV_POPULATE_WRITE)`, Linux 5.14) 0.9 s. The bulk loader's run buffer
//! ([`super::runs::RunBuffer`]) is filled by the one thread that calls `add`, while the other
//! cores wait for the run to be written: [`Ahead`] has one of them fault the buffer in a
//! window ahead of that thread. The sort buffers of the write phase are faulted in with one
//! call each ([`populate_write`]).
//!
//! Faulting in changes no byte of memory (a page not yet faulted in reads as zeros, and
//! reads as zeros after), so it races with nothing: a range freed meanwhile makes the call
//! fail, which is ignored.

/// Bytes faulted in per request of [`Ahead`] at most: as many as the vector holds, between
/// these two, so that a small load faults in little more than it fills.
const MIN_WINDOW_BYTES: usize = /* 1 MiB */ 1 << 20;
const MAX_WINDOW_BYTES: usize = /* 32 MiB */ 32 << 20;

/// Has the kernel fault in the pages of `len` bytes at `addr` for writing, without changing
/// their contents; false where it cannot (not Linux, a kernel before 5.14, or a range that is
/// not mapped). Best effort: the pages are faulted in when written anyway.
pub(crate) fn populate_write(addr: usize, len: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        // madvise needs a page-aligned start: the page that holds `addr` is part of the same
        // allocation or of its allocator's header, both mapped and writable.
        let start = addr / PAGE * PAGE;
        let len = len + (addr - start);
        if len == 0 {
            return true;
        }
        // SAFETY: MADV_POPULATE_WRITE only faults pages in; it reads and writes no memory of
        // this process, and fails (ENOMEM, EFAULT) on a range that is not mapped writable.
        unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (addr, len);
        false
    }
}

/// Faults in the spare capacity of a vector that one thread fills in order, a window at a
/// time on another thread (rayon's pool), one window ahead of where the filling thread is. The
/// window grows with the vector, from 1 MiB to 32 MiB.
#[derive(Debug, Default)]
pub(crate) struct Ahead {
    /// Elements (from the start of the vector) up to which faulting in was requested.
    requested: usize,
    /// The length at which the next window is requested: one window before `requested`.
    next_at: usize,
}

impl Ahead {
    /// Requests the next window of `vec`'s spare capacity once `vec` has come within one
    /// window of what was requested so far. Call after each push: the test is one comparison.
    #[inline]
    pub(crate) fn keep_ahead<T>(&mut self, vec: &Vec<T>) {
        if vec.len() < self.next_at {
            return;
        }
        let size = std::mem::size_of::<T>().max(1);
        let window = (vec.len() * size).clamp(MIN_WINDOW_BYTES, MAX_WINDOW_BYTES) / size;
        let start = self.requested.max(vec.len());
        let end = (start + window).min(vec.capacity());
        self.requested = end;
        // Past the capacity nothing is left to fault in: ask again only after a move.
        self.next_at = if end >= vec.capacity() {
            usize::MAX
        } else {
            end - window
        };
        if start >= end {
            return;
        }
        let addr = vec.as_ptr() as usize + start * size;
        let len = (end - start) * size;
        rayon::spawn(move || {
            populate_write(addr, len);
        });
    }

    /// Forgets what was requested: for a vector that was cleared or reallocated.
    pub(crate) fn reset(&mut self) {
        *self = Ahead::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faulting_in_leaves_contents_unchanged() {
        let mut v: Vec<u64> = Vec::with_capacity(1 << 20);
        v.extend(0..1000u64);
        let mut ahead = Ahead::default();
        for x in 1000..(1u64 << 19) {
            v.push(x);
            ahead.keep_ahead(&v);
        }
        // Synchronously too, over written and unwritten memory.
        populate_write(v.as_ptr() as usize, v.capacity() * 8);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
        // An unmapped range: refused, nothing else happens.
        assert!(!populate_write(0, 4096));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_mapped_range_is_faulted_in() {
        let v: Vec<u8> = Vec::with_capacity(64 << 20);
        if !populate_write(v.as_ptr() as usize, v.capacity()) {
            // Only a kernel before 5.14 (no MADV_POPULATE_WRITE) may refuse a mapped range.
            let e = std::io::Error::last_os_error();
            assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{e}");
        }
    }
}
