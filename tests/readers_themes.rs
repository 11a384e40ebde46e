//! Main text of pages built like common documentation and site themes: Sphinx's
//! Read-the-Docs and classic themes, a blog, a news site (with and without a main element) and
//! a shop. Each keeps its article and drops its navigation, sidebars, adverts, comments and
//! footers, although the wrappers around the article have classes that name boilerplate.
#![cfg(feature = "readers")]

use simhash_store::readers::html_to_text;

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The main text of `page` is exactly `article`, and every line of `chrome` is gone from it
/// while the page's whole visible text has it (so the page is not simply empty of it).
fn check(theme: &str, page: &str, article: &[&str], chrome: &[&str]) -> Result {
    let main = html_to_text(page.as_bytes(), None, true)?;
    assert_eq!(main, article.join("\n"), "{theme}");
    let all = html_to_text(page.as_bytes(), None, false)?;
    for line in chrome {
        assert!(all.contains(line), "{theme}: {line:?} is not in the page");
        assert!(!main.contains(line), "{theme}: {line:?} kept");
    }
    Ok(())
}

const TITLE: &str = "Disk images";
const PARAS: [&str; 3] = [
    "QEMU supports many image file formats that can be used with VMs as well as with any of \
     the tools (like qemu-img). This includes the preferred formats raw and qcow2 as well as \
     formats that are supported for compatibility with older QEMU versions or other \
     hypervisors.",
    "Depending on the image format, different options can be passed to qemu-img create and \
     qemu-img convert using the -o option. This section describes each format and the options \
     that are supported for it.",
    "The raw disk image format has the advantage of being simple and easily exportable to all \
     other emulators. If your file system supports holes (for example in ext2 or ext3 on Linux \
     or NTFS on Windows), then only the written sectors will reserve space.",
];

/// The article as the themes mark it up: a heading and three paragraphs.
fn body() -> String {
    let paras: String = PARAS.iter().map(|p| format!("<p>{p}</p>\n")).collect();
    format!("<h1>{TITLE}<a class=\"headerlink\" href=\"#disk-images\" title=\"Permalink\">¶</a></h1>\n{paras}")
}

/// The main text of [`body`]: Sphinx's permalink sign is text of the heading.
fn article() -> Vec<&'static str> {
    let mut lines = vec!["Disk images¶"];
    lines.extend(PARAS);
    lines
}

/// Sphinx with `sphinx_rtd_theme`, as QEMU's manuals are built: every wrapper's class has the
/// token `nav`.
#[test]
fn read_the_docs_theme() -> Result {
    let page = format!(
        r##"<!DOCTYPE html>
<html class="writer-html5" lang="en"><head><meta charset="utf-8" /><title>Disk images &mdash; QEMU documentation</title>
<script src="_static/jquery.js"></script></head>
<body class="wy-body-for-nav">
  <div class="wy-grid-for-nav">
    <nav data-toggle="wy-nav-shift" class="wy-nav-side">
      <div class="wy-side-scroll">
        <div class="wy-side-nav-search">
          <a href="index.html" class="icon icon-home">QEMU</a>
          <div class="version">8.2.0</div>
          <div role="search"><form id="rtd-search-form" class="wy-form" action="search.html" method="get">
            <input type="text" name="q" placeholder="Search docs" /></form></div>
        </div>
        <div class="wy-menu wy-menu-vertical" data-spy="affix" role="navigation" aria-label="Navigation menu">
          <p class="caption" role="heading"><span class="caption-text">Contents:</span></p>
          <ul class="current"><li class="toctree-l1"><a class="reference internal" href="about/index.html">About QEMU</a></li>
          <li class="toctree-l1 current"><a class="reference internal" href="system/index.html">System Emulation</a></li></ul>
        </div>
      </div>
    </nav>
    <section data-toggle="wy-nav-shift" class="wy-nav-content-wrap">
      <nav class="wy-nav-top" aria-label="Mobile navigation menu">
        <i data-toggle="wy-nav-top" class="fa fa-bars"></i><a href="index.html">QEMU</a>
      </nav>
      <div class="wy-nav-content">
        <div class="rst-content">
          <div role="navigation" aria-label="Page navigation">
            <ul class="wy-breadcrumbs"><li><a href="index.html" class="icon icon-home"></a></li>
            <li class="breadcrumb-item"><a href="system/index.html">System Emulation</a></li>
            <li class="breadcrumb-item active">Disk Images</li></ul>
            <hr/>
          </div>
          <div role="main" class="document" itemscope="itemscope" itemtype="http://schema.org/Article">
            <div itemprop="articleBody">
              <section id="disk-images">
{body}
              </section>
            </div>
          </div>
          <footer><div class="rst-footer-buttons" role="navigation" aria-label="Footer">
            <a href="invocation.html" class="btn btn-neutral float-left" title="Invocation">Previous</a>
            <a href="virtio-net-failover.html" class="btn btn-neutral float-right" title="QEMU virtio-net standby">Next</a>
          </div><hr/>
          <div role="contentinfo"><p>&#169; Copyright 2024, The QEMU Project Developers.</p></div>
          Built with <a href="https://www.sphinx-doc.org/">Sphinx</a> using a theme provided by Read the Docs.
          </footer>
        </div>
      </div>
    </section>
  </div>
</body></html>"##,
        body = body()
    );
    check(
        "read the docs",
        &page,
        &article(),
        &[
            "About QEMU",
            "Contents:",
            "Disk Images",
            "Previous",
            "Built with",
        ],
    )
}

/// Sphinx's classic theme (the one of many Debian packages' manuals): the sidebar is
/// `role="navigation"`, the body `role="main"`.
#[test]
fn sphinx_classic_theme() -> Result {
    let page = format!(
        r##"<!DOCTYPE html><html><head><meta charset="utf-8" /><title>Disk images</title></head><body>
    <div class="related" role="navigation" aria-label="related navigation">
      <h3>Navigation</h3>
      <ul><li class="right"><a href="genindex.html" title="General Index">index</a></li>
        <li class="nav-item nav-item-0"><a href="index.html">QEMU documentation</a> &#187;</li></ul>
    </div>
    <div class="document">
      <div class="documentwrapper">
        <div class="bodywrapper">
          <div class="body" role="main">
{body}
          </div>
        </div>
      </div>
      <div class="sphinxsidebar" role="navigation" aria-label="main navigation">
        <div class="sphinxsidebarwrapper">
          <h3>Table of Contents</h3><ul><li><a href="#">Disk images</a></li></ul>
          <h4>Previous topic</h4><p class="topless"><a href="invocation.html">Invocation</a></p>
          <div id="searchbox" style="display: none" role="search"><h3 id="searchlabel">Quick search</h3></div>
        </div>
      </div>
      <div class="clearer"></div>
    </div>
    <div class="footer" role="contentinfo">&#169; Copyright 2024, The QEMU Project Developers. Created using Sphinx 7.2.6.</div>
  </body></html>"##,
        body = body()
    );
    check(
        "sphinx classic",
        &page,
        &article(),
        &[
            "Navigation",
            "Table of Contents",
            "Previous topic",
            "Created using Sphinx",
        ],
    )
}

/// A blog (WordPress and Ghost themes): the site wrapper has `nav-open` while the menu is
/// open, the post is in `<main>` with comments, post navigation and a widget sidebar.
#[test]
fn blog_theme() -> Result {
    let comments: String = (1..=3)
        .map(|i| {
            format!(
                r##"<li id="comment-{i}" class="comment even thread-even depth-1">
        <article id="div-comment-{i}" class="comment-body">
          <footer class="comment-meta"><b class="fn">Reader {i}</b> says:</footer>
          <div class="comment-content"><p>Thanks, this finally explained why my qcow2 images grew so large after every snapshot. Reader {i} will try the raw format next time.</p></div>
          <div class="reply"><a rel="nofollow" class="comment-reply-link" href="?replytocom={i}">Reply</a></div>
        </article></li>"##
            )
        })
        .collect();
    let page = format!(
        r##"<!doctype html><html lang="en-US"><head><meta charset="UTF-8"><title>Disk images – A blog about virtual machines</title></head>
<body class="post-template-default single single-post postid-42 has-sidebar">
<div id="page" class="site nav-open">
  <a class="skip-link screen-reader-text" href="#content">Skip to content</a>
  <header id="masthead" class="site-header">
    <p class="site-title"><a href="/">A blog about virtual machines</a></p>
    <nav id="site-navigation" class="primary-navigation"><ul id="menu-main" class="menu-wrapper">
      <li><a href="/about">About</a></li><li><a href="/archive">Archive</a></li></ul></nav>
  </header>
  <div id="content" class="site-content">
    <div id="primary" class="content-area">
      <main id="main" class="site-main">
        <article id="post-42" class="post-42 post type-post status-publish format-standard hentry category-virtualization">
          <header class="entry-header"><span class="posted-on">Posted on March 3, 2024</span></header>
          <div class="entry-content">
{body}
          </div>
          <footer class="entry-footer"><span class="tags-links">Tagged qemu, storage</span></footer>
        </article>
        <nav class="navigation post-navigation" aria-label="Posts">
          <div class="nav-links"><div class="nav-previous"><a href="/prev" rel="prev">Previous post: Snapshots</a></div></div>
        </nav>
        <div id="comments" class="comments-area">
          <h2 class="comments-title">3 thoughts on “Disk images”</h2>
          <ol class="comment-list">{comments}</ol>
          <div id="respond" class="comment-respond"><h3 id="reply-title" class="comment-reply-title">Leave a Reply</h3>
            <form action="/wp-comments-post.php" method="post" id="commentform" class="comment-form">
            <p class="comment-notes">Your email address will not be published.</p></form></div>
        </div>
      </main>
    </div>
    <aside id="secondary" class="widget-area" role="complementary">
      <section id="recent-posts-2" class="widget widget_recent_entries"><h2 class="widget-title">Recent Posts</h2>
      <ul><li><a href="/snapshots">Snapshots</a></li><li><a href="/networking">Bridged networking</a></li></ul></section>
    </aside>
  </div>
  <footer id="colophon" class="site-footer"><div class="site-info">Proudly powered by WordPress</div></footer>
</div>
</body></html>"##,
        body = body()
    );
    check(
        "blog",
        &page,
        &article(),
        &[
            "Skip to content",
            "Posted on March 3, 2024",
            "Tagged qemu, storage",
            "Previous post",
            "3 thoughts on",
            "Thanks, this finally explained",
            "Leave a Reply",
            "Recent Posts",
            "Proudly powered",
        ],
    )
}

/// A news site: an `ad-free` layout for subscribers, adverts, related stories and a
/// newsletter box around and inside the story. With `<main>` and `<article>`, and the same
/// page from an older template with neither.
#[test]
fn news_theme() -> Result {
    let story = |semantic: bool| {
        let (main, main_end, art, art_end) = if semantic {
            (
                "<main id=\"main-content\">",
                "</main>",
                "<article class=\"story\">",
                "</article>",
            )
        } else {
            (
                "<div id=\"content-wrapper\" class=\"has-nav\">",
                "</div>",
                "<div class=\"story\">",
                "</div>",
            )
        };
        format!(
            r##"<!DOCTYPE html><html><head><meta charset="utf-8"><title>Disk images | The Daily Example</title>
<script>window.dataLayer = [];</script></head>
<body>
<div class="layout ad-free" id="app">
  <div class="ad ad--leaderboard" data-slot="top"><span>Advertisement</span></div>
  <header class="site-header"><a class="logo" href="/">The Daily Example</a>
    <nav class="main-nav"><a href="/world">World</a> <a href="/tech">Technology</a></nav></header>
  <div class="breaking-banner">Breaking: markets close higher after a volatile week of trading</div>
  {main}
    {art}
      <div class="story-meta"><span class="byline">By A. Reporter</span></div>
      <div class="story-body">
{body}
        <div class="ad ad--inline" data-slot="mid"><p>Advertisement: switch your broadband today and save on the first year</p></div>
      </div>
      <div class="share-tools"><a href="https://twitter.com/share">Share on Twitter</a> <a href="mailto:">Email this story</a></div>
    {art_end}
    <section class="related-stories"><h2>Related stories</h2>
      <ul><li><a href="/tech/1">Why virtual machines still matter</a></li><li><a href="/tech/2">Cloud prices rise again</a></li></ul></section>
    <div class="newsletter-signup"><h3>Get the morning briefing</h3><p>Sign up for our newsletter and get the news of the day in your inbox every morning.</p></div>
  {main_end}
  <div class="sidebar"><h3>Most read</h3><ol><li><a href="/1">Storm closes the harbour</a></li></ol><p>Updated every hour from the stories our readers open most.</p></div>
  <footer class="site-footer"><p>© 2024 The Daily Example. All rights reserved.</p></footer>
</div>
</body></html>"##,
            body = body()
        )
    };
    for semantic in [true, false] {
        let mut want = vec!["By A. Reporter"];
        want.extend(article());
        check(
            &format!("news, semantic: {semantic}"),
            &story(semantic),
            &want,
            &[
                "Advertisement",
                "The Daily Example",
                "Breaking: markets",
                "switch your broadband",
                "Share on Twitter",
                "Related stories",
                "Sign up for our newsletter",
                "Most read",
                "Updated every hour",
                "All rights reserved",
            ],
        )?;
    }
    Ok(())
}

/// A shop (Shopify's Dawn theme): announcement bar, header with the cart, the product in
/// `<main role="main">`, its buy form, recommendations and the footer's menus.
#[test]
fn shop_theme() -> Result {
    let page = r##"<!doctype html><html class="no-js" lang="en"><head><meta charset="utf-8"><title>Raw Disk Image Mug – Example Store</title></head>
<body class="gradient">
  <a class="skip-to-content-link button visually-hidden" href="#MainContent">Skip to content</a>
  <div id="shopify-section-announcement-bar" class="shopify-section announcement-bar-section">
    <div class="announcement-bar color-accent-1" role="region" aria-label="Announcement"><p class="announcement-bar__message">Free shipping on orders over $50</p></div>
  </div>
  <div id="shopify-section-header" class="shopify-section section-header">
    <sticky-header class="header-wrapper color-background-1 gradient">
      <header class="header header--middle-left page-width">
        <a href="/" class="header__heading-link">Example Store</a>
        <nav class="header__inline-menu"><ul class="list-menu"><li><a href="/collections/all">Catalog</a></li><li><a href="/pages/contact">Contact</a></li></ul></nav>
        <a href="/cart" class="header__icon header__icon--cart" id="cart-icon-bubble"><span class="visually-hidden">Cart</span></a>
      </header>
    </sticky-header>
  </div>
  <main id="MainContent" class="content-for-layout focus-none" role="main" tabindex="-1">
    <section id="shopify-section-template--main" class="shopify-section section">
      <div class="product product--large product--left grid grid--1-col grid--2-col-tablet">
        <div class="product__info-wrapper grid__item">
          <div class="product__title"><h1>Raw Disk Image Mug</h1></div>
          <div class="price"><span class="price-item price-item--regular">$18.00 USD</span></div>
          <product-form class="product-form"><form method="post" action="/cart/add" id="product-form-main" class="form">
            <button type="submit" name="add" class="product-form__submit button">Add to cart</button></form></product-form>
          <div class="product__description rte">
            <p>A stoneware mug printed with the layout of a raw disk image, sector by sector, for those who think a file system is a state of mind.</p>
            <p>Holds 350 ml. Dishwasher and microwave safe. Printed and shipped from our workshop in Example City within three working days.</p>
          </div>
        </div>
      </div>
    </section>
    <section id="shopify-section-template--related" class="shopify-section">
      <product-recommendations class="related-products page-width">
        <h2 class="related-products__heading">You may also like</h2>
        <ul class="grid product-grid"><li class="grid__item"><a href="/products/qcow2-mug">Qcow2 Mug</a><span class="price">$18.00 USD</span></li></ul>
      </product-recommendations>
    </section>
  </main>
  <div id="shopify-section-footer" class="shopify-section">
    <footer class="footer color-background-1 gradient"><div class="footer__content-top page-width">
      <h2 class="footer-block__heading">Quick links</h2><ul><li><a href="/search">Search</a></li></ul>
      <p>Subscribe to our emails for new mugs and offers.</p></div>
      <small class="copyright__content">© 2024, Example Store Powered by Shopify</small></footer>
  </div>
</body></html>"##;
    check(
        "shop",
        page,
        &[
            "Raw Disk Image Mug",
            "$18.00 USD",
            "A stoneware mug printed with the layout of a raw disk image, sector by sector, for those who think a file system is a state of mind.",
            "Holds 350 ml. Dishwasher and microwave safe. Printed and shipped from our workshop in Example City within three working days.",
        ],
        &[
            "Skip to content",
            "Free shipping on orders over $50",
            "Catalog",
            "Add to cart",
            "You may also like",
            "Quick links",
            "Subscribe to our emails",
            "Powered by Shopify",
        ],
    )
}
