"""``read_warc``: WARC/WET files to a Ray Dataset through the crate's readers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterator

from .._scaleout import Paths, check_warc_options, expand_paths, warc_batches
from ._common import require_ray

if TYPE_CHECKING:
    import pyarrow as pa
    import ray.data


def read_warc(
    paths: Paths,
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

    check_warc_options(max_doc_bytes, batch_size)
    files = expand_paths(paths)
    names = ray.data.from_items([{"path": f} for f in files], override_num_blocks=len(files))

    def read(batch: Dict[str, Any]) -> Iterator["pa.Table"]:
        import pyarrow as pa

        for path in batch["path"].tolist():
            for b in warc_batches(path, batch_size, extract_main_text, max_doc_bytes, strict):
                yield pa.Table.from_batches([b])

    return names.map_batches(read, batch_size=1, batch_format="numpy")
