//! The FAISS side of `benches/scale.rs`: the files it hands to `benches/faiss_scale.py` and
//! the script's report.
//!
//! Files, all in one directory: `data.u64` (the stored fingerprints, little-endian `u64`, the
//! position of each is its id), `warmup.u64` and `queries.u64` (the warm-up and measured
//! sets of every phase, concatenated in phase order: run 0 k = ks[0], run 0 k = ks[1], ...,
//! run 1 k = ks[0], ...; every phase has as many as the others), and `answers.txt` (the
//! store's answers to the first queries of run 0 at each k, one line per query:
//! `k index id id ...`, ids ascending).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;

/// One phase as the script measured it (µs).
#[derive(Debug, Clone, Deserialize)]
pub struct FaissPhase {
    pub run: usize,
    pub k: u32,
    pub fresh_p50_us: f64,
    pub fresh_p99_us: f64,
    pub repeated_p50_us: f64,
    pub repeated_p99_us: f64,
    /// The measured set in one `range_search` call, per query: no per-call overhead.
    pub batch_mean_us: f64,
    /// Matches of all measured queries of the phase.
    pub matches: u64,
}

/// The script's JSON line.
#[derive(Debug, Clone, Deserialize)]
pub struct FaissReport {
    pub faiss_version: String,
    pub build_s: f64,
    /// Resident memory the index added (`add` of all the codes), and the script's peak.
    pub index_mib: f64,
    pub peak_rss_mib: f64,
    /// Median time of one `range_search` call on an empty index: the Python call overhead
    /// inside each per-query latency.
    pub call_overhead_us: f64,
    pub phases: Vec<FaissPhase>,
    /// Queries whose id sets were compared with `answers.txt`, and how many differed.
    pub checked: usize,
    pub mismatches: usize,
}

/// Writes `values` as little-endian `u64`s.
pub fn write_u64s(path: &Path, values: impl IntoIterator<Item = u64>) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    for v in values {
        out.write_all(&v.to_le_bytes())?;
    }
    out.flush()
}

/// The Python that runs the script: `$PYTHON`, else the repository's `.venv/bin/python`, else
/// `python3`.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("PYTHON") {
        return PathBuf::from(p);
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

/// Runs `benches/faiss_scale.py` on the files in `dir`, echoing its output indented; `None`
/// (after saying why and how to install FAISS) when it cannot run or fails.
pub fn run_script(dir: &Path, runs: usize, ks: &[u32]) -> Option<FaissReport> {
    let python = python();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/faiss_scale.py");
    let ks: Vec<String> = ks.iter().map(u32::to_string).collect();
    let install = format!(
        "FAISS skipped: install it with `{} -m pip install faiss-cpu numpy` (or `python3 -m venv .venv && .venv/bin/pip install faiss-cpu numpy` at the repository root), or set $PYTHON",
        python.display()
    );
    println!();
    println!("FAISS ({} {}):", python.display(), script.display());
    let output = Command::new(&python)
        .arg(&script)
        .arg("--dir")
        .arg(dir)
        .arg("--runs")
        .arg(runs.to_string())
        .arg("--ks")
        .arg(ks.join(","))
        .arg("--json")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output();
    let output = match output {
        Ok(o) => o,
        Err(e) => {
            println!("cannot run {}: {e}", python.display());
            println!("{install}");
            return None;
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut report = None;
    for line in stdout.lines() {
        match line.strip_prefix("JSON ") {
            Some(json) => match serde_json::from_str::<FaissReport>(json) {
                Ok(r) => report = Some(r),
                Err(e) => println!("  cannot read the script's JSON line: {e}"),
            },
            None => println!("  {line}"),
        }
    }
    // The script exits with 3 when numpy or faiss cannot be imported.
    if output.status.code() == Some(3) {
        println!("{install}");
        return None;
    }
    if !output.status.success() {
        println!("  the script failed: {}", output.status);
        return None;
    }
    report
}
