//! HTML to main text: boilerplate of a realistic page is dropped, the article kept, in English
//! and Chinese, and two pages of one site share nothing but their articles.
#![cfg(feature = "readers")]

use simhash_store::readers::html_to_text;
use simhash_store::Simhasher;

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

fn page(article: &str, semantic: bool) -> String {
    let (open, close) = if semantic {
        ("<article>", "</article>")
    } else {
        ("<div class=\"post-body\">", "</div>")
    };
    format!(
        r#"<!doctype html><html><head><meta charset="utf-8"><title>Site</title>
        <style>p {{ color: red }}</style><script>var tracking = "abc";</script></head><body>
        <header><div class="logo">Example Site</div><p>The best site for example news and views</p></header>
        <nav><ul><li><a href="/">Home</a></li><li><a href="/world">World</a></li><li><a href="/sport">Sport</a></li></ul></nav>
        <div id="sidebar"><h3>Popular</h3><p>Our most read stories this week, chosen by our editors for you.</p></div>
        {open}{article}{close}
        <div class="links"><a href="/a">Another story about the weather</a> | <a href="/b">A story about trains</a> | <a href="/c">Local elections</a></div>
        <div class="share">Share this on social media</div>
        <noscript>Enable JavaScript for the full experience of this site</noscript>
        <footer><p>Example Site, 1 Example Street, Example City. Contact us at the address above.</p><p>© 2024 Example Site. All rights reserved.</p></footer>
        </body></html>"#
    )
}

#[test]
fn only_the_article_is_kept() -> Result {
    let article = "<h1>Trains run late</h1><p>Trains in the north ran an hour late on Monday after a storm brought down trees.</p>\
                   <p>The operator said services would be normal by Tuesday.</p>";
    for semantic in [true, false] {
        let text = html_to_text(page(article, semantic).as_bytes(), None, true)?;
        assert_eq!(
            text,
            "Trains run late\nTrains in the north ran an hour late on Monday after a storm brought down trees.\n\
             The operator said services would be normal by Tuesday.",
            "semantic: {semantic}"
        );
    }
    let all = html_to_text(page(article, false).as_bytes(), None, false)?;
    assert!(
        all.contains("Example Site, 1 Example Street")
            && all.contains("Trains run late")
            && !all.contains("tracking"),
        "{all}"
    );
    Ok(())
}

#[test]
fn unrelated_pages_of_one_site_are_far_apart_without_boilerplate() -> Result {
    let hasher = Simhasher::default();
    let a = page("<p>近日，城市交通部门发布报告，地铁客流量比去年增长了百分之十五，早高峰拥挤问题依然突出，部门计划增加列车班次。</p>", false);
    let b = page("<p>研究人员在实验室中培育出一种耐旱水稻新品种，在干旱地区试种的产量比传统品种高出三成，明年将扩大推广范围。</p>", false);
    let with = |html: &str, main: bool| -> std::result::Result<_, Box<dyn std::error::Error>> {
        Ok(hasher.fingerprint(&html_to_text(html.as_bytes(), None, main)?)?)
    };
    let kept = with(&a, false)?.distance(with(&b, false)?);
    let removed = with(&a, true)?.distance(with(&b, true)?);
    assert!(
        removed > kept,
        "boilerplate kept: {kept}, removed: {removed}"
    );
    assert!(removed > 10, "{removed}");
    Ok(())
}

/// Depth changes nothing: a page nested in 100,000 `<div>`s gives exactly the main text it
/// gives alone (every rule applies, `id`/`class` ones included), and so does a page under
/// 100,000 levels of elements that are never closed.
#[test]
fn deep_pages_keep_every_rule() -> Result {
    let article = page(
        "<h1>Trains run late</h1><p>Trains in the north ran an hour late on Monday.</p>",
        true,
    );
    let want = "Trains run late\nTrains in the north ran an hour late on Monday.";
    assert_eq!(html_to_text(article.as_bytes(), None, true)?, want);
    for depth in [900, 100_000] {
        let nested = format!(
            "{}{article}{}",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        assert_eq!(
            html_to_text(nested.as_bytes(), None, true)?,
            want,
            "{depth}"
        );
        let unclosed = format!("{}{article}", "<div><span>".repeat(depth / 2));
        assert_eq!(
            html_to_text(unclosed.as_bytes(), None, true)?,
            want,
            "{depth}"
        );
    }
    Ok(())
}
