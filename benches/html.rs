//! HTML to main text: time per page for deeply nested and misnested markup, next to ordinary
//! pages, to show that extraction is linear in the size of the page whatever its nesting.
//!
//! ```text
//! cargo bench --bench html
//! cargo bench --bench html -- --runs 5 --max-depth 1000000
//! ```
//!
//! Options: `--runs R` (5; the median is reported), `--max-depth D` (1,000,000: the deepest
//! nesting timed, from 10,000 by factors of 10).
//!
//! Pages:
//! - `ordinary`: a 13 KB news page (header, menu, sidebar, an article of 40 paragraphs, link
//!   list, footer), and the same in Chinese;
//! - `nested divs`: N `<div>`s, the ordinary page, N `</div>`s;
//! - `unclosed mixed`: N/8 repetitions of `<div><span><b><ul><li><table><tr><td>`, never
//!   closed, then a paragraph;
//! - `reopened formatting`: N/10 paragraphs `<p>text<b id=i></p>` (each `<b>` is left open by
//!   its paragraph, and a tree builder re-opens every one before the next text).
//!
//! The time per megabyte of page is printed next to each time: linear work keeps it flat as N
//! grows.

use std::time::{Duration, Instant};

use simhash_store::readers::html_to_text;

fn page(article: &str) -> String {
    format!(
        r#"<!doctype html><html><head><meta charset="utf-8"><title>Site</title>
        <style>p {{ color: red }}</style><script>var tracking = "abc";</script></head><body>
        <header><div class="logo">Example Site</div><p>The best site for example news and views</p></header>
        <nav><ul><li><a href="/">Home</a></li><li><a href="/world">World</a></li><li><a href="/sport">Sport</a></li></ul></nav>
        <div id="sidebar"><h3>Popular</h3><p>Our most read stories this week, chosen by our editors for you.</p></div>
        <article>{article}</article>
        <div class="links"><a href="/a">Another story about the weather</a> | <a href="/b">A story about trains</a> | <a href="/c">Local elections</a></div>
        <div class="share">Share this on social media</div>
        <footer><p>Example Site, 1 Example Street, Example City.</p><p>© 2024 Example Site. All rights reserved.</p></footer>
        </body></html>"#
    )
}

fn ordinary_en() -> String {
    let article: String = (0..40)
        .map(|i| {
            format!(
                "<p>Paragraph {i}: trains in the <b>north</b> ran an hour late on Monday after a \
                 storm brought down trees across the line, and the <a href=\"/op\">operator</a> \
                 said that services would be back to normal by Tuesday morning at the latest, \
                 weather permitting, with buses replacing trains where needed.</p>\n"
            )
        })
        .collect();
    page(&format!("<h1>Trains run late</h1>{article}"))
}

fn ordinary_zh() -> String {
    let article: String = (0..40)
        .map(|i| {
            format!(
                "<p>第{i}段：近日，城市交通部门发布报告，地铁客流量比去年增长了百分之十五，\
                 早高峰拥挤问题依然突出，部门计划增加列车班次，并在<b>主要站点</b>增派工作人员\
                 引导乘客有序进出站，预计下月起实施。</p>\n"
            )
        })
        .collect();
    page(&format!("<h1>地铁客流增长</h1>{article}"))
}

fn nested_divs(n: usize) -> String {
    format!(
        "{}{}{}",
        "<div>".repeat(n),
        ordinary_en(),
        "</div>".repeat(n)
    )
}

fn unclosed_mixed(n: usize) -> String {
    format!(
        "{}<p>Trains in the north ran an hour late on Monday.</p>",
        "<div><span><b><ul><li><table><tr><td>".repeat(n / 8)
    )
}

fn reopened(n: usize) -> String {
    (0..n / 10)
        .map(|i| format!("<p>paragraph number {i} of the page<b id={i}></p>"))
        .collect()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn time(name: &str, html: &str, runs: usize) {
    let mut times = Vec::with_capacity(runs);
    let mut chars = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let text = html_to_text(html.as_bytes(), None, true).expect("decodes");
        times.push(start.elapsed());
        chars = text.chars().count();
    }
    let t = median(times);
    let mb = html.len() as f64 / 1e6;
    println!(
        "{name:<34} {:>9} KB {:>12.3} ms {:>9.1} ms/MB  ({chars} characters of text)",
        html.len() / 1000,
        t.as_secs_f64() * 1e3,
        t.as_secs_f64() * 1e3 / mb
    );
}

fn main() {
    let mut runs = 5;
    let mut max_depth = 1_000_000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs R"),
            "--max-depth" => {
                max_depth = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--max-depth D")
            }
            _ => {} // `cargo bench` passes --bench
        }
    }
    println!("median of {runs} runs, main text on");
    time("ordinary (English)", &ordinary_en(), runs);
    time("ordinary (Chinese)", &ordinary_zh(), runs);
    let mut n = 10_000;
    while n <= max_depth {
        time(&format!("nested divs, N = {n}"), &nested_divs(n), runs);
        time(
            &format!("unclosed mixed, N = {n}"),
            &unclosed_mixed(n),
            runs,
        );
        time(&format!("reopened formatting, N = {n}"), &reopened(n), runs);
        n *= 10;
    }
}
