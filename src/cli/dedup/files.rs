//! The files `dedup` writes into `--out`, as JSON Lines or CSV:
//!
//! | file | one row per | fields |
//! |---|---|---|
//! | `pairs.{jsonl,csv}` | pair, in scan order | `a`, `b` (`a < b`), `distance`; `similarity` (verified pairs); `key_a`, `key_b` (with keys) |
//! | `clusters.{jsonl,csv}` | member of a cluster, by cluster then id | `id`, `cluster` (lowest member id), `representative`, `keep`, `key` (external key, if any) |
//! | `drop.{jsonl,csv}` | document to drop, by id | `id`, `representative` (kept instead), `key` |
//!
//! Documents without a near-duplicate appear in no file. In CSV, the first line is a header,
//! an absent key is an empty field, and fields holding `,`, `"` or a line break are quoted.

use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{Context, Result};
use serde::Serialize;
use simhash_store::{Clusters, Pair};

/// The file format of [`DedupWriter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OutputFormat {
    /// One JSON object per line (`.jsonl`).
    #[default]
    Jsonl,
    /// Comma-separated values with a header line (`.csv`).
    Csv,
}

impl OutputFormat {
    /// The file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            OutputFormat::Jsonl => "jsonl",
            OutputFormat::Csv => "csv",
        }
    }
}

impl fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.extension())
    }
}

impl FromStr for OutputFormat {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "jsonl" => Ok(OutputFormat::Jsonl),
            "csv" => Ok(OutputFormat::Csv),
            _ => Err(format!(
                "unknown output format `{s}`: expected jsonl or csv"
            )),
        }
    }
}

/// The optional columns of the pairs file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PairColumns {
    /// The sketch similarity of verified pairs.
    pub similarity: bool,
    /// The external keys of both documents.
    pub keys: bool,
}

/// One row of the pairs file.
#[derive(Debug, Serialize)]
pub struct PairRow<'a> {
    /// The smaller id.
    pub a: u64,
    /// The larger id.
    pub b: u64,
    /// The Hamming distance.
    pub distance: u32,
    /// The sketch similarity, for verified pairs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    /// The keys of `a` and `b`, when asked for (absent keys are `null`).
    #[serde(skip)]
    pub keys: Option<(Option<&'a str>, Option<&'a str>)>,
}

impl PairRow<'_> {
    /// A row of `pair` alone.
    pub fn of(pair: Pair) -> PairRow<'static> {
        PairRow {
            a: pair.a,
            b: pair.b,
            distance: pair.distance,
            similarity: None,
            keys: None,
        }
    }
}

/// The JSON form of a [`PairRow`] with its keys.
#[derive(Serialize)]
struct PairRowWithKeys<'a> {
    a: u64,
    b: u64,
    distance: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    similarity: Option<f64>,
    key_a: Option<&'a str>,
    key_b: Option<&'a str>,
}

#[derive(Serialize)]
struct ClusterRow<'a> {
    id: u64,
    cluster: u64,
    representative: u64,
    keep: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
}

#[derive(Serialize)]
struct DropRow<'a> {
    id: u64,
    representative: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
}

/// A CSV field, quoted when it needs to be.
fn csv_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\"")).into()
    } else {
        s.into()
    }
}

/// One output file.
struct Out {
    path: PathBuf,
    w: BufWriter<File>,
}

impl Out {
    fn create(path: PathBuf) -> Result<Out> {
        let file =
            File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(Out {
            path,
            w: BufWriter::with_capacity(1 << 20, file),
        })
    }

    fn line(&mut self, args: fmt::Arguments<'_>) -> Result<()> {
        self.w
            .write_fmt(args)
            .and_then(|()| self.w.write_all(b"\n"))
            .with_context(|| format!("cannot write {}", self.path.display()))
    }

    fn json<T: Serialize>(&mut self, row: &T) -> Result<()> {
        serde_json::to_writer(&mut self.w, row)
            .map_err(std::io::Error::from)
            .and_then(|()| self.w.write_all(b"\n"))
            .with_context(|| format!("cannot write {}", self.path.display()))
    }

    fn finish(mut self) -> Result<PathBuf> {
        self.w
            .flush()
            .and_then(|()| self.w.get_ref().sync_all())
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        Ok(self.path)
    }
}

/// Writes pairs as they are found, then the clusters and the drop list, into one directory
/// (see the table in the module documentation).
pub struct DedupWriter {
    dir: PathBuf,
    format: OutputFormat,
    columns: PairColumns,
    pairs: Out,
}

impl fmt::Debug for DedupWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DedupWriter")
            .field("dir", &self.dir)
            .field("format", &self.format)
            .finish()
    }
}

impl DedupWriter {
    /// Creates `dir` (and its parents) if needed and opens its pairs file, replacing an
    /// earlier one.
    ///
    /// # Errors
    /// The directory or the file cannot be created (the message names it).
    pub fn create(
        dir: impl AsRef<Path>,
        format: OutputFormat,
        columns: PairColumns,
    ) -> Result<DedupWriter> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create the directory {}", dir.display()))?;
        let mut pairs = Out::create(dir.join(format!("pairs.{}", format.extension())))?;
        if format == OutputFormat::Csv {
            let similarity = if columns.similarity {
                ",similarity"
            } else {
                ""
            };
            let keys = if columns.keys { ",key_a,key_b" } else { "" };
            pairs.line(format_args!("a,b,distance{similarity}{keys}"))?;
        }
        Ok(DedupWriter {
            dir,
            format,
            columns,
            pairs,
        })
    }

    /// Appends one pair; its `similarity` and `keys` are written when the writer's columns
    /// ask for them.
    ///
    /// # Errors
    /// A file cannot be written (the message names it).
    pub fn write_pair(&mut self, row: &PairRow<'_>) -> Result<()> {
        let similarity = row.similarity.filter(|_| self.columns.similarity);
        let (key_a, key_b) = row.keys.unwrap_or((None, None));
        match self.format {
            OutputFormat::Jsonl if self.columns.keys => self.pairs.json(&PairRowWithKeys {
                a: row.a,
                b: row.b,
                distance: row.distance,
                similarity,
                key_a,
                key_b,
            }),
            OutputFormat::Jsonl => self.pairs.json(&PairRow {
                similarity,
                keys: None,
                ..*row
            }),
            OutputFormat::Csv => {
                let similarity = similarity.map(|s| format!(",{s}")).unwrap_or_default();
                let keys = if self.columns.keys {
                    format!(
                        ",{},{}",
                        csv_field(key_a.unwrap_or("")),
                        csv_field(key_b.unwrap_or(""))
                    )
                } else {
                    String::new()
                };
                self.pairs.line(format_args!(
                    "{},{},{}{similarity}{keys}",
                    row.a, row.b, row.distance
                ))
            }
        }
    }

    /// Closes the pairs file and writes the clusters and drop files (flushed and synced).
    /// Returns the paths of the pairs, clusters and drop files, in that order.
    ///
    /// # Errors
    /// A file cannot be written (the message names it).
    pub fn finish(self, clusters: &Clusters) -> Result<Vec<PathBuf>> {
        let ext = self.format.extension();
        let csv = self.format == OutputFormat::Csv;
        let pairs = self.pairs.finish()?;

        let mut out = Out::create(self.dir.join(format!("clusters.{ext}")))?;
        if csv {
            out.line(format_args!("id,cluster,representative,keep,key"))?;
        }
        for cluster in clusters {
            for &id in &cluster.members {
                let row = ClusterRow {
                    id,
                    cluster: cluster.id,
                    representative: cluster.representative,
                    keep: id == cluster.representative,
                    key: clusters.key(id),
                };
                if csv {
                    out.line(format_args!(
                        "{},{},{},{},{}",
                        row.id,
                        row.cluster,
                        row.representative,
                        row.keep,
                        csv_field(row.key.unwrap_or(""))
                    ))?;
                } else {
                    out.json(&row)?;
                }
            }
        }
        let cluster_path = out.finish()?;

        let mut out = Out::create(self.dir.join(format!("drop.{ext}")))?;
        if csv {
            out.line(format_args!("id,representative,key"))?;
        }
        for id in clusters.drop_ids() {
            let representative = clusters.cluster_of(id).map_or(id, |c| c.representative);
            let row = DropRow {
                id,
                representative,
                key: clusters.key(id),
            };
            if csv {
                out.line(format_args!(
                    "{},{},{}",
                    row.id,
                    row.representative,
                    csv_field(row.key.unwrap_or(""))
                ))?;
            } else {
                out.json(&row)?;
            }
        }
        let drop_path = out.finish()?;
        Ok(vec![pairs, cluster_path, drop_path])
    }
}

#[cfg(test)]
mod tests {
    use simhash_store::dedup::{ClusterBuilder, Representative};
    use simhash_store::{Entry, Fingerprint, Store};

    use super::*;

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("https://a.example/x"), "https://a.example/x");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn formats_parse() {
        assert_eq!(
            "jsonl".parse::<OutputFormat>().unwrap(),
            OutputFormat::Jsonl
        );
        assert_eq!("csv".parse::<OutputFormat>().unwrap(), OutputFormat::Csv);
        assert!(matches!(
            "tsv".parse::<OutputFormat>(),
            Err(message) if message.contains("expected jsonl or csv")
        ));
    }

    #[test]
    fn a_pair_gives_a_drop_row() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let store = Store::open(dir.path().join("store"))?;
        store.insert(1, Fingerprint(0xabcd))?;
        store.insert(2, Fingerprint(0xabce))?;

        let mut out = DedupWriter::create(
            dir.path().join("out"),
            OutputFormat::Csv,
            PairColumns::default(),
        )?;
        let mut builder = ClusterBuilder::new();
        store.pairs(3).for_each(|p| {
            builder.add_pair(p.a, p.b);
            out.write_pair(&PairRow::of(p))
        })?;
        let files = out.finish(&builder.finish())?;
        assert_eq!(
            std::fs::read_to_string(&files[2])?,
            "id,representative,key\n2,1,\n"
        );
        Ok(())
    }

    /// Cluster A = {5, 7, 9} (9 loaded first, 7 longest), cluster B = {2, 4} (4 has no
    /// length), and a lone document 100.
    fn store(dir: &Path) -> Result<Store> {
        // Each write a microsecond after the one before: distinct `added` times.
        let tick = std::sync::atomic::AtomicU64::new(1_000_000);
        let store = Store::builder()
            .clock(move || tick.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
            .open(dir)?;
        let a = 0x1111_2222_3333_4444u64;
        let b = 0x9999_8888_7777_6666u64;
        let docs = [
            Entry::new(9, Fingerprint(a))
                .with_text_len(100)
                .with_key("https://a.example/9"),
            Entry::new(5, Fingerprint(a ^ 0b1))
                .with_text_len(100)
                .with_key("https://a.example/5,\"x\""),
            Entry::new(7, Fingerprint(a ^ 0b11)).with_text_len(900),
            Entry::new(4, Fingerprint(b)),
            Entry::new(2, Fingerprint(b ^ (1 << 40))).with_text_len(10),
            Entry::new(100, Fingerprint(!a)),
        ];
        for entry in docs {
            store.insert_entry(entry)?;
        }
        Ok(store)
    }

    #[test]
    fn files_in_both_formats() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let store = store(&dir.path().join("store"))?;
        for format in [OutputFormat::Jsonl, OutputFormat::Csv] {
            let out = dir.path().join(format.to_string());
            let mut writer = DedupWriter::create(&out, format, PairColumns::default())?;
            let mut builder = ClusterBuilder::new();
            let mut pairs = store.pairs(3).collect()?;
            pairs.reverse();
            for p in pairs {
                builder.add_pair(p.a, p.b);
                writer.write_pair(&PairRow::of(p))?;
            }
            let mut clusters = builder.finish();
            clusters.choose_representatives(&store, Representative::Longest)?;
            let files = writer.finish(&clusters)?;
            let read = |i: usize| std::fs::read_to_string(&files[i]);
            match format {
                OutputFormat::Jsonl => {
                    assert_eq!(
                        read(0)?,
                        "{\"a\":7,\"b\":9,\"distance\":2}\n{\"a\":5,\"b\":9,\"distance\":1}\n\
                         {\"a\":5,\"b\":7,\"distance\":1}\n{\"a\":2,\"b\":4,\"distance\":1}\n"
                    );
                    assert_eq!(
                        read(1)?,
                        "{\"id\":2,\"cluster\":2,\"representative\":2,\"keep\":true}\n\
                         {\"id\":4,\"cluster\":2,\"representative\":2,\"keep\":false}\n\
                         {\"id\":5,\"cluster\":5,\"representative\":7,\"keep\":false,\"key\":\"https://a.example/5,\\\"x\\\"\"}\n\
                         {\"id\":7,\"cluster\":5,\"representative\":7,\"keep\":true}\n\
                         {\"id\":9,\"cluster\":5,\"representative\":7,\"keep\":false,\"key\":\"https://a.example/9\"}\n"
                    );
                    assert_eq!(
                        read(2)?,
                        "{\"id\":4,\"representative\":2}\n\
                         {\"id\":5,\"representative\":7,\"key\":\"https://a.example/5,\\\"x\\\"\"}\n\
                         {\"id\":9,\"representative\":7,\"key\":\"https://a.example/9\"}\n"
                    );
                }
                OutputFormat::Csv => {
                    assert_eq!(read(0)?, "a,b,distance\n7,9,2\n5,9,1\n5,7,1\n2,4,1\n");
                    assert_eq!(
                        read(1)?,
                        "id,cluster,representative,keep,key\n2,2,2,true,\n4,2,2,false,\n\
                         5,5,7,false,\"https://a.example/5,\"\"x\"\"\"\n7,5,7,true,\n9,5,7,false,https://a.example/9\n"
                    );
                    assert_eq!(
                        read(2)?,
                        "id,representative,key\n4,2,\n5,7,\"https://a.example/5,\"\"x\"\"\"\n9,7,https://a.example/9\n"
                    );
                }
            }
        }
        Ok(())
    }

    #[test]
    fn pairs_with_similarity_and_keys() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let columns = PairColumns {
            similarity: true,
            keys: true,
        };
        let row = PairRow {
            a: 1,
            b: 2,
            distance: 3,
            similarity: Some(0.875),
            keys: Some((Some("https://a.example/1,x"), None)),
        };
        for format in [OutputFormat::Jsonl, OutputFormat::Csv] {
            let mut writer =
                DedupWriter::create(dir.path().join(format.to_string()), format, columns)?;
            writer.write_pair(&row)?;
            let files = writer.finish(&ClusterBuilder::new().finish())?;
            let pairs = std::fs::read_to_string(&files[0])?;
            match format {
                OutputFormat::Jsonl => assert_eq!(
                    pairs,
                    "{\"a\":1,\"b\":2,\"distance\":3,\"similarity\":0.875,\"key_a\":\"https://a.example/1,x\",\"key_b\":null}\n"
                ),
                OutputFormat::Csv => assert_eq!(
                    pairs,
                    "a,b,distance,similarity,key_a,key_b\n1,2,3,0.875,\"https://a.example/1,x\",\n"
                ),
            }
        }
        Ok(())
    }
}
