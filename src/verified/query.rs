//! Verified queries: the work of [`Store::query_verified`](crate::Store::query_verified) and
//! [`Store::query_text_verified`](crate::Store::query_text_verified).

use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::query::{Source, Strategy};
use crate::sketch::Sketch;
use crate::verified::Verification;

/// One stored document that is a verified near-duplicate of the query.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct VerifiedMatch {
    /// The document id.
    pub id: u64,
    /// Its fingerprint.
    pub fingerprint: Fingerprint,
    /// Hamming distance of its fingerprint to the query's.
    pub distance: u32,
    /// The [`Sketch::similarity`] of its sketch and the query's.
    pub similarity: f64,
    /// Its external key, if it has one.
    pub key: Option<String>,
}

/// The answer of [`Store::query_verified`](crate::Store::query_verified) from `source`, for
/// a store that keeps sketches and a checked `verification`.
///
/// # Errors
/// As [`Store::query`](crate::Store::query).
pub(crate) fn query(
    source: &Source<'_>,
    fp: Fingerprint,
    sketch: &Sketch,
    verification: Verification,
) -> Result<Vec<VerifiedMatch>> {
    let candidates = source.candidates(fp, verification.k, Strategy::Auto)?;
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let docs = source.db.docs()?;
    let mut found = Vec::new();
    for (id, fingerprint, distance) in candidates {
        // One point read per candidate, for its sketch and key together.
        let Some(doc) = docs.get(&source.view, id)? else {
            continue;
        };
        let Some(stored) = doc.sketch else { continue };
        let similarity = stored.similarity(sketch);
        if verification.accepts(distance, similarity) {
            found.push(VerifiedMatch {
                id,
                fingerprint,
                distance,
                similarity,
                key: doc.key,
            });
        }
    }
    Ok(found)
}
