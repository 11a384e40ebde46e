//! The synthetic crawl: articles in English and Chinese written from the embedded word lists,
//! published on six sites that each wrap every page in the same boilerplate (header, menu,
//! sidebar, link list, footer), and near-duplicates planted with known edits. Written as a
//! gzipped WARC file, one gzip member per record as Common Crawl does, with the records a real
//! crawl also holds (warcinfo, requests, a redirect, a robots.txt).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use flate2::write::GzEncoder;
use flate2::Compression;

use super::words;

/// SplitMix64: small, deterministic, enough for synthetic text.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The edits planted near-duplicates are made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Edit {
    /// Three characters changed (typos).
    Chars,
    /// An advert paragraph inserted.
    Advert,
    /// One sentence removed.
    SentenceRemoved,
    /// Two paragraphs swapped.
    ParagraphsSwapped,
}

impl Edit {
    const ALL: [Edit; 4] = [
        Edit::Chars,
        Edit::Advert,
        Edit::SentenceRemoved,
        Edit::ParagraphsSwapped,
    ];

    /// How the demo names the edit.
    pub fn name(self) -> &'static str {
        match self {
            Edit::Chars => "a few characters changed",
            Edit::Advert => "an advert added",
            Edit::SentenceRemoved => "a sentence removed",
            Edit::ParagraphsSwapped => "paragraphs swapped",
        }
    }
}

/// One page of the crawl and what it is a copy of.
#[derive(Debug, Clone)]
pub struct Page {
    /// Its URL (the WARC-Target-URI).
    pub url: String,
    /// The article it carries: pages of one group are the planted near-duplicates.
    pub group: usize,
    /// The edit that made it from the group's original; `None` for the original.
    pub edit: Option<Edit>,
    /// Whether it is on another site than the original (so other boilerplate).
    pub other_site: bool,
}

/// The generated crawl.
#[derive(Debug)]
pub struct Crawl {
    /// Every HTML page, in file order.
    pub pages: Vec<Page>,
    /// Size of the WARC file.
    pub bytes: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Lang {
    English,
    Chinese,
}

struct Site {
    host: &'static str,
    name: &'static str,
    lang: Lang,
    /// Pages are encoded in GBK, declared only in `<meta charset>`.
    gbk: bool,
    /// The article is in `<article>` (else in a plain `<div>`, as on older sites).
    semantic: bool,
    /// Boilerplate text that every page of the site carries.
    blurb: String,
    menu: Vec<String>,
    popular: Vec<String>,
}

#[derive(Clone)]
struct Article {
    lang: Lang,
    title: String,
    paragraphs: Vec<Vec<String>>,
}

fn sentence(
    rng: &mut Rng,
    lang: Lang,
    topic: &[&'static str],
    all: &[&'static str],
    glue: &[&'static str],
) -> String {
    let n = 8 + rng.below(9);
    let mut ws: Vec<&str> = Vec::with_capacity(n);
    for _ in 0..n {
        let w = if rng.chance(0.25) {
            *rng.pick(glue)
        } else if rng.chance(0.7) {
            *rng.pick(topic)
        } else {
            *rng.pick(all)
        };
        ws.push(w);
    }
    match lang {
        Lang::English => {
            let mut s = ws.join(" ");
            if let Some(first) = s.get(..1) {
                s = first.to_uppercase() + s.get(1..).unwrap_or_default();
            }
            s.push('.');
            s
        }
        Lang::Chinese => {
            let mut s = ws.concat();
            s.push('。');
            s
        }
    }
}

fn lists(lang: Lang) -> (Vec<&'static str>, Vec<&'static str>) {
    match lang {
        Lang::English => (
            words::ENGLISH.split_whitespace().collect(),
            words::ENGLISH_GLUE.split_whitespace().collect(),
        ),
        Lang::Chinese => (
            words::CHINESE.split_whitespace().collect(),
            words::CHINESE_GLUE.split_whitespace().collect(),
        ),
    }
}

fn article(rng: &mut Rng, lang: Lang) -> Article {
    let (all, glue) = lists(lang);
    let topic: Vec<&'static str> = (0..50).map(|_| *rng.pick(&all)).collect();
    let title_words: Vec<&str> = (0..5 + rng.below(4)).map(|_| *rng.pick(&topic)).collect();
    let title = match lang {
        Lang::English => title_words.join(" "),
        Lang::Chinese => title_words.concat(),
    };
    let paragraphs = (0..5 + rng.below(4))
        .map(|_| {
            (0..3 + rng.below(3))
                .map(|_| sentence(rng, lang, &topic, &all, &glue))
                .collect()
        })
        .collect();
    Article {
        lang,
        title,
        paragraphs,
    }
}

fn sites(rng: &mut Rng) -> Vec<Site> {
    let specs: [(&str, &str, Lang, bool); 6] = [
        (
            "news.example.com",
            "Example Daily News",
            Lang::English,
            false,
        ),
        ("blog.example.org", "The Example Blog", Lang::English, false),
        (
            "reviews.example.net",
            "Example Reviews",
            Lang::English,
            false,
        ),
        ("xinwen.example.cn", "示例新闻网", Lang::Chinese, false),
        ("keji.example.cn", "示例科技频道", Lang::Chinese, true),
        ("shenghuo.example.cn", "示例生活网", Lang::Chinese, false),
    ];
    specs
        .iter()
        .map(|&(host, name, lang, gbk)| {
            let (all, glue) = lists(lang);
            let topic: Vec<&'static str> = (0..30).map(|_| *rng.pick(&all)).collect();
            let blurb = (0..4)
                .map(|_| sentence(rng, lang, &topic, &all, &glue))
                .collect::<Vec<_>>()
                .join(" ");
            let menu = (0..9).map(|_| rng.pick(&all).to_string()).collect();
            let popular = (0..8)
                .map(|_| {
                    let ws: Vec<&str> = (0..4).map(|_| *rng.pick(&topic)).collect();
                    if lang == Lang::English {
                        ws.join(" ")
                    } else {
                        ws.concat()
                    }
                })
                .collect();
            let semantic = !host.starts_with("blog") && !host.starts_with("shenghuo");
            Site {
                host,
                name,
                lang,
                gbk,
                semantic,
                blurb,
                menu,
                popular,
            }
        })
        .collect()
}

fn edit(rng: &mut Rng, a: &Article, e: Edit) -> Article {
    let mut a = a.clone();
    match e {
        Edit::Chars => {
            for _ in 0..3 {
                let p = rng.below(a.paragraphs.len());
                let s = rng.below(a.paragraphs[p].len());
                let chars: Vec<char> = a.paragraphs[p][s].chars().collect();
                let letters: Vec<usize> = chars
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.is_alphabetic())
                    .map(|(i, _)| i)
                    .collect();
                if letters.is_empty() {
                    continue;
                }
                let at = *rng.pick(&letters);
                let mut chars = chars;
                chars[at] = match a.lang {
                    Lang::English => *rng.pick(&['x', 'q', 'z', 'k', 'j']),
                    Lang::Chinese => *rng.pick(&['甲', '乙', '丙', '丁', '戊']),
                };
                a.paragraphs[p][s] = chars.into_iter().collect();
            }
        }
        Edit::Advert => {
            let ad = match a.lang {
                Lang::English => words::ADVERT_EN,
                Lang::Chinese => words::ADVERT_ZH,
            };
            let at = 1 + rng.below(a.paragraphs.len());
            a.paragraphs
                .insert(at.min(a.paragraphs.len()), vec![ad.to_string()]);
        }
        Edit::SentenceRemoved => {
            let p = rng.below(a.paragraphs.len());
            let s = rng.below(a.paragraphs[p].len());
            a.paragraphs[p].remove(s);
        }
        Edit::ParagraphsSwapped => {
            let i = rng.below(a.paragraphs.len());
            let j = (i + 1 + rng.below(a.paragraphs.len() - 1)) % a.paragraphs.len();
            a.paragraphs.swap(i, j);
        }
    }
    a
}

fn render(site: &Site, a: &Article, n: usize) -> Vec<u8> {
    let charset = if site.gbk { "gbk" } else { "utf-8" };
    let mut h = String::with_capacity(8192);
    h.push_str(&format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"{charset}\"><title>{} - {}</title>\
         <style>body{{font:16px sans-serif}} .sidebar{{float:right}}</style>\
         <script>window.analytics={{site:\"{}\",page:{n}}};</script></head>\n<body>\n",
        a.title, site.name, site.host
    ));
    h.push_str(&format!(
        "<header><div class=\"logo\">{}</div></header>\n<nav><ul>",
        site.name
    ));
    for m in &site.menu {
        h.push_str(&format!("<li><a href=\"/{m}\">{m}</a></li>"));
    }
    h.push_str("</ul></nav>\n<div class=\"sidebar\"><h3>Popular</h3><ul>");
    for p in &site.popular {
        h.push_str(&format!("<li><a href=\"/p/{}\">{p}</a></li>", p.len()));
    }
    let (open, close) = if site.semantic {
        ("<article>", "</article>")
    } else {
        ("<div class=\"post\">", "</div>")
    };
    h.push_str(&format!(
        "</ul><p>{}</p></div>\n{open}<h1>{}</h1>\n",
        site.blurb, a.title
    ));
    for p in &a.paragraphs {
        let sep = if a.lang == Lang::English { " " } else { "" };
        h.push_str(&format!("<p>{}</p>\n", p.join(sep)));
    }
    h.push_str(close);
    h.push_str("\n<div class=\"more\">");
    for (i, p) in site.popular.iter().enumerate() {
        h.push_str(&format!("<a href=\"/more/{i}\">{p}</a> | "));
    }
    h.push_str(&format!(
        "</div>\n<footer><p>{}</p><p>© 2024 {}. All rights reserved.</p></footer>\n</body></html>\n",
        site.blurb, site.name
    ));
    if site.gbk {
        encoding_rs::GBK.encode(&h).0.into_owned()
    } else {
        h.into_bytes()
    }
}

/// Writes WARC records, each as its own gzip member.
struct WarcWriter {
    out: BufWriter<File>,
    n: u64,
}

impl WarcWriter {
    fn record(
        &mut self,
        kind: &str,
        uri: Option<&str>,
        content_type: &str,
        block: &[u8],
    ) -> io::Result<()> {
        self.n += 1;
        let mut head = format!(
            "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Date: 2024-05-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-{:012x}>\r\n",
            self.n
        );
        if let Some(uri) = uri {
            head.push_str(&format!("WARC-Target-URI: {uri}\r\n"));
        }
        head.push_str(&format!(
            "Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            block.len()
        ));
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        gz.write_all(head.as_bytes())?;
        gz.write_all(block)?;
        gz.write_all(b"\r\n\r\n")?;
        self.out.write_all(&gz.finish()?)
    }

    fn response(
        &mut self,
        uri: &str,
        status: &str,
        content_type: &str,
        body: &[u8],
    ) -> io::Result<()> {
        let mut http =
            format!("HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nServer: demo\r\n\r\n")
                .into_bytes();
        http.extend_from_slice(body);
        self.record(
            "response",
            Some(uri),
            "application/http; msgtype=response",
            &http,
        )
    }
}

/// Writes a crawl of about `pages` HTML pages to `path` (gzipped WARC).
///
/// # Errors
/// The file cannot be written.
pub fn generate(path: &Path, pages: usize, seed: u64) -> io::Result<Crawl> {
    let mut rng = Rng::new(seed);
    let sites = sites(&mut rng);
    let mut w = WarcWriter {
        out: BufWriter::new(File::create(path)?),
        n: 0,
    };
    w.record(
        "warcinfo",
        None,
        "application/warc-fields",
        b"software: simhash-store demo\r\nformat: WARC File Format 1.0\r\n",
    )?;
    let mut out = Vec::with_capacity(pages);
    let mut group = 0;
    while out.len() < pages {
        let s = rng.below(sites.len());
        let site = &sites[s];
        let original = article(&mut rng, site.lang);
        let mut copies = vec![(
            s,
            None,
            original.clone(),
            format!("https://{}/{}/{group}.html", site.host, 2020 + group % 5),
        )];
        let variants = if rng.chance(0.3) {
            1 + usize::from(rng.chance(0.3))
        } else {
            0
        };
        for v in 0..variants {
            let e = *rng.pick(&Edit::ALL);
            // Half the copies stay on the site, half go to another site of the same language.
            let same_lang: Vec<usize> = (0..sites.len())
                .filter(|&i| sites[i].lang == site.lang && i != s)
                .collect();
            let (to, url) = if rng.chance(0.5) {
                (
                    s,
                    format!(
                        "https://{}/print/{group}-{v}.html?utm_source=feed",
                        site.host
                    ),
                )
            } else {
                let to = *rng.pick(&same_lang);
                (
                    to,
                    format!("https://{}/repost/{group}-{v}.html", sites[to].host),
                )
            };
            copies.push((to, Some(e), edit(&mut rng, &original, e), url));
        }
        for (to, e, a, url) in copies {
            let target = &sites[to];
            let content_type = if target.gbk {
                "text/html"
            } else {
                "text/html; charset=utf-8"
            };
            w.response(&url, "200 OK", content_type, &render(target, &a, out.len()))?;
            out.push(Page {
                url,
                group,
                edit: e,
                other_site: to != s,
            });
        }
        if group % 50 == 0 {
            let host = site.host;
            w.record(
                "request",
                Some(&format!("https://{host}/robots.txt")),
                "application/http; msgtype=request",
                b"GET /robots.txt HTTP/1.1\r\n\r\n",
            )?;
            w.response(
                &format!("https://{host}/robots.txt"),
                "200 OK",
                "text/plain",
                b"User-agent: *\nAllow: /\n",
            )?;
            w.response(
                &format!("https://{host}/old/{group}"),
                "301 Moved Permanently",
                "text/html",
                b"<a href=\"/\">moved</a>",
            )?;
        }
        group += 1;
    }
    w.out.flush()?;
    let bytes = std::fs::metadata(path)?.len();
    Ok(Crawl { pages: out, bytes })
}
