//! [`Store::verify`] and the damage report of [`crate::verify::damage_report`]: the work is
//! `src/integrity.rs`'s, over the database and block families this file lends it.

use std::path::Path;

use super::{Store, StoreBuilder};
use crate::error::{Error, Result};
use crate::integrity::{self, VerifyReport};
use crate::keys::ALL_FAMILIES;

impl Store {
    /// Checks the store's invariants on one consistent snapshot: every document is in each of
    /// the four block families under the key its fingerprint gives, nothing else is there,
    /// every external key points to the document that carries it, and the recorded count is
    /// right. Reads the whole store once, sequentially: each block family is checked against
    /// the documents by its count and a 64-bit checksum of its (id, fingerprint) pairs, and
    /// only a family whose count or checksum differs is read again entry by entry (one point
    /// read each) to name the problems.
    ///
    /// Damaged files are problems too: where a read finds damage, the report names every
    /// table file that cannot be read ([`Problem::DamagedFile`](crate::verify::Problem::DamagedFile), found by
    /// [`damage_report`](crate::verify::damage_report)).
    ///
    /// # Errors
    /// RocksDB read errors other than damage. Inconsistencies and damage are not errors:
    /// they are in the report.
    pub fn verify(&self) -> Result<VerifyReport> {
        match integrity::check(self.db(), self.postings()) {
            Err(Error::Corruption { message, .. }) => damage_report(self.path(), &message),
            other => other,
        }
    }
}

/// The report on the store at `path`, which a read (or an open) found damaged with `error`
/// (see [`crate::verify::damage_report`]).
///
/// # Errors
/// A read fails for another reason than damage.
pub(crate) fn damage_report(path: &Path, error: &str) -> Result<VerifyReport> {
    integrity::damage_report(damaged_files(path), error)
}

/// The table files of the store at `path` that cannot be read, each with the first error it
/// gave: every family read whole, stepping over the files that fail, as
/// [`crate::salvage::Salvage`] reads.
///
/// # Errors
/// The store cannot be opened even for salvage (a damaged MANIFEST, `CURRENT` or metadata).
fn damaged_files(path: &Path) -> Result<Vec<(String, String)>> {
    let builder = StoreBuilder {
        read_only: true,
        salvage: true,
        ..StoreBuilder::default()
    };
    let store = builder.open(path)?;
    let mut files: Vec<(String, String)> = Vec::new();
    for family in ALL_FAMILIES {
        for d in store.db().scan_over_damage(family, |_, _| Ok(()))? {
            if !files.iter().any(|(f, _)| *f == d.file) {
                files.push((d.file, d.message));
            }
        }
    }
    Ok(files)
}
