//! Fingerprint throughput on Chinese text, next to jieba's segmentation alone on the same text.
//!
//! ```text
//! cargo bench --bench fingerprint
//! ```
//!
//! For instruction counts (deterministic, unlike time on a shared machine), the same binary
//! runs a plain loop instead of criterion when `FINGERPRINT_PROFILE` names what to run
//! (`default`, `words_only`, `cut`, `release_0.3`, `length_adaptive` or
//! `length_adaptive_no_pieces`; `FINGERPRINT_ITERS` times, default 100), under
//! callgrind counting only inside that loop:
//!
//! ```text
//! cargo bench --bench fingerprint --no-run   # prints the path of the binary
//! FINGERPRINT_PROFILE=default valgrind --tool=callgrind --toggle-collect='*profile_loop*' \
//!     target/release/deps/fingerprint-HASH --bench
//! ```
//!
//! The text is every `*.txt` of `../shared/corpus` (relative to the crate) when that folder
//! exists (real Chinese news), else generated Chinese text of the same size. Throughput is in
//! bytes of UTF-8 text; each iteration fingerprints (or segments) every document once.
//!
//! After criterion's groups the bench prints the ratio that matters, the default
//! fingerprint's throughput over `cut`'s (and the same for 0.4's default, count pieces at the
//! powers of 4, for 0.3's, Latin trigrams across words without count pieces, for 0.2's, which
//! also kept boilerplate lines, and for the default with `TfScaling::LengthAdaptive`), measured in alternating rounds: on a shared machine
//! the load changes between criterion's groups (seconds apart), which moves a ratio of two
//! group results by more than the changes it is meant to show (0.49 to 1.07 for the same
//! code on a loaded machine). In each round each side runs five short batches (about 3 ms)
//! and the fastest counts: other processes only ever add time, so the fastest batch is the
//! closest to the time without them. It prints the median of the per-round ratios and their
//! interquartile range. Only this, without criterion's groups (a filter that matches none of
//! them):
//!
//! ```text
//! cargo bench --bench fingerprint -- ratio
//! ```
//!
//! Where the linker puts the code moves this ratio between builds of the same source: 0.58
//! against 0.63 on the Xeon this was measured on, jieba's own loops running up to 11% faster
//! or slower. Likely cause: Intel's microcode for the JCC erratum keeps a jump that crosses
//! a 32-byte boundary out of the decoded-instruction cache. Built with the mitigation for
//! it, two builds agreed within 0.01. For numbers that compare across builds, use that
//! build, in a target directory of its own (every crate is rebuilt, RocksDB included):
//!
//! ```text
//! RUSTFLAGS="-C llvm-args=-x86-branches-within-32B-boundaries -C llvm-args=-align-all-functions=6" \
//!     CARGO_TARGET_DIR=target-jcc cargo bench --bench fingerprint -- ratio
//! ```

use std::hint::black_box;
use std::path::Path;
use std::sync::LazyLock;

use criterion::{criterion_group, Criterion};
use jieba_rs::Jieba;
use simhash_store::simhash::TfScaling;
use simhash_store::sketch::SketchKind;
use simhash_store::{SimhashConfig, Simhasher};

#[path = "support/alternating.rs"]
mod alternating;
#[path = "support/group.rs"]
mod group;
#[path = "support/profile.rs"]
mod profile;
use profile::profile_loop;

static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

/// The benchmark documents: the shared corpus if present, else generated text.
fn documents() -> (Vec<String>, &'static str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut docs = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "txt"))
            .collect();
        paths.sort();
        docs = paths
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect();
    }
    if docs.is_empty() {
        (generated(), "generated")
    } else {
        (docs, "shared/corpus")
    }
}

/// Three documents (about 11 KB in all) of Chinese sentences with some English, from a
/// fixed-seed generator.
fn generated() -> Vec<String> {
    const WORDS: &[&str] = &[
        "历史", "学者", "认为", "王朝", "时期", "经济", "发展", "政治", "制度", "改革", "社会",
        "文化", "人口", "农业", "商业", "城市", "军队", "战争", "皇帝", "大臣", "百姓", "土地",
        "税收", "记载", "研究", "资料", "事件", "影响", "变化", "问题", "新闻", "记者", "报道",
        "公司", "市场", "增长", "政府", "政策", "技术", "网络", "数据", "用户", "服务", "系统",
        "安全", "部门", "地区", "国际",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    [7_800usize, 1_500, 1_500]
        .iter()
        .map(|&len| {
            let mut text = String::new();
            while text.len() < len {
                for _ in 0..4 + next(8) {
                    text.push_str(WORDS[next(WORDS.len())]);
                }
                text.push_str(if next(6) == 0 {
                    "，the data and the system。"
                } else {
                    "。"
                });
            }
            text
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let (docs, source) = documents();
    let default = Simhasher::default();
    let Ok(words_only) = Simhasher::new(
        SimhashConfig::default()
            .with_cjk_char_shingles(0)
            .with_word_char_shingles(0),
    ) else {
        return;
    };
    // Load the dictionaries before timing.
    let _ = default.fingerprint("预热");
    let _ = JIEBA.cut("预热", true);

    let default = |d: &str| {
        black_box(default.fingerprint(d).ok());
    };
    let words_only = |d: &str| {
        black_box(words_only.fingerprint(d).ok());
    };
    let baseline = |d: &str| {
        black_box(JIEBA.cut(d, true));
    };
    group::bench_docs(
        c,
        &format!("fingerprint_zh/{source}"),
        &docs,
        &[
            ("simhasher_default", &default),
            ("simhasher_words_only", &words_only),
            ("jieba_cut_hmm", &baseline),
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
    let iters = profile::iterations(100);
    let (docs, source) = documents();
    let bytes: usize = docs.iter().map(String::len).sum();
    let default = Simhasher::default();
    let words_only = Simhasher::new(
        SimhashConfig::default()
            .with_cjk_char_shingles(0)
            .with_word_char_shingles(0),
    )
    .expect("valid configuration");
    let _ = default.fingerprint("预热");
    let _ = words_only.fingerprint("预热");
    let _ = JIEBA.cut("预热", true);
    match what.as_str() {
        "default" => profile_loop(&docs, iters, |d| {
            black_box(default.fingerprint(d).ok());
        }),
        "words_only" => profile_loop(&docs, iters, |d| {
            black_box(words_only.fingerprint(d).ok());
        }),
        "cut" => profile_loop(&docs, iters, |d| {
            black_box(JIEBA.cut(d, true));
        }),
        other => match profiled_config(other) {
            Some(config) => {
                let hasher = Simhasher::new(config).expect("valid configuration");
                let _ = hasher.fingerprint("预热");
                profile_loop(&docs, iters, |d| {
                    black_box(hasher.fingerprint(d).ok());
                })
            }
            None => panic!("FINGERPRINT_PROFILE={other}: use default, words_only, cut, release_0.3, length_adaptive or length_adaptive_no_pieces"),
        },
    }
    eprintln!("{what}: {iters} x {bytes} bytes of {source}");
    true
}

/// Prints the throughput of the default fingerprint, of 0.4's, 0.3's and 0.2's defaults and of the
/// default with `TfScaling::LengthAdaptive`, over `cut`'s, from alternating rounds (see the
/// top of the file and `support/alternating.rs`).
fn print_ratio() {
    let (docs, source) = documents();
    let hasher = |config: SimhashConfig| Simhasher::new(config).expect("valid configuration");
    let release = |minor| SimhashConfig::release_default(minor).expect("a release");
    let (v4, v3) = (release(4), release(3));
    let hashers = [
        ("default", Simhasher::default()),
        (
            "0.4's default (count pieces at the powers of 4)",
            hasher(v4),
        ),
        (
            "0.3's default (trigrams across words, no count pieces)",
            hasher(v3.clone()),
        ),
        (
            "0.2's default (0.3's, keeping boilerplate lines)",
            hasher(v3.with_drop_boilerplate(false)),
        ),
        (
            "default with TfScaling::LengthAdaptive",
            hasher(SimhashConfig::default().with_tf(TfScaling::LengthAdaptive)),
        ),
    ];
    let _ = JIEBA.cut("预热", true);
    let cut = || {
        for d in &docs {
            black_box(JIEBA.cut(black_box(d), true));
        }
    };
    // 0.2's default is the slowest of the raw-TF sides and sets the batch size.
    alternating::print_fingerprint_ratios(
        &format!("fingerprint_zh/{source}"),
        ("jieba_cut_hmm", &cut),
        &hashers,
        &docs,
        "预热",
        3,
    );
    // The cost of a store that keeps sketches: fingerprint and sketch of every text (the
    // sketch made in the fingerprint's pass), next to the fingerprint alone, against the same
    // `cut`.
    let sketching = hasher(SimhashConfig::default().with_sketch(SketchKind::MinHash));
    let fingerprint_only = || {
        for d in &docs {
            black_box(sketching.fingerprint(black_box(d)).ok());
        }
    };
    let with_sketch = || {
        for d in &docs {
            black_box(sketching.fingerprint_and_sketch(black_box(d)).ok());
        }
    };
    alternating::print_ratios(
        &format!("fingerprint_zh/{source}"),
        ("jieba_cut_hmm", &cut),
        &[
            ("default (fingerprint only)", &fingerprint_only),
            ("default + sketch (fingerprint_and_sketch)", &with_sketch),
        ],
        1,
    );
}

criterion_group!(benches, bench);

fn main() {
    group::main(profile, benches, print_ratio);
}
