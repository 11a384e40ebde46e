//! The store's integrity check, the work of [`Store::verify`](crate::Store::verify): the four
//! block families, the documents and the keys agree; and the report on a damaged store. Its
//! public types are named by [`crate::verify`].

use std::fmt;

use crate::codec;
use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::keys::{self, BLOCK_FAMILIES, DOCS_FAMILY, KEYS_FAMILY};
use crate::postings::{Db, GroupScan, Postings, SplitCopies};
use crate::storage::{Database, Docs, View};

#[cfg(doc)]
use crate::Store;

/// At most this many problems are listed; the rest are only counted.
pub const MAX_LISTED_PROBLEMS: usize = 1000;

/// One inconsistency found by [`Store::verify`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// A document has no entry in a block family.
    MissingBlockEntry {
        /// The family.
        family: &'static str,
        /// The document.
        id: u64,
        /// Its fingerprint.
        fingerprint: Fingerprint,
    },
    /// A block-family entry whose document is absent or has another fingerprint.
    OrphanBlockEntry {
        /// The family.
        family: &'static str,
        /// The id in the entry.
        id: u64,
        /// The fingerprint in the entry.
        fingerprint: Fingerprint,
    },
    /// A key that does not have its family's layout, or a value that does not decode.
    Malformed {
        /// The family.
        family: &'static str,
        /// The key in hex.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A `keys` entry that points to a document which does not carry that key.
    DanglingKey {
        /// The external key.
        key: String,
        /// The id it points to.
        id: u64,
    },
    /// A document whose external key is not in the `keys` family (or points elsewhere).
    MissingKey {
        /// The document.
        id: u64,
        /// Its key.
        key: String,
    },
    /// A table file of the store that cannot be read (a damaged block, footer or index, or
    /// a truncated file): what it holds is lost until the store is restored or rebuilt.
    DamagedFile {
        /// The file's name in the store directory (`000012.sst`).
        file: String,
        /// The first error reading it.
        message: String,
    },
    /// The store cannot be read, and no damaged table file was found to blame.
    Unreadable {
        /// The error.
        message: String,
    },
    /// The recorded document count differs from the number of documents.
    CountMismatch {
        /// `meta/doc_count`.
        recorded: u64,
        /// Documents found.
        actual: u64,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::MissingBlockEntry {
                family,
                id,
                fingerprint,
            } => {
                write!(
                    f,
                    "document {id} ({fingerprint}) has no entry in `{family}`"
                )
            }
            Problem::OrphanBlockEntry {
                family,
                id,
                fingerprint,
            } => {
                write!(f, "`{family}` has an entry for document {id} ({fingerprint}) that the documents family does not match")
            }
            Problem::Malformed {
                family,
                key,
                message,
            } => write!(f, "`{family}` key {key}: {message}"),
            Problem::DanglingKey { key, id } => {
                write!(
                    f,
                    "external key {key:?} points to document {id}, which does not carry it"
                )
            }
            Problem::MissingKey { id, key } => {
                write!(
                    f,
                    "document {id} has external key {key:?}, which does not point back to it"
                )
            }
            Problem::DamagedFile { file, message } => {
                write!(f, "table file {file} cannot be read: {message}")
            }
            Problem::Unreadable { message } => write!(f, "the store cannot be read: {message}"),
            Problem::CountMismatch { recorded, actual } => {
                write!(
                    f,
                    "the recorded document count is {recorded}, but there are {actual} documents"
                )
            }
        }
    }
}

/// What [`Store::verify`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Documents in the documents family.
    pub documents: u64,
    /// Entries in each block family.
    pub block_entries: [u64; BLOCKS],
    /// Entries in the keys family.
    pub keys: u64,
    /// The problems, at most [`MAX_LISTED_PROBLEMS`].
    pub problems: Vec<Problem>,
    /// How many problems there were in all.
    pub problem_count: u64,
}

impl VerifyReport {
    /// Whether nothing is wrong.
    pub fn is_clean(&self) -> bool {
        self.problem_count == 0
    }

    fn push(&mut self, p: Problem) {
        self.problem_count += 1;
        if self.problems.len() < MAX_LISTED_PROBLEMS {
            self.problems.push(p);
        }
    }
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} documents, block entries {:?}, {} keys: ",
            self.documents, self.block_entries, self.keys
        )?;
        if self.is_clean() {
            return write!(f, "clean");
        }
        writeln!(f, "{} problems", self.problem_count)?;
        for p in &self.problems {
            writeln!(f, "  {p}")?;
        }
        if self.problem_count > self.problems.len() as u64 {
            writeln!(
                f,
                "  … and {} more",
                self.problem_count - self.problems.len() as u64
            )?;
        }
        Ok(())
    }
}

/// Checks the store of `db` and `postings` (see [`Store::verify`]): inconsistencies are in the
/// report, damage is an error ([`Error::Corruption`]).
///
/// # Errors
/// RocksDB read errors, damage among them.
pub(crate) fn check(db: &Database, postings: &Postings) -> Result<VerifyReport> {
    let snapshot = db.view();
    let mut report = VerifyReport::default();
    let docs = db.docs()?;
    let owners = db.owners()?;
    // Over the documents that decode: their number and the sum of their entry checksums.
    let (mut valid_documents, mut documents_sum) = (0u64, 0u64);

    // Documents and their keys.
    let mut it = docs.cursor(&snapshot);
    it.seek_to_first();
    while let (Some(key), Some(value)) = (it.key(), it.value()) {
        report.documents += 1;
        match (
            keys::decode_doc_key(key),
            codec::decode_document(value, key),
        ) {
            (Some(id), Ok(doc)) => {
                valid_documents += 1;
                documents_sum = documents_sum.wrapping_add(entry_checksum(doc.fingerprint, id));
                if let Some(ext) = &doc.key {
                    // A value that is not an id is reported by the keys pass.
                    let owner = match owners.owner_of(&snapshot, ext.as_bytes()) {
                        Err(Error::Decode { .. }) => None,
                        owner => owner?,
                    };
                    if owner != Some(id) {
                        report.push(Problem::MissingKey {
                            id,
                            key: ext.clone(),
                        });
                    }
                }
            }
            (_, Err(e)) => report.push(Problem::Malformed {
                family: DOCS_FAMILY,
                key: keys::hex(key),
                message: e.to_string(),
            }),
            (None, _) => report.push(Problem::Malformed {
                family: DOCS_FAMILY,
                key: keys::hex(key),
                message: "not an 8-byte id".into(),
            }),
        }
        it.next();
    }
    it.status()?;

    // Keys point to documents that carry them.
    let mut it = owners.cursor(&snapshot);
    it.seek_to_first();
    while let (Some(key), Some(value)) = (it.key(), it.value()) {
        report.keys += 1;
        let ext = String::from_utf8_lossy(key).into_owned();
        match keys::decode_id_value(value) {
            None => report.push(Problem::Malformed {
                family: KEYS_FAMILY,
                key: keys::hex(key),
                message: "value is not an 8-byte id".into(),
            }),
            Some(id) => {
                let doc = snapshot_doc(docs, &snapshot, id)?;
                if doc.and_then(|d| d.key).as_deref() != Some(ext.as_str()) {
                    report.push(Problem::DanglingKey { key: ext, id });
                }
            }
        }
        it.next();
    }
    it.status()?;

    // Each block family: every entry matches its document, and there are as many valid
    // entries as documents. Valid entries have distinct ids (the key is determined by the
    // id and the document's fingerprint), so equal counts mean every document is there.
    for (i, family) in BLOCK_FAMILIES.iter().enumerate() {
        // The fast check: as many entries as documents, with the same checksum.
        let (mut entries, mut sum, mut damaged) = (0u64, 0u64, false);
        postings.for_each_group(
            GroupScan::all(Db::new(db), &snapshot, i),
            SplitCopies::Checked,
            &mut |_, _, _| {
                damaged = true;
                Ok(())
            },
            |_, group| {
                for &(fingerprint, id) in group {
                    entries += 1;
                    sum = sum.wrapping_add(entry_checksum(fingerprint, id));
                }
                Ok::<(), Error>(())
            },
        )?;
        if !damaged
            && entries == valid_documents
            && valid_documents == report.documents
            && sum == documents_sum
        {
            report.block_entries[i] = entries;
            continue;
        }
        let mut valid = 0u64;
        let mut malformed = Vec::new();
        let mut orphans = Vec::new();
        postings.for_each_group(
            GroupScan::all(Db::new(db), &snapshot, i),
            SplitCopies::Checked,
            &mut |family, key, message| {
                malformed.push(Problem::Malformed {
                    family,
                    key: keys::hex(key),
                    message,
                });
                Ok(())
            },
            |_, group| {
                for &(fingerprint, id) in group {
                    report.block_entries[i] += 1;
                    let doc = snapshot_doc(docs, &snapshot, id)?;
                    if doc.map(|d| d.fingerprint) == Some(fingerprint) {
                        valid += 1;
                    } else {
                        orphans.push(Problem::OrphanBlockEntry {
                            family,
                            id,
                            fingerprint,
                        });
                    }
                }
                Ok::<(), Error>(())
            },
        )?;
        report.block_entries[i] += malformed.len() as u64;
        for problem in malformed.into_iter().chain(orphans) {
            report.push(problem);
        }
        if valid < report.documents {
            // Name the missing ones: one group read per document (or run of documents
            // in the same group).
            let (mut group, mut group_value) = (Vec::new(), None);
            let mut it = docs.cursor(&snapshot);
            it.seek_to_first();
            while let (Some(key), Some(value)) = (it.key(), it.value()) {
                if let (Some(id), Ok(doc)) = (
                    keys::decode_doc_key(key),
                    codec::decode_document(value, key),
                ) {
                    let value = doc.fingerprint.block(i);
                    if group_value != Some(value) {
                        postings.read_group(Db::new(db), &snapshot, i, value, &mut group)?;
                        group_value = Some(value);
                    }
                    if !group.contains(&(doc.fingerprint, id)) {
                        report.push(Problem::MissingBlockEntry {
                            family,
                            id,
                            fingerprint: doc.fingerprint,
                        });
                    }
                }
                it.next();
            }
            it.status()?;
        }
    }

    let meta = db.handle(keys::META_FAMILY)?;
    let recorded = match snapshot.get(meta, keys::META_DOC_COUNT)? {
        Some(bytes) => codec::decode_u64(&bytes, keys::META_DOC_COUNT)?,
        None => 0,
    };
    if recorded != report.documents {
        report.push(Problem::CountMismatch {
            recorded,
            actual: report.documents,
        });
    }
    Ok(report)
}

/// Document `id` in `snapshot`, if stored and it decodes (an undecodable document is
/// reported by the documents pass).
fn snapshot_doc(docs: Docs<'_>, snapshot: &View<'_>, id: u64) -> Result<Option<codec::Document>> {
    match docs.get(snapshot, id) {
        Err(Error::Decode { .. }) => Ok(None),
        found => found,
    }
}

/// The report on a store that a read (or an open) found damaged with `error`, from its table
/// files that cannot be read (`damaged`, each with its first error: [`Problem::DamagedFile`]);
/// when no table file is to blame or the store cannot be opened even to look for them (a
/// damaged MANIFEST, `CURRENT` or metadata), the error itself ([`Problem::Unreadable`]).
///
/// # Errors
/// `damaged`'s, other than damage.
pub(crate) fn damage_report(
    damaged: Result<Vec<(String, String)>>,
    error: &str,
) -> Result<VerifyReport> {
    let mut report = VerifyReport::default();
    match damaged {
        Ok(files) => {
            for (file, message) in files {
                report.push(Problem::DamagedFile { file, message });
            }
        }
        Err(Error::Corruption { message, .. }) => report.push(Problem::Unreadable { message }),
        Err(e) => return Err(e),
    }
    if report.is_clean() {
        report.push(Problem::Unreadable {
            message: error.to_string(),
        });
    }
    Ok(report)
}

/// A 64-bit checksum of one block entry; the checksums of a family's entries are summed.
fn entry_checksum(fp: Fingerprint, id: u64) -> u64 {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&fp.0.to_le_bytes());
    bytes[8..].copy_from_slice(&id.to_le_bytes());
    xxhash_rust::xxh3::xxh3_64(&bytes)
}
