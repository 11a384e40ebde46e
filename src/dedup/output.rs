//! Writing the results of a deduplication to a directory, as JSON Lines or CSV:
//!
//! | file | one row per | fields |
//! |---|---|---|
//! | `pairs.{jsonl,csv}` | pair, in scan order | `a`, `b` (`a < b`), `distance` |
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

use serde::Serialize;

use crate::dedup::clusters::Clusters;
use crate::dedup::Pair;
use crate::error::{Error, Result};

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
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "jsonl" => Ok(OutputFormat::Jsonl),
            "csv" => Ok(OutputFormat::Csv),
            _ => Err(Error::InvalidArgument(format!(
                "unknown output format `{s}`: expected jsonl or csv"
            ))),
        }
    }
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
        let file = File::create(&path).map_err(|e| Error::io("creating", &path, e))?;
        Ok(Out {
            path,
            w: BufWriter::with_capacity(1 << 20, file),
        })
    }

    fn line(&mut self, args: fmt::Arguments<'_>) -> Result<()> {
        self.w
            .write_fmt(args)
            .and_then(|()| self.w.write_all(b"\n"))
            .map_err(|e| Error::io("writing", &self.path, e))
    }

    fn json<T: Serialize>(&mut self, row: &T) -> Result<()> {
        serde_json::to_writer(&mut self.w, row)
            .map_err(std::io::Error::from)
            .and_then(|()| self.w.write_all(b"\n"))
            .map_err(|e| Error::io("writing", &self.path, e))
    }

    fn finish(mut self) -> Result<PathBuf> {
        self.w
            .flush()
            .and_then(|()| self.w.get_ref().sync_all())
            .map_err(|e| Error::io("writing", &self.path, e))?;
        Ok(self.path)
    }
}

/// Writes pairs as they are found, then the clusters and the drop list, into one directory
/// (see the table in the module documentation of `dedup::output`).
///
/// ```
/// use simhash_store::{DedupWriter, Fingerprint, OutputFormat, Store};
/// let dir = tempfile::tempdir()?;
/// let store = Store::open(dir.path().join("store"))?;
/// store.insert(1, Fingerprint(0xabcd))?;
/// store.insert(2, Fingerprint(0xabce))?;
///
/// let mut out = DedupWriter::create(dir.path().join("out"), OutputFormat::Csv)?;
/// let mut builder = simhash_store::ClusterBuilder::new();
/// store.pairs(3).for_each(|p| {
///     builder.add_pair(p.a, p.b);
///     out.write_pair(p)
/// })?;
/// let files = out.finish(&builder.finish())?;
/// assert_eq!(std::fs::read_to_string(&files[2])?, "id,representative,key\n2,1,\n");
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// ```
pub struct DedupWriter {
    dir: PathBuf,
    format: OutputFormat,
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
    /// [`Error::Io`] naming the directory or file.
    pub fn create(dir: impl AsRef<Path>, format: OutputFormat) -> Result<DedupWriter> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| Error::io("creating directory", &dir, e))?;
        let mut pairs = Out::create(dir.join(format!("pairs.{}", format.extension())))?;
        if format == OutputFormat::Csv {
            pairs.line(format_args!("a,b,distance"))?;
        }
        Ok(DedupWriter { dir, format, pairs })
    }

    /// The directory written to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends one pair.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn write_pair(&mut self, pair: Pair) -> Result<()> {
        match self.format {
            OutputFormat::Jsonl => self.pairs.json(&pair),
            OutputFormat::Csv => self
                .pairs
                .line(format_args!("{},{},{}", pair.a, pair.b, pair.distance)),
        }
    }

    /// Closes the pairs file and writes the clusters and drop files (flushed and synced).
    /// Returns the paths of the pairs, clusters and drop files, in that order.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
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
            Err(Error::InvalidArgument(_))
        ));
    }
}
