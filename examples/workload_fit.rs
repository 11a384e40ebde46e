//! Fits the `real` benchmark workload (`benches/support/workload.rs`) on fingerprints of real
//! texts, and prints how biased those fingerprints are.
//!
//! ```text
//! cargo run --release --example workload_fit -- [--dev DIR] [--docs DIR] [--out FILE]
//! ```
//!
//! The texts: the originals of the near-duplicate development set (`--dev`, default
//! `/work/shared/quality`: `originals.jsonl.gz`, 1,000 zh and 600 en sections of Debian
//! documentation) and the documentation files that the Debian packages of this machine install
//! (`--docs`, default `/usr/share/doc`: plain text, Markdown, reStructuredText, change logs,
//! gzipped or not, and HTML reduced to its main text; files under 200 characters of text, or
//! that are not UTF-8, are skipped; a text is cut at 64 KiB). Every text is fingerprinted with
//! the default `Simhasher`.
//!
//! It prints, per source and for all of them: documents, distinct fingerprints, the share of
//! 1s of the least and the most biased bit, and per block the shared-block factor (how much
//! more often two distinct fingerprints share that 16-bit block value than two uniform random
//! ones: `65536 * sum c(c-1) / (n(n-1))` over the block's value counts `c`).
//!
//! `--out FILE` (default `benches/support/workload_real.json`) gets the fitted model, over
//! the distinct fingerprints of all sources: per block, a table of its most frequent values
//! (those held by at least `--min-count` fingerprints, default 3) with their probabilities,
//! scaled so that the model's shared-block factor equals the measured one, and otherwise
//! independent bits with the frequencies measured on the fingerprints outside the table; also
//! the measured bit frequencies, factors and share of exact duplicates, which the generator's
//! tests compare with.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use simhash_store::readers::html_to_text;
use simhash_store::Simhasher;

const MAX_TEXT: usize = 64 << 10;
const MIN_TEXT: usize = 200;

struct Args {
    dev: PathBuf,
    docs: PathBuf,
    out: PathBuf,
    min_count: u64,
}

fn parse_args() -> Args {
    let mut args = Args {
        dev: PathBuf::from("/work/shared/quality"),
        docs: PathBuf::from("/usr/share/doc"),
        out: PathBuf::from("benches/support/workload_real.json"),
        min_count: 3,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--dev" => args.dev = PathBuf::from(value()),
            "--docs" => args.docs = PathBuf::from(value()),
            "--out" => args.out = PathBuf::from(value()),
            "--min-count" => args.min_count = value().parse().expect("--min-count: a number"),
            other => panic!("unknown argument {other}; see the top of examples/workload_fit.rs"),
        }
    }
    args
}

/// `(source, text)` of the development set's originals: `dev-zh`, `dev-en`.
fn dev_texts(dir: &Path) -> Vec<(String, String)> {
    let Ok(file) = std::fs::File::open(dir.join("originals.jsonl.gz")) else {
        eprintln!("no {}: the development set is skipped", dir.display());
        return Vec::new();
    };
    BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map(|l| {
            let doc: serde_json::Value = serde_json::from_str(&l.expect("read")).expect("json");
            (
                format!("dev-{}", doc["lang"].as_str().unwrap_or("?")),
                doc["text"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            files(&p, out);
        } else if meta.is_file() {
            out.push(p);
        }
    }
}

/// The text of one documentation file, if it is text.
fn doc_text(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?.to_string();
    let (bytes, name) = if let Some(inner) = name.strip_suffix(".gz") {
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(path).ok()?)
            .take(4 << 20)
            .read_to_end(&mut raw)
            .ok()?;
        (raw, inner.to_string())
    } else {
        (std::fs::read(path).ok()?, name)
    };
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    let text = match ext {
        "html" | "htm" | "xhtml" => html_to_text(&bytes, None, true).ok()?,
        "" | "txt" | "md" | "rst" | "Debian" | "text" | "NEWS" | "README" => {
            String::from_utf8(bytes).ok()?
        }
        _ => return None,
    };
    if text.contains('\0') || text.trim().chars().count() < MIN_TEXT {
        return None;
    }
    let mut end = text.len().min(MAX_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(text[..end].to_string())
}

/// What one set of fingerprints looks like.
struct Measure {
    documents: usize,
    distinct: usize,
    /// Share of 1s of each bit (bit `i` is `1 << i`), over the distinct fingerprints.
    bit_ones: Vec<f64>,
    /// Per block (block 0 is bits 63..48), over the distinct fingerprints.
    factors: Vec<f64>,
}

fn distinct(fps: &[u64]) -> Vec<u64> {
    let mut d = fps.to_vec();
    d.sort_unstable();
    d.dedup();
    d
}

fn block(fp: u64, b: usize) -> u16 {
    (fp >> (48 - 16 * b)) as u16
}

fn factor(counts: impl Iterator<Item = u64>, n: usize) -> f64 {
    let pairs: f64 = counts.map(|c| (c * c.saturating_sub(1)) as f64).sum();
    let n = n as f64;
    65536.0 * pairs / (n * (n - 1.0)).max(1.0)
}

fn block_counts(fps: &[u64], b: usize) -> HashMap<u16, u64> {
    let mut counts = HashMap::new();
    for &fp in fps {
        *counts.entry(block(fp, b)).or_insert(0) += 1;
    }
    counts
}

fn measure(fps: &[u64]) -> Measure {
    let d = distinct(fps);
    let n = d.len();
    let bit_ones = (0..64)
        .map(|i| d.iter().filter(|&&fp| (fp >> i) & 1 == 1).count() as f64 / n as f64)
        .collect();
    let factors = (0..4)
        .map(|b| factor(block_counts(&d, b).into_values(), n))
        .collect();
    Measure {
        documents: fps.len(),
        distinct: n,
        bit_ones,
        factors,
    }
}

fn print_row(name: &str, m: &Measure) {
    let min = m.bit_ones.iter().copied().fold(1.0, f64::min);
    let max = m.bit_ones.iter().copied().fold(0.0, f64::max);
    let factors: Vec<String> = m.factors.iter().map(|f| format!("{f:.1}")).collect();
    println!(
        "| {name} | {} | {} | {:.0}% | {:.0}% | {} |",
        m.documents,
        m.distinct,
        100.0 * min,
        100.0 * max,
        factors.join(" / ")
    );
}

/// The model of one block: a table of frequent values, else independent bits.
fn fit_block(d: &[u64], b: usize, min_count: u64, measured: f64) -> serde_json::Value {
    let n = d.len() as f64;
    let counts = block_counts(d, b);
    let mut top: Vec<(u16, u64)> = counts
        .iter()
        .filter(|&(_, &c)| c >= min_count)
        .map(|(&v, &c)| (v, c))
        .collect();
    top.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let in_table: std::collections::HashSet<u16> = top.iter().map(|&(v, _)| v).collect();
    let rest: Vec<u16> = d
        .iter()
        .map(|&fp| block(fp, b))
        .filter(|v| !in_table.contains(v))
        .collect();
    let bits: Vec<f64> = (0..16)
        .map(|j| {
            rest.iter().filter(|&&v| (v >> j) & 1 == 1).count() as f64 / rest.len().max(1) as f64
        })
        .collect();
    let probs: Vec<f64> = top.iter().map(|&(_, c)| c as f64 / n).collect();
    let q: f64 = probs.iter().sum();
    // The block's distribution with the table scaled by `a`: (1 - a q) times the independent
    // bits' probability of each value, plus a times the table's.
    let independent: Vec<f64> = (0..65536usize)
        .map(|v| {
            (0..16)
                .map(|j| {
                    if (v >> j) & 1 == 1 {
                        bits[j]
                    } else {
                        1.0 - bits[j]
                    }
                })
                .product()
        })
        .collect();
    let model_factor = |a: f64| {
        let mut p: Vec<f64> = independent.iter().map(|x| (1.0 - a * q) * x).collect();
        for (&(v, _), pv) in top.iter().zip(&probs) {
            p[usize::from(v)] += a * pv;
        }
        65536.0 * p.iter().map(|x| x * x).sum::<f64>()
    };
    // The scale that makes the model's shared-block factor the measured one (bisection; the
    // factor grows with `a` over [0, 1/q]).
    let (mut lo, mut hi) = (0.0, if q > 0.0 { 1.0 / q } else { 0.0 });
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if model_factor(mid) < measured {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let a = (lo + hi) / 2.0;
    eprintln!(
        "block {b}: {} table values ({:.1}% of the fingerprints, scaled by {a:.2}), independent bits alone {:.1}x, model {:.2}x, measured {measured:.2}x",
        top.len(),
        100.0 * q,
        model_factor(0.0),
        model_factor(a),
    );
    let round = |x: f64| (x * 1e6).round() / 1e6;
    serde_json::json!({
        "top": top.iter().zip(&probs).map(|(&(v, _), p)| serde_json::json!([v, round(a * p)])).collect::<Vec<_>>(),
        "bits": bits.iter().map(|&p| round(p)).collect::<Vec<_>>(),
    })
}

fn main() {
    let args = parse_args();
    let mut texts = dev_texts(&args.dev);
    let mut paths = Vec::new();
    files(&args.docs, &mut paths);
    let docs: Vec<String> = paths.par_iter().filter_map(|p| doc_text(p)).collect();
    eprintln!(
        "{} development-set texts, {} documentation texts of {} files under {}",
        texts.len(),
        docs.len(),
        paths.len(),
        args.docs.display()
    );
    texts.extend(docs.into_iter().map(|t| ("debian-doc".to_string(), t)));
    let hasher = Simhasher::default();
    let fps: Vec<(String, u64)> = texts
        .par_iter()
        .filter_map(|(source, text)| {
            hasher
                .fingerprint(text)
                .ok()
                .map(|fp| (source.clone(), fp.0))
        })
        .collect();
    let mut sources: Vec<String> = fps.iter().map(|(s, _)| s.clone()).collect();
    sources.sort();
    sources.dedup();
    println!("| texts | documents | distinct fingerprints | least 1s | most 1s | shared-block factor, blocks 0 / 1 / 2 / 3 |");
    println!("|---|---:|---:|---:|---:|---|");
    for s in &sources {
        let of: Vec<u64> = fps
            .iter()
            .filter(|(t, _)| t == s)
            .map(|&(_, fp)| fp)
            .collect();
        print_row(s, &measure(&of));
    }
    let all: Vec<u64> = fps.iter().map(|&(_, fp)| fp).collect();
    let m = measure(&all);
    print_row("all", &m);

    let d = distinct(&all);
    let blocks: Vec<serde_json::Value> = (0..4)
        .map(|b| fit_block(&d, b, args.min_count, m.factors[b]))
        .collect();
    let round = |x: f64| (x * 1e4).round() / 1e4;
    let model = serde_json::json!({
        "fitted_on": format!(
            "default Simhasher fingerprints of {} texts: {}",
            m.documents,
            sources.join(", ")
        ),
        "documents": m.documents,
        "distinct": m.distinct,
        "exact_duplicate_share": round(1.0 - m.distinct as f64 / m.documents as f64),
        "bit_ones": m.bit_ones.iter().map(|&p| round(p)).collect::<Vec<_>>(),
        "shared_block_factor": m.factors.iter().map(|&f| round(f)).collect::<Vec<_>>(),
        "blocks": blocks,
    });
    std::fs::write(
        &args.out,
        serde_json::to_string_pretty(&model).expect("json") + "\n",
    )
    .expect("write --out");
    eprintln!("wrote {}", args.out.display());
}
