//! `--threads N` for the scaling benches: the measured work runs on N threads pinned to cores
//! 0..N-1 (where the machine has more), so that throughput per core can be compared across N.
//! `benches/scaling.sh` runs the benches for N = 1, 2, 4, ... on a larger machine.

// Each benchmark uses some of these.
#![allow(dead_code)]

use std::ops::Range;

/// The cores this process may run on.
pub fn available() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Pins the calling thread, and the threads it starts from now on, to the cores `cpus`
/// (indices into the process's allowed set at start, so this composes with `taskset`).
/// Returns whether it did (it does nothing on an empty range or outside Linux).
pub fn pin(cpus: Range<usize>) -> bool {
    #[cfg(target_os = "linux")]
    {
        let allowed = allowed_cpus();
        let chosen: Vec<usize> = allowed
            .get(cpus.start..cpus.end.min(allowed.len()))
            .unwrap_or_default()
            .to_vec();
        if chosen.is_empty() {
            return false;
        }
        // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes inside it for indices
        // below CPU_SETSIZE, which the kernel's cpu numbers here are.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for cpu in chosen {
                libc::CPU_SET(cpu, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpus;
        false
    }
}

/// The cpu numbers the process was allowed at its first call (in order).
#[cfg(target_os = "linux")]
pub fn allowed_cpus() -> Vec<usize> {
    static ALLOWED: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    ALLOWED
        .get_or_init(|| {
            // SAFETY: sched_getaffinity fills the set it is given.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0
                {
                    return (0..available()).collect();
                }
                (0..libc::CPU_SETSIZE as usize)
                    .filter(|&c| libc::CPU_ISSET(c, &set))
                    .collect()
            }
        })
        .clone()
}

/// The cpu list of `cpus` (indices into the allowed set) for `taskset -c`, e.g. `0-3`.
pub fn cpu_list(cpus: Range<usize>) -> String {
    #[cfg(target_os = "linux")]
    let allowed = allowed_cpus();
    #[cfg(not(target_os = "linux"))]
    let allowed: Vec<usize> = (0..available()).collect();
    allowed
        .get(cpus.start..cpus.end.min(allowed.len()))
        .unwrap_or_default()
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// `--threads N`: pins this thread to cores 0..N-1 and gives rayon's global pool N threads
/// (pinned with it). 0 or N >= the cores available: every core, no pinning. Returns N.
pub fn use_threads(threads: usize) -> usize {
    let cores = available();
    let n = if threads == 0 { cores } else { threads };
    if n < cores {
        pin(0..n);
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
        .expect("rayon's global pool is set once, here");
    n
}
