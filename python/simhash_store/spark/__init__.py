"""Deduplication on Spark, with exactly the answer of one machine.

A corpus too big for one machine goes from WARC files to the documents to drop on an
existing Spark cluster; every step runs the Rust code of the single-machine store on Arrow
batches (``mapInArrow``), never one Python call per row:

- :func:`read_warc`: WARC/WET files to a DataFrame (``url``, ``text``, ...), one task per file,
  through the crate's readers (HTML reduced to its main text, charsets decoded).
- :func:`fingerprints`: adds the 64-bit SimHash fingerprint of a text column, as a signed
  ``LongType`` (the 64 bits in two's complement: :func:`simhash_store.to_signed`).
- :func:`dedup`: every pair within Hamming distance ``k``, the clusters (connected
  components) and the documents to drop: exactly what ``Store.pairs(k)``,
  ``Store.clusters(k)`` and ``simhash-store dedup`` give for the same documents, for any
  ``k`` in ``0..=64``.
- :func:`dedup_against`: a new dump against an earlier one.
- ``python -m simhash_store.spark load-parquet OUT/ --store DIR`` (or ``--postgres URL``)
  (:func:`load_parquet`): a Spark result (Parquet with ``id``, ``key``, ``fingerprint``)
  into a store, or into the index in PostgreSQL, for the online index.

Needs the ``spark`` extra: ``pip install "simhash_store-*.whl[spark]"`` (pyspark, pyarrow, pandas),
and the package installed on every worker. ``docs/scale-out.md`` says how to run it on a
cluster and what it costs.

>>> from pyspark.sql import SparkSession, functions as F       # doctest: +SKIP
>>> from simhash_store import spark as sss                     # doctest: +SKIP
>>> spark = SparkSession.builder.getOrCreate()                 # doctest: +SKIP
>>> pages = sss.read_warc(spark, "crawl/*.warc.gz")            # doctest: +SKIP
>>> pages = sss.fingerprints(pages.withColumn("id", F.monotonically_increasing_id()))  # doctest: +SKIP
>>> result = sss.dedup(pages, k=3)                             # doctest: +SKIP
>>> result.drop.write.parquet("drop/")                         # doctest: +SKIP
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
