//! Fingerprints every document of a labelled near-duplicate set, for scoring with its
//! `eval.py`, under a configuration given on the command line.
//!
//! ```text
//! cargo run --release --example quality_fps -- DATA_DIR OUT.jsonl [OPTIONS]
//! python3 DATA_DIR/eval.py OUT.jsonl --kmax 10
//! ```
//!
//! DATA_DIR holds `originals.jsonl.gz` and `variants.jsonl.gz`, one `{"id", "text", ...}`
//! object a line. OUT.jsonl gets one `{"id": ..., "fp": "0x..."}` line per document.
//!
//! OPTIONS (defaults are `SimhashConfig::default()`):
//!   --normalize on|off     fold full-width forms and look-alike letters
//!   --drop-boilerplate on|off  leave out boilerplate lines (copyright, share, prev/next, ...)
//!   --hmm on|off           jieba HMM for unknown words
//!   --stop-words on|off    drop the built-in stop words
//!   --words on|off         single words as features
//!   --word-shingles N      0, or 2..=8 consecutive words
//!   --cjk-shingles N       0, or 1..=16 consecutive CJK ideographs
//!   --word-char-shingles N 0, or 1..=16 consecutive characters of non-CJK words
//!   --within-words on|off  those shingles within each word, or across the words run together
//!   --count-pieces N       0, or 2..=16: count pieces of base N for non-CJK features
//!   --count-pieces-ratio R 0 (the base), or 2..=16: each later piece R times the one before
//!   --tf raw|sqrt|log|binary|length-adaptive
//!   --idf none|jieba
//!   --seed N
//!   --print-config         print the configuration as JSON on stderr

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use simhash_store::{Error, SimhashConfig, Simhasher};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quality_fps: {e}");
            ExitCode::FAILURE
        }
    }
}

fn on_off(v: &str) -> Result<bool, String> {
    match v {
        "on" | "true" | "1" => Ok(true),
        "off" | "false" | "0" => Ok(false),
        _ => Err(format!("expected on or off, got {v}")),
    }
}

/// The unit variant of a serde enum named `name` in kebab case (`log` -> `Log`,
/// `length-adaptive` -> `LengthAdaptive`).
fn variant<T: serde::de::DeserializeOwned>(name: &str) -> serde_json::Result<T> {
    let camel: String = name
        .split('-')
        .flat_map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase())
                .into_iter()
                .chain(chars)
        })
        .collect();
    serde_json::from_value(serde_json::Value::String(camel))
}

fn parse_args(args: &[String]) -> Result<SimhashConfig, String> {
    let mut c = SimhashConfig::default();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "--print-config" {
            continue;
        }
        let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |v: &str| v.parse::<u64>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--normalize" => c.normalize = on_off(v)?,
            "--drop-boilerplate" => c.drop_boilerplate = on_off(v)?,
            "--hmm" => c.hmm = on_off(v)?,
            "--stop-words" => c.stop_words = on_off(v)?,
            "--words" => c.words = on_off(v)?,
            "--word-shingles" => c.word_shingles = num(v)?.try_into().map_err(|_| "too large")?,
            "--cjk-shingles" => {
                c.cjk_char_shingles = num(v)?.try_into().map_err(|_| "too large")?
            }
            "--word-char-shingles" => {
                c.word_char_shingles = num(v)?.try_into().map_err(|_| "too large")?
            }
            "--within-words" => c.word_char_shingles_within_words = on_off(v)?,
            "--count-pieces" => {
                c.latin_count_pieces = num(v)?.try_into().map_err(|_| "too large")?
            }
            "--count-pieces-ratio" => {
                c.latin_count_pieces_ratio = num(v)?.try_into().map_err(|_| "too large")?
            }
            // The enums by their serde names (Raw, Sqrt, Log, Binary; None, Jieba).
            "--tf" => {
                c.tf = variant(v).map_err(|_| {
                    format!("--tf {v}: expected raw, sqrt, log, binary or length-adaptive")
                })?
            }
            "--idf" => {
                c.idf = variant(v).map_err(|_| format!("--idf {v}: expected none or jieba"))?
            }
            "--seed" => c.seed = num(v)?,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(c)
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [data, out, options @ ..] = args.as_slice() else {
        return Err("usage: quality_fps DATA_DIR OUT.jsonl [OPTIONS]".into());
    };
    let config = parse_args(options)?;
    if options.iter().any(|o| o == "--print-config") {
        eprintln!(
            "{}",
            serde_json::to_string(&config).map_err(|e| e.to_string())?
        );
    }
    let hasher = Simhasher::new(config).map_err(|e| e.to_string())?;
    let mut w = BufWriter::new(File::create(out).map_err(|e| format!("{out}: {e}"))?);
    let (mut docs, mut empty, mut features) = (0usize, 0usize, 0usize);
    for name in ["originals.jsonl.gz", "variants.jsonl.gz"] {
        let path = Path::new(data).join(name);
        let file = File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let gz = flate2::read::MultiGzDecoder::new(file);
        for (n, line) in BufReader::new(gz).lines().enumerate() {
            let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
            let doc: serde_json::Value = serde_json::from_str(&line)
                .map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
            let (Some(id), Some(text)) = (doc["id"].as_str(), doc["text"].as_str()) else {
                return Err(format!("{}:{}: no id or text", path.display(), n + 1));
            };
            let fp = match hasher.fingerprint_with_count(text) {
                Ok((fp, count)) => {
                    features += count;
                    fp.0
                }
                // Every document needs a value; 0 is as good as any for the rare empty one.
                Err(Error::NoFeatures) => {
                    empty += 1;
                    0
                }
                Err(e) => return Err(e.to_string()),
            };
            let rec = serde_json::json!({ "id": id, "fp": format!("0x{fp:016x}") });
            writeln!(w, "{rec}").map_err(|e| format!("{out}: {e}"))?;
            docs += 1;
        }
    }
    w.flush().map_err(|e| format!("{out}: {e}"))?;
    eprintln!(
        "{docs} documents, {empty} without features, {:.0} features per document",
        features as f64 / docs.max(1) as f64
    );
    Ok(())
}
