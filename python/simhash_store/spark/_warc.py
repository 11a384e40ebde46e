"""``read_warc``: WARC/WET files to a DataFrame through the crate's readers."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterator

from .._scaleout import Paths, check_warc_options, expand_paths, warc_batches
from ._common import require_pyspark

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

#: The columns of :func:`read_warc`.
WARC_SCHEMA = "url string, text string, text_len long, path string, position long"


def read_warc(
    spark: "SparkSession",
    paths: Paths,
    *,
    extract_main_text: bool = True,
    max_doc_bytes: int = 16 * 1024 * 1024,
    strict: bool = False,
    batch_size: int = 1024,
) -> "DataFrame":
    """The documents of WARC or WET files (plain or gzipped), one Spark task per file.

    Columns: ``url`` (``WARC-Target-URI``), ``text`` (for HTML, the main text with menus,
    headers, footers and link lists removed unless ``extract_main_text=False``, decoded in its
    declared charset), ``text_len`` (bytes of ``text`` in UTF-8, for
    ``dedup(..., representative="longest", text_len_col="text_len")``), ``path`` (the file)
    and ``position`` (the record's byte offset in the decompressed file). The records are
    those ``simhash-store load`` takes: WARC ``response`` records of 2xx HTML, WET
    ``conversion`` records, ``resource`` records; redirects, images and other records without
    a document are passed over. A bad record (malformed header, undecodable text, truncated
    gzip, over ``max_doc_bytes``) is skipped, or fails the job with ``strict=True``.

    ``paths`` is a path, a glob (``"crawl/*.warc.gz"``) or a list of them; folders are read
    recursively. Globs are expanded on the driver, and every file must be readable at the
    same path on every worker (a shared file system); other formats the crate reads (JSON
    Lines, HTML, text) work too.

    >>> from simhash_store.spark import read_warc                      # doctest: +SKIP
    >>> pages = read_warc(spark, "crawl/CC-MAIN-*.warc.gz")             # doctest: +SKIP
    >>> pages.columns                                                  # doctest: +SKIP
    ['url', 'text', 'text_len', 'path', 'position']

    Raises:
        FileNotFoundError: a path or glob that names no file.
    """
    require_pyspark()
    check_warc_options(max_doc_bytes, batch_size)
    files = expand_paths(paths)
    sc = spark.sparkContext
    names = spark.createDataFrame(
        sc.parallelize([(f,) for f in files], len(files)), "path string"
    )

    def read(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        for batch in batches:
            for path in batch.column("path").to_pylist():
                yield from warc_batches(path, batch_size, extract_main_text, max_doc_bytes, strict)

    return names.mapInArrow(read, WARC_SCHEMA)
