"""Type stubs and documentation of the Rust extension ``simhash_store._native``.

Everything here is re-exported by :mod:`simhash_store`; import it from there. The examples
are run by ``python/tests/test_docs.py``.
"""

import os
from typing import Any, Callable, Dict, Iterable, Iterator, List, Literal, Mapping, Optional, Tuple, Union, final

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

__version__: str
FORMAT_VERSION: int
"""The store format version this build writes."""
MAX_DISTANCE: int
"""The largest meaningful ``k``: 64."""
BLOCKS: int
"""Block families of a fingerprint: 4."""
BLOCK_BITS: int
"""Bits per block: 16."""
BLOCK_VALUES: int
"""Values of one block, groups per family: 65536."""
GROUPS: int
"""Groups over all families (``BLOCKS * BLOCK_VALUES``); group ``family * BLOCK_VALUES + value``."""

__all__ = [
    "BLOCKS",
    "BLOCK_BITS",
    "BLOCK_VALUES",
    "BulkProgress",
    "BulkSummary",
    "Cluster",
    "Clusters",
    "Document",
    "DocumentIterator",
    "FORMAT_VERSION",
    "GROUPS",
    "MAX_DISTANCE",
    "Match",
    "PairIterator",
    "PartitionPlan",
    "PostgresIndex",
    "PostgresLoadSummary",
    "Simhasher",
    "Store",
    "VerifyReport",
    "WarcBatches",
    "__version__",
    "default_settings",
    "distance",
    "group_counts",
    "spark_components",
    "spark_fingerprint_utf8",
    "task_pairs",
]

_IntArrayLike = Union[npt.NDArray[np.uint64], npt.NDArray[np.int64], Iterable[int]]
_Tf = Literal["raw", "length-adaptive", "sqrt", "log", "binary"]
_Idf = Literal["none", "jieba"]
_SketchKind = Literal["None", "MinHash"]
_Durability = Literal["sync", "buffered", "no-wal"]
_RepresentativeRule = Literal["lowest-id", "longest", "first-loaded"]

def distance(a: int, b: int) -> int:
    """Hamming distance between two 64-bit fingerprints.

    >>> from simhash_store import distance
    >>> distance(0b1011, 0b0001)
    2
    """

def default_settings() -> Dict[str, Any]:
    """The default fingerprint settings, as the keyword arguments of :class:`Simhasher`.

    >>> from simhash_store import default_settings
    >>> default_settings()["word_char_shingles"]
    3
    """

@final
class Simhasher:
    """Turns text into 64-bit SimHash fingerprints.

    Keyword arguments are the fields of the Rust ``SimhashConfig``, each defaulting to the
    Rust default (chosen on a labelled Chinese and English near-duplicate set):

    - ``normalize=True``: fold full-width forms, ligatures and look-alike letters to ASCII;
    - ``hmm=True``: let jieba join unknown characters into new words;
    - ``stop_words=True``: drop the built-in Chinese and English stop words;
    - ``words=True``: words are features;
    - ``word_shingles=0``: runs of this many words as features too (0, or 2..=8);
    - ``cjk_char_shingles=1``: runs of this many ideographs (0, or 1..=16);
    - ``word_char_shingles=3``: character n-grams of other scripts' words (0, or 1..=16);
    - ``word_char_shingles_within_words=True``: n-grams within each word, not across words;
    - ``tf="raw"``: ``"raw"``, ``"length-adaptive"``, ``"sqrt"``, ``"log"`` or ``"binary"``;
    - ``idf="none"``: or ``"jieba"`` for jieba's IDF table;
    - ``seed=0``: seed of the xxh3 feature hash;
    - ``drop_boilerplate=True``: leave out copyright, share-button and similar short lines;
    - ``latin_count_pieces=4``, ``latin_count_pieces_ratio=2``: count pieces of frequent
      non-CJK features, so that deleted text shows;
    - ``sketch="None"``: ``"MinHash"`` for a store that keeps a 64-byte sketch per document
      and answers :meth:`Store.query_text_verified` (it does not change fingerprints).

    Fingerprints equal those of the Rust library and the ``simhash-store`` command for the
    same settings. A Simhasher is immutable, thread-safe and picklable (by its settings).

    >>> from simhash_store import Simhasher, distance
    >>> h = Simhasher()
    >>> a = h.fingerprint("The quick brown fox jumps over the lazy dog near the river bank.")
    >>> b = h.fingerprint("The quick brown fox jumps over the lazy dog near the river bank!")
    >>> distance(a, b)
    0
    >>> Simhasher(seed=7, tf="sqrt")
    Simhasher(seed=7, tf='sqrt')
    """

    def __new__(
        cls,
        *,
        normalize: bool = ...,
        hmm: bool = ...,
        stop_words: bool = ...,
        words: bool = ...,
        word_shingles: int = ...,
        cjk_char_shingles: int = ...,
        word_char_shingles: int = ...,
        tf: _Tf = ...,
        idf: _Idf = ...,
        seed: int = ...,
        drop_boilerplate: bool = ...,
        word_char_shingles_within_words: bool = ...,
        latin_count_pieces: int = ...,
        latin_count_pieces_ratio: int = ...,
        sketch: _SketchKind = ...,
    ) -> Simhasher: ...
    def fingerprint(self, text: str) -> int:
        """The fingerprint of ``text``, an int in ``0..2**64-1``.

        Raises :class:`~simhash_store.NoFeaturesError` for a text with nothing to
        fingerprint (empty, only punctuation or stop words) and ``TypeError`` for a non-str.

        >>> from simhash_store import Simhasher
        >>> 0 <= Simhasher().fingerprint("北京今天下雨了，气温比昨天低五度。") < 2**64
        True
        """
    def fingerprint_many(
        self, texts: Iterable[str], *, on_empty: Literal["raise", "zero"] = "raise"
    ) -> npt.NDArray[np.uint64]:
        """The fingerprints of ``texts`` as a uint64 array, computed on all cores with the
        interpreter released (Ctrl-C stops it).

        A text without features raises :class:`~simhash_store.NoFeaturesError` (its index in a
        note), or gives 0 with ``on_empty="zero"``.

        >>> from simhash_store import Simhasher
        >>> fps = Simhasher().fingerprint_many(["first page text", "second page text", ""], on_empty="zero")
        >>> fps.dtype, len(fps), int(fps[2])
        (dtype('uint64'), 3, 0)
        """
    @property
    def settings(self) -> Dict[str, Any]:
        """The settings, as keyword arguments: ``Simhasher(**h.settings) == h``."""

@final
class Match:
    """A stored document within the queried distance. Query results are sorted by
    distance, then id."""

    id: int
    key: Optional[str]
    fingerprint: int
    distance: int
    def __new__(cls, id: int, fingerprint: int, distance: int, key: Optional[str] = None) -> Match: ...

@final
class Document:
    """What the store holds for one document."""

    id: int
    fingerprint: int
    key: Optional[str]
    text_len: Optional[int]
    """Length in bytes of the text it was fingerprinted from, when known."""
    added: int
    """When it was stored, in microseconds since the Unix epoch."""

@final
class VerifyReport:
    """What :meth:`Store.verify` found. True (``bool(report)``) when clean."""

    documents: int
    block_entries: List[int]
    keys: int
    problems: List[str]
    """The first problems found, described (at most 100)."""
    problem_count: int
    @property
    def is_clean(self) -> bool: ...
    def __bool__(self) -> bool: ...

@final
class BulkProgress:
    """A progress report of a bulk load, passed to the ``progress`` callable."""

    phase: Literal["adding", "writing", "ingesting", "merging", "done"]
    documents: int
    bytes: int
    rate: float
    """Documents per second so far."""
    runs: int
    elapsed: float
    """Seconds since the load began."""

@final
class BulkSummary:
    """What a finished bulk load did (``str()`` gives one line)."""

    added: int
    replaced: int
    removed: int
    superseded: int
    skipped: int
    """Texts without features, not stored."""
    bytes: int
    sst_bytes: int
    runs: int
    elapsed: float

@final
class PairIterator(Iterator[Tuple[int, int, int]]):
    """``(a, b, distance)`` with ``a < b``, each pair once, in no particular order, as the
    scan finds them on a background thread. ``close()`` (or dropping it) stops the scan."""

    def __next__(self) -> Tuple[int, int, int]: ...
    def close(self) -> None: ...

@final
class DocumentIterator(Iterator[Tuple[int, int, Optional[str]]]):
    """``(id, fingerprint, key)`` of every document, in id order. ``close()`` (or dropping it)
    stops reading."""

    def __next__(self) -> Tuple[int, int, Optional[str]]: ...
    def close(self) -> None: ...

@final
class Cluster:
    """One cluster of near-duplicates: ``id`` is its lowest member id."""

    id: int
    representative: int
    members: List[int]
    def __len__(self) -> int: ...

@final
class Clusters:
    """The clusters of near-duplicates of a store, sorted by id (documents without a
    near-duplicate are in none), with one representative kept per cluster.

    >>> import tempfile, simhash_store
    >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
    ...     store.insert_many([1, 2, 3], [0b1111, 0b0111, 2**64 - 1])
    ...     clusters = store.clusters(k=3)
    ...     [(c.id, c.members) for c in clusters], clusters.drop_ids().tolist()
    ([(1, [1, 2])], [2])
    """

    k: int
    documents: int
    """Documents in some cluster."""
    pairs: int
    per_distance: List[int]
    """``per_distance[d]``: pairs at distance ``d``."""
    representative: _RepresentativeRule
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Cluster]: ...
    def __getitem__(self, i: int, /) -> Cluster: ...
    def drop_ids(self) -> npt.NDArray[np.uint64]:
        """Every member that is not its cluster's representative, sorted: the documents to drop."""
    def cluster_of(self, id: int) -> Optional[Cluster]: ...
    def key(self, id: int) -> Optional[str]:
        """The external key of member ``id``."""
    def size_distribution(self) -> List[Tuple[int, int]]:
        """``(size, clusters of that size)``, by size."""
    def to_numpy(self) -> Dict[str, np.ndarray]:
        """Arrays ``id``, ``cluster``, ``representative`` (uint64) and ``keep`` (bool), one
        row per clustered document, sorted by id: the rows of ``simhash-store dedup``'s
        ``clusters.jsonl``."""

@disjoint_base
class Store:
    """A near-duplicate index in a directory (RocksDB with one column family per 16-bit
    block of the fingerprint). ``Store.open(path)`` creates or opens it.

    Options (keyword only):

    - ``durability="buffered"``: ``"sync"`` (nothing acknowledged is lost, even on power
      loss), ``"buffered"`` (a killed process loses nothing acknowledged; power loss the
      last seconds) or ``"no-wal"`` (writes since the last flush are lost on a crash);
    - ``read_only=False``: open beside a writing process;
    - ``cache_size``: RocksDB's block cache, in bytes;
    - ``query_cache_size``: the query cache in bytes, of a store of format 6 or older (256 MiB
      by default, 0 for none; a store of formats 7 and 8 reads its packed chunks without one);
    - ``concurrent_reads``: read a query's groups at once on eight I/O threads
      (``None``, the default: when the store's files exceed half the memory available, that
      is, when queries read from disk; chosen at open and after each bulk load);
    - ``mmap_reads``: read the store's files through memory maps instead of positioned reads
      (``None``, the default: when they fit in half the memory available as the store is
      opened, where a fresh query takes about 0.6 times as long; from disk it is 3 to 10 times
      slower; a new store is read without them);
    - any :class:`Simhasher` setting: the fingerprint settings of a *new* store; an existing
      store records its own and raises :class:`~simhash_store.SettingsMismatchError` if they
      differ.

    One process writes a store at a time; many Python threads can share one ``Store``, and
    long calls release the interpreter. Use it as a context manager, or call ``close()``.

    >>> import tempfile, simhash_store
    >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
    ...     store.insert(1, 0x0123_4567_89ab_cdef, key="https://example.com/a")
    ...     store.insert(2, 0x0123_4567_89ab_cdee)
    ...     [(m.id, m.distance) for m in store.query(0x0123_4567_89ab_cdef, k=1)]
    [(1, 0), (2, 1)]
    """

    def __new__(
        cls,
        path: Union[str, "os.PathLike[str]"],
        *,
        durability: _Durability = "buffered",
        read_only: bool = False,
        cache_size: Optional[int] = None,
        query_cache_size: Optional[int] = None,
        concurrent_reads: Optional[bool] = None,
        mmap_reads: Optional[bool] = None,
        **settings: Any,
    ) -> Store: ...
    def close(self) -> None:
        """Closes the store (calls running on other threads finish first). Idempotent."""
    def __enter__(self) -> "Store": ...
    def __exit__(self, *exc: object) -> bool: ...
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> str: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def durability(self) -> _Durability: ...
    @property
    def format_version(self) -> int:
        """The on-disk format version: 9 (packed posting blocks, crowded groups split) for a
        store this version created; an older store keeps its own until ``simhash-store
        upgrade`` converts it."""
    @property
    def simhasher(self) -> Simhasher:
        """The fingerprinter with the settings the store records."""
    def __len__(self) -> int:
        """The number of documents."""
    def __contains__(self, item: object, /) -> bool:
        """``id in store`` for an int id, ``key in store`` for a str external key."""
    def insert(self, id: int, fingerprint: int, key: Optional[str] = None) -> None:
        """Stores document ``id``; an upsert: a stored ``id`` is replaced, and a document
        that carried ``key`` before loses it (and is removed). Atomic and durable as the
        store's ``durability`` says."""
    def insert_text(self, id: int, text: str, key: Optional[str] = None) -> int:
        """Fingerprints ``text`` with :attr:`simhasher`, stores it like :meth:`insert` and
        returns the fingerprint."""
    def insert_many(
        self, ids: _IntArrayLike, fingerprints: _IntArrayLike, keys: Optional[Iterable[Optional[str]]] = None
    ) -> None:
        """Inserts many documents, in atomic writes of 131,072 documents each (one write for
        fewer): a crash or an error part-way leaves the writes before it stored. Contiguous
        uint64 arrays are read in place, a slice at a time; int64 fingerprint arrays are read
        as their two's-complement bits (as Spark, Arrow and Parquet store them). For
        millions, :meth:`bulk_load_fingerprints` is faster."""
    def remove(self, id: int) -> bool:
        """Removes document ``id``; whether it was stored."""
    def remove_key(self, key: str) -> Optional[int]:
        """Removes the document with external key ``key``; its id, if there was one."""
    def get(self, id: int) -> Optional[int]:
        """The fingerprint of document ``id``."""
    def document(self, id: int) -> Optional[Document]:
        """Everything stored for document ``id``."""
    def id_for_key(self, key: str) -> Optional[int]:
        """The id of the document with external key ``key``."""
    def next_id(self) -> int:
        """One more than the largest stored id (0 for an empty store). Raises
        ``InvalidArgumentError`` if the store holds id 2**64-1: no id is left after it, and ids
        never wrap to a stored one."""
    def assign_id(self, key: Optional[str] = None) -> int:
        """The id a document that gives none is stored under: the id of the document holding
        external key ``key``, else the next free id (as ``simhash-store load`` and the service
        assign them). Raises ``InvalidArgumentError`` when a new id is needed and none is left."""
    def documents(self) -> DocumentIterator:
        """``(id, fingerprint, key)`` of every document, in id order, streamed from one snapshot
        (later writes are not seen)."""
    def documents_numpy(self) -> Tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
        """The ids and fingerprints of every document, in id order, as two uint64 arrays."""
    def query(self, fingerprint: int, k: int = 3) -> List[Match]:
        """The stored documents within Hamming distance ``k`` (0..=64) of ``fingerprint``,
        sorted by distance, then id: exactly what a brute-force scan finds."""
    def query_text(self, text: str, k: int = 3) -> List[Match]:
        """:meth:`query` of the fingerprint of ``text``.

        >>> import tempfile, simhash_store
        >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
        ...     _ = store.insert_text(7, "Rust storage engines keep sorted runs of keys on disk.")
        ...     [m.id for m in store.query_text("Rust storage engines keep sorted runs of keys on disk!")]
        [7]
        """
    def query_text_verified(
        self, text: str, k: int = 8, min_similarity: float = 0.75
    ) -> List[Tuple[Match, float]]:
        """Verified near-duplicates of ``text``, in a store opened with ``sketch="MinHash"``:
        the stored documents within ``k`` bits whose sketch has a similarity of at least
        ``min_similarity`` with the text's, as ``(match, similarity)`` pairs sorted by
        distance, then id.

        >>> import tempfile, simhash_store
        >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path, sketch="MinHash") as store:
        ...     _ = store.insert_text(7, "Rust storage engines keep sorted runs of keys on disk, and merge them.")
        ...     [(m.id, s) for m, s in store.query_text_verified("Rust storage engines keep sorted runs of keys on disk, and merge them.")]
        [(7, 1.0)]
        """
    def query_many(self, fingerprints: _IntArrayLike, k: int = 3) -> List[List[Match]]:
        """:meth:`query` of each fingerprint, on all cores; results in input order."""
    def insert_if_new(self, id: int, fingerprint: int, k: int = 3, key: Optional[str] = None) -> List[Match]:
        """Stores the document only if nothing stored is within ``k``, atomically (no
        concurrent insert slips in between). Returns the near-duplicates that kept it out:
        an empty list means it was stored.

        >>> import tempfile, simhash_store
        >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
        ...     store.insert_if_new(1, 0b1111), [m.id for m in store.insert_if_new(2, 0b0111)]
        ([], [1])
        """
    def insert_many_if_new(
        self,
        ids: _IntArrayLike,
        fingerprints: _IntArrayLike,
        k: int = 3,
        keys: Optional[Iterable[Optional[str]]] = None,
    ) -> List[List[Match]]:
        """:meth:`insert_if_new` of each document, in order, each decided against the store and
        the documents stored before it here; committed in atomic writes of 131,072 documents
        each (one write for fewer). Returns, per document, the near-duplicates that kept it
        out: an empty list means it was stored. Arrays are read as :meth:`insert_many` reads
        them.

        >>> import tempfile, simhash_store
        >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
        ...     [[m.id for m in found] for found in store.insert_many_if_new([1, 2, 3], [0b1111, 0b0111, 1 << 40])]
        [[], [1], []]
        """
    def insert_text_if_new(self, id: int, text: str, k: int = 3, key: Optional[str] = None) -> List[Match]:
        """:meth:`insert_if_new` of the fingerprint of ``text``."""
    def bulk_load(
        self,
        records: Iterable[Union[Tuple[int, Optional[str], Union[str, int]], Mapping[str, Any]]],
        *,
        progress: Union[bool, Callable[[BulkProgress], None], None] = None,
        memory_budget: Optional[int] = None,
    ) -> BulkSummary:
        """Loads many documents through the Rust bulk loader: texts fingerprinted on all
        cores, sorted runs written as SST files and ingested (much faster than inserts).

        ``records`` are ``(id, key, text)`` tuples (``key`` may be None; an int instead of
        the text is a fingerprint) or dicts with ``id``, optional ``key`` and ``text`` or
        ``fingerprint``. The same upserts as :meth:`insert`; texts without features are
        skipped and counted. ``progress=True`` draws a progress line on standard error; a
        callable gets :class:`BulkProgress` reports. ``memory_budget`` bounds the bytes held
        before a run is written (by default a third of the memory available, with no upper bound).

        Ctrl-C (or an exception from ``records``) stops the load: runs already ingested stay,
        the store stays consistent, and loading the same records again completes it.

        >>> import tempfile, simhash_store
        >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
        ...     summary = store.bulk_load([(1, "a", "first crawled page about storage"),
        ...                                {"id": 2, "key": "b", "text": "second page about word segmentation"},
        ...                                (3, None, "  ,.  ")])
        ...     (summary.added, summary.skipped, len(store))
        (2, 1, 2)
        """
    def bulk_load_fingerprints(
        self,
        ids: _IntArrayLike,
        fingerprints: _IntArrayLike,
        keys: Optional[Iterable[Optional[str]]] = None,
        *,
        progress: Union[bool, Callable[[BulkProgress], None], None] = None,
        memory_budget: Optional[int] = None,
    ) -> BulkSummary:
        """:meth:`bulk_load` of precomputed fingerprints from arrays (for example the
        ``id``, ``fingerprint`` and ``key`` columns of a Spark job's Parquet output).

        Contiguous numpy ``uint64`` arrays are read in place, a slice at a time, so memory
        holds the arrays, the loader's ``memory_budget`` and the block cache: 100M
        fingerprints need about 1.6 GB of arrays plus the budget. ``int64`` fingerprints are read
        as their two's-complement bits; other sequences are copied once."""
    def pairs(self, k: int = 3) -> PairIterator:
        """Every pair of stored documents within ``k``: ``(a, b, distance)``, ``a < b``, each
        once, streamed as the scan (one pass per block family, all cores) finds them.

        >>> import tempfile, simhash_store
        >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
        ...     store.insert_many([1, 2, 3], [0b1111, 0b0111, 2**64 - 1])
        ...     sorted(store.pairs(k=3))
        [(1, 2, 1)]
        """
    def pairs_numpy(
        self, k: int = 3, *, progress: Union[bool, Callable[[int, int], None], None] = None
    ) -> Tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.uint8]]:
        """Every pair within ``k`` as three arrays ``a``, ``b``, ``distance``, sorted by
        ``(a, b)``: for millions of pairs. ``progress=True`` draws a progress line on
        standard error; a callable gets ``(keys scanned, keys in all)`` ten times a second."""
    def clusters(
        self,
        k: int = 3,
        representative: _RepresentativeRule = "lowest-id",
        *,
        progress: Union[bool, Callable[[int, int], None], None] = None,
    ) -> Clusters:
        """The connected components of the pairs within ``k``, each keeping one
        representative: ``"lowest-id"``, ``"longest"`` (longest text, ties to the lowest id)
        or ``"first-loaded"``, as ``simhash-store dedup --representative``. ``progress`` as
        in :meth:`pairs_numpy`."""
    def verified_pairs(
        self,
        k: int = 8,
        min_similarity: float = 0.75,
        *,
        progress: Union[bool, Callable[[int, int], None], None] = None,
    ) -> List[Tuple[int, int, int, float]]:
        """Every pair of verified near-duplicates: within ``k`` bits (default 8) with a sketch
        similarity of at least ``min_similarity`` (default 0.75), as ``(a, b, distance,
        similarity)`` tuples sorted by ``(a, b)``. Needs a store made with
        ``sketch="MinHash"`` (else :class:`~simhash_store.NoSketchesError`); documents stored
        without a sketch are in no verified pair. ``progress`` as in :meth:`pairs_numpy`.

        >>> import tempfile, simhash_store
        >>> page = "Rust storage engines keep sorted runs of keys on disk and merge them in the background."
        >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path, sketch="MinHash") as store:
        ...     _ = store.insert_text(1, page)
        ...     _ = store.insert_text(2, page + " Share this page.")
        ...     _ = store.insert_text(3, "A recipe for green tea ice cream with fresh matcha and cream.")
        ...     [(a, b) for a, b, distance, similarity in store.verified_pairs()]
        [(1, 2)]
        """
    def verified_pairs_numpy(
        self,
        k: int = 8,
        min_similarity: float = 0.75,
        *,
        progress: Union[bool, Callable[[int, int], None], None] = None,
    ) -> Tuple[
        npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.uint8], npt.NDArray[np.float64]
    ]:
        """:meth:`verified_pairs` as four arrays ``a``, ``b`` (uint64), ``distance`` (uint8)
        and ``similarity`` (float64), sorted by ``(a, b)``: for millions of pairs."""
    def verified_clusters(
        self,
        k: int = 8,
        min_similarity: float = 0.75,
        representative: _RepresentativeRule = "lowest-id",
        *,
        progress: Union[bool, Callable[[int, int], None], None] = None,
    ) -> Clusters:
        """The clusters of verified near-duplicates (the connected components of
        :meth:`verified_pairs`), each keeping one representative as in :meth:`clusters`.

        >>> import tempfile, simhash_store
        >>> page = "Rust storage engines keep sorted runs of keys on disk and merge them in the background."
        >>> with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path, sketch="MinHash") as store:
        ...     _ = store.insert_text(1, page)
        ...     _ = store.insert_text(2, page + " Share this page.")
        ...     clusters = store.verified_clusters()
        ...     [(c.id, c.members) for c in clusters], clusters.drop_ids().tolist()
        ([(1, [1, 2])], [2])
        """
    def verify(self) -> VerifyReport:
        """Checks that every document is in all four block families and nothing else is."""
    def flush(self) -> None:
        """Writes memtables to disk (what ``durability="no-wal"`` needs to keep writes)."""
    def compact(self) -> None:
        """Compacts the store: in a store of format 8 or 9, folds single writes and earlier bulk loads
        into one set of packed chunks per block value, then compacts every column family
        (smaller, faster to query after many single writes, several loads or removes)."""
    def backup(self, dest: Union[str, "os.PathLike[str]"]) -> Dict[str, Any]:
        """Writes a consistent copy of the store into ``dest``, a new directory (its parent must
        exist), while the store stays open: other threads' queries go on, and writes wait only while
        the memtables are flushed and the store's files hard-linked (a fraction of a second). The
        copy is a store of its own: open, verify or serve it; to restore, use its directory in place
        of the original. On the store's file system its table files are hard links (no extra space
        until the store compacts them away); elsewhere they are then copied, while writes go on. It
        is made in a hidden directory beside ``dest`` and renamed once complete, so an interrupted
        backup leaves no ``dest``.

        Returns ``{"path": str, "documents": int}``: every write made before the call is in it.
        Raises ``InvalidArgumentError`` if ``dest`` exists or lies inside the store, and
        ``ReadOnlyError`` for a store opened read-only."""
    def preload_query_cache(self) -> int:
        """Fills the query cache from the block families; the number of key ranges cached. Only
        stores of format 6 or older have a query cache: for a store of format 7 or 8 this is 0."""
    def disk_usage(self) -> Dict[str, int]:
        """Bytes on disk per column family."""
    def stats(self, top: int = 5) -> Dict[str, Any]:
        """How the documents spread over the groups of the four block families, and what that
        costs a query (one pass over the documents), as a dict:

        - ``documents``; ``format_version``, the store's on-disk format; ``disk_bytes``, the
          bytes of its live SST files (``disk_usage`` summed);
        - ``blocks``: per block family, ``family``, ``largest`` (the ``top`` largest groups,
          ``(block value, documents)``), ``max_share`` (the largest group's share of the
          documents), ``shared_block_factor`` (how much more often two documents share the
          block's value than two uniformly random fingerprints: about 1 for those),
          ``expected_scan`` (the entries of the family a new query drawn like the documents
          scans, on average; a group written split counts about 4/4096 of itself) and
          ``split_groups`` (how many groups are written split, format 9);
        - ``expected_scan_per_query``: the four together, what a ``k <= 3`` query scans;
          ``uniform_scan_per_query``: the same for uniformly random fingerprints
          (``4 * documents / 65536``); ``scan_vs_uniform``: their ratio."""

# The array functions of `simhash_store.spark` and `simhash_store.ray` (python/src/kernels.rs):
# internal, called on workers with the columns of Arrow batches. Use those modules instead.

def spark_fingerprint_utf8(
    hasher: Simhasher,
    offsets: Union[npt.NDArray[np.int32], npt.NDArray[np.int64]],
    data: npt.NDArray[np.uint8],
    valid: npt.NDArray[np.bool_],
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]: ...
def group_counts(fingerprints: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]: ...
@disjoint_base
class PostgresIndex:
    """The near-duplicate index in a PostgreSQL database, shared by any number of processes:
    the same answers as a :class:`Store` directory. ``PostgresIndex.open(url)`` opens it,
    making its tables in an empty database.

    ``url`` is ``postgres://user:password@host:port/database`` (or ``postgresql://``, or
    ``host=... dbname=...``); several hosts with ``target_session_attrs=read-write`` reach
    the primary of a replicated cluster. Keyword arguments are :class:`Simhasher` settings
    for a *new* index; an existing one records its own and raises
    :class:`~simhash_store.SettingsMismatchError` if they differ.

    Writes from all processes apply one after another (each transaction takes the index's
    writer lock), so :meth:`insert_if_new` never admits two near-duplicates sent at once.
    Calls release the interpreter while the database works; many threads can share one
    index (it keeps a pool of up to 16 connections). Use it as a context manager, or call
    ``close()``. Failures of the server or the connection raise
    :class:`~simhash_store.PostgresError`.

    >>> import simhash_store
    >>> with simhash_store.PostgresIndex.open("postgres://app@db.example/dedup") as index:  # doctest: +SKIP
    ...     index.insert(1, 0x0123_4567_89ab_cdef, key="https://example.com/a")
    ...     [(m.id, m.key, m.distance) for m in index.query(0x0123_4567_89ab_cdee, k=1)]
    [(1, 'https://example.com/a', 1)]
    """

    def __new__(cls, url: str, **settings: Any) -> PostgresIndex: ...
    def close(self) -> None:
        """Closes the index's connections (calls running on other threads finish first).
        Idempotent."""
    def __enter__(self) -> "PostgresIndex": ...
    def __exit__(self, *exc: object) -> bool: ...
    @property
    def closed(self) -> bool: ...
    @property
    def database(self) -> str:
        """The database, as a URL without user or password."""
    @property
    def simhasher(self) -> Simhasher:
        """The fingerprinter with the settings the index records."""
    def __len__(self) -> int:
        """The number of documents."""
    def insert(self, id: int, fingerprint: int, key: Optional[str] = None) -> None:
        """Stores document ``id`` (an upsert, as :meth:`Store.insert`), in one transaction."""
    def insert_if_new(self, id: int, fingerprint: int, k: int = 3, key: Optional[str] = None) -> List[Match]:
        """Stores the document only if nothing stored is within ``k``: the check and the insert
        hold the index's writer lock together, so two near-duplicates sent at once, from any
        processes, are never both stored. Returns the near-duplicates that kept it out: an
        empty list means it was stored."""
    def get(self, id: int) -> Optional[int]:
        """The fingerprint of document ``id``."""
    def id_for_key(self, key: str) -> Optional[int]:
        """The id of the document with external key ``key``."""
    def query(self, fingerprint: int, k: int = 3) -> List[Match]:
        """The stored documents within Hamming distance ``k`` (0..=64) of ``fingerprint``,
        sorted by distance, then id: exactly what a brute-force scan finds."""
    def query_text(self, text: str, k: int = 3) -> List[Match]:
        """:meth:`query` of the fingerprint of ``text``, made with the recorded settings."""
    def query_many(self, fingerprints: _IntArrayLike, k: int = 3) -> List[List[Match]]:
        """:meth:`query` of each fingerprint (a list of ints, or a numpy ``uint64`` or
        ``int64`` array, read as the fingerprints' bits), two statements per 1,024 of them;
        results in input order."""
    def bulk_load_fingerprints(
        self,
        ids: _IntArrayLike,
        fingerprints: _IntArrayLike,
        keys: Optional[Iterable[Optional[str]]] = None,
        *,
        batch_size: int = 1000000,
    ) -> PostgresLoadSummary:
        """Loads precomputed fingerprints as ``simhash-store load --postgres`` does: every
        ``batch_size`` documents are one transaction that copies the new documents in
        (binary COPY) and packs their entries into the groups in this process: into this
        load's parts of recent batches, merged as a binary counter carries, so a batch does
        not rewrite the groups whole. Larger batches load faster, leave fewer parts per
        group and hold more memory (a few hundred bytes
        a document). Arrays are read as :meth:`Store.bulk_load_fingerprints` reads them.
        Documents are upserts by id and key, so loading the same ones again stores none twice.

        A load that stops (an error, a lost server, Ctrl-C) leaves the batches before it in
        the index and nothing of the one in flight; the error says how many; calling again
        with the same documents finishes the load.

        >>> import numpy as np, simhash_store
        >>> with simhash_store.PostgresIndex.open("postgres://app@db.example/dedup") as index:  # doctest: +SKIP
        ...     summary = index.bulk_load_fingerprints(np.array([1, 2, 2**63], dtype=np.uint64),
        ...                                            np.array([0xff, 0xfe, 2**64 - 1], dtype=np.uint64))
        ...     (summary.added, len(index), [m.id for m in index.query(0xff, k=1)])
        (3, 3, [1, 2])
        """

@final
class PostgresLoadSummary:
    """What :meth:`PostgresIndex.bulk_load_fingerprints` did (``str()`` gives one line)."""

    added: int
    """Documents stored that were not in the index before."""
    replaced: int
    """Documents stored that replaced a stored document with the same id or key."""
    removed: int
    """Stored documents removed because a loaded document took their key."""
    superseded: int
    """Documents superseded within the load: a later one had the same id or key."""
    documents: int
    """Documents given, in the batches committed."""
    batches: int
    """Transactions committed."""
    elapsed: float
    """Seconds."""

@final
class PartitionPlan:
    def __new__(
        cls,
        counts: npt.NDArray[np.uint64],
        k: int,
        chunk_size: int,
        new_counts: Optional[npt.NDArray[np.uint64]] = None,
    ) -> PartitionPlan: ...
    @property
    def k(self) -> int: ...
    def split_groups(self) -> Tuple[int, int]: ...
    def explode(
        self,
        ids: npt.NDArray[np.int64],
        fingerprints: npt.NDArray[np.uint64],
        old: Optional[npt.NDArray[np.bool_]] = None,
    ) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8], npt.NDArray[np.uint64], npt.NDArray[np.int64]]: ...
    def __reduce__(self) -> Any: ...
def task_pairs(
    task: npt.NDArray[np.int64],
    side: npt.NDArray[np.uint8],
    fingerprint: npt.NDArray[np.uint64],
    id: npt.NDArray[np.int64],
    k: int,
    last: bool,
) -> Dict[str, Any]: ...
def spark_components(
    a: npt.NDArray[np.int64], b: npt.NDArray[np.int64]
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
@final
class WarcBatches(Iterator[Dict[str, Any]]):
    def __new__(
        cls,
        path: Union[str, "os.PathLike[str]"],
        *,
        batch_size: int = 1024,
        extract_main_text: bool = True,
        max_doc_bytes: int = ...,
        strict: bool = False,
    ) -> WarcBatches: ...
    def __next__(self) -> Dict[str, Any]: ...
    @property
    def bad(self) -> int: ...
    @property
    def skipped(self) -> int: ...
