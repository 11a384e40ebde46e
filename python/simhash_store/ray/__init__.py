"""Deduplication on Ray Data, with exactly the answer of one machine.

The same functions as :mod:`simhash_store.spark`, name for name, on Ray Datasets; every
step runs the Rust code of the single-machine store on Arrow batches (``map_batches``),
never one Python call per row, and the pair stage runs the crate's partition planner, as
the Spark job does:

- :func:`read_warc`: WARC/WET files to a Dataset (``url``, ``text``, ...), one task per file,
  through the crate's readers.
- :func:`fingerprints`: adds the 64-bit SimHash fingerprint of a text column, as Arrow
  ``uint64`` (null for a text without features).
- :func:`dedup`: every pair within Hamming distance ``k``, the clusters and the documents to
  drop: exactly what ``Store.pairs(k)``, ``Store.clusters(k)`` and ``simhash-store dedup``
  give for the same documents.
- :func:`dedup_against`: a new dump against an earlier one, with the rule of
  :func:`simhash_store.spark.dedup_against`.
- ``python -m simhash_store.ray load-parquet OUT/ --store DIR`` (or ``--postgres URL``)
  (:func:`load_parquet`): a Ray result (Parquet with ``id``, ``key``, ``fingerprint``) into a
  store, or into the index in PostgreSQL, for the online index.

Needs the ``ray`` extra: ``pip install "simhash_store-*.whl[ray]"`` (``ray[data]``, pyarrow), and
the package installed on every worker. ``docs/scale-out.md`` shows a run end to end.

>>> import ray                                                    # doctest: +SKIP
>>> from simhash_store import ray as ssr                          # doctest: +SKIP
>>> pages = ssr.fingerprints(ssr.read_warc("crawl/*.warc.gz"))    # doctest: +SKIP
>>> pages = pages.add_column("id", lambda t: ...)                 # doctest: +SKIP
>>> result = ssr.dedup(pages, k=3)                                # doctest: +SKIP
>>> result.drop.write_parquet("drop/")                            # doctest: +SKIP
"""

from __future__ import annotations

from .._scaleout import PairStats, load_parquet
from ._dedup import DedupResult, dedup, dedup_against
from ._fingerprints import fingerprints
from ._warc import read_warc

__all__ = [
    "DedupResult",
    "PairStats",
    "dedup",
    "dedup_against",
    "fingerprints",
    "load_parquet",
    "read_warc",
]
