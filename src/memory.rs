//! The memory available to this process, and what follows from it: the bulk loader's default
//! budget, and whether a store's files fit in the OS page cache (then the loader reads a fresh
//! store's files back into it, and queries read them through memory maps).

use sysinfo::{MemoryRefreshKind, RefreshKind, System};

/// The default budget where the available memory is unknown.
const FALLBACK_BUDGET: usize = /* 1 GiB */ 1 << 30;
/// The smallest default budget.
const MIN_DEFAULT_BUDGET: usize = /* 256 MiB */ 256 << 20;

/// Bytes of memory this process can use now: the system's available memory (`MemAvailable` on
/// Linux: free memory plus the page cache it can reclaim), or, in a cgroup whose limit is
/// below the system's memory (a container's or a job's), the limit less the cgroup's resident
/// memory when that is less. 0 where unknown.
pub(crate) fn available() -> u64 {
    let system = System::new_with_specifics(
        RefreshKind::nothing().with_memory(MemoryRefreshKind::nothing().with_ram()),
    );
    let bytes = system.available_memory();
    match system.cgroup_limits() {
        // The cgroup's own "free" counts its page cache as used; the cache is reclaimed
        // before the limit is enforced, so only resident memory is subtracted.
        Some(limits) if limits.total_memory < system.total_memory() => {
            bytes.min(limits.total_memory.saturating_sub(limits.rss))
        }
        _ => bytes,
    }
}

/// The loader's default memory budget for `available` bytes of memory ([`available`]): a
/// third of it, at least 256 MiB, or 1 GiB where it is unknown (0). No upper bound: a load
/// that fits in one run is written once, with no spool and no merge (one run of 100 million
/// documents is 1.8 times as fast as six runs and a merge, docs/benchmarks.md, "Bulk loading
/// at 10M, 100M and 1B"), so a machine with more memory loads more in one run: about 7 GiB
/// (125 million documents) with 24 GiB available, 43 GiB (750 million) with 128 GiB. A third
/// leaves room for the store's block cache, the page cache of its files and the caller.
pub(crate) fn default_budget(available: u64) -> usize {
    if available == 0 {
        return FALLBACK_BUDGET;
    }
    usize::try_from(available / 3)
        .unwrap_or(usize::MAX)
        .max(MIN_DEFAULT_BUDGET)
}

/// Whether `bytes` are at most half the memory available.
pub(crate) fn fits(bytes: u64) -> bool {
    fits_in(bytes, available())
}

/// Whether `bytes` are at most half of `available` bytes of memory.
pub(crate) fn fits_in(bytes: u64, available: u64) -> bool {
    bytes.saturating_mul(2) <= available
}

/// Whether `files` (those that exist) take at most half the memory available together.
pub(crate) fn files_fit<P: AsRef<std::path::Path>>(files: impl IntoIterator<Item = P>) -> bool {
    let bytes: u64 = files
        .into_iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    fits(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_budget_is_a_third_of_what_is_available_at_least_the_minimum() {
        assert_eq!(default_budget(0), FALLBACK_BUDGET);
        assert_eq!(default_budget(300 << 20), MIN_DEFAULT_BUDGET);
        assert_eq!(default_budget(3 << 30), 1 << 30);
        assert_eq!(default_budget(21 << 30), 7 << 30);
        assert_eq!(default_budget(96 << 30), 32 << 30);
        assert_eq!(default_budget(384 << 30), 128 << 30);
    }

    #[test]
    fn some_memory_is_available_here() {
        let system = System::new_with_specifics(
            RefreshKind::nothing().with_memory(MemoryRefreshKind::nothing().with_ram()),
        );
        assert!(available() > 0);
        assert!(available() <= system.total_memory());
        assert!(fits(0));
        assert!(!fits(u64::MAX));
    }
}
