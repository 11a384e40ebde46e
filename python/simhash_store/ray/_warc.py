"""``read_warc``: WARC/WET files to a Ray Dataset through the crate's readers."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, Iterator, Sequence, Union

from ._common import require_ray

if TYPE_CHECKING:
    import pyarrow as pa
    import ray.data


def read_warc(
    paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
    *,
    extract_main_text: bool = True,
    max_doc_bytes: int = 16 * 1024 * 1024,
    strict: bool = False,
    batch_size: int = 1024,
) -> "ray.data.Dataset":
    """The documents of WARC or WET files (plain or gzipped), one Ray task per file: the
    columns and records of :func:`simhash_store.spark.read_warc` (``url``, ``text``,
    ``text_len``, ``path``, ``position``). Globs are expanded on the driver; every file must
    be readable at the same path on every worker.

    >>> from simhash_store.ray import read_warc                       # doctest: +SKIP
    >>> read_warc("crawl/CC-MAIN-*.warc.gz").columns()                # doctest: +SKIP
    ['url', 'text', 'text_len', 'path', 'position']

    Raises:
        FileNotFoundError: a path or glob that names no file.
    """
    require_ray()
    import ray.data

    from ..spark._warc import _expand

    if max_doc_bytes < 1 or batch_size < 1:
        raise ValueError("max_doc_bytes and batch_size must be at least 1")
    files = _expand(paths)
    if not files:
        raise FileNotFoundError(f"no files in {paths!r}")
    names = ray.data.from_items([{"path": f} for f in files], override_num_blocks=len(files))

    def read(batch: Dict[str, Any]) -> Iterator["pa.Table"]:
        import pyarrow as pa

        from .._native import WarcBatches
        from ..spark._warc import _large_strings

        for path in batch["path"].tolist():
            reader = WarcBatches(
                path,
                batch_size=batch_size,
                extract_main_text=extract_main_text,
                max_doc_bytes=max_doc_bytes,
                strict=strict,
            )
            for b in reader:
                n = b["rows"]
                offsets = b["text_offsets"]
                yield pa.table(
                    {
                        "url": _large_strings(n, b, "url").cast(pa.string()),
                        "text": _large_strings(n, b, "text").cast(pa.string()),
                        "text_len": pa.array(offsets[1:] - offsets[:-1]),
                        "path": pa.array([path] * n, type=pa.string()),
                        "position": pa.array(b["position"]),
                    }
                )

    return names.map_batches(read, batch_size=1, batch_format="numpy")
