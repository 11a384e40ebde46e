"""``read_warc``: WARC/WET files to a DataFrame through the crate's readers."""

from __future__ import annotations

import glob
import os
from typing import TYPE_CHECKING, Iterator, List, Sequence, Union

from ._common import require_pyspark

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

#: The columns of :func:`read_warc`.
WARC_SCHEMA = "url string, text string, text_len long, path string, position long"


def _expand(paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]) -> List[str]:
    """Files named by ``paths``: globs expanded, folders read recursively (hidden files
    skipped), in name order."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: List[str] = []
    for p in paths:
        p = os.fspath(p)
        matches = sorted(glob.glob(p)) if glob.has_magic(p) else [p]
        if not matches:
            raise FileNotFoundError(f"no file matches {p!r}")
        for m in matches:
            if os.path.isdir(m):
                for root, dirs, names in os.walk(m):
                    dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                    files.extend(
                        os.path.join(root, n) for n in sorted(names) if not n.startswith(".")
                    )
            elif os.path.exists(m):
                files.append(m)
            else:
                raise FileNotFoundError(f"no such file: {m!r}")
    return [os.path.abspath(f) for f in files]


def read_warc(
    spark: "SparkSession",
    paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
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
    if max_doc_bytes < 1 or batch_size < 1:
        raise ValueError("max_doc_bytes and batch_size must be at least 1")
    files = _expand(paths)
    if not files:
        raise FileNotFoundError(f"no files in {paths!r}")
    sc = spark.sparkContext
    names = spark.createDataFrame(
        sc.parallelize([(f,) for f in files], len(files)), "path string"
    )

    def read(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        import pyarrow as pa

        from .._native import WarcBatches

        for batch in batches:
            for path in batch.column("path").to_pylist():
                reader = WarcBatches(
                    path,
                    batch_size=batch_size,
                    extract_main_text=extract_main_text,
                    max_doc_bytes=max_doc_bytes,
                    strict=strict,
                )
                for b in reader:
                    n = b["rows"]
                    url = _large_strings(n, b, "url")
                    text = _large_strings(n, b, "text")
                    offsets = b["text_offsets"]
                    yield pa.RecordBatch.from_arrays(
                        [
                            url.cast(pa.string()),
                            text.cast(pa.string()),
                            pa.array(offsets[1:] - offsets[:-1]),
                            pa.array([path] * n, type=pa.string()),
                            pa.array(b["position"]),
                        ],
                        names=["url", "text", "text_len", "path", "position"],
                    )

    return names.mapInArrow(read, WARC_SCHEMA)


def _large_strings(n: int, batch: dict, name: str) -> "pa.Array":
    import pyarrow as pa

    return pa.LargeStringArray.from_buffers(
        n,
        pa.py_buffer(batch[f"{name}_offsets"]),
        pa.py_buffer(batch[f"{name}_data"]),
        pa.py_buffer(batch[f"{name}_valid"]),
    )
