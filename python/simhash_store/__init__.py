"""simhash_store: a persistent, embedded near-duplicate index for text.

64-bit SimHash fingerprints (jieba for Chinese, Unicode words and trigrams for other
scripts) in a four-block RocksDB store: which stored documents are within Hamming distance
``k`` of a new one, exactly, in microseconds; every near-duplicate pair and cluster of a
whole collection. The Rust library ``simhash-store`` does the work; this package calls it
without copying data through Python where it can (numpy arrays in and out) and releases the
interpreter during long calls.

>>> import tempfile, simhash_store
>>> with tempfile.TemporaryDirectory() as path:
...     with simhash_store.Store.open(path) as store:
...         page = "SimHash gives similar texts fingerprints that differ in only a few bits."
...         fp = store.insert_text(1, page, key="https://example.com/a")
...         copy = page + "\\nShare on Facebook"   # a boilerplate line: left out
...         [(m.id, m.key, m.distance) for m in store.query_text(copy)]
[(1, 'https://example.com/a', 0)]

Names: :class:`Simhasher` (text to fingerprints), :class:`Store` (the index),
:func:`distance`, :class:`Match`, :class:`Document`, :class:`Clusters`,
:class:`PostgresIndex` (the index in a PostgreSQL database), the exceptions in
:mod:`simhash_store.errors`, :class:`Client` (a ``simhash-store serve`` over HTTP),
:class:`simhash_store.compat.SimhashIndex` (the PyPI ``simhash``
package's index API) and :mod:`simhash_store.spark` (deduplication on Spark).
"""

from __future__ import annotations

import typing as _typing

from . import _native
from ._native import (
    FORMAT_VERSION,
    MAX_DISTANCE,
    BulkProgress,
    BulkSummary,
    Cluster,
    Clusters,
    Document,
    DocumentIterator,
    Match,
    PairIterator,
    PostgresLoadSummary,
    Simhasher,
    VerifyReport,
    default_settings,
    distance,
)
from .client import Client, ServiceError
from .errors import (
    BadRecordError,
    CancelledError,
    CorruptionError,
    DecodeError,
    DiskFullError,
    Error,
    InvalidArgumentError,
    LockedError,
    NoFeaturesError,
    NoSketchesError,
    NotAStoreError,
    ParseFingerprintError,
    PostgresError,
    ReadOnlyError,
    RocksDbError,
    SettingsMismatchError,
    StoreIOError,
    UnsupportedFormatError,
    WriterBusyError,
)

if _typing.TYPE_CHECKING:
    import os
    from typing import Any, Union

__version__: str = _native.__version__

__all__ = [
    "FORMAT_VERSION",
    "MAX_DISTANCE",
    "BulkProgress",
    "BulkSummary",
    "Client",
    "Cluster",
    "Clusters",
    "Document",
    "DocumentIterator",
    "Match",
    "PairIterator",
    "PostgresIndex",
    "PostgresLoadSummary",
    "Simhasher",
    "Store",
    "VerifyReport",
    "default_settings",
    "distance",
    "to_signed",
    "to_unsigned",
    "Error",
    "ServiceError",
    "BadRecordError",
    "CancelledError",
    "CorruptionError",
    "DecodeError",
    "DiskFullError",
    "InvalidArgumentError",
    "LockedError",
    "NoFeaturesError",
    "NoSketchesError",
    "NotAStoreError",
    "ParseFingerprintError",
    "PostgresError",
    "ReadOnlyError",
    "RocksDbError",
    "SettingsMismatchError",
    "StoreIOError",
    "UnsupportedFormatError",
    "WriterBusyError",
]


class Store(_native.Store):
    __doc__ = _native.Store.__doc__

    @classmethod
    def open(cls, path: Union[str, "os.PathLike[str]"], **options: Any) -> "Store":
        """Opens (or creates) the store at ``path``: the same as ``Store(path, **options)``."""
        return cls(path, **options)

    def pairs_arrow(self, k: int = 3) -> Any:
        """:meth:`pairs_numpy` as a ``pyarrow.Table`` with columns ``a``, ``b``, ``distance``.

        Needs pyarrow (``pip install pyarrow``, or the wheel's ``arrow`` extra); the arrays
        are not copied.
        """
        import pyarrow as pa

        a, b, d = self.pairs_numpy(k)
        return pa.table({"a": a, "b": b, "distance": d})


class PostgresIndex(_native.PostgresIndex):
    __doc__ = _native.PostgresIndex.__doc__

    @classmethod
    def open(cls, url: str, **settings: Any) -> "PostgresIndex":
        """Opens the index in the database ``url`` names, making its tables in an empty
        database: the same as ``PostgresIndex(url, **settings)``."""
        return cls(url, **settings)


def to_signed(fingerprint: int) -> int:
    """The 64 bits of ``fingerprint`` as a signed two's-complement int (Spark's LongType).

    >>> to_signed(2**64 - 1)
    -1
    """
    return fingerprint - (1 << 64) if fingerprint >= 1 << 63 else fingerprint


def to_unsigned(fingerprint: int) -> int:
    """The inverse of :func:`to_signed`.

    >>> to_unsigned(-1) == 2**64 - 1
    True
    """
    return fingerprint + (1 << 64) if fingerprint < 0 else fingerprint
