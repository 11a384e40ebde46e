//! `summary.svg`: the distance histogram and the cluster-size distribution of a `dedup` run,
//! which people look at to choose `k`.
//!
//! Hand-written SVG (two bar charts with a logarithmic count axis): it needs no plotting or
//! font crate, and any browser shows it.

use std::fmt::Write as _;

use simhash_store::dedup::DedupSummary;

/// Two bar charts as one SVG document: pairs per distance `0..=k`, and clusters per size
/// (sizes grouped in powers of two when there are more than 24 distinct sizes).
pub fn summary_svg(summary: &DedupSummary) -> String {
    let distances: Vec<(String, u64)> = summary
        .pairs_per_distance
        .iter()
        .enumerate()
        .map(|(d, &n)| (d.to_string(), n))
        .collect();
    let sizes = size_bars(&summary.cluster_sizes);
    let (w, h) = (PANEL_W * 2.0, PANEL_H + 40.0);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="{x}" y="22" font-size="15" text-anchor="middle">{docs} documents, k = {k}: {pairs} pairs, {clusters} clusters, {dropped} to drop</text>
"##,
        x = w / 2.0,
        docs = summary.documents,
        k = summary.k,
        pairs = summary.pairs,
        clusters = summary.clusters,
        dropped = summary.dropped,
    );
    bar_chart(
        &mut svg,
        0.0,
        40.0,
        "pairs per Hamming distance",
        "distance",
        &distances,
    );
    bar_chart(
        &mut svg,
        PANEL_W,
        40.0,
        "clusters per size",
        "documents in the cluster",
        &sizes,
    );
    svg.push_str("</svg>\n");
    svg
}

const PANEL_W: f64 = 520.0;
const PANEL_H: f64 = 360.0;

/// Bars of the cluster-size distribution: one per size, or per power-of-two range of sizes.
fn size_bars(sizes: &[(usize, u64)]) -> Vec<(String, u64)> {
    if sizes.len() <= 24 {
        return sizes.iter().map(|&(s, n)| (s.to_string(), n)).collect();
    }
    let mut bars: Vec<(usize, usize, u64)> = Vec::new();
    for &(s, n) in sizes {
        // Ranges 2, 3-4, 5-8, 9-16, ...
        let hi = s.next_power_of_two();
        let lo = if hi <= 2 { 2 } else { hi / 2 + 1 };
        match bars.last_mut() {
            Some(bar) if bar.1 == hi => bar.2 += n,
            _ => bars.push((lo, hi, n)),
        }
    }
    bars.into_iter()
        .map(|(lo, hi, n)| {
            (
                if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo}-{hi}")
                },
                n,
            )
        })
        .collect()
}

/// Escapes text for SVG.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One bar chart with a log10 count axis in the panel at (`x0`, `y0`).
fn bar_chart(
    svg: &mut String,
    x0: f64,
    y0: f64,
    title: &str,
    x_label: &str,
    bars: &[(String, u64)],
) {
    let (left, right, top, bottom) = (60.0, 20.0, 30.0, 60.0);
    let plot_w = PANEL_W - left - right;
    let plot_h = PANEL_H - top - bottom;
    let (px, py) = (x0 + left, y0 + top);
    let max = bars.iter().map(|b| b.1).max().unwrap_or(0).max(1);
    let decades = (max as f64).log10().ceil().max(1.0);
    let y_of = |n: u64| py + plot_h - plot_h * ((n as f64).max(1.0).log10() / decades);
    let _ = writeln!(
        svg,
        r##"<text x="{}" y="{}" font-size="14" text-anchor="middle">{}</text>"##,
        x0 + PANEL_W / 2.0,
        y0 + 16.0,
        esc(title)
    );
    // Axes and decade grid lines.
    for d in 0..=decades as u32 {
        let n = 10u64.saturating_pow(d);
        let y = y_of(n);
        let _ = writeln!(
            svg,
            r##"<line x1="{px}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{n}</text>"##,
            px + plot_w,
            px - 6.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        svg,
        r##"<line x1="{px}" y1="{py}" x2="{px}" y2="{:.1}" stroke="black"/><line x1="{px}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="black"/>"##,
        py + plot_h,
        py + plot_h,
        px + plot_w,
        py + plot_h
    );
    let _ = writeln!(
        svg,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text transform="translate({:.1},{:.1}) rotate(-90)" text-anchor="middle">count (log scale)</text>"##,
        px + plot_w / 2.0,
        py + plot_h + 40.0,
        esc(x_label),
        x0 + 14.0,
        py + plot_h / 2.0
    );
    if bars.is_empty() {
        let _ = writeln!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#888">none</text>"##,
            px + plot_w / 2.0,
            py + plot_h / 2.0
        );
        return;
    }
    let slot = plot_w / bars.len() as f64;
    let bar_w = (slot * 0.8).max(1.0);
    for (i, (label, n)) in bars.iter().enumerate() {
        let x = px + slot * i as f64 + (slot - bar_w) / 2.0;
        // A count of 1 sits on the axis at log10(1) = 0: give it a sliver so it shows.
        let y = y_of(*n).min(py + plot_h - 2.0);
        let height = if *n == 0 { 0.0 } else { py + plot_h - y };
        let _ = writeln!(
            svg,
            r##"<rect x="{x:.1}" y="{y:.1}" width="{bar_w:.1}" height="{height:.1}" fill="#4878a8"><title>{}: {n}</title></rect>"##,
            esc(label)
        );
        if bars.len() <= 24 {
            let _ = writeln!(
                svg,
                r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"##,
                x + bar_w / 2.0,
                py + plot_h + 14.0,
                esc(label)
            );
            if *n > 0 {
                let _ = writeln!(
                    svg,
                    r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="9">{n}</text>"##,
                    x + bar_w / 2.0,
                    y - 3.0
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use simhash_store::dedup::{ClusterBuilder, ScanStats};

    use super::*;

    fn summary() -> DedupSummary {
        let mut b = ClusterBuilder::new();
        for (x, y) in [(1, 2), (2, 3), (10, 11)] {
            b.add_pair(x, y);
        }
        let stats = ScanStats {
            k: 3,
            pairs: 3,
            per_distance: vec![1, 0, 2, 0],
            keys_scanned: 400,
        };
        DedupSummary::new(100, &stats, &b.finish())
    }

    #[test]
    fn svg_has_one_bar_per_distance_and_size() {
        let svg = summary_svg(&summary());
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        // Distances 0 and 2 have pairs (1 and 3 have none: zero-height bars), sizes 2 and 3.
        assert_eq!(svg.matches("<rect x=").count(), 4 + 2);
    }

    #[test]
    fn many_sizes_are_grouped_in_powers_of_two() {
        let sizes: Vec<(usize, u64)> = (2..=40).map(|s| (s, 1)).collect();
        let bars = size_bars(&sizes);
        let labels: Vec<&str> = bars.iter().map(|b| b.0.as_str()).collect();
        assert_eq!(labels, ["2", "3-4", "5-8", "9-16", "17-32", "33-64"]);
        assert_eq!(bars.iter().map(|b| b.1).sum::<u64>(), 39);
    }
}
