//! Verified queries: [`Store::query_verified`] and [`Store::query_text_verified`].

use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::query::Strategy;
use crate::sketch::Sketch;
use crate::store::Store;
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

impl Store {
    /// Every stored document within `verification.k` bits of `fp` whose sketch has a
    /// similarity of at least `verification.min_similarity` with `sketch`, sorted by distance
    /// then id. The candidates are exactly those of [`Store::query`] at that `k`; a candidate
    /// stored without a sketch (added as a bare fingerprint) is never kept. One consistent
    /// snapshot, as [`Store::query`].
    ///
    /// ```
    /// use simhash_store::{SimhashConfig, Store};
    /// use simhash_store::sketch::SketchKind;
    /// use simhash_store::verified::Verification;
    /// let dir = tempfile::tempdir()?;
    /// let config = SimhashConfig::default().with_sketch(SketchKind::MinHash);
    /// let store = Store::builder().simhash_config(config).open(dir.path())?;
    /// let page = "Near-duplicate detection finds web pages that are almost the same: the same \
    ///             article under two addresses, a copy with another advert, a reposted story.";
    /// store.insert_text(1, None, page)?;
    /// let copy = format!("{page} Share this page!");
    /// let (fp, sketch) = store.simhasher().fingerprint_and_sketch(&copy)?;
    /// let found = store.query_verified(fp, &sketch.unwrap(), Verification::default())?;
    /// assert_eq!(found.len(), 1);
    /// assert!(found[0].similarity > 0.8);
    /// # Ok::<_, simhash_store::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::NoSketches`] if the store keeps no sketches; [`Error::InvalidArgument`] for a
    /// [`Verification`] out of range; as [`Store::query`].
    pub fn query_verified(
        &self,
        fp: Fingerprint,
        sketch: &Sketch,
        verification: Verification,
    ) -> Result<Vec<VerifiedMatch>> {
        self.require_sketches()?;
        verification.check()?;
        let source = self.query_source();
        let candidates = source.candidates(fp, verification.k, Strategy::Auto)?;
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let docs = self.db().docs()?;
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

    /// Fingerprints and sketches `text` with [`Store::simhasher`] and queries it with
    /// [`Store::query_verified`].
    ///
    /// # Errors
    /// [`Error::NoSketches`] if the store keeps no sketches; [`Error::NoFeatures`] for a text
    /// with nothing to fingerprint; as [`Store::query_verified`].
    pub fn query_text_verified(
        &self,
        text: &str,
        verification: Verification,
    ) -> Result<Vec<VerifiedMatch>> {
        self.require_sketches()?;
        let (fp, sketch) = self.simhasher().fingerprint_and_sketch(text)?;
        let sketch = sketch.ok_or_else(|| Error::NoSketches {
            path: self.path().to_path_buf(),
        })?;
        self.query_verified(fp, &sketch, verification)
    }
}
