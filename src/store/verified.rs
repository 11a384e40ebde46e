//! Verified near-duplicates ([`Store::query_verified`], [`Store::verified_pairs`]): the work
//! is `src/verified/`'s, over the query's [`Source`](crate::query::Source) and the pair scan
//! this store lends it.

use super::Store;
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::sketch::Sketch;
use crate::verified::{Verification, VerifiedMatch, VerifiedPairScan};

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
        crate::verified::query(&self.query_source(), fp, sketch, verification)
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

impl Store {
    /// A scan for every pair of stored documents that are verified near-duplicates of each
    /// other: within `verification.k` bits (exactly the pairs of [`Store::pairs`] at that
    /// `k`) with a sketch similarity of at least `verification.min_similarity`. A document
    /// stored without a sketch is in no verified pair.
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
    /// store.insert_text(2, None, &format!("{page} Share this page!"))?;
    /// store.insert_text(3, None, "Bulk loading writes sorted SST files and ingests them.")?;
    /// let pairs = store.verified_pairs(Verification::default()).collect()?;
    /// assert_eq!(pairs.iter().map(|p| (p.a, p.b)).collect::<Vec<_>>(), [(1, 2)]);
    /// # Ok::<_, simhash_store::Error>(())
    /// ```
    pub fn verified_pairs(&self, verification: Verification) -> VerifiedPairScan<'_> {
        VerifiedPairScan::new(
            self.pairs(verification.k),
            self.db(),
            self.require_sketches(),
            verification,
        )
    }
}
