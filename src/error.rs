//! The crate's one error type.
//!
//! Every variant carries what a user needs to act on it: the path, the column family, the
//! expected and found values. [`rocksdb::Error`] is only a message string, so it never
//! travels bare: [`Error::RocksDb`] names the operation and the column family it failed on.

use std::path::PathBuf;

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in simhash-store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The text gave no feature to fingerprint: it was empty, or held only whitespace,
    /// punctuation or stop words. Such a text has no meaningful fingerprint; an all-zero one
    /// would collide with every other empty page.
    #[error("the text has no features to fingerprint (empty, or only punctuation, whitespace or stop words)")]
    NoFeatures,

    /// Another process (or another `Store` in this process) holds the store's lock.
    #[error("store at {path} is locked: another process, or another open Store in this process, has it open for writing ({message}); close that one first, or open this store read-only to read beside it")]
    Locked {
        /// The store directory.
        path: PathBuf,
        /// RocksDB's own message.
        message: String,
    },

    /// RocksDB found damaged data: a checksum mismatch, a truncated file, a bad MANIFEST.
    #[error("store at {path} is corrupt ({message}): `simhash-store verify --store {}` names every damaged file; restore the store from a backup, or rebuild it from what can still be read: `simhash-store export --salvage --store {} --output docs.jsonl`, then `simhash-store load docs.jsonl --store NEW`", path.display(), path.display())]
    Corruption {
        /// The store directory.
        path: PathBuf,
        /// RocksDB's message, which names the damaged file.
        message: String,
    },

    /// The disk holding the store is full. The write that failed is not acknowledged
    /// (writes are atomic: all of it is stored or none; where only the final sync failed it
    /// may be there after a reopen), nothing acknowledged before it is lost, and RocksDB
    /// refuses every later write of this open `Store`: free space, then open the store again
    /// (the service does that by itself).
    #[error("the disk holding the store at {path} is full ({message}): this write failed, and nothing written before it is lost; free space, then open the store again and retry the write")]
    DiskFull {
        /// The store directory.
        path: PathBuf,
        /// RocksDB's message, which names the file it was writing.
        message: String,
    },

    /// Any other RocksDB failure: I/O errors, invalid options.
    #[error("RocksDB failed to {operation}{}: {message}", column_family.map(|cf| format!(" in column family `{cf}`")).unwrap_or_default())]
    RocksDb {
        /// What the store was doing, e.g. "write a batch".
        operation: &'static str,
        /// The column family involved, when there is one.
        column_family: Option<&'static str>,
        /// RocksDB's message.
        message: String,
    },

    /// The store was written by a format version this build cannot read.
    #[error("store at {path} has format version {found}, this build reads {supported}: upgrade simhash-store")]
    UnsupportedFormat {
        /// The store directory.
        path: PathBuf,
        /// The version recorded in the store.
        found: u32,
        /// The versions this build reads, e.g. "1..=1".
        supported: String,
    },

    /// The directory exists and holds files but is not a simhash-store store.
    #[error("{path} is not a simhash-store store ({reason})")]
    NotAStore {
        /// The directory.
        path: PathBuf,
        /// What is missing.
        reason: String,
    },

    /// The caller asked for a fingerprint configuration other than the one the store records.
    #[error("store at {path} fingerprints with other settings than requested ({differences}): open it without a configuration to use the stored one, or use a new store (stored: {stored}; requested: {requested})")]
    ConfigMismatch {
        /// The store directory.
        path: PathBuf,
        /// Each setting that differs, by name, with its stored and its requested value.
        differences: String,
        /// The configuration recorded in the store, as JSON.
        stored: String,
        /// The configuration passed to the builder, as JSON.
        requested: String,
    },

    /// The store records a fingerprint setting this build does not know: a newer
    /// simhash-store made it, and fingerprinting without the setting would give other
    /// fingerprints.
    #[error("store at {path} was made with setting `{name}`, which this build does not know: upgrade simhash-store")]
    UnknownSetting {
        /// The store directory.
        path: PathBuf,
        /// The setting's name in the store's settings record.
        name: String,
    },

    /// A built-in word list that the store's fingerprints depend on (stop words, the IDF
    /// table, boilerplate markers) is not the one this build has: the same text would get
    /// another fingerprint now.
    #[error("store at {path} was fingerprinted with a different version of the built-in {list} (content hash {stored} recorded, {current} in this build): new fingerprints would not match the stored ones; load the texts again into a new store with this build, or open this one with the simhash-store that made it")]
    WordListChanged {
        /// The store directory.
        path: PathBuf,
        /// Which list, e.g. "stop-word lists".
        list: &'static str,
        /// The content hash (xxh3-64, hex) the store records, or "none".
        stored: String,
        /// This build's.
        current: String,
    },

    /// A value in the store could not be decoded.
    #[error("undecodable {what} in column family `{column_family}` at key {key}: {message}")]
    Decode {
        /// The family.
        column_family: &'static str,
        /// The key, in hex.
        key: String,
        /// What the value should be.
        what: &'static str,
        /// The decoder's message.
        message: String,
    },

    /// A fingerprint string that is not 1..=16 hex digits.
    #[error(
        "`{input}` is not a 64-bit fingerprint: expected up to 16 hex digits, optionally with 0x"
    )]
    ParseFingerprint {
        /// The input.
        input: String,
    },

    /// A parameter out of range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// A write from the thread whose bulk load of several runs holds the store's write lock
    /// until its `finish`: it would wait for itself.
    #[error("a bulk load of several runs on this thread holds the store's write lock until its `finish`: write after `finish`, or from another thread")]
    BulkLoadInProgress,

    /// An earlier ingestion of this bulk loader failed, and what it left is the next open's
    /// to complete.
    #[error("an earlier ingestion of this bulk loader failed: reopen the store to complete it, then load again")]
    LoaderFailed,

    /// A directory that an operation must create or fill is unusable: not empty, inside the
    /// store it is made from, or in a directory that does not exist.
    #[error("{path} {reason}: choose another directory for {what}")]
    UnusableDestination {
        /// The directory.
        path: PathBuf,
        /// Why, e.g. "is not empty".
        reason: String,
        /// What was to be made there, e.g. "the upgraded store".
        what: &'static str,
    },

    /// A path that an operation creates, and never writes over, exists already.
    #[error("{path} already exists: {what} is made at a new path and never written over an existing one; give another name, or remove or move the old one")]
    DestinationExists {
        /// The path.
        path: PathBuf,
        /// What was to be made there, e.g. "the backup".
        what: &'static str,
    },

    /// Every id is taken: the store holds the largest id there is (2^64-1), so no document
    /// can get an id after it. Ids are never wrapped or reused, since that would overwrite a
    /// stored document: give the documents ids explicitly.
    #[error("store at {path} holds document id 18446744073709551615 (2^64-1), the largest there is, so no new id is left after it: give the documents ids explicitly")]
    NoIdLeft {
        /// The store directory.
        path: PathBuf,
    },

    /// Verified near-duplicates were asked of a store that keeps no sketches: its document
    /// records hold nothing to verify with. Sketches are computed from the texts, so the fix
    /// is to load the texts again into a new store made to keep them.
    #[error("store at {path} keeps no sketches, so it cannot verify near-duplicates: sketches come from the texts, so load them into a new store made with `SimhashConfig::with_sketch(SketchKind::MinHash)`, or ask without verification")]
    NoSketches {
        /// The store directory.
        path: PathBuf,
    },

    /// A read-only open found the store's writer changing its files (flushing, deleting
    /// logs) during every attempt, so the view could have missed recent write batches.
    /// Nothing is wrong with the store: try again, or open it while the writer is idle.
    #[error("store at {path} was changed by its writer during each of {attempts} read-only open attempts (last: {last}), so the view could miss recent write batches: try again, or open it while the writer is idle")]
    WriterBusy {
        /// The store directory.
        path: PathBuf,
        /// How many opens were tried.
        attempts: u32,
        /// What changed during the last one.
        last: String,
    },

    /// The store was opened read-only and a write was attempted.
    #[error("store at {path} is open read-only: open it for writing (`Store::open`) to write")]
    ReadOnly {
        /// The store directory.
        path: PathBuf,
    },

    /// A write to a store of an older format, which this build reads but does not write.
    #[error("store at {path} is of format {found}, which this build reads but does not write (it writes format {current}): copy it into a new store of format {current} with `simhash-store upgrade {path} NEW_DIR` (or replace it with `simhash-store upgrade --in-place {path}`; Store::upgrade in Rust), then write to the new store")]
    LegacyFormat {
        /// The store directory.
        path: PathBuf,
        /// The format version recorded in the store.
        found: u32,
        /// The format this build writes.
        current: u32,
    },

    /// An I/O error outside RocksDB, with the path it concerns (empty when unknown).
    #[error("{operation}{}: {source}", if path.as_os_str().is_empty() { String::new() } else { format!(" {}", path.display()) })]
    Io {
        /// What was being done, e.g. "reading".
        operation: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// The caller stopped the operation (see [`PairScan::stop_when`](crate::dedup::PairScan::stop_when)).
    /// Nothing in the store changed.
    #[error("the operation was cancelled")]
    Cancelled,

    /// A record of an input file that could not be read: the file and the line or byte offset.
    #[error("{path}:{location}: {message}")]
    BadRecord {
        /// The input file (`-` for standard input).
        path: PathBuf,
        /// `line N` or `offset N`.
        location: String,
        /// What is wrong, and what to do.
        message: String,
    },

    /// A PostgreSQL statement or connection failed (feature `postgres`).
    #[error("PostgreSQL failed to {operation}: {message}{}", code.as_ref().map(|c| format!(" (SQLSTATE {c})")).unwrap_or_default())]
    Postgres {
        /// What was being done.
        operation: &'static str,
        /// The server's or the client's message.
        message: String,
        /// The SQLSTATE code, when the server sent one.
        code: Option<String>,
    },

    /// The database holds the index's tables in a schema version this build does not use
    /// (feature `postgres`).
    #[error("database {database} holds simhash-store tables of schema version {found}, this build uses version {supported}: {}", schema_advice(*found, *supported))]
    SchemaVersion {
        /// The database, as its URL without the password.
        database: String,
        /// The version recorded in the database.
        found: i32,
        /// The version this build reads and writes.
        supported: i32,
    },
}

/// What to do about a database of schema version `found` in a build of version `supported`.
fn schema_advice(found: i32, supported: i32) -> &'static str {
    if found > supported {
        "upgrade simhash-store"
    } else {
        "export its documents with the simhash-store that made it (`simhash-store export`) and load them into a new database"
    }
}

impl Error {
    /// Whether this is a database error that retrying later may not meet: the connection
    /// was lost or refused, the server is shutting down or starting, the server reached is
    /// a standby (after a failover, before the client finds the new primary), too many
    /// connections, a serialization failure or a deadlock. Such a write may or may not have
    /// been committed when the COMMIT itself failed: resend it by id or key.
    pub fn is_unavailable(&self) -> bool {
        match self {
            Error::Postgres { code: None, .. } => true,
            Error::Postgres {
                code: Some(code), ..
            } => {
                code.starts_with("08")
                    || code.starts_with("57P")
                    || matches!(
                        code.as_str(),
                        "25006" | "40001" | "40P01" | "53300" | "55P03"
                    )
            }
            _ => false,
        }
    }

    pub(crate) fn io(
        operation: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Error {
        Error::Io {
            operation,
            path: path.into(),
            source,
        }
    }
}

impl From<std::io::Error> for Error {
    /// An I/O error whose path is not known (inside the crate, errors name their path).
    fn from(source: std::io::Error) -> Error {
        Error::Io {
            operation: "I/O error",
            path: PathBuf::new(),
            source,
        }
    }
}
