//! Deduplication ([`Store::pairs`], [`Clusters::choose_representatives`]): the work is
//! `src/dedup/`'s, over the narrow [`ScanSource`] and the documents this file lends it.

use super::Store;
use crate::dedup::{Clusters, PairScan, Representative, ScanSource};
use crate::error::Result;

impl Store {
    /// A scan for every pair of stored documents within Hamming distance `k` of each other,
    /// each pair once: one sequential pass over each block family instead of a query per
    /// document. Run it with [`PairScan::for_each`], [`PairScan::collect`] or
    /// [`PairScan::clusters`].
    ///
    /// ```
    /// use simhash_store::{Fingerprint, Pair, Store};
    /// let dir = tempfile::tempdir()?;
    /// let store = Store::open(dir.path())?;
    /// store.insert(1, Fingerprint(0xffff_0000_0000_0000))?;
    /// store.insert(2, Fingerprint(0xffff_0000_0000_0003))?;
    /// store.insert(3, Fingerprint(0x0000_ffff_ffff_ffff))?;
    /// assert_eq!(store.pairs(3).collect()?, [Pair { a: 1, b: 2, distance: 2 }]);
    ///
    /// let (clusters, stats) = store.pairs(3).clusters()?;
    /// assert_eq!((clusters.len(), stats.pairs), (1, 1));
    /// assert_eq!(clusters.drop_ids(), [2]);
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// ```
    pub fn pairs(&self, k: u32) -> PairScan<'_> {
        PairScan::new(self.scan_source(), k)
    }
}

impl Store {
    /// What a pair scan reads (see [`ScanSource`]).
    pub(crate) fn scan_source(&self) -> ScanSource<'_> {
        ScanSource {
            path: self.path(),
            db: self.db(),
            postings: self.postings(),
            documents: &self.doc_count,
        }
    }
}

impl Clusters {
    /// Reads the stored document of every member (in batches), records its external key
    /// (see [`Clusters::key`]) and picks each cluster's representative by `rule`. A member
    /// removed since the scan counts as having no text length and as loaded last.
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`](crate::Error::Decode) for a damaged document.
    pub fn choose_representatives(&mut self, store: &Store, rule: Representative) -> Result<()> {
        self.choose_representatives_in(&store.db().docs()?, rule)
    }
}
