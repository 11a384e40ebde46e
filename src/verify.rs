//! The store's integrity check ([`Store::verify`](crate::Store::verify)): that the four block
//! families, the documents and the keys agree, and which table files of a damaged store
//! cannot be read. The check itself is `src/integrity.rs`'s; the method is the store's.

use std::path::Path;

use crate::error::Result;

pub use crate::integrity::{Problem, VerifyReport, MAX_LISTED_PROBLEMS};

/// The report on the store at `path`, which a read (or an open) found damaged with `error`:
/// every table file that cannot be read ([`Problem::DamagedFile`]), found by reading every
/// family whole, stepping over the files that fail (as [`crate::salvage`] reads); or, when
/// no table file is to blame or the store cannot be opened even for that (a damaged MANIFEST,
/// `CURRENT` or metadata), the error itself ([`Problem::Unreadable`]).
///
/// # Errors
/// A read fails for another reason than damage.
pub fn damage_report(path: &Path, error: &str) -> Result<VerifyReport> {
    crate::store::damage_report(path, error)
}
