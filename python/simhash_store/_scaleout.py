"""What :mod:`simhash_store.spark` and :mod:`simhash_store.ray` share, independent of the
engine: the checks of their arguments, the defaults, the pair stage's partition hash and
statistics, the shape of a dedup result, the reading of WARC files into Arrow batches and the
loading of a Parquet result into a store.

Everything here is private; the engines' modules export the public names.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Generic,
    Iterator,
    List,
    Optional,
    Sequence,
    TypeVar,
    Union,
)

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

#: A Spark DataFrame or a Ray Dataset.
Frame = TypeVar("Frame")

#: Paths as :func:`read_warc` takes them: a path, a glob, or a list of them.
Paths = Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]

#: The representative rules, as the command line spells them (``first-loaded`` needs the
#: store's load order and is not available on a cluster).
REPRESENTATIVES = ("lowest-id", "longest")

#: Default documents per chunk of a group: a group (documents sharing a block value) larger
#: than this is split, and its chunks compared pair by pair in separate tasks.
DEFAULT_CHUNK_SIZE = 20_000

#: Default number of pairs up to which clusters are computed on the driver (union-find in
#: Rust, about 40 bytes per pair); above it, distributed.
DEFAULT_DRIVER_EDGE_BUDGET = 10_000_000


def check_k(k: Any) -> int:
    """``k`` as an int in 0..=64, or a TypeError/ValueError that says so."""
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"k must be an int in 0..=64, not {type(k).__name__}")
    if not 0 <= k <= 64:
        raise ValueError(f"k must be in 0..=64, got {k}")
    return k


def check_representative(representative: Any, text_len_col: Optional[str], engine: str) -> str:
    """``representative`` checked against :data:`REPRESENTATIVES` (and ``"longest"``
    against a text length column); ``engine`` names the engine in the messages."""
    if representative == "first-loaded":
        raise ValueError(
            f'representative "first-loaded" needs the load order of a store: on {engine} use '
            '"lowest-id" or "longest" (with a text length column)'
        )
    if representative not in REPRESENTATIVES:
        raise ValueError(
            f"unknown representative {representative!r}: expected one of "
            + ", ".join(REPRESENTATIVES)
        )
    if representative == "longest" and not text_len_col:
        raise ValueError('representative "longest" needs text_len_col, the text length column')
    return str(representative)


def check_tuning(chunk_size: Any, partitions: Any, budget: Any) -> None:
    """TypeError/ValueError for a ``chunk_size``, ``partitions`` (None: the engine's
    default) or ``driver_edge_budget`` that is not an int in range."""
    for name, value, low in (
        ("chunk_size", chunk_size, 1),
        ("partitions", partitions, 1),
        ("driver_edge_budget", budget, 0),
    ):
        if value is None and name == "partitions":
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        if value < low:
            raise ValueError(f"{name} must be at least {low}, got {value}")


def partition_of(task: "np.ndarray", n: int) -> "np.ndarray":
    """The pair-stage partition (0..n, int64) of each task key (a multiplicative hash)."""
    import numpy as np

    mixed = task.view(np.uint64) * np.uint64(0x9E37_79B9_7F4A_7C15)
    return ((mixed >> np.uint64(32)) % np.uint64(n)).astype(np.int64)


@dataclass
class PairStats:
    """What the pair stage did, summed over its tasks (known once the pairs are computed;
    on Spark, from accumulators, where a retried task's attempts all count; on Ray, from
    the tasks that succeeded)."""

    #: Kernel tasks (a group, or a pair of chunks of one) compared.
    tasks: int = 0
    #: Comparisons (pairs of documents looked at) over all kernel tasks.
    total_work: int = 0
    #: The largest kernel task's comparisons.
    max_task_work: int = 0
    #: Comparisons per partition of the pair stage (by partition id, last attempt).
    partition_work: Dict[int, int] = field(default_factory=dict)

    @property
    def largest_partition_share(self) -> float:
        """The largest partition's share of all comparisons (1/partitions is even)."""
        total = sum(self.partition_work.values())
        return max(self.partition_work.values()) / total if total else 0.0


class DedupResultBase(Generic[Frame]):
    """The engine-independent part of a dedup result: ``k``, ``representative``,
    ``stats``, the pairs, and the clusters made from them on first use."""

    def __init__(
        self,
        pairs: Frame,
        k: int,
        representative: str,
        stats: PairStats,
        make_clusters: Callable[[Frame], Frame],
        docs: Optional[Frame] = None,
    ) -> None:
        self.k = k
        self.representative = representative
        self.stats = stats
        self._docs = docs
        self._pairs = pairs
        self._make_clusters = make_clusters
        self._clusters: Optional[Frame] = None

    @property
    def pairs(self) -> Frame:
        """Every pair within ``k``: ``a``, ``b`` (``a < b``), ``distance``."""
        return self._pairs

    @property
    def clusters(self) -> Frame:
        """``id``, ``cluster``, ``representative``, ``keep`` for every clustered document."""
        if self._clusters is None:
            self._clusters = self._make_clusters(self._pairs)
        return self._clusters

    def __repr__(self) -> str:
        return (
            f"DedupResult(k={self.k}, representative={self.representative!r}, "
            f"kernel_tasks={self.stats.tasks})"
        )


def expand_paths(paths: Paths) -> List[str]:
    """Files named by ``paths``: globs expanded, folders read recursively (hidden files
    skipped), in name order, as absolute paths.

    Raises:
        FileNotFoundError: a path or glob that names no file, or no file at all.
    """
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
    if not files:
        raise FileNotFoundError(f"no files in {paths!r}")
    return [os.path.abspath(f) for f in files]


def check_warc_options(max_doc_bytes: int, batch_size: int) -> None:
    if max_doc_bytes < 1 or batch_size < 1:
        raise ValueError("max_doc_bytes and batch_size must be at least 1")


#: The columns of ``read_warc``, in order.
WARC_COLUMNS = ("url", "text", "text_len", "path", "position")


def warc_batches(
    path: str, batch_size: int, extract_main_text: bool, max_doc_bytes: int, strict: bool
) -> Iterator["pa.RecordBatch"]:
    """The documents of one file as Arrow batches with the columns :data:`WARC_COLUMNS`,
    read by the crate's readers (runs on a worker)."""
    import pyarrow as pa

    from ._native import WarcBatches

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
        yield pa.RecordBatch.from_arrays(
            [
                _large_strings(n, b, "url").cast(pa.string()),
                _large_strings(n, b, "text").cast(pa.string()),
                pa.array(offsets[1:] - offsets[:-1]),
                pa.array([path] * n, type=pa.string()),
                pa.array(b["position"]),
            ],
            names=list(WARC_COLUMNS),
        )


def _large_strings(n: int, batch: dict, name: str) -> "pa.Array":
    import pyarrow as pa

    return pa.LargeStringArray.from_buffers(
        n,
        pa.py_buffer(batch[f"{name}_offsets"]),
        pa.py_buffer(batch[f"{name}_data"]),
        pa.py_buffer(batch[f"{name}_valid"]),
    )


def load_parquet(
    path: Union[str, "os.PathLike[str]"],
    store: Any,
    *,
    id_col: str = "id",
    fingerprint_col: str = "fingerprint",
    key_col: Optional[str] = "key",
    batch_rows: int = 4_000_000,
    progress: bool = False,
) -> int:
    """Loads the Parquet files under ``path`` (a Spark or Ray job's output: ``id``,
    ``fingerprint`` as a signed long (Spark) or ``uint64`` (Ray), optional ``key``) into
    ``store`` (a :class:`simhash_store.Store` or a store directory) with
    :meth:`simhash_store.Store.bulk_load_fingerprints`, ``batch_rows`` rows at a time. Rows
    with a null fingerprint are skipped; a missing ``key_col`` column means no keys. Returns
    the number of documents given to the store.

    The same as ``python -m simhash_store.spark load-parquet PATH --store DIR`` (or
    ``simhash_store.ray``).

    Raises:
        ValueError: a missing id or fingerprint column, or a null id.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.dataset as ds

    from . import Store

    if batch_rows < 1:
        raise ValueError(f"batch_rows must be at least 1, got {batch_rows}")
    dataset = ds.dataset(os.fspath(path), format="parquet")
    names = dataset.schema.names
    for c in (id_col, fingerprint_col):
        if c not in names:
            raise ValueError(
                f"{os.fspath(path)!r} has no column {c!r}; its columns are {', '.join(names)}"
            )
    for c in (id_col, fingerprint_col):
        kind = dataset.schema.field(c).type
        if not pa.types.is_integer(kind):
            raise ValueError(
                f"column {c!r} of {os.fspath(path)!r} is {kind}, not an integer column: write "
                "ids and fingerprints as int64 or uint64 (on Ray, a row function such as "
                "filter(lambda row: ...) turns uint64 into Python objects; use map_batches)"
            )
    columns = [id_col, fingerprint_col] + ([key_col] if key_col and key_col in names else [])
    own = not isinstance(store, Store)
    target = Store.open(os.fspath(store)) if own else store
    total = 0
    try:
        pending: list = []
        rows = 0

        def flush() -> None:
            nonlocal pending, rows, total
            if not pending:
                return
            table = pa.Table.from_batches(pending).combine_chunks()
            pending, rows = [], 0
            table = table.filter(table.column(fingerprint_col).is_valid())
            if table.column(id_col).null_count:
                raise ValueError(f"column {id_col!r} has nulls: every document needs an id")
            ids = table.column(id_col).to_numpy().astype(np.int64, copy=False)
            # Signed or unsigned, the same 64 bits.
            fps = table.column(fingerprint_col).to_numpy().astype(np.int64, copy=False)
            keys = table.column(key_col).to_pylist() if len(columns) == 3 else None
            target.bulk_load_fingerprints(ids, fps, keys, progress=progress or None)
            total += len(ids)

        for batch in dataset.to_batches(columns=columns):
            pending.append(batch)
            rows += batch.num_rows
            if rows >= batch_rows:
                flush()
        flush()
    finally:
        if own:
            target.close()
    return total


def load_parquet_main(engine: str, argv: Optional[List[str]] = None) -> int:
    """``python -m simhash_store.ENGINE load-parquet PATH --store DIR``; ``engine`` is
    ``"spark"`` or ``"ray"``."""
    from .errors import Error

    title = {"spark": "Spark", "ray": "Ray"}[engine]
    unsigned = "a signed long" if engine == "spark" else "uint64"
    parser = argparse.ArgumentParser(
        prog=f"python -m simhash_store.{engine}",
        description=f"Tools for the results of simhash_store.{engine} jobs.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    load = commands.add_parser(
        "load-parquet",
        help=f"load Parquet files (id, fingerprint as {unsigned}, optional key) into a store",
        description=f"Loads the Parquet files under PATH (a {title} job's output with columns "
        "id, fingerprint and optionally key) into the store DIR with the bulk loader. Example: "
        f"python -m simhash_store.{engine} load-parquet out/ --store pages.db",
    )
    load.add_argument("path", help="a Parquet file or a folder of them")
    load.add_argument("--store", required=True, help="the store directory (created if missing)")
    load.add_argument("--id-col", default="id")
    load.add_argument("--fingerprint-col", default="fingerprint")
    load.add_argument("--key-col", default="key", help="ignored when the files have no such column")
    load.add_argument("--batch-rows", type=int, default=4_000_000)
    load.add_argument("--progress", action="store_true", help="draw a progress line")
    args = parser.parse_args(argv)
    if not os.path.exists(args.path):
        print(
            f"error: {args.path} does not exist: give a Parquet file or a folder of them "
            f"(a {title} job's output with columns id and fingerprint)",
            file=sys.stderr,
        )
        return 1
    try:
        n = load_parquet(
            args.path,
            args.store,
            id_col=args.id_col,
            fingerprint_col=args.fingerprint_col,
            key_col=args.key_col,
            batch_rows=args.batch_rows,
            progress=args.progress,
        )
    except (Error, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: cannot read {args.path}: {e}", file=sys.stderr)
        return 1
    print(f"loaded {n} document{'' if n == 1 else 's'} into {args.store}")
    return 0
