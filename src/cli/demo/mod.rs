//! `simhash-store demo`: generate a synthetic crawl with planted near-duplicates, load it,
//! query every page, and score the answers against the planted truth.

mod generate;
mod words;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use rayon::prelude::*;
use simhash_store::sketch::SketchKind;
use simhash_store::verified::{Verification, DEFAULT_MIN_SIMILARITY, DEFAULT_VERIFIED_K};
use simhash_store::{Fingerprint, SimhashConfig, Store};

use super::load::{load_inputs, Target};
use super::progress::Progress;
use super::{ConfigArgs, InputArgs};
use generate::Edit;

const EXAMPLES: &str = "\
Examples:
  simhash-store demo
  simhash-store demo --pages 5000 -k 4
  simhash-store demo --keep-boilerplate       # see what boilerplate removal buys
  simhash-store demo --store demo.db --out .  # keep the store and the WARC file

The crawl: articles in English and Chinese written from word lists in the program, on six
sites (one in GBK) whose pages share a header, menu, sidebar, link list and footer. About a
third of the articles get one or two near-duplicates with a known edit (a few characters
changed, an advert added, a sentence removed, paragraphs swapped), on the same site or on
another one. Precision: of the pairs found within k, how many are planted; recall: of the
planted pairs, how many were found. The store keeps sketches (as `load --sketch`), so every
page is also queried with --verified (candidates within --verified-k, kept where the sketches
agree), and both answers are scored.";

/// Arguments of `demo`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    // Taken as every subcommand takes it; `demo` writes its report to standard output and
    // shows no progress bar.
    #[command(flatten)]
    #[allow(dead_code)]
    quiet: super::QuietArg,

    /// Pages to generate.
    #[arg(long, default_value_t = 3000)]
    pages: usize,

    /// The Hamming distance within which pages count as near-duplicates.
    #[arg(long, short = 'k', default_value_t = simhash_store::DEFAULT_K, value_parser = clap::value_parser!(u32).range(0..=64))]
    max_distance: u32,

    /// Seed of the generator (the same seed gives the same crawl).
    #[arg(long, default_value_t = 1)]
    seed: u64,

    /// Store directory to create (default: a temporary one, removed at the end).
    #[arg(long, short = 's', value_name = "DIR")]
    store: Option<PathBuf>,

    /// Folder to write the WARC file to (default: a temporary one, removed at the end).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,

    /// Fingerprint all visible text of the pages, boilerplate included.
    #[arg(long)]
    keep_boilerplate: bool,

    /// The candidates' distance of the verified queries.
    #[arg(long, default_value_t = DEFAULT_VERIFIED_K, value_parser = clap::value_parser!(u32).range(0..=64))]
    verified_k: u32,

    /// The smallest sketch similarity of a verified match.
    #[arg(long, default_value_t = DEFAULT_MIN_SIMILARITY)]
    min_similarity: f64,
}

/// Precision and recall of `found` against `truth`, and the hits.
fn score(found: &HashSet<(usize, usize)>, truth: &HashSet<(usize, usize)>) -> (f64, f64, usize) {
    let hits = found.intersection(truth).count();
    let precision = if found.is_empty() {
        1.0
    } else {
        hits as f64 / found.len() as f64
    };
    let recall = if truth.is_empty() {
        1.0
    } else {
        hits as f64 / truth.len() as f64
    };
    (precision, recall, hits)
}

fn unordered(a: usize, b: usize) -> (usize, usize) {
    (a.min(b), a.max(b))
}

/// Runs `demo`.
///
/// # Errors
/// The temporary files or the store cannot be written.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let temp = tempfile::tempdir().context("cannot create a temporary directory")?;
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| temp.path().to_path_buf());
    let store_dir = args
        .store
        .clone()
        .unwrap_or_else(|| temp.path().join("store"));
    if store_dir.join("CURRENT").exists() {
        anyhow::bail!(
            "{} already holds a store: give the demo a new directory with --store",
            store_dir.display()
        );
    }
    let warc = out_dir.join("demo-crawl.warc.gz");

    let t = Instant::now();
    let crawl = generate::generate(&warc, args.pages, args.seed)
        .with_context(|| format!("cannot write {}", warc.display()))?;
    let generate_time = t.elapsed();
    let planted = crawl.pages.iter().filter(|p| p.edit.is_some()).count();
    let chinese = crawl
        .pages
        .iter()
        .filter(|p| p.url.contains(".cn/"))
        .count();
    println!(
        "simhash-store demo: {} pages ({} Chinese, {} English) on 6 sites, {} of them planted near-duplicates",
        crawl.pages.len(),
        chinese,
        crawl.pages.len() - chinese,
        planted
    );
    println!(
        "  generate  {:>7.2} s  {} ({:.1} MB gzipped WARC)",
        generate_time.as_secs_f64(),
        warc.display(),
        crawl.bytes as f64 / 1e6
    );

    let verification = Verification::new(args.verified_k, args.min_similarity)
        .map_err(|e| super::usage(e.to_string()))?;
    let t = Instant::now();
    let store = Store::builder()
        .simhash_config(SimhashConfig::default().with_sketch(SketchKind::MinHash))
        .open(&store_dir)
        .with_context(|| format!("cannot create the store at {}", store_dir.display()))?;
    let input = InputArgs {
        inputs: vec![warc.clone()],
        format: None,
        id_field: "id".into(),
        key_field: vec!["key".into(), "url".into()],
        text_field: "text".into(),
        max_doc_bytes: 16 << 20,
        keep_boilerplate: args.keep_boilerplate,
        strict: false,
        quiet: true,
    };
    let mut progress = Progress::new("loading", true);
    let no_settings = ConfigArgs::default();
    let target = Target::opened(store, &no_settings);
    let (tally, _) = load_inputs(&target, &input, &mut progress)?;
    let store = target.into_store()?;
    let load_time = t.elapsed();
    println!(
        "  load      {:>7.2} s  {} documents ({:.0} docs/s), {} bad records, {} empty{}",
        load_time.as_secs_f64(),
        tally.docs,
        tally.docs as f64 / load_time.as_secs_f64().max(1e-6),
        tally.bad_total(),
        tally.empty.count,
        if args.keep_boilerplate {
            ", boilerplate kept"
        } else {
            ", boilerplate removed"
        }
    );

    let t = Instant::now();
    let mut ids = Vec::new();
    let mut fps: Vec<Fingerprint> = Vec::new();
    let mut keys = Vec::new();
    let mut sketches = Vec::new();
    for item in store.documents()? {
        let (id, d) = item?;
        ids.push(id);
        fps.push(d.fingerprint);
        keys.push(d.key.unwrap_or_default());
        sketches.push(d.sketch);
    }
    let results = store.query_batch(&fps, args.max_distance)?;
    let query_time = t.elapsed();
    println!(
        "  query     {:>7.2} s  {} queries at k={} ({:.0} µs each)",
        query_time.as_secs_f64(),
        fps.len(),
        args.max_distance,
        query_time.as_secs_f64() * 1e6 / fps.len().max(1) as f64
    );
    let t = Instant::now();
    let verified: Vec<Vec<u64>> = fps
        .par_iter()
        .zip(&sketches)
        .map(|(&fp, sketch)| match sketch {
            Some(sketch) => Ok(store
                .query_verified(fp, sketch, verification)?
                .into_iter()
                .map(|m| m.id)
                .collect()),
            None => Ok(Vec::new()),
        })
        .collect::<simhash_store::Result<_>>()?;
    let verified_time = t.elapsed();
    println!(
        "  verified  {:>7.2} s  {} queries at k={}, sketch similarity >= {} ({:.0} µs each)",
        verified_time.as_secs_f64(),
        fps.len(),
        verification.k,
        verification.min_similarity,
        verified_time.as_secs_f64() * 1e6 / fps.len().max(1) as f64
    );

    // Score: pairs of pages found within k against pairs of pages of one planted group.
    let page_of: HashMap<&str, usize> = crawl
        .pages
        .iter()
        .enumerate()
        .map(|(i, p)| (p.url.as_str(), i))
        .collect();
    let id_page: HashMap<u64, usize> = ids
        .iter()
        .zip(&keys)
        .filter_map(|(&id, k)| Some((id, *page_of.get(k.as_str())?)))
        .collect();
    let pairs_of = |results: &mut dyn Iterator<Item = (u64, Vec<u64>)>| {
        let mut found: HashSet<(usize, usize)> = HashSet::new();
        for (id, matches) in results {
            let Some(&a) = id_page.get(&id) else { continue };
            for m in matches {
                if let Some(&b) = id_page.get(&m) {
                    if a != b {
                        found.insert(unordered(a, b));
                    }
                }
            }
        }
        found
    };
    let found = pairs_of(
        &mut ids
            .iter()
            .zip(&results)
            .map(|(&id, ms)| (id, ms.iter().map(|m| m.id).collect())),
    );
    let found_verified = pairs_of(&mut ids.iter().copied().zip(verified));
    let mut by_group: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, p) in crawl.pages.iter().enumerate() {
        by_group.entry(p.group).or_default().push(i);
    }
    let mut truth: HashSet<(usize, usize)> = HashSet::new();
    for members in by_group.values() {
        for (x, &a) in members.iter().enumerate() {
            for &b in &members[x + 1..] {
                truth.insert(unordered(a, b));
            }
        }
    }
    let (precision, recall, hits) = score(&found, &truth);
    println!(
        "found {} pairs within distance {}: {} planted, {} not planted",
        found.len(),
        args.max_distance,
        hits,
        found.len() - hits
    );
    println!(
        "precision {precision:.3}  recall {recall:.3}  ({hits} of {} planted pairs found)",
        truth.len()
    );
    let (v_precision, v_recall, v_hits) = score(&found_verified, &truth);
    println!(
        "verified (--verified: within distance {}, sketch similarity >= {}): {} pairs, {} planted, {} not planted",
        verification.k,
        verification.min_similarity,
        found_verified.len(),
        v_hits,
        found_verified.len() - v_hits
    );
    println!(
        "precision {v_precision:.3}  recall {v_recall:.3}  ({v_hits} of {} planted pairs found)",
        truth.len()
    );

    // Recall of each edit: the pair (original, edited copy).
    let mut per_edit: BTreeMap<(Edit, bool), (usize, usize, usize)> = BTreeMap::new();
    for (i, p) in crawl.pages.iter().enumerate() {
        let Some(e) = p.edit else { continue };
        let Some(&original) = by_group.get(&p.group).and_then(|m| m.first()) else {
            continue;
        };
        let entry = per_edit.entry((e, p.other_site)).or_default();
        entry.2 += 1;
        if found.contains(&unordered(original, i)) {
            entry.0 += 1;
        }
        if found_verified.contains(&unordered(original, i)) {
            entry.1 += 1;
        }
    }
    println!("recall by edit (original and its copy), plain / verified:");
    for ((e, other), (hit, verified_hit, all)) in &per_edit {
        let place = if *other {
            "on another site"
        } else {
            "on the same site"
        };
        println!(
            "  {:<26} {:<17} {:>5.3} / {:>5.3}  ({hit} / {verified_hit} of {all})",
            e.name(),
            place,
            *hit as f64 / (*all).max(1) as f64,
            *verified_hit as f64 / (*all).max(1) as f64
        );
    }
    println!(
        "total {:.2} s; the store is {}",
        (generate_time + load_time + query_time + verified_time).as_secs_f64(),
        if args.store.is_some() {
            format!("kept at {}", store_dir.display())
        } else {
            "removed".into()
        }
    );
    drop(store);
    Ok(ExitCode::SUCCESS)
}
