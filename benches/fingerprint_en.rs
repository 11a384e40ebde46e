//! Fingerprint throughput on English text, next to Unicode word segmentation alone
//! (`unicode-segmentation`'s `unicode_words`, UAX #29) on the same text.
//!
//! ```text
//! cargo bench --bench fingerprint_en            # criterion groups, then the ratios
//! cargo bench --bench fingerprint_en -- ratio   # only the ratios
//! ```
//!
//! The text is the English originals of `../shared/quality` (relative to the crate; real
//! documentation pages from Debian packages, one line per paragraph, list item or code line),
//! taken in file order up to about 128 KB, when that set exists; else generated English text
//! of about the same size and line structure. Throughput is in bytes of UTF-8 text; each
//! iteration fingerprints (or segments) every document once.
//!
//! Segmentation is to English what jieba's `cut` is to Chinese (`benches/fingerprint.rs`):
//! the part every word-based fingerprint needs. The ratios are measured in alternating
//! rounds (`support/alternating.rs`), which a shared machine's changing load does not skew.
//! Code layout moves them between builds as it does the Chinese ratio; the build that
//! compares across builds is described at the top of `benches/fingerprint.rs`.
//!
//! For instruction counts, `FINGERPRINT_PROFILE=default|words_only|words|release_0.3|length_adaptive|
//! length_adaptive_no_pieces` runs a plain loop
//! (`FINGERPRINT_ITERS` times, default 20) instead, as in `benches/fingerprint.rs`:
//!
//! ```text
//! FINGERPRINT_PROFILE=default valgrind --tool=callgrind --toggle-collect='*profile_loop*' \
//!     target/release/deps/fingerprint_en-HASH --bench
//! ```

use std::hint::black_box;
use std::io::BufRead;
use std::path::Path;

use criterion::{criterion_group, Criterion};
use simhash_store::simhash::TfScaling;
use simhash_store::{SimhashConfig, Simhasher};
use unicode_segmentation::UnicodeSegmentation;

#[path = "support/alternating.rs"]
mod alternating;
#[path = "support/group.rs"]
mod group;
#[path = "support/profile.rs"]
mod profile;
use profile::profile_loop;

/// About how many bytes of text the benchmark takes.
const TEXT_BYTES: usize = 128 * 1024;

/// The benchmark documents: the quality set's English originals if present, else generated
/// text.
fn documents() -> (Vec<String>, &'static str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/quality/originals.jsonl.gz");
    let docs = std::fs::File::open(path)
        .map(|file| {
            let lines = std::io::BufReader::new(flate2::read::MultiGzDecoder::new(file)).lines();
            let mut docs = Vec::new();
            let mut bytes = 0;
            for line in lines.map_while(Result::ok) {
                let Ok(doc) = serde_json::from_str::<serde_json::Value>(&line) else {
                    continue;
                };
                if doc["lang"] != "en" {
                    continue;
                }
                if let Some(text) = doc["text"].as_str() {
                    bytes += text.len();
                    docs.push(text.to_owned());
                }
                if bytes >= TEXT_BYTES {
                    break;
                }
            }
            docs
        })
        .unwrap_or_default();
    if docs.is_empty() {
        (generated(), "generated")
    } else {
        (docs, "shared/quality")
    }
}

/// Documents of about 2 KB (128 KB in all) of English lines with code and numbers, from a
/// fixed-seed generator.
fn generated() -> Vec<String> {
    const WORDS: &[&str] = &[
        "the",
        "of",
        "and",
        "to",
        "a",
        "in",
        "is",
        "that",
        "for",
        "it",
        "as",
        "with",
        "on",
        "be",
        "by",
        "this",
        "package",
        "system",
        "file",
        "files",
        "configuration",
        "server",
        "user",
        "users",
        "option",
        "options",
        "default",
        "command",
        "directory",
        "install",
        "installed",
        "network",
        "kernel",
        "module",
        "service",
        "services",
        "debian",
        "version",
        "value",
        "values",
        "example",
        "manual",
        "page",
        "section",
        "chapter",
        "administrator",
        "access",
        "security",
        "update",
        "upgrade",
        "mail",
        "database",
        "backup",
        "disk",
        "partition",
        "process",
        "memory",
        "interface",
        "address",
        "password",
        "account",
        "group",
        "log",
        "logs",
        "error",
        "warning",
        "output",
        "input",
        "script",
        "shell",
        "variable",
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    (0..64)
        .map(|_| {
            let mut text = String::new();
            while text.len() < TEXT_BYTES / 64 {
                for i in 0..6 + next(14) {
                    let word = WORDS[next(WORDS.len())];
                    if i == 0 {
                        let mut chars = word.chars();
                        text.extend(chars.next().map(|c| c.to_ascii_uppercase()));
                        text.push_str(chars.as_str());
                    } else {
                        text.push(' ');
                        text.push_str(word);
                    }
                }
                text.push_str(match next(8) {
                    0 => ": /etc/default/grub, 2.6.32-5.\n",
                    1 | 2 => ".\n",
                    _ => ". ",
                });
            }
            text
        })
        .collect()
}

/// Unicode word segmentation alone: the words are counted so that none of the work is
/// optimized away.
fn words(doc: &str) -> usize {
    doc.unicode_words().count()
}

/// The words-only configuration: words as the only features (no letter trigrams).
fn words_only() -> Simhasher {
    Simhasher::new(SimhashConfig::default().with_word_char_shingles(0))
        .expect("valid configuration")
}

fn bench(c: &mut Criterion) {
    let (docs, source) = documents();
    let default = Simhasher::default();
    let words_only = words_only();
    let _ = default.fingerprint("warm up");

    let default = |d: &str| {
        black_box(default.fingerprint(d).ok());
    };
    let words_only = |d: &str| {
        black_box(words_only.fingerprint(d).ok());
    };
    let baseline = |d: &str| {
        black_box(words(d));
    };
    group::bench_docs(
        c,
        &format!("fingerprint_en/{source}"),
        &docs,
        &[
            ("simhasher_default", &default),
            ("simhasher_words_only", &words_only),
            ("unicode_words", &baseline),
        ],
    );
}

/// The configurations profile mode runs besides the default and words only: 0.3's default
/// and `TfScaling::LengthAdaptive` with and without count pieces, which take the other ways of
/// summing features (`src/simhash/sums/`).
fn profiled_config(what: &str) -> Option<SimhashConfig> {
    let adaptive = SimhashConfig::default().with_tf(TfScaling::LengthAdaptive);
    match what {
        "release_0.3" => SimhashConfig::release_default(3),
        "length_adaptive" => Some(adaptive),
        "length_adaptive_no_pieces" => Some(adaptive.with_latin_count_pieces(0)),
        _ => None,
    }
}

/// Profile mode (see the top of the file): returns false when `FINGERPRINT_PROFILE` is unset.
fn profile() -> bool {
    let Ok(what) = std::env::var("FINGERPRINT_PROFILE") else {
        return false;
    };
    let iters = profile::iterations(20);
    let (docs, source) = documents();
    let bytes: usize = docs.iter().map(String::len).sum();
    let default = Simhasher::default();
    let words_only = words_only();
    let _ = default.fingerprint("warm up");
    let _ = words_only.fingerprint("warm up");
    match what.as_str() {
        "default" => profile_loop(&docs, iters, |d| {
            black_box(default.fingerprint(d).ok());
        }),
        "words_only" => profile_loop(&docs, iters, |d| {
            black_box(words_only.fingerprint(d).ok());
        }),
        "words" => profile_loop(&docs, iters, |d| {
            black_box(words(d));
        }),
        other => match profiled_config(other) {
            Some(config) => {
                let hasher = Simhasher::new(config).expect("valid configuration");
                let _ = hasher.fingerprint("warm up");
                profile_loop(&docs, iters, |d| {
                    black_box(hasher.fingerprint(d).ok());
                })
            }
            None => panic!("FINGERPRINT_PROFILE={other}: use default, words_only, words, release_0.3, length_adaptive or length_adaptive_no_pieces"),
        },
    }
    eprintln!("{what}: {iters} x {bytes} bytes of {source}");
    true
}

/// Prints the throughput of the default fingerprint, of 0.4's and 0.3's defaults, of words
/// only and of the default with `TfScaling::LengthAdaptive`, over Unicode word segmentation's.
fn print_ratio() {
    let (docs, source) = documents();
    let hasher = |config: SimhashConfig| Simhasher::new(config).expect("valid configuration");
    let release = |minor| SimhashConfig::release_default(minor).expect("a release");
    let hashers = [
        ("default", Simhasher::default()),
        (
            "0.4's default (count pieces at the powers of 4)",
            hasher(release(4)),
        ),
        (
            "0.3's default (trigrams across words, no count pieces)",
            hasher(release(3)),
        ),
        ("words only (no letter trigrams)", words_only()),
        (
            "default with TfScaling::LengthAdaptive",
            hasher(SimhashConfig::default().with_tf(TfScaling::LengthAdaptive)),
        ),
    ];
    let segment = || {
        for d in &docs {
            black_box(words(black_box(d)));
        }
    };
    alternating::print_fingerprint_ratios(
        &format!("fingerprint_en/{source}"),
        ("unicode_words", &segment),
        &hashers,
        &docs,
        "warm up",
        4,
    );
}

criterion_group!(benches, bench);

fn main() {
    group::main(profile, benches, print_ratio);
}
