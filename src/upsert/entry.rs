//! [`Entry`], a document to store, and [`Entries`], a batch of them as the upsert planner
//! and [`apply`](super::apply) read it; [`check_key`], the one check of an external key.

use super::apply::Documents;
use super::plan::Adds;
use crate::codec::DocumentRef;
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::keys::{self, MAX_EXTERNAL_KEY_LEN};
use crate::sketch::Sketch;

/// Checks the external key of document `id` ([`keys::external_key_fits`]).
pub(crate) fn check_key(id: u64, key: &str) -> Result<()> {
    if !keys::external_key_fits(key) {
        return Err(Error::InvalidArgument(format!(
            "document {id}: an external key must have 1..={MAX_EXTERNAL_KEY_LEN} bytes, this one has {}",
            key.len()
        )));
    }
    Ok(())
}

/// A document to store: its id, fingerprint and optional external key, text length and
/// [`Sketch`] (kept only by a store that keeps sketches).
///
/// ```
/// use simhash_store::{Entry, Fingerprint};
/// let e = Entry::new(7, Fingerprint(0xabc)).with_key("https://example.com/a").with_text_len(1234);
/// assert_eq!(e.key.as_deref(), Some("https://example.com/a"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The document id, chosen by the caller.
    pub id: u64,
    /// Its fingerprint.
    pub fingerprint: Fingerprint,
    /// Its external key (URL, file path): unique in the store.
    pub key: Option<String>,
    /// The length in bytes of its text, when known.
    pub text_len: Option<u64>,
    /// Its sketch, for a store that keeps them ([`Simhasher::sketch`](crate::Simhasher::sketch)).
    pub sketch: Option<Sketch>,
}

impl Entry {
    /// An entry with no key.
    pub fn new(id: u64, fingerprint: Fingerprint) -> Entry {
        Entry {
            id,
            fingerprint,
            key: None,
            text_len: None,
            sketch: None,
        }
    }

    /// Sets the external key.
    pub fn with_key(mut self, key: impl Into<String>) -> Entry {
        self.key = Some(key.into());
        self
    }

    /// Sets the text length.
    pub fn with_text_len(mut self, len: u64) -> Entry {
        self.text_len = Some(len);
        self
    }

    /// Sets the sketch.
    pub fn with_sketch(mut self, sketch: Sketch) -> Entry {
        self.sketch = Some(sketch);
        self
    }
}

/// The entries of one batch, as the upsert planner reads them.
pub(crate) struct Entries {
    entries: Vec<Entry>,
    ascending: bool,
    keyed: bool,
}

impl Entries {
    /// Collects `entries`, checking their keys, and their sketches with `check_sketch` (the
    /// backend's: whether it keeps sketches).
    pub(crate) fn new(
        entries: impl IntoIterator<Item = Entry>,
        check_sketch: impl Fn(&Entry) -> Result<()>,
    ) -> Result<Entries> {
        let entries: Vec<Entry> = entries.into_iter().collect();
        let mut keyed = false;
        for e in &entries {
            check_sketch(e)?;
            if let Some(key) = &e.key {
                check_key(e.id, key)?;
                keyed = true;
            }
        }
        let ascending = entries.windows(2).all(|w| w[0].id < w[1].id);
        Ok(Entries {
            entries,
            ascending,
            keyed,
        })
    }

    /// One entry of a batch, planned on its own: `keyed` is the batch's, so that the planner
    /// reads keys whenever any entry of the batch has one.
    pub(crate) fn one(entry: Entry, keyed: bool) -> Entries {
        Entries {
            entries: vec![entry],
            ascending: true,
            keyed,
        }
    }

    /// No entries: a plan of removals only.
    pub(crate) fn none() -> Entries {
        Entries {
            entries: Vec::new(),
            ascending: true,
            keyed: false,
        }
    }

    /// Whether any entry has an external key.
    pub(crate) fn keyed(&self) -> bool {
        self.keyed
    }

    /// Add `seq`, the entry at that index.
    pub(crate) fn get(&self, seq: u32) -> Option<&Entry> {
        self.entries.get(seq as usize)
    }

    /// The entries, in order.
    pub(crate) fn into_entries(self) -> Vec<Entry> {
        self.entries
    }
}

impl Adds for Entries {
    fn len(&self) -> usize {
        self.entries.len()
    }

    fn id(&self, seq: u32) -> u64 {
        self.entries.get(seq as usize).map_or(0, |e| e.id)
    }

    fn fingerprint(&self, seq: u32) -> u64 {
        self.entries
            .get(seq as usize)
            .map_or(0, |e| e.fingerprint.0)
    }

    fn key(&self, seq: u32) -> Option<&[u8]> {
        self.entries
            .get(seq as usize)
            .and_then(|e| e.key.as_deref())
            .map(str::as_bytes)
    }

    fn ids_ascending(&self) -> bool {
        self.ascending
    }

    fn has_keys(&self) -> bool {
        self.keyed
    }
}

impl Documents for Entries {
    fn document(&self, seq: u32, added: u64) -> Option<(u64, DocumentRef<'_>)> {
        let entry = self.entries.get(seq as usize)?;
        let doc = DocumentRef {
            fingerprint: entry.fingerprint,
            key: entry.key.as_deref(),
            text_len: entry.text_len,
            added,
            sketch: entry.sketch.as_ref(),
        };
        Some((entry.id, doc))
    }
}
