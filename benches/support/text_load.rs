//! `benches/scale.rs --text DOCS`: loading Chinese texts (fingerprinted by the loader) against
//! loading their fingerprints.

use super::*;

/// Built-in Chinese sentences, used when the corpus directory is missing.
pub(crate) const FALLBACK: &str = "数据库使用多版本并发控制来保证数据一致性，读不阻塞写。\
    新闻报道称，今年夏天的降雨量比往年明显偏多，多地出现了洪涝灾害。\
    研究人员发现，这种新材料在高温下依然能够保持稳定的结构和性能。\
    市场分析人士认为，消费需求的回暖将带动相关行业的持续增长。\
    学校组织学生参观博物馆，了解古代文明的发展历程和文化传承。";

pub(crate) fn sentences(corpus: &PathBuf) -> Vec<String> {
    let mut text = String::new();
    if let Ok(entries) = std::fs::read_dir(corpus) {
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            if p.extension().is_some_and(|e| e == "txt") {
                text.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    if text.is_empty() {
        text = FALLBACK.to_string();
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if c == '\n' {
            continue;
        }
        cur.push(c);
        if matches!(c, '。' | '！' | '？' | '；') {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

pub(crate) fn text(args: &Args, docs: usize) {
    let sentences = sentences(&args.corpus);
    let mut rng = SplitMix(0x7e47);
    let texts: Vec<String> = (0..docs)
        .map(|_| {
            let mut t = String::new();
            while t.len() < 1500 {
                t.push_str(&sentences[rng.below(sentences.len() as u64) as usize]);
            }
            t
        })
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    println!(
        "# Chinese text: {docs} documents, {:.1} MiB, {} sentences, {} threads",
        mib(bytes as u64),
        sentences.len(),
        rayon::current_num_threads()
    );
    let jieba = jieba_rs::Jieba::new();
    let _ = jieba.cut(&texts[0], true); // load lazily built tables
    let dir = tempfile::Builder::new()
        .prefix("scale-bench-")
        .tempdir_in(".")
        .expect("tempdir");
    let store = Store::open(dir.path().join("store")).expect("open");
    let _ = store.simhasher().fingerprint(&texts[0]); // load the dictionary
    let mut rows = Vec::new();
    for round in 0..3 {
        let t = Instant::now();
        let words: usize = texts.par_iter().map(|s| jieba.cut(s, true).len()).sum();
        let cut = t.elapsed();

        let t = Instant::now();
        let hasher = store.simhasher();
        let ok = texts
            .par_iter()
            .filter(|s| hasher.fingerprint(s).is_ok())
            .count();
        let fingerprint = t.elapsed();
        assert_eq!(ok, docs);

        let t = Instant::now();
        let mut loader = store.bulk_loader().expect("loader");
        for (i, s) in texts.iter().enumerate() {
            loader
                .add_text((round * docs + i) as u64, None, s)
                .expect("add_text");
        }
        let summary = loader.finish().expect("finish");
        let load = t.elapsed();
        assert_eq!(summary.added as usize, docs);
        let mbs = |d: Duration| mib(bytes as u64) / d.as_secs_f64();
        println!(
            "round {round}: jieba cut {:.2} MiB/s ({words} words), Simhasher::fingerprint alone {:.2} MiB/s, add_text+finish {:.2} MiB/s ({:.0} docs/s): {:.0}% of cut, {:.0}% of fingerprint",
            mbs(cut),
            mbs(fingerprint),
            mbs(load),
            docs as f64 / load.as_secs_f64(),
            100.0 * cut.as_secs_f64() / load.as_secs_f64(),
            100.0 * fingerprint.as_secs_f64() / load.as_secs_f64(),
        );
        rows.push((
            cut.as_secs_f64() / load.as_secs_f64(),
            fingerprint.as_secs_f64() / load.as_secs_f64(),
        ));
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (cut_ratio, _) = rows[rows.len() / 2];
    rows.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (_, fp_ratio) = rows[rows.len() / 2];
    println!(
        "median add_text throughput: {:.0}% of jieba cut alone, {:.0}% of Simhasher::fingerprint alone",
        100.0 * cut_ratio,
        100.0 * fp_ratio
    );
}
