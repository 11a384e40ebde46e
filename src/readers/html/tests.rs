//! The decoders and the extraction on pages made for each rule.

use super::charset::meta_charset;
use super::*;
use encoding_rs::UTF_8;

#[test]
fn meta_charset_forms() {
    assert_eq!(
        meta_charset(b"<html><META charset=\"GBK\">"),
        Some(encoding_rs::GBK)
    );
    assert_eq!(
        meta_charset(b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gb2312\">"),
        Some(encoding_rs::GBK)
    );
    assert_eq!(
        meta_charset(b"<meta name=\"viewport\"><meta charset='utf-8'>"),
        Some(UTF_8)
    );
    assert_eq!(meta_charset(b"<meta name=x>"), None);
}

#[test]
fn gbk_page_with_meta() {
    let (page, _, _) = encoding_rs::GBK.encode(
        "<html><head><meta charset=\"gbk\"></head><body><p>近似重复网页检测</p></body></html>",
    );
    assert_eq!(html_to_text(&page, None, true).unwrap(), "近似重复网页检测");
    // A wrong header (UTF-8) is passed over for the meta declaration.
    assert_eq!(
        html_to_text(&page, Some("utf-8"), true).unwrap(),
        "近似重复网页检测"
    );
}

#[test]
fn undecodable_declared() {
    let bytes: Vec<u8> = (0..200)
        .map(|i| if i % 2 == 0 { 0xff } else { b'a' })
        .collect();
    let err = html_to_text(&bytes, Some("utf-8"), true).unwrap_err();
    assert!(err.contains("declared charset (UTF-8)"), "{err}");
}

#[test]
fn link_lists_and_repeats_go() {
    let page = b"<body><div><a href=1>One</a> <a href=2>Two</a> <a href=3>Three</a></div>\
        <p>Read more</p><p>A real paragraph about the weather, long enough to keep.</p><p>Read more</p>\
        <div class=\"share-box\">Share on social media</div></body>";
    assert_eq!(
        html_to_text(page, None, true).unwrap(),
        "A real paragraph about the weather, long enough to keep."
    );
    let all = html_to_text(page, None, false).unwrap();
    assert!(
        all.contains("One Two Three") && all.contains("Share on social media"),
        "{all}"
    );
}

#[test]
fn cjk_lines_join_without_spaces() {
    let page = "<p>近似重复\n网页检测 and\nwords</p>".as_bytes();
    assert_eq!(
        html_to_text(page, None, true).unwrap(),
        "近似重复网页检测 and words"
    );
}

#[test]
fn deep_nesting_does_not_overflow() {
    for depth in [900, 100_000] {
        let page = format!("{}text{}", "<div>".repeat(depth), "</div>".repeat(depth));
        assert_eq!(html_to_text(page.as_bytes(), None, false).unwrap(), "text");
    }
    // Alternating elements cannot share entries: past the cap the oldest are forgotten.
    let depth = 3 * super::super::open_elements::MAX_RUNS;
    let page = format!(
        "<p>before</p>{}<p>inside</p>{}<p>after</p>",
        "<div><span>".repeat(depth),
        "</span></div>".repeat(depth)
    );
    assert_eq!(
        html_to_text(page.as_bytes(), None, true).unwrap(),
        "before\ninside\nafter"
    );
}

#[test]
fn tree_builder_rules_that_matter_for_text() {
    let cases: [(&str, &str); 9] = [
        // An unclosed `p`, `li` or cell is closed by the next one.
        (
            "<p class=share>Share<p>The article text is in the second paragraph.",
            "The article text is in the second paragraph.",
        ),
        (
            "<ul><li class=ad>Buy<li>Kept item text here</ul>",
            "Kept item text here",
        ),
        (
            "<table><tr><td class=sidebar>Menu<td>Cell text of the table</table>",
            "Cell text of the table",
        ),
        // A misnested `</a>` closes the link alone.
        (
            "<a href=x class=share><div>shared</a>kept text</div>",
            "kept text",
        ),
        // An end tag does not close past a special element.
        (
            "<span class=ad><div>advert</span>still hidden</div></span><p>after",
            "after",
        ),
        // Raw text is not markup; SVG is invisible and its self-closing tags close.
        (
            "<script>document.write('<p>no')</script><svg><path/><text>no</text></svg><p>yes",
            "yes",
        ),
        // A `<p>` breaks out of SVG.
        ("<svg><g><p>out of svg", "out of svg"),
        // Entities are decoded; `</br>` is a line break.
        ("<p>fish &amp; chips</br>caf&eacute;", "fish & chips\ncafé"),
        // A `<main>` with text wins over the rest.
        (
            "<p>outside text</p><div role=main><p>inside</p></div>",
            "inside",
        ),
    ];
    for (page, want) in cases {
        assert_eq!(
            html_to_text(page.as_bytes(), None, true).unwrap(),
            want,
            "{page}"
        );
    }
}

/// The reader and the fingerprinter agree on what is boilerplate: on a page without `id`,
/// `class` or semantic hints, the main text is the visible text without the lines that the
/// fingerprinter's `drop_boilerplate` leaves out, in English and in Chinese.
#[test]
fn boilerplate_lines_are_the_fingerprinters() {
    use crate::simhash::boilerplate::{drop_lines, is_boilerplate};
    let pages: [(&str, &[&str], &[&str]); 2] = [
        (
            "<p>Home &gt; News &gt; Weather</p>\
             <h1>Rain tomorrow</h1>\
             <p>Heavy rain is expected in the north of the city from Tuesday morning.</p>\
             <p>Share on Facebook | Tweet | Email</p>\
             <p>« Previous | Next »</p>\
             <p>Copyright © 2024 Example News. All rights reserved.</p>",
            &[
                "Rain tomorrow",
                "Heavy rain is expected in the north of the city from Tuesday morning.",
            ],
            &["Home > News > Weather", "Share on Facebook | Tweet | Email"],
        ),
        (
            "<p>当前位置：首页 &gt; 新闻 &gt; 天气</p>\
             <h1>明天有雨</h1>\
             <p>气象台预计，周二上午起城市北部\n将有大雨，请市民注意出行安全。</p>\
             <p>分享到：微信、微博、QQ空间</p>\
             <p>上一篇：高温预警    下一篇：台风消息</p>\
             <p>© 2024 某某新闻网 版权所有</p>",
            &[
                "明天有雨",
                "气象台预计，周二上午起城市北部将有大雨，请市民注意出行安全。",
            ],
            &["当前位置：首页 > 新闻 > 天气", "分享到：微信、微博、QQ空间"],
        ),
    ];
    for (page, article, boilerplate) in pages {
        let all = html_to_text(page.as_bytes(), None, false).unwrap();
        let main = html_to_text(page.as_bytes(), None, true).unwrap();
        assert_eq!(main, article.join("\n"), "{page}");
        assert_eq!(drop_lines(&all).trim_end(), main, "{page}");
        for line in all.lines() {
            assert_eq!(is_boilerplate(line), !article.contains(&line), "{line:?}");
        }
        for line in boilerplate {
            assert!(
                all.lines().any(|l| l == *line) && is_boilerplate(line),
                "{line:?}"
            );
        }
    }
    // A page of nothing but boilerplate lines keeps them, as the fingerprinter does.
    let only = "<p>Share on Facebook</p><p>© 2024 Example</p>";
    assert_eq!(
        html_to_text(only.as_bytes(), None, true).unwrap(),
        "Share on Facebook\n© 2024 Example"
    );
}

#[test]
fn chinese_punctuation_joins_without_spaces() {
    let page = "<p>第一句话。\n“第二句”，\n第三句\n\u{20000}字 and\nwords，\nmore</p>".as_bytes();
    assert_eq!(
        html_to_text(page, None, true).unwrap(),
        "第一句话。“第二句”，第三句\u{20000}字 and words， more"
    );
}
