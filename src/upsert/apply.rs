//! The one translation of an [`UpsertPlan`] into column family writes, for both sinks: a
//! write batch (`Store::insert_batch`, `mod.rs`) and the SST files of a bulk run
//! (`src/bulk/sst/`).
//!
//! Each function writes one family's entries into a [`Sink`] in key order, as an SST file
//! needs (a batch takes any order):
//!
//! - [`keys`]: the plan's `keys` writes, already sorted by key;
//! - [`docs`]: surviving documents (in id order) and deleted ids (sorted), merged by id
//!   (document keys are big-endian ids, so id order is key order);
//! - the block families: a batch gets one delta per entry ([`block_deltas`],
//!   `Packed::put`/`delete`); a bulk run gets its entries sorted and packed as chunks of its
//!   segment (`src/bulk/sst/`, `postings::run_chunks`), which no single write can do.

use super::plan::{Adds, KeyWrite, UpsertPlan};
use crate::codec::{self, DocumentRef};
use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::keys;
use crate::postings::Packed;
use crate::storage::{BatchSink, Sink};

/// Adds whose documents can be written.
pub(crate) trait Documents: Adds {
    /// The id of add `seq` and the document it stores, `added` its time unless the add
    /// carries its own.
    fn document(&self, seq: u32, added: u64) -> Option<(u64, DocumentRef<'_>)>;
}

/// Writes `writes` (a plan's `keys` writes, or a range of them) into the `keys` family.
pub(crate) fn keys<S: Sink>(
    writes: &[KeyWrite],
    adds: &impl Adds,
    sink: &mut S,
) -> std::result::Result<(), S::Error> {
    for write in writes {
        match write {
            KeyWrite::Put(key, id) => sink.put(key.bytes(adds), &keys::id_value(*id))?,
            KeyWrite::Delete(key) => sink.delete(key.bytes(adds))?,
        }
    }
    Ok(())
}

/// Writes survivors `puts` (sequence numbers in id order, a range of the plan's) and
/// deleted ids `deletes` (sorted) into the `docs` family, merged in key order. `now` is the
/// `added` time of a new document; `scratch` holds each encoded document in turn.
pub(crate) fn docs<S: Sink>(
    plan: &UpsertPlan,
    adds: &impl Documents,
    puts: &[u32],
    deletes: &[u64],
    now: u64,
    scratch: &mut Vec<u8>,
    sink: &mut S,
) -> std::result::Result<(), S::Error> {
    let mut d = deletes.iter().peekable();
    for &seq in puts {
        let Some((id, doc)) = adds.document(seq, plan.added(seq, now)) else {
            continue;
        };
        while let Some(&deleted) = d.next_if(|&&deleted| deleted < id) {
            sink.delete(&keys::doc_key(deleted))?;
        }
        codec::encode_document_into(&doc, scratch);
        sink.put(&keys::doc_key(id), scratch)?;
    }
    for &deleted in d {
        sink.delete(&keys::doc_key(deleted))?;
    }
    Ok(())
}

/// Writes the plan's block entries into `batch` as deltas: removals of the entries it
/// deletes, then additions of its survivors'. Returns the fingerprints touched, whose query
/// cache counters the commit updates.
pub(crate) fn block_deltas(
    plan: &UpsertPlan,
    adds: &impl Adds,
    packed: &Packed,
    batch: &mut BatchSink<'_>,
) -> Result<Vec<Fingerprint>> {
    let mut touched = Vec::with_capacity(plan.block_deletes.len() + plan.survivors.len());
    for &(id, fp) in &plan.block_deletes {
        let fp = Fingerprint(fp);
        packed.delete(batch, fp, id)?;
        touched.push(fp);
    }
    for &seq in &plan.survivors {
        let fp = Fingerprint(adds.fingerprint(seq));
        packed.put(batch, fp, adds.id(seq))?;
        touched.push(fp);
    }
    Ok(touched)
}
