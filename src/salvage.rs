//! Salvage: every document that can still be read from a damaged store, for a rebuild.
//!
//! A store whose table files are damaged cannot answer queries (every open mode refuses it, or
//! fails the reads that touch the damage, naming the file). [`Salvage::open`] opens it for
//! reading what is left: RocksDB then opens each table file only when a read needs it, and
//! every family is read stepping over the files that cannot be read. [`Salvage::for_each`]
//! gives every document whose record can be read, and rebuilds the documents whose record was
//! lost from the four block indexes (each holds every document's id and fingerprint) and the
//! keys family (each document's external key). A rebuilt document has its id, fingerprint and
//! key, but no text length or sketch. The store is not written. Memory: 8 bytes per readable
//! record while the block indexes are read, and the rebuilt documents.
//!
//! ```no_run
//! use simhash_store::salvage::Salvage;
//!
//! let salvage = Salvage::open("damaged.db")?;
//! let summary = salvage.for_each(|id, doc, _origin| {
//!     println!("{id} {}", doc.fingerprint);
//!     Ok(())
//! })?;
//! for file in &summary.damaged_files {
//!     eprintln!("cannot read {file}");
//! }
//! eprintln!("{} documents read whole, {} rebuilt", summary.stored, summary.rebuilt);
//! # Ok::<_, simhash_store::Error>(())
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use crate::codec::{self, Document};
use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprint, BLOCKS};
use crate::keys::{self, DOCS_FAMILY, KEYS_FAMILY};
use crate::postings::{GroupScan, SplitCopies};
use crate::storage::{Damage, Reading};
use crate::store::{Store, StoreBuilder};

/// Where a salvaged document came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Its own record, whole.
    Stored,
    /// Rebuilt from the block indexes and the keys: no text length, no sketch.
    Rebuilt,
}

/// What [`Salvage::for_each`] gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SalvageSummary {
    /// Documents read from their own record.
    pub stored: u64,
    /// Documents rebuilt from the block indexes.
    pub rebuilt: u64,
    /// The document count the store recorded: more than `stored + rebuilt` means documents
    /// were lost from every family that holds them.
    pub recorded: u64,
    /// The table files that could not be read (`000012.sst`), each once.
    pub damaged_files: Vec<String>,
}

impl SalvageSummary {
    /// Documents the store recorded that could not be salvaged.
    pub fn missing(&self) -> u64 {
        self.recorded.saturating_sub(self.stored + self.rebuilt)
    }

    fn note(&mut self, damage: Vec<Damage>) {
        for d in damage {
            if !self.damaged_files.contains(&d.file) {
                self.damaged_files.push(d.file);
            }
        }
    }
}

/// A damaged store's readable remains (see the module documentation).
pub struct Salvage {
    store: Store,
}

impl Salvage {
    /// Opens the store at `path` for salvage (read-only; each table file is opened only when
    /// a read needs it). The store should not be written meanwhile.
    ///
    /// # Errors
    /// The store cannot be opened even so: its MANIFEST or `CURRENT` is damaged, or its
    /// settings (the metadata family) cannot be read.
    pub fn open(path: impl AsRef<Path>) -> Result<Salvage> {
        let builder = StoreBuilder {
            read_only: true,
            salvage: true,
            ..StoreBuilder::default()
        };
        Ok(Salvage {
            store: builder.open(path)?,
        })
    }

    /// The store opened for salvage: its settings and format, for an export's header.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Gives every salvaged document to `each`, in id order, and says what was salvaged and
    /// which files could not be read.
    ///
    /// # Errors
    /// A read fails for another reason than damage, or `each` fails.
    pub fn for_each(
        &self,
        mut each: impl FnMut(u64, Document, Origin) -> Result<()>,
    ) -> Result<SalvageSummary> {
        let db = self.store.db();
        let mut summary = SalvageSummary {
            recorded: self.store.len(),
            ..SalvageSummary::default()
        };
        // A first pass lists the records that can be read (ids in order): the block indexes
        // are read only when records are missing.
        let mut readable: Vec<u64> = Vec::new();
        summary.note(db.scan_over_damage(DOCS_FAMILY, |key, value| {
            readable.extend(document(key, value).map(|(id, _)| id));
            Ok(())
        })?);
        let incomplete = (readable.len() as u64) < summary.recorded;
        let mut rebuilt = if incomplete || !summary.damaged_files.is_empty() {
            self.rebuilt(&readable, &mut summary)?
        } else {
            BTreeMap::new()
        };
        drop(readable);
        let damage = db.scan_over_damage(DOCS_FAMILY, |key, value| {
            let Some((id, doc)) = document(key, value) else {
                return Ok(());
            };
            while let Some(entry) = rebuilt.first_entry().filter(|e| *e.key() < id) {
                let (rebuilt_id, doc) = entry.remove_entry();
                summary.rebuilt += 1;
                each(rebuilt_id, doc, Origin::Rebuilt)?;
            }
            rebuilt.remove(&id);
            summary.stored += 1;
            each(id, doc, Origin::Stored)
        })?;
        summary.note(damage);
        for (id, doc) in rebuilt {
            summary.rebuilt += 1;
            each(id, doc, Origin::Rebuilt)?;
        }
        Ok(summary)
    }

    /// The documents in a block index whose record is not among `readable` (sorted), with
    /// their keys.
    fn rebuilt(
        &self,
        readable: &[u64],
        summary: &mut SalvageSummary,
    ) -> Result<BTreeMap<u64, Document>> {
        let store = &self.store;
        let view = store.view();
        let mut fingerprints: BTreeMap<u64, Fingerprint> = BTreeMap::new();
        for i in 0..BLOCKS {
            let mut read = |values: std::ops::Range<u32>| {
                let scan = GroupScan {
                    db: store.blocks_db(),
                    view: &view,
                    family: i,
                    values,
                    reading: Reading::new(),
                };
                store.postings().for_each_group(
                    scan,
                    SplitCopies::Trusted,
                    // A malformed entry is skipped: another family may hold the document.
                    &mut |_, _, _| Ok(()),
                    |_, group| {
                        for &(fingerprint, id) in group {
                            if readable.binary_search(&id).is_err() {
                                fingerprints.insert(id, fingerprint);
                            }
                        }
                        Ok::<(), Error>(())
                    },
                )
            };
            // The whole family at once; where that fails, group by group, so that a damaged
            // file loses only the groups it holds.
            match read(0..1 << 16) {
                Ok(()) => continue,
                Err(Error::Corruption { .. }) => {}
                Err(e) => return Err(e),
            }
            for value in 0..1u32 << 16 {
                match read(value..value + 1) {
                    Ok(()) => {}
                    Err(Error::Corruption { message, .. }) => summary.note(vec![Damage {
                        file: damaged_file(&message),
                        message,
                    }]),
                    Err(e) => return Err(e),
                }
            }
        }
        let mut rebuilt: BTreeMap<u64, Document> = fingerprints
            .into_iter()
            .map(|(id, fingerprint)| {
                let doc = Document {
                    fingerprint,
                    key: None,
                    text_len: None,
                    added: 0,
                    sketch: None,
                };
                (id, doc)
            })
            .collect();
        if !rebuilt.is_empty() {
            let damage = store.db().scan_over_damage(KEYS_FAMILY, |key, value| {
                if let Some(doc) = keys::decode_id_value(value).and_then(|id| rebuilt.get_mut(&id))
                {
                    doc.key = Some(String::from_utf8_lossy(key).into_owned());
                }
                Ok(())
            })?;
            summary.note(damage);
        }
        Ok(rebuilt)
    }
}

/// A document record, if it decodes.
fn document(key: &[u8], value: &[u8]) -> Option<(u64, Document)> {
    let id = keys::decode_doc_key(key)?;
    codec::decode_document(value, key).ok().map(|doc| (id, doc))
}

/// The table file RocksDB's `message` names (`000012.sst`), or the message itself.
fn damaged_file(message: &str) -> String {
    message
        .split(|c: char| c == '/' || c.is_whitespace())
        .find(|w| w.ends_with(".sst") && w.len() > 4)
        .map_or_else(|| message.to_string(), str::to_string)
}
