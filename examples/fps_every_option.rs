//! Fingerprints every document of a labelled near-duplicate set under the default
//! configuration and under each option varied one at a time (every enum variant, several
//! values of each number), plus the combinations that select each way of summing the
//! features, and writes one line per configuration and document: a change to the
//! fingerprinter that must not move any fingerprint leaves this output byte-identical.
//!
//! ```text
//! cargo run --release --example fps_every_option -- DATA_DIR OUT.txt
//! ```
//!
//! DATA_DIR holds `originals.jsonl.gz` and `variants.jsonl.gz`, one `{"id", "text", ...}`
//! object a line. Each output line is `CONFIG ID FINGERPRINT COUNT`, with `-` for a document
//! without features.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use simhash_store::simhash::{IdfWeighting, TfScaling};
use simhash_store::{Error, SimhashConfig, Simhasher};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fps_every_option: {e}");
            ExitCode::FAILURE
        }
    }
}

const TFS: [TfScaling; 5] = [
    TfScaling::Raw,
    TfScaling::Sqrt,
    TfScaling::Log,
    TfScaling::Binary,
    TfScaling::LengthAdaptive,
];

/// The configurations, each with a name.
fn configs() -> Vec<(String, SimhashConfig)> {
    let d = SimhashConfig::default;
    let mut c: Vec<(String, SimhashConfig)> = vec![
        ("default".into(), d()),
        ("normalize=off".into(), d().with_normalize(false)),
        ("hmm=off".into(), d().with_hmm(false)),
        ("stop_words=off".into(), d().with_stop_words(false)),
        ("words=off".into(), d().with_words(false)),
        ("idf=jieba".into(), d().with_idf(IdfWeighting::Jieba)),
        (
            "drop_boilerplate=off".into(),
            d().with_drop_boilerplate(false),
        ),
        (
            "within_words=off".into(),
            d().with_word_char_shingles_within_words(false),
        ),
    ];
    for n in [2, 3, 5, 8] {
        c.push((format!("word_shingles={n}"), d().with_word_shingles(n)));
    }
    for n in [0, 2, 3, 5, 16] {
        c.push((
            format!("cjk_char_shingles={n}"),
            d().with_cjk_char_shingles(n),
        ));
    }
    for n in [0, 1, 2, 4, 16] {
        c.push((
            format!("word_char_shingles={n}"),
            d().with_word_char_shingles(n),
        ));
    }
    for tf in TFS {
        c.push((format!("tf={tf:?}"), d().with_tf(tf)));
    }
    for seed in [1, 0xdead_beef_cafe_f00d] {
        c.push((format!("seed={seed}"), d().with_seed(seed)));
    }
    for n in [0, 2, 3, 8, 16] {
        c.push((
            format!("latin_count_pieces={n}"),
            d().with_latin_count_pieces(n),
        ));
    }
    for n in [0, 3, 4, 16] {
        c.push((
            format!("latin_count_pieces_ratio={n}"),
            d().with_latin_count_pieces_ratio(n),
        ));
    }
    // Each TF and IDF without count pieces, and IDF with each TF: the combinations that
    // select the other ways of summing.
    for tf in TFS {
        for idf in [IdfWeighting::None, IdfWeighting::Jieba] {
            c.push((
                format!("latin_count_pieces=0,tf={tf:?},idf={idf:?}"),
                d().with_latin_count_pieces(0).with_tf(tf).with_idf(idf),
            ));
            c.push((
                format!("tf={tf:?},idf={idf:?}"),
                d().with_tf(tf).with_idf(idf),
            ));
        }
    }
    c.push((
        "word_shingles=3,words=off,idf=jieba".into(),
        d().with_word_shingles(3)
            .with_words(false)
            .with_idf(IdfWeighting::Jieba),
    ));
    for minor in 2..=5 {
        if let Some(config) = SimhashConfig::release_default(minor) {
            c.push((format!("release_default(0.{minor})"), config));
        }
    }
    c
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [data, out] = args.as_slice() else {
        return Err("usage: fps_every_option DATA_DIR OUT.txt".into());
    };
    let mut docs = Vec::new();
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
            docs.push((id.to_owned(), text.to_owned()));
        }
    }
    let mut w = BufWriter::new(File::create(out).map_err(|e| format!("{out}: {e}"))?);
    let configs = configs();
    for (name, config) in &configs {
        let hasher = Simhasher::new(config.clone()).map_err(|e| format!("{name}: {e}"))?;
        for (id, text) in &docs {
            let line = match hasher.fingerprint_with_count(text) {
                Ok((fp, count)) => format!("{name} {id} {:016x} {count}", fp.0),
                Err(Error::NoFeatures) => format!("{name} {id} - 0"),
                Err(e) => return Err(e.to_string()),
            };
            writeln!(w, "{line}").map_err(|e| format!("{out}: {e}"))?;
        }
    }
    w.flush().map_err(|e| format!("{out}: {e}"))?;
    eprintln!(
        "{} configurations x {} documents",
        configs.len(),
        docs.len()
    );
    Ok(())
}
