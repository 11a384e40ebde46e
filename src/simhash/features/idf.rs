//! jieba's inverse-document-frequency table, shipped with this crate.
//!
//! `idf.txt.zst` is `src/data/idf.txt` of jieba-rs 0.11.0 (the same table as Python jieba's
//! `jieba/analyse/idf.txt`; jieba and jieba-rs are MIT licensed, copyright Sun Junyi and
//! messense), regrouped so that it compresses well: for each distinct IDF value in ascending
//! order, a line `=VALUE` followed by the words with that value, one per line, sorted;
//! then `zstd -19` (6.2 MB -> 1.1 MB). jieba-rs keeps its own copy private
//! (`TfIdf::idf_dict`), hence this one. It is decompressed once per process, on first use.
//!
//! Regenerate with:
//! ```text
//! python3 -c 'import collections,sys; g=collections.defaultdict(list)
//! for l in open(sys.argv[1], encoding="utf-8"):
//!     p = l.split()
//!     if len(p) == 2: g[p[1]].append(p[0])
//! print("\n".join("=" + v + "\n" + "\n".join(sorted(g[v])) for v in sorted(g, key=float)))' \
//!   idf.txt > grouped.txt && zstd -19 grouped.txt -o idf.txt.zst
//! ```
//!
//! Changing the table changes fingerprints made with `IdfWeighting::Jieba`: a store records
//! [`content_hash`] of the table and refuses to open with another one.

use std::sync::LazyLock;

use rustc_hash::FxHashMap;

static COMPRESSED: &[u8] = include_bytes!("idf.txt.zst");

/// The IDF table: word -> IDF, and the median IDF for words not in it.
pub(crate) struct IdfTable {
    map: FxHashMap<&'static str, f32>,
    median: f32,
}

/// The process-wide table, built on first use.
pub(crate) static IDF: LazyLock<IdfTable> = LazyLock::new(IdfTable::load);

/// xxh3-64 of the table's text (decompressed, so that compressing it again changes
/// nothing): what a store records to tell whether its fingerprints were made with it.
pub(crate) fn content_hash() -> u64 {
    zstd::stream::decode_all(COMPRESSED).map_or(0, |text| xxhash_rust::xxh3::xxh3_64(&text))
}

impl IdfTable {
    /// The IDF of `word`, or the median IDF if the table does not have it.
    #[inline]
    pub(crate) fn get(&self, word: &str) -> f64 {
        f64::from(self.map.get(word).copied().unwrap_or(self.median))
    }

    /// The median IDF of the table's words.
    #[cfg(test)]
    pub(crate) fn median(&self) -> f64 {
        f64::from(self.median)
    }

    /// Number of words in the table.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// Decompresses and parses the embedded table. The table is part of the crate and is
    /// checked by the tests, so a failure here is a build defect; it degrades to an empty
    /// table with median 1 (TF weighting) rather than panicking.
    fn load() -> IdfTable {
        let Ok(bytes) = zstd::stream::decode_all(COMPRESSED) else {
            return IdfTable {
                map: FxHashMap::default(),
                median: 1.0,
            };
        };
        let Ok(text) = String::from_utf8(bytes) else {
            return IdfTable {
                map: FxHashMap::default(),
                median: 1.0,
            };
        };
        // The words borrow from the text for the life of the process: one allocation instead
        // of 270,000 small ones.
        let text: &'static str = Box::leak(text.into_boxed_str());
        let mut map = FxHashMap::with_capacity_and_hasher(280_000, Default::default());
        let mut values = Vec::with_capacity(280_000);
        let mut current = None;
        for line in text.lines() {
            if let Some(v) = line.strip_prefix('=') {
                current = v.trim().parse::<f32>().ok();
            } else if let (Some(idf), false) = (current, line.is_empty()) {
                map.insert(line, idf);
                values.push(idf);
            }
        }
        // Groups are in ascending order, so `values` is sorted.
        let median = values
            .get(values.len().saturating_sub(1) / 2)
            .copied()
            .unwrap_or(1.0);
        IdfTable { map, median }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_loads_with_jieba_values() {
        assert!(IDF.len() > 260_000, "{}", IDF.len());
        assert!((IDF.get("劳动防护") - 13.900677652).abs() < 1e-4);
        assert!((IDF.get("岗上") - 11.5027823792).abs() < 1e-4);
        assert!(IDF.get("的") < 2.0);
        let median = IDF.median();
        assert!(median > 5.0 && median < 13.0, "{median}");
        assert_eq!(IDF.get("no-such-word-in-the-table"), median);
    }
}
