//! Queries ([`Store::query`] and its variants): the work is `src/query.rs`'s.

use rayon::prelude::*;

use super::Store;
use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::query::{Match, Source, Strategy};

impl Store {
    /// Every stored document within Hamming distance `k` of `fp`, sorted by distance then id,
    /// each document once. Exact for every `k`: equal to comparing `fp` with every stored
    /// fingerprint. Reads one consistent snapshot, so a concurrent write is seen whole or not
    /// at all.
    ///
    /// `k = 3` scans four key ranges of about `len() / 65536` keys each, smaller `k` fewer
    /// (one at `k = 0`). Larger `k` also probes neighbouring block values (20 ranges in all
    /// at `k = 4`, 52 at `k = 6`, 68 at `k = 7`), or reads everything when that is cheaper.
    ///
    /// ```
    /// use simhash_store::{Fingerprint, Store};
    /// let dir = tempfile::tempdir()?;
    /// let store = Store::open(dir.path())?;
    /// store.insert(1, Fingerprint(0b1111))?;
    /// store.insert(2, Fingerprint(0b0111))?;
    /// store.insert(3, Fingerprint(u64::MAX))?;
    /// let found = store.query(Fingerprint(0b1111), 3)?;
    /// assert_eq!(found.iter().map(|m| (m.id, m.distance)).collect::<Vec<_>>(), [(1, 0), (2, 1)]);
    /// # Ok::<_, simhash_store::Error>(())
    /// ```
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`](crate::Error::Decode) for a damaged entry.
    pub fn query(&self, fp: Fingerprint, k: u32) -> Result<Vec<Match>> {
        self.query_with(fp, k, Strategy::Auto)
    }

    /// [`Store::query`] with a chosen [`Strategy`], for benchmarks and tests: the answer is
    /// the same for every strategy.
    ///
    /// # Errors
    /// As [`Store::query`].
    pub fn query_with(&self, fp: Fingerprint, k: u32, strategy: Strategy) -> Result<Vec<Match>> {
        self.query_source().query(fp, k, strategy)
    }

    /// Fingerprints `text` with [`Store::simhasher`] and queries it.
    ///
    /// # Errors
    /// [`Error::NoFeatures`](crate::Error::NoFeatures) for a text with nothing to fingerprint; as
    /// [`Store::query`].
    pub fn query_text(&self, text: &str, k: u32) -> Result<Vec<Match>> {
        self.query(self.simhasher().fingerprint(text)?, k)
    }

    /// Answers many queries on all cores (rayon's global pool); results in input order.
    ///
    /// # Errors
    /// The first error of any query.
    pub fn query_batch(&self, fps: &[Fingerprint], k: u32) -> Result<Vec<Vec<Match>>> {
        fps.par_iter().map(|fp| self.query(*fp, k)).collect()
    }

    /// Reads the block families into the query cache ([`crate::StoreBuilder::query_cache_size`])
    /// until it is full or holds every key range, so that queries are fast from the start
    /// instead of after they have touched each range once. Returns the number of ranges
    /// cached (at most 4 x 65,536). About one second per million documents; queries and
    /// writes may run meanwhile.
    ///
    /// Only stores of formats 1 to 6 have a query cache: a store of the packed layout (every
    /// new store) reads its packed chunks faster than the cache would, and this returns 0.
    ///
    /// ```
    /// use simhash_store::{Fingerprint, Store};
    /// let dir = tempfile::tempdir()?;
    /// let store = Store::open(dir.path())?;
    /// store.insert(1, Fingerprint(0xdead_beef))?;
    /// assert_eq!(store.preload_query_cache()?, 0);
    /// assert_eq!(store.query(Fingerprint(0xdead_beef), 3)?.len(), 1);
    /// # Ok::<_, simhash_store::Error>(())
    /// ```
    ///
    /// # Errors
    /// RocksDB read errors; [`Error::Decode`](crate::Error::Decode) for a damaged entry.
    pub fn preload_query_cache(&self) -> Result<u64> {
        self.query_source().preload_cache()
    }

    /// What a query reads: the database, the block families and one consistent view of
    /// them, with what the store knows at that view (see [`Source`]).
    pub(crate) fn query_source(&self) -> Source<'_> {
        // The query cache's epoch is read before the view is taken (src/postings/cache.rs);
        // whether a key may be stored, after it.
        let epoch = self.postings().cache().map_or(0, |c| c.epoch());
        let view = self.view();
        Source {
            db: self.db(),
            postings: self.postings(),
            epoch,
            view,
            documents: self.len(),
            reads: self.reads(),
            may_have_keys: self.may_have_keys(),
        }
    }
}
