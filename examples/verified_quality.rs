//! Scores plain and verified near-duplicate answers on a labelled near-duplicate set (the
//! layout of `eval.py`'s folder: `originals.jsonl.gz`, `variants.jsonl.gz` with `id`, `lang`
//! and `text`, and `pairs_truth.jsonl` with the positive pairs `a`, `b`), by brute force over
//! every pair, averaged over hash seeds: precision, recall, F1 and false-positive pairs per
//! seed, for Chinese and English pairs, for the plain fingerprint at `k = 3` and for verified
//! answers (within `--k` bits and sketch similarity at least `--min-similarity`).
//!
//! ```text
//! cargo run --release --example verified_quality -- DATA_DIR [--seeds 20] [--k 8] [--min-similarity 0.75] [--idf jieba] [--tf sqrt|log|binary]
//! ```
//!
//! `--idf` and `--tf` change the fingerprint's weighting from the default's (`SimhashConfig`).

use std::collections::HashSet;
use std::io::BufRead;
use std::path::Path;

use rayon::prelude::*;
use simhash_store::simhash::{IdfWeighting, TfScaling};
use simhash_store::sketch::SketchKind;
use simhash_store::{Fingerprint, SimhashConfig, Simhasher, Sketch};

struct Doc {
    id: String,
    lang: String,
    text: String,
}

fn read_jsonl_gz(path: &Path) -> Vec<serde_json::Value> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::io::BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map(|l| serde_json::from_str(&l.expect("a line")).expect("JSON"))
        .collect()
}

#[derive(Default, Clone, Copy)]
struct Counts {
    tp: f64,
    fp: f64,
    fn_: f64,
}

impl Counts {
    fn row(&self, seeds: f64) -> String {
        let p = self.tp / (self.tp + self.fp).max(1.0);
        let r = self.tp / (self.tp + self.fn_).max(1.0);
        let f1 = if p + r > 0.0 {
            2.0 * p * r / (p + r)
        } else {
            0.0
        };
        format!("{p:.3} | {r:.3} | {f1:.3} | {:.1}", self.fp / seeds)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = Path::new(
        args.get(1)
            .expect("usage: verified_quality DATA_DIR [--seeds N] [--k K] [--min-similarity S]"),
    );
    let flag = |name: &str, default: f64| -> f64 {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map_or(default, |v| v.parse().expect("a number"))
    };
    let (seeds, k, min_sim) = (
        flag("--seeds", 20.0) as u64,
        flag("--k", 8.0) as u32,
        flag("--min-similarity", 0.75),
    );
    let word = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(String::as_str)
    };
    let idf = match word("--idf") {
        None | Some("none") => IdfWeighting::None,
        Some("jieba") => IdfWeighting::Jieba,
        Some(other) => panic!("--idf none|jieba, not {other}"),
    };
    let tf = match word("--tf") {
        None | Some("raw") => TfScaling::Raw,
        Some("sqrt") => TfScaling::Sqrt,
        Some("log") => TfScaling::Log,
        Some("binary") => TfScaling::Binary,
        Some(other) => panic!("--tf raw|sqrt|log|binary, not {other}"),
    };
    let mut docs = Vec::new();
    for name in ["originals.jsonl.gz", "variants.jsonl.gz"] {
        for v in read_jsonl_gz(&dir.join(name)) {
            docs.push(Doc {
                id: v["id"].as_str().expect("id").to_owned(),
                lang: v["lang"].as_str().expect("lang").to_owned(),
                text: v["text"].as_str().expect("text").to_owned(),
            });
        }
    }
    let index: std::collections::HashMap<&str, usize> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i))
        .collect();
    let truth_text =
        std::fs::read_to_string(dir.join("pairs_truth.jsonl")).expect("pairs_truth.jsonl");
    let mut truth = HashSet::new();
    for line in truth_text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("JSON");
        let (a, b) = (
            index[v["a"].as_str().expect("a")],
            index[v["b"].as_str().expect("b")],
        );
        truth.insert((a.min(b), a.max(b)));
    }
    let zh: Vec<bool> = docs.iter().map(|d| d.lang == "zh").collect();
    // [plain k=3, verified] x [zh, en]
    let mut counts = [[Counts::default(); 2]; 2];
    for seed in 0..seeds {
        let config = SimhashConfig::default()
            .with_idf(idf)
            .with_tf(tf)
            .with_seed(seed)
            .with_sketch(SketchKind::MinHash);
        let hasher = Simhasher::new(config).expect("valid");
        let fps: Vec<Option<(Fingerprint, Sketch)>> = docs
            .par_iter()
            .map(|d| match hasher.fingerprint_and_sketch(&d.text) {
                Ok((fp, Some(s))) => Some((fp, s)),
                _ => None,
            })
            .collect();
        let per_doc: Vec<[[Counts; 2]; 2]> = (0..docs.len())
            .into_par_iter()
            .map(|i| {
                let mut c = [[Counts::default(); 2]; 2];
                for j in i + 1..docs.len() {
                    let positive = truth.contains(&(i, j));
                    let lang = if zh[i] && zh[j] {
                        0
                    } else if !zh[i] && !zh[j] {
                        1
                    } else {
                        continue;
                    };
                    let (plain, verified) = match (&fps[i], &fps[j]) {
                        (Some((fa, sa)), Some((fb, sb))) => {
                            let d = fa.distance(*fb);
                            (d <= 3, d <= k && sa.similarity(sb) >= min_sim)
                        }
                        _ => (false, false),
                    };
                    for (rule, predicted) in [plain, verified].into_iter().enumerate() {
                        let c = &mut c[rule][lang];
                        match (predicted, positive) {
                            (true, true) => c.tp += 1.0,
                            (true, false) => c.fp += 1.0,
                            (false, true) => c.fn_ += 1.0,
                            (false, false) => {}
                        }
                    }
                }
                c
            })
            .collect();
        for c in per_doc {
            for rule in 0..2 {
                for lang in 0..2 {
                    counts[rule][lang].tp += c[rule][lang].tp;
                    counts[rule][lang].fp += c[rule][lang].fp;
                    counts[rule][lang].fn_ += c[rule][lang].fn_;
                }
            }
        }
    }
    println!(
        "{} documents, {} positive pairs, {seeds} seeds\n",
        docs.len(),
        truth.len()
    );
    println!("| rule | zh P | zh R | zh F1 | zh FP/seed | en P | en R | en F1 | en FP/seed |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let s = seeds as f64;
    println!(
        "| plain, k = 3 | {} | {} |",
        counts[0][0].row(s),
        counts[0][1].row(s)
    );
    println!(
        "| verified, k = {k}, similarity >= {min_sim} | {} | {} |",
        counts[1][0].row(s),
        counts[1][1].row(s)
    );
}
