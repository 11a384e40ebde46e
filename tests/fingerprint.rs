//! Fingerprint behaviour on generated Chinese, English and mixed documents: small edits stay
//! close, unrelated documents are far apart, configurations round-trip, results are stable.
//!
//! Documents are generated from the word lists below with a seeded RNG (no test data on disk).
//! Each document draws its own small vocabulary from a list, with Zipf-like frequencies, the
//! way real documents have their own topic words.

use simhash_store::simhash::TfScaling;
use simhash_store::{Error, Fingerprint, Result, SimhashConfig, Simhasher};

/// SplitMix64: a small, seeded, reproducible RNG.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const ZH_WORDS: &[&str] = &[
    "数据库",
    "服务器",
    "客户端",
    "网络",
    "配置",
    "文件",
    "目录",
    "用户",
    "权限",
    "密码",
    "安装",
    "系统",
    "内核",
    "模块",
    "驱动",
    "硬件",
    "磁盘",
    "分区",
    "挂载",
    "备份",
    "恢复",
    "日志",
    "进程",
    "线程",
    "内存",
    "缓存",
    "索引",
    "查询",
    "事务",
    "提交",
    "回滚",
    "锁定",
    "表格",
    "字段",
    "记录",
    "主键",
    "外键",
    "视图",
    "函数",
    "触发器",
    "存储",
    "过程",
    "参数",
    "变量",
    "类型",
    "字符",
    "编码",
    "排序",
    "比较",
    "运算",
    "表达式",
    "条件",
    "循环",
    "数组",
    "结构",
    "指针",
    "接口",
    "协议",
    "端口",
    "地址",
    "路由",
    "防火墙",
    "证书",
    "加密",
    "解密",
    "签名",
    "验证",
    "认证",
    "会话",
    "连接",
    "断开",
    "超时",
    "重试",
    "错误",
    "警告",
    "信息",
    "调试",
    "测试",
    "版本",
    "升级",
    "降级",
    "兼容",
    "迁移",
    "复制",
    "同步",
    "异步",
    "队列",
    "消息",
    "事件",
    "回调",
    "任务",
    "调度",
    "优先级",
    "资源",
    "限制",
    "监控",
    "统计",
    "报告",
    "图表",
    "文档",
    "手册",
    "教程",
    "示例",
    "命令",
    "选项",
    "窗口",
    "菜单",
    "按钮",
    "键盘",
    "鼠标",
    "屏幕",
    "字体",
    "颜色",
    "图片",
    "声音",
    "视频",
    "打印",
    "扫描",
    "电路",
    "元件",
    "封装",
    "焊盘",
    "走线",
    "原理图",
    "印刷",
    "排版",
    "公式",
    "章节",
    "段落",
    "标题",
    "引用",
    "脚注",
];

const EN_WORDS: &[&str] = &[
    "database",
    "server",
    "client",
    "network",
    "configure",
    "file",
    "directory",
    "user",
    "permission",
    "password",
    "install",
    "system",
    "kernel",
    "module",
    "driver",
    "hardware",
    "disk",
    "partition",
    "mount",
    "backup",
    "restore",
    "log",
    "process",
    "thread",
    "memory",
    "cache",
    "index",
    "query",
    "transaction",
    "commit",
    "rollback",
    "lock",
    "table",
    "column",
    "record",
    "primary",
    "foreign",
    "view",
    "function",
    "trigger",
    "storage",
    "procedure",
    "parameter",
    "variable",
    "type",
    "character",
    "encoding",
    "sort",
    "compare",
    "operator",
    "expression",
    "condition",
    "loop",
    "array",
    "structure",
    "pointer",
    "interface",
    "protocol",
    "port",
    "address",
    "route",
    "firewall",
    "certificate",
    "encrypt",
    "decrypt",
    "signature",
    "verify",
    "authenticate",
    "session",
    "connection",
    "timeout",
    "retry",
    "error",
    "warning",
    "message",
    "debug",
    "test",
    "version",
    "upgrade",
    "compatible",
    "migrate",
    "replicate",
    "synchronous",
    "queue",
    "event",
    "callback",
    "task",
    "schedule",
    "priority",
    "resource",
    "limit",
    "monitor",
    "statistics",
    "report",
    "chart",
    "document",
    "manual",
    "tutorial",
    "example",
    "command",
    "option",
    "window",
    "menu",
    "button",
    "keyboard",
    "screen",
    "font",
    "color",
    "image",
    "sound",
    "video",
    "print",
    "scan",
    "circuit",
    "component",
    "footprint",
    "trace",
    "schematic",
    "layout",
    "formula",
    "chapter",
    "paragraph",
    "heading",
    "citation",
    "footnote",
    "vacuum",
    "analyze",
    "planner",
    "executor",
    "buffer",
    "checkpoint",
    "archive",
    "replica",
    "standby",
];

#[derive(Clone, Copy, Debug)]
enum Lang {
    Zh,
    En,
    Mixed,
}

/// A document of about `chars` characters in `lang`: sentences of words from the document's
/// own vocabulary (24 words of the list, Zipf-like frequencies), with punctuation and line
/// breaks between them.
fn document(rng: &mut Rng, lang: Lang, chars: usize) -> String {
    let vocab = |rng: &mut Rng, list: &[&'static str]| -> Vec<&'static str> {
        (0..24).map(|_| *rng.pick(list)).collect()
    };
    let zh = vocab(rng, ZH_WORDS);
    let en = vocab(rng, EN_WORDS);
    // Zipf-like: the word at rank r is drawn with probability about 1/(r+1).
    let zipf = |rng: &mut Rng, words: &[&'static str]| -> &'static str {
        let r = rng.below(words.len());
        words[rng.below(r + 1)]
    };
    let mut text = String::new();
    let mut sentence = 0;
    while text.chars().count() < chars {
        let english = match lang {
            Lang::Zh => false,
            Lang::En => true,
            Lang::Mixed => sentence % 3 == 2,
        };
        let len = 4 + rng.below(8);
        for i in 0..len {
            if english {
                if i > 0 {
                    text.push(' ');
                }
                text.push_str(zipf(rng, &en));
            } else {
                if i > 0 && rng.below(4) == 0 {
                    text.push('，');
                }
                text.push_str(zipf(rng, &zh));
            }
        }
        text.push_str(if english { ". " } else { "。" });
        sentence += 1;
        if sentence % 4 == 0 {
            text.push('\n');
        }
    }
    text
}

/// `text` with the character at a random position replaced by a different letter or
/// ideograph.
fn one_char_edit(rng: &mut Rng, text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    loop {
        let i = rng.below(chars.len());
        let old = chars[i];
        if !old.is_alphanumeric() {
            continue;
        }
        let new = if old.is_ascii() {
            char::from(b'a' + rng.below(26) as u8)
        } else {
            // Another ideograph of the document.
            let other = chars[rng.below(chars.len())];
            if !other.is_alphanumeric() || other.is_ascii() {
                continue;
            }
            other
        };
        if new == old {
            continue;
        }
        let mut edited = chars.clone();
        edited[i] = new;
        return edited.into_iter().collect();
    }
}

fn check_one_char_edits(lang: Lang, seed: u64) -> Result<()> {
    check_one_char_edits_with(&Simhasher::default(), lang, seed)
}

fn check_one_char_edits_with(hasher: &Simhasher, lang: Lang, seed: u64) -> Result<()> {
    let mut rng = Rng(seed);
    let trials = 200;
    let (mut within, mut total) = (0, 0u32);
    for _ in 0..trials {
        let doc = document(&mut rng, lang, 1000);
        let edited = one_char_edit(&mut rng, &doc);
        let d = hasher
            .fingerprint(&doc)?
            .distance(hasher.fingerprint(&edited)?);
        total += d;
        within += usize::from(d <= 3);
    }
    let mean = f64::from(total) / trials as f64;
    eprintln!("{lang:?}: {within} of {trials} one-character edits within distance 3, mean distance {mean:.2}");
    assert!(
        within * 100 >= trials * 97,
        "{lang:?}: only {within} of {trials} one-character edits within distance 3"
    );
    assert!(
        mean < 1.0,
        "{lang:?}: mean distance {mean} after a one-character edit"
    );
    Ok(())
}

fn check_unrelated_far_apart(lang: Lang, seed: u64) -> Result<()> {
    check_unrelated_far_apart_with(&Simhasher::default(), lang, seed)
}

fn check_unrelated_far_apart_with(hasher: &Simhasher, lang: Lang, seed: u64) -> Result<()> {
    let mut rng = Rng(seed);
    let fps: Vec<Fingerprint> = (0..60)
        .map(|_| hasher.fingerprint(&document(&mut rng, lang, 1000)))
        .collect::<Result<_>>()?;
    let mut distances = Vec::new();
    for (i, a) in fps.iter().enumerate() {
        for b in &fps[i + 1..] {
            distances.push(a.distance(*b));
        }
    }
    let mean = f64::from(distances.iter().sum::<u32>()) / distances.len() as f64;
    let close = distances.iter().filter(|&&d| d <= 3).count();
    let min = distances.iter().min().copied().unwrap_or(0);
    eprintln!("{lang:?}: unrelated documents: mean distance {mean:.2}, minimum {min}");
    assert!(
        (28.0..=36.0).contains(&mean),
        "{lang:?}: mean distance {mean} between unrelated documents"
    );
    assert_eq!(
        close, 0,
        "{lang:?}: {close} unrelated pairs within distance 3"
    );
    Ok(())
}

#[test]
fn one_char_edit_stays_close_chinese() -> Result<()> {
    check_one_char_edits(Lang::Zh, 1)
}

#[test]
fn one_char_edit_stays_close_english() -> Result<()> {
    check_one_char_edits(Lang::En, 2)
}

#[test]
fn one_char_edit_stays_close_mixed() -> Result<()> {
    check_one_char_edits(Lang::Mixed, 3)
}

#[test]
fn unrelated_documents_are_far_apart_chinese() -> Result<()> {
    check_unrelated_far_apart(Lang::Zh, 4)
}

#[test]
fn unrelated_documents_are_far_apart_english() -> Result<()> {
    check_unrelated_far_apart(Lang::En, 5)
}

#[test]
fn unrelated_documents_are_far_apart_mixed() -> Result<()> {
    check_unrelated_far_apart(Lang::Mixed, 6)
}

fn length_adaptive() -> Simhasher {
    Simhasher::new(SimhashConfig::default().with_tf(TfScaling::LengthAdaptive))
        .expect("valid configuration")
}

#[test]
fn length_adaptive_one_char_edits_stay_close() -> Result<()> {
    let hasher = length_adaptive();
    for (lang, seed) in [(Lang::Zh, 11), (Lang::En, 12), (Lang::Mixed, 13)] {
        check_one_char_edits_with(&hasher, lang, seed)?;
    }
    Ok(())
}

#[test]
fn length_adaptive_unrelated_documents_are_far_apart() -> Result<()> {
    let hasher = length_adaptive();
    for (lang, seed) in [(Lang::Zh, 14), (Lang::En, 15), (Lang::Mixed, 16)] {
        check_unrelated_far_apart_with(&hasher, lang, seed)?;
    }
    Ok(())
}

/// `LengthAdaptive` weighs a feature seen `c` times in a text of `n` occurrences `c^a(n)`:
/// with words as the only features, the fingerprint of a text is that of its words with
/// those weights.
#[test]
fn length_adaptive_weighs_counts_by_the_length_exponent() -> Result<()> {
    let config = SimhashConfig::default()
        .with_tf(TfScaling::LengthAdaptive)
        .with_cjk_char_shingles(0)
        .with_word_char_shingles(0)
        .with_latin_count_pieces(0);
    let hasher = Simhasher::new(config)?;
    let words = ["kernel", "panic", "driver", "module", "memory"];
    let counts = [7u32, 3, 2, 1, 1];
    let mut text = String::new();
    for (w, &c) in words.iter().zip(&counts) {
        for _ in 0..c {
            text.push_str(w);
            text.push(' ');
        }
    }
    let n: u32 = counts.iter().sum();
    let (fp, occurrences) = hasher.fingerprint_with_count(&text)?;
    assert_eq!(occurrences, n as usize);
    let a = TfScaling::adaptive_exponent(u64::from(n));
    assert_eq!(a, 1.6, "a text this short gets the largest exponent");
    let expected = hasher.fingerprint_features(
        words
            .iter()
            .zip(&counts)
            .map(|(w, &c)| (*w, f64::from(c).powf(a))),
    )?;
    assert_eq!(fp, expected);
    // Under raw TF the weights are the counts, and here that gives another fingerprint.
    let raw =
        hasher.fingerprint_features(words.iter().zip(&counts).map(|(w, &c)| (*w, f64::from(c))))?;
    assert_ne!(
        expected, raw,
        "the test text does not tell the exponent from 1"
    );
    Ok(())
}

/// Boilerplate lines of the kinds `drop_boilerplate` knows, for a page of `site`.
fn boilerplate_lines(site: &str, year: u64) -> Vec<String> {
    vec![
        format!("Copyright © {year} {site} Inc. All rights reserved."),
        "Share on Facebook | Tweet | Email".to_string(),
        format!("Home > {site} > Articles"),
        "« Previous | Next »".to_string(),
        format!("This article was originally published on {site}.com."),
        "Advertisement".to_string(),
        format!("本文转载自{site}网，版权归原作者所有。"),
        "分享到：微信 微博 QQ空间".to_string(),
        "上一篇：安装指南    下一篇：配置网络".to_string(),
        format!("当前位置：首页 > {site} > 正文"),
    ]
}

#[test]
fn boilerplate_lines_do_not_move_the_fingerprint() -> Result<()> {
    let dropping = Simhasher::default();
    let keeping = Simhasher::new(SimhashConfig::default().with_drop_boilerplate(false))?;
    let mut rng = Rng(41);
    let (mut pages, mut moved) = (0, 0);
    for lang in [Lang::Zh, Lang::En, Lang::Mixed] {
        for i in 0..10u64 {
            let text = document(&mut rng, lang, 400 + 100 * i as usize);
            let lines = boilerplate_lines(["example", "news", "docs"][i as usize % 3], 2000 + i);
            let top = rng.pick(&lines).clone();
            let bottom = rng.pick(&lines).clone();
            let page = format!("{top}\n{text}\n{bottom}");
            assert_eq!(
                dropping.fingerprint(&page)?,
                dropping.fingerprint(&text)?,
                "{lang:?} page {i}: {top:?} / {bottom:?}"
            );
            pages += 1;
            moved += usize::from(keeping.fingerprint(&page)? != keeping.fingerprint(&text)?);
        }
    }
    // Without the option the same lines are features, and move most fingerprints.
    assert!(moved * 2 > pages, "{moved} of {pages} moved");
    // A page of nothing but boilerplate still has a fingerprint, and not that of another.
    let a = dropping.fingerprint("Copyright © 2024 Example Inc.\nShare on Twitter")?;
    let b = dropping.fingerprint("Copyright © 2023 Another Ltd.\nShare on LinkedIn")?;
    assert_ne!(a, b);
    Ok(())
}

#[test]
fn punctuation_and_spacing_do_not_matter() -> Result<()> {
    let hasher = Simhasher::default();
    let a = hasher.fingerprint(
        "PostgreSQL 使用多版本并发控制（MVCC），读不阻塞写。\n运行 “vacuum” 回收空间！",
    )?;
    let b = hasher
        .fingerprint("PostgreSQL使用多版本并发控制(MVCC), 读不阻塞写.  运行「vacuum」回收空间!")?;
    assert_eq!(a, b);
    // Full-width letters and Cyrillic look-alikes are folded.
    let c = hasher.fingerprint("Ｓｅｒｖｅｒ сору the dаtаbаsе")?;
    let d = hasher.fingerprint("server copy the database")?;
    assert_eq!(c, d);
    Ok(())
}

#[test]
fn no_features_is_an_error() {
    let hasher = Simhasher::default();
    for text in [
        "",
        " \n\t ",
        "，。、！？；：“”（）……—— ,.;:!?()-",
        "的了是在和",
        "the of and to is",
        "的 the，了。",
    ] {
        assert!(
            matches!(hasher.fingerprint(text), Err(Error::NoFeatures)),
            "{text:?}"
        );
        assert!(
            matches!(hasher.fingerprint_with_count(text), Err(Error::NoFeatures)),
            "{text:?}"
        );
    }
    let none: Vec<(String, f64)> = Vec::new();
    assert!(matches!(
        hasher.fingerprint_features(none),
        Err(Error::NoFeatures)
    ));
    assert!(matches!(
        hasher.fingerprint_features([("a", 0.0)]),
        Err(Error::NoFeatures)
    ));
}

#[test]
fn config_round_trips_through_json() -> Result<()> {
    // Log TF and jieba IDF, set through serde so that this test names only the crate's
    // top-level types.
    let weighted: SimhashConfig = serde_json::from_value(serde_json::json!({
        "normalize": true, "hmm": true, "stop_words": true, "words": true, "word_shingles": 0,
        "cjk_char_shingles": 1, "word_char_shingles": 3, "tf": "Log", "idf": "Jieba", "seed": 0,
        "drop_boilerplate": true, "word_char_shingles_within_words": true,
        "latin_count_pieces": 4, "latin_count_pieces_ratio": 2,
    }))
    .map_err(|e| Error::InvalidArgument(e.to_string()))?;
    assert_ne!(weighted, SimhashConfig::default());
    // Written before format 3 (no `drop_boilerplate`, nor the fields of formats 4 and 5):
    // reads as the behaviour of its time.
    let older: SimhashConfig = serde_json::from_value(serde_json::json!({
        "normalize": true, "hmm": true, "stop_words": true, "words": true, "word_shingles": 0,
        "cjk_char_shingles": 1, "word_char_shingles": 3, "tf": "Raw", "idf": "None", "seed": 0,
    }))
    .map_err(|e| Error::InvalidArgument(e.to_string()))?;
    assert_eq!(Some(older), SimhashConfig::release_default(2));
    assert_eq!(
        weighted
            .clone()
            .with_tf(SimhashConfig::default().tf)
            .with_idf(SimhashConfig::default().idf),
        SimhashConfig::default()
    );
    for config in [
        SimhashConfig::default(),
        weighted
            .with_word_shingles(3)
            .with_cjk_char_shingles(0)
            .with_word_char_shingles(5)
            .with_stop_words(false)
            .with_hmm(false)
            .with_normalize(false)
            .with_seed(u64::MAX)
            .with_drop_boilerplate(false)
            .with_word_char_shingles_within_words(false)
            .with_latin_count_pieces(16)
            .with_latin_count_pieces_ratio(3),
    ] {
        let json =
            serde_json::to_string(&config).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        let back: SimhashConfig =
            serde_json::from_str(&json).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        assert_eq!(back, config);
        assert_eq!(Simhasher::new(back)?.config(), &config);
    }
    Ok(())
}

#[test]
fn different_seeds_give_different_fingerprints() -> Result<()> {
    let text = document(&mut Rng(7), Lang::Mixed, 1000);
    let a = Simhasher::new(SimhashConfig::default().with_seed(1))?.fingerprint(&text)?;
    let b = Simhasher::new(SimhashConfig::default().with_seed(2))?.fingerprint(&text)?;
    assert_ne!(a, b);
    assert!(a.distance(b) > 10, "{a:?} {b:?}");
    Ok(())
}

#[test]
fn fingerprints_are_deterministic_and_pinned() -> Result<()> {
    let text =
        "SimHash 指纹：PostgreSQL 数据库的备份与恢复。Back up the database before an upgrade.";
    let a = Simhasher::default().fingerprint_with_count(text)?;
    let b = Simhasher::new(SimhashConfig::default())?.fingerprint_with_count(text)?;
    assert_eq!(a, b);
    // Pinned: a change here changes every stored fingerprint, and needs a new store format.
    // The defaults of each format must keep theirs: stores of that format hold them. The
    // text repeated ten times has Latin features seen 10 and 20 times, where the count
    // pieces of 0.5 (4-7, 8-15, 16-31) and of 0.4 (4-15, 16-63) differ.
    let long = text.repeat(10);
    let release = |minor| SimhashConfig::release_default(minor).expect("a release");
    let (v4, v3) = (release(4), release(3));
    for (config, pins) in [
        (SimhashConfig::default(), PINNED),
        (v4, PINNED_0_4),
        (v3, PINNED_0_3),
    ] {
        let hasher = Simhasher::new(config.clone())?;
        for (text, (pinned, features)) in [(text, pins[0]), (&long[..], pins[1])] {
            let got = hasher.fingerprint_with_count(text)?;
            assert_eq!(
                got.0,
                Fingerprint(pinned),
                "fingerprint changed: {:016x}, {} features, {config:?}, {} bytes",
                got.0 .0,
                got.1,
                text.len()
            );
            assert_eq!(got.1, features);
        }
    }
    Ok(())
}

/// The default's fingerprints of the pinned text and of it repeated ten times, and their
/// numbers of features.
const PINNED: [(u64, usize); 2] = [(0x0467_551b_7722_3482, 44), (0x2c25_559b_9744_bdf2, 440)];
/// The same under 0.4's default (format 4: count pieces at the powers of 4).
const PINNED_0_4: [(u64, usize); 2] = [(0x0467_551b_7722_3482, 44), (0x2c65_55d9_b74c_bdd0, 440)];
/// The same under 0.3's default (format 3: trigrams across words, no count pieces).
const PINNED_0_3: [(u64, usize); 2] = [(0xa667_555e_d722_bd80, 52), (0xa667_555e_d722_bd80, 538)];
