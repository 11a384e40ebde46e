//! The FAISS side of `benches/scale.rs`: the files it hands to `benches/faiss_scale.py` and
//! the script's report.
//!
//! Files, all in one directory: `data.u64` (the stored fingerprints, little-endian `u64`, the
//! position of each is its id), `warmup.u64` and `queries.u64` (the warm-up and measured
//! sets of every phase, concatenated in phase order: run 0 k = ks[0], run 0 k = ks[1], ...,
//! run 1 k = ks[0], ...; every phase has as many as the others), and `answers.txt` (the
//! store's answers to the first queries of run 0 at each k, one line per query:
//! `k index id id ...`, ids ascending).

use std::io::{BufRead, BufReader, Write};
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
/// `limit`: the script uses only the first `limit` queries of each set (0: all).
pub fn run_script(dir: &Path, runs: usize, ks: &[u32], limit: usize) -> Option<FaissReport> {
    let python = python();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/faiss_scale.py");
    let ks: Vec<String> = ks.iter().map(u32::to_string).collect();
    let install = format!(
        "FAISS skipped: install it with `{} -m pip install faiss-cpu numpy` (or `python3 -m venv .venv && .venv/bin/pip install faiss-cpu numpy` at the repository root), or set $PYTHON",
        python.display()
    );
    println!();
    println!("FAISS ({} {}):", python.display(), script.display());
    let child = Command::new(&python)
        .arg("-u") // unbuffered: its lines show as they come
        .arg(&script)
        .arg("--dir")
        .arg(dir)
        .arg("--runs")
        .arg(runs.to_string())
        .arg("--ks")
        .arg(ks.join(","))
        .arg("--limit")
        .arg(limit.to_string())
        .arg("--json")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            println!("cannot run {}: {e}", python.display());
            println!("{install}");
            return None;
        }
    };
    let mut report = None;
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            match line.strip_prefix("JSON ") {
                Some(json) => match serde_json::from_str::<FaissReport>(json) {
                    Ok(r) => report = Some(r),
                    Err(e) => println!("  cannot read the script's JSON line: {e}"),
                },
                None => println!("  {line}"),
            }
        }
    }
    let status = match child.wait() {
        Ok(s) => s,
        Err(e) => {
            println!("  the script did not finish: {e}");
            return None;
        }
    };
    // The script exits with 3 when numpy or faiss cannot be imported.
    if status.code() == Some(3) {
        println!("{install}");
        return None;
    }
    if !status.success() {
        println!("  the script failed: {status}");
        return None;
    }
    report
}
