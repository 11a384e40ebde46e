//! What a benchmark reads about its own process and the machine on Linux (`/proc`): memory,
//! CPU time, bytes read and written, the load average, and the files of a store in the page
//! cache. Each answers 0 (or `None`) where the information is missing.

use std::path::PathBuf;
use std::time::Duration;

/// The number after `field` in the `/proc` file `path` (its unit, such as `kB`, left off).
fn proc_number(path: &str, field: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok().and_then(|text| {
        text.lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    })
}

/// Peak resident set size of this process in bytes (VmHWM).
pub(crate) fn peak_rss() -> u64 {
    proc_number("/proc/self/status", "VmHWM:").map_or(0, |kb| kb * 1024)
}

/// Current resident set size in bytes (VmRSS).
pub(crate) fn rss() -> u64 {
    proc_number("/proc/self/status", "VmRSS:").map_or(0, |kb| kb * 1024)
}

/// Bytes this process has caused to be written to storage (`write_bytes` of /proc/self/io;
/// 0 where unknown).
pub(crate) fn written_bytes() -> u64 {
    proc_number("/proc/self/io", "write_bytes:").unwrap_or(0)
}

/// CPU time (user + system) of this process so far, from /proc/self/stat (clock ticks of
/// 10 ms).
pub(crate) fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): utime is the 12th, stime the 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let ticks = field(11) + field(12);
    Duration::from_millis(ticks * 10)
}

/// The 1-minute load average.
pub(crate) fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0.0)
}

/// Resets VmHWM to the current RSS (Linux: write 5 to clear_refs).
pub(crate) fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

pub(crate) fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

/// Bytes of the files in `dir` in the OS page cache, as `fincore` (util-linux) tells.
pub(crate) fn page_cache_resident(dir: &std::path::Path) -> Option<u64> {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    let out = std::process::Command::new("fincore")
        .args(["--bytes", "--noheadings", "--raw", "-o", "RES"])
        .args(&files)
        .output()
        .ok()?;
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.trim().parse::<u64>().ok())
            .sum(),
    )
}

/// Bytes this process has had read from storage (`read_bytes` of `/proc/self/io`), if known.
pub(crate) fn disk_bytes_read() -> Option<u64> {
    proc_number("/proc/self/io", "read_bytes:")
}

/// Bytes of the files in `dir`.
pub(crate) fn dir_size(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
pub(crate) fn memory_available() -> u64 {
    proc_number("/proc/meminfo", "MemAvailable:").map_or(0, |kb| kb * 1024)
}

/// Reads every file in `dir` once; returns the bytes read.
pub(crate) fn read_files(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    let mut buf = vec![0u8; 1 << 20];
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(mut file) = std::fs::File::open(entry.path()) else {
            continue;
        };
        while let Ok(n @ 1..) = std::io::Read::read(&mut file, &mut buf) {
            total += n as u64;
        }
    }
    total
}
