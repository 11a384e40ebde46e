//! One SST file of a run: its options and its writer.

use std::path::Path;

use rocksdb::SstFileWriter;

use super::kept_pages::{self, ChunkPages, KeptPages};
use crate::error::{Error, Result};
use crate::keys;
use crate::storage::families::{sst_file_options, Destination};

/// Why filling an SST file stopped: opaque above the storage layer, which makes one with
/// [`FillError::empty`] or from the crate's [`Error`]; [`write_file`] names RocksDB's errors
/// with the file and family.
pub(crate) struct FillError(Stop);

/// The reasons of a [`FillError`].
enum Stop {
    Rocks(rocksdb::Error),
    Other(Error),
    /// Nothing was put: no file is made.
    Empty,
}

impl FillError {
    /// Nothing was put: [`write_file`] makes no file and returns `None`.
    pub(crate) fn empty() -> FillError {
        FillError(Stop::Empty)
    }
}

impl From<rocksdb::Error> for FillError {
    fn from(e: rocksdb::Error) -> Self {
        FillError(Stop::Rocks(e))
    }
}

impl From<Error> for FillError {
    fn from(e: Error) -> Self {
        FillError(Stop::Other(e))
    }
}

pub(crate) type FillResult = std::result::Result<(), FillError>;

/// Which pages of an SST file being written stay in the page cache ([`KeptPages`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// None: RocksDB's writer drops them all.
    Nothing,
    /// All, for a file the caller then reads back ([`super::read_into_page_cache`] reads only
    /// the tail the writer dropped last).
    All,
    /// The chunks and not their ids (`keys::ids_key`), which a query reads only for a
    /// match: a block family file of a store larger than the memory. Read back once the file
    /// is finished ([`ChunkPages`]).
    Chunks,
}

impl Keep {
    /// [`Keep::All`] if `kept`, else [`Keep::Nothing`].
    pub(crate) fn all_if(kept: bool) -> Keep {
        if kept {
            Keep::All
        } else {
            Keep::Nothing
        }
    }
}

fn rocks(operation: &'static str, family: &'static str, path: &Path, e: rocksdb::Error) -> Error {
    crate::storage::error(operation, Some(family), path, e)
}

impl FillError {
    /// The crate's error for a fill of `family`'s file at `path` that failed in `operation`;
    /// `None` when nothing was put ([`FillError::empty`]).
    pub(crate) fn into_error(
        self,
        operation: &'static str,
        family: &'static str,
        path: &Path,
    ) -> Option<Error> {
        match self.0 {
            Stop::Rocks(e) => Some(rocks(operation, family, path, e)),
            Stop::Other(e) => Some(e),
            Stop::Empty => None,
        }
    }
}

/// Where the keys an [`SstWriter`] has put are, for [`Keep::Chunks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdsRange {
    /// Not in ids.
    Outside,
    /// In ids, from the start of the block being filled.
    Skipping,
    /// In ids that began in a block holding other keys: the range begins with the next
    /// block.
    Waiting,
}

/// RocksDB's SST writer, and the pages of its file kept in the page cache if asked
/// ([`KeptPages`]).
pub(crate) struct SstWriter<'a> {
    inner: SstFileWriter<'a>,
    kept: Option<KeptPages>,
    /// Where the chunks are ([`Keep::Chunks`]) ...
    chunks: Option<ChunkPages>,
    /// ... and where the keys put are.
    ids: IdsRange,
    /// Bytes put since the file's size was last looked at.
    unchecked: usize,
}

impl SstWriter<'_> {
    /// Adds `key` with `value`; keys come in increasing order.
    pub(crate) fn put(
        &mut self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> std::result::Result<(), rocksdb::Error> {
        let (key, value) = (key.as_ref(), value.as_ref());
        if self.chunks.is_some() {
            let before = self.inner.file_size();
            self.inner.put(key, value)?;
            self.mark_ids(keys::is_ids_key(key), before);
        } else {
            self.inner.put(key, value)?;
        }
        self.wrote(key.len() + value.len());
        Ok(())
    }

    /// Starts or ends a range of ids where the keys put turn from chunks to ids or back,
    /// given the file's size `before` the put. RocksDB writes a data block out when the next
    /// key does not fit in it, so right after a put the file's size is where the block
    /// holding that key begins. A range begins with the first block that holds ids only: the
    /// block of the first ids key if that put wrote the block before it out, else the next
    /// block written; it ends where the block of the next other key begins.
    fn mark_ids(&mut self, is_ids: bool, before: u64) {
        let at = self.inner.file_size();
        let wrote_block = at > before;
        let Some(chunks) = &mut self.chunks else {
            return;
        };
        match (self.ids, is_ids) {
            (IdsRange::Outside, true) | (IdsRange::Waiting, true) if wrote_block => {
                chunks.ids_from(at);
                self.ids = IdsRange::Skipping;
            }
            (IdsRange::Outside, true) => self.ids = IdsRange::Waiting,
            (IdsRange::Skipping, false) => {
                chunks.ids_until(at);
                self.ids = IdsRange::Outside;
            }
            (IdsRange::Waiting, false) => self.ids = IdsRange::Outside,
            _ => {}
        }
    }

    /// Adds a deletion tombstone for `key`, in the same order as puts.
    pub(crate) fn delete(
        &mut self,
        key: impl AsRef<[u8]>,
    ) -> std::result::Result<(), rocksdb::Error> {
        let key = key.as_ref();
        self.inner.delete(key)?;
        self.wrote(key.len());
        Ok(())
    }

    /// Counts `bytes` put, and keeps the file's new pages every [`kept_pages::CHECK_EVERY`].
    #[inline]
    fn wrote(&mut self, bytes: usize) {
        if let Some(kept) = &mut self.kept {
            self.unchecked += bytes;
            if self.unchecked >= kept_pages::CHECK_EVERY {
                self.unchecked = 0;
                if !kept.keep_up() {
                    self.kept = None;
                }
            }
        }
    }
}

impl crate::storage::Sink for SstWriter<'_> {
    type Error = rocksdb::Error;

    #[inline]
    fn put(&mut self, key: &[u8], value: &[u8]) -> std::result::Result<(), rocksdb::Error> {
        SstWriter::put(self, key, value)
    }

    #[inline]
    fn delete(&mut self, key: &[u8]) -> std::result::Result<(), rocksdb::Error> {
        SstWriter::delete(self, key)
    }
}

/// Writes one SST file of `family` at `path`; `fill` adds the entries in key order. Returns
/// the file size, or `None` (and no file) if `fill` added nothing. `keep` says which of the
/// file's pages stay in the page cache as they are written ([`KeptPages`]).
pub(crate) fn write_file(
    family: &'static str,
    path: &Path,
    dest: Destination,
    count: usize,
    keep: Keep,
    fill: impl FnOnce(&mut SstWriter<'_>) -> FillResult,
) -> Result<Option<u64>> {
    if count == 0 {
        return Ok(None);
    }
    let opts = sst_file_options(family, dest);
    let inner = SstFileWriter::create(&opts);
    inner
        .open(path)
        .map_err(|e| rocks("create an SST file", family, path, e))?;
    let mut writer = SstWriter {
        inner,
        kept: (keep == Keep::All).then(|| KeptPages::open(path)).flatten(),
        chunks: (keep == Keep::Chunks).then(ChunkPages::default),
        ids: IdsRange::Outside,
        unchecked: 0,
    };
    match fill(&mut writer) {
        Ok(()) => {}
        Err(FillError(Stop::Rocks(e))) => return Err(rocks("write an SST file", family, path, e)),
        Err(FillError(Stop::Other(e))) => return Err(e),
        Err(FillError(Stop::Empty)) => {
            drop(writer);
            let _ = std::fs::remove_file(path);
            return Ok(None);
        }
    }
    // The pages stay mapped while the writer syncs the file and drops its pages; then the
    // mappings go and the pages stay in the cache.
    let SstWriter {
        mut inner,
        kept,
        chunks,
        ..
    } = writer;
    inner
        .finish()
        .map_err(|e| rocks("finish an SST file", family, path, e))?;
    drop(kept);
    if let Some(chunks) = chunks {
        chunks.read_back(path);
    }
    let size = std::fs::metadata(path)
        .map_err(|e| Error::io("reading the size of", path, e))?
        .len();
    Ok(Some(size))
}
