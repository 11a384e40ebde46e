"""What :mod:`simhash_store.spark` and :mod:`simhash_store.ray` share, independent of the
engine: the checks of their arguments, the defaults, the pair stage's partition hash and
statistics, the shape of a dedup result, the reading of WARC files into Arrow batches and the
loading of a Parquet result into a store.

Everything here is private; the engines' modules export the public names.
"""

from __future__ import annotations

import argparse
import glob
import io
import os
import pickle
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


#: The Arrow extension type of Ray's columns of Python objects: each value pickled, in
#: ``large_binary`` storage. A column of Python ints becomes one when a value does not fit
#: int64 (a fingerprint of 2**63 or more), block by block.
RAY_PICKLED = "ray.data.arrow_pickled_object"

#: What a fingerprint column may hold, for messages.
FINGERPRINT_TYPES = (
    "uint64 (as fingerprints() writes it), int64 (the 64 bits in two's complement, as Spark "
    "stores them) or Python ints in -2**63..2**64 (which Ray keeps as a column of Python "
    "objects once one is 2**63 or more)"
)


class _IntsOnly(pickle.Unpickler):
    """Unpickles ints (and None) only: a pickled value that names any class or function is
    refused, so a Parquet file's object column cannot run code when it is read."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a pickled {module}.{name}, not an int")


def _objects(kind: Any) -> bool:
    """Whether a column of type ``kind`` (an Arrow type, or what a Ray schema shows for a
    pandas column) holds Python objects: Ray's pickled-object type, or pandas' ``object``."""
    import numpy as np
    import pyarrow as pa

    if kind is object or (isinstance(kind, np.dtype) and kind == np.dtype("O")):
        return True
    return isinstance(kind, pa.ExtensionType) and kind.extension_name == RAY_PICKLED


def check_fingerprint_type(kind: Any, column: str, what: str) -> None:
    """A TypeError, at the call, for a fingerprint column whose type (``kind``, from the
    schema) cannot hold fingerprints: a float, a string, a list, ... Integer columns,
    Python objects (checked value by value when read) and decimals of scale 0 pass."""
    import pyarrow as pa

    if _objects(kind) or kind is None:
        return
    if isinstance(kind, pa.DataType) and (
        pa.types.is_integer(kind)
        or pa.types.is_null(kind)
        or (pa.types.is_decimal(kind) and kind.scale == 0)
    ):
        return
    hint = ""
    if isinstance(kind, pa.DataType) and pa.types.is_floating(kind):
        hint = (
            ". A float has lost bits of the fingerprint already: keep fingerprints as integers "
            "from the start (fingerprints() adds a uint64 column)"
        )
    elif isinstance(kind, pa.DataType) and (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        hint = ". Hex strings: convert each with int(s, 16)"
    raise TypeError(
        f"column {column!r} of {what} is {kind}, which cannot hold 64-bit fingerprints: "
        f"give {FINGERPRINT_TYPES}{hint}"
    )


def _python_values(column: "pa.Array", name: str, what: str, pickled: bool) -> List[Any]:
    """The values of a column of Python objects or decimals, as Python values (None for
    null). ``pickled``: ``column`` is the binary storage of Ray's pickled-object type (a
    Parquet file's column read without Ray's extension type registered)."""
    import pyarrow as pa

    kind = column.type
    if isinstance(kind, pa.ExtensionType) and kind.extension_name == RAY_PICKLED:
        column, pickled = column.storage, True
    if pickled and (pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type)):
        raw = column.to_pylist()
        try:
            return [None if b is None else _IntsOnly(io.BytesIO(b)).load() for b in raw]
        except pickle.UnpicklingError as e:
            raise TypeError(
                f"column {name!r} of {what} holds a Python object that is not an int ({e}): "
                f"give {FINGERPRINT_TYPES}"
            ) from None
    if pa.types.is_decimal(kind):
        return column.to_pylist()
    raise TypeError(
        f"column {name!r} of {what} is {kind}, which cannot hold 64-bit integers: give "
        f"{FINGERPRINT_TYPES}"
    )


def check_id_type(kind: Any, column: str, what: str) -> None:
    """A TypeError, at the call, for an id column whose type (from the schema) is not an
    integer column (or Python objects, checked value by value when read)."""
    import pyarrow as pa

    if _objects(kind) or kind is None:
        return
    if isinstance(kind, pa.DataType) and (pa.types.is_integer(kind) or pa.types.is_null(kind)):
        return
    raise TypeError(
        f"column {column!r} of {what} must be an integer column (ids are 0..2**63-1), not {kind}"
    )


def _int_value(value: Any, name: str, what: str) -> int:
    """``value`` as an int, or a TypeError naming the column and the value's type."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Number) and value == int(value):  # a Decimal of scale 0
            return int(value)
        raise TypeError(
            f"column {name!r} of {what} holds {value!r} ({type(value).__name__}), not an int: "
            f"give {FINGERPRINT_TYPES}"
        )
    return int(value)


def fingerprint_array(column: Any, name: str, what: str, pickled: bool = False) -> "pa.Array":
    """A fingerprint column (any of :data:`FINGERPRINT_TYPES`, a decimal of scale 0, or all
    nulls) as an Arrow ``uint64`` array of the same 64 bits, nulls kept.

    Raises:
        TypeError: a column or a value that is not an integer.
        ValueError: an integer outside -2**63..2**64.
    """
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], pa.uint64())
    kind = column.type
    if pa.types.is_uint64(kind):
        return column
    if pa.types.is_integer(kind):
        return column.cast(pa.int64()).view(pa.uint64())
    if pa.types.is_null(kind):
        return pa.nulls(len(column), pa.uint64())
    bits = []
    for v in _python_values(column, name, what, pickled):
        if v is None:
            bits.append(None)
            continue
        n = _int_value(v, name, what)
        if not -(1 << 63) <= n < 1 << 64:
            raise ValueError(
                f"column {name!r} of {what} holds {n}, which is not a 64-bit fingerprint "
                "(-2**63..2**64)"
            )
        bits.append(n & ((1 << 64) - 1))
    return pa.array(bits, pa.uint64())


def id_array(column: Any, name: str, what: str, pickled: bool = False) -> "pa.Array":
    """An id column (integers, or Ray's Python objects holding ints) as an Arrow ``int64``
    array, nulls kept.

    Raises:
        TypeError: a column or a value that is not an integer.
        ValueError: an id outside 0..2**63-1.
    """
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], pa.int64())
    kind = column.type
    if pa.types.is_integer(kind):
        if pa.types.is_uint64(kind):
            import pyarrow.compute as pc

            largest = pc.max(column).as_py()
            if largest is not None and largest >= 1 << 63:
                raise ValueError(f"column {name!r} of {what} holds {largest}: ids must be 0..2**63-1")
        return column.cast(pa.int64())
    if pa.types.is_null(kind):
        return pa.nulls(len(column), pa.int64())
    if not (pickled or (isinstance(kind, pa.ExtensionType) and kind.extension_name == RAY_PICKLED)):
        raise TypeError(f"column {name!r} of {what} must be an integer column, not {kind}")
    ids = []
    for v in _python_values(column, name, what, pickled):
        if v is not None:
            v = _int_value(v, name, what)
            if not 0 <= v < 1 << 63:
                raise ValueError(f"column {name!r} of {what} holds {v}: ids must be 0..2**63-1")
        ids.append(v)
    return pa.array(ids, pa.int64())


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


def _pickled_field(field: "pa.Field") -> bool:
    """Whether a Parquet file's field is Ray's pickled-object column read without Ray's
    extension type registered (its binary storage, named in the field's metadata)."""
    name = (field.metadata or {}).get(b"ARROW:extension:name")
    return name == RAY_PICKLED.encode()


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
    ``fingerprint``, optional ``key``) into ``store`` with its ``bulk_load_fingerprints``,
    ``batch_rows`` rows at a time. ``store`` is a :class:`simhash_store.Store` or a store
    directory, or the index in PostgreSQL: a :class:`simhash_store.PostgresIndex` or a
    ``postgres://`` (``postgresql://``) URL, loaded in transactions of a million documents
    whose groups are packed by this process (as ``simhash-store load --postgres``). The fingerprint column may be a signed long (Spark), ``uint64`` (Ray's
    :func:`fingerprints`), a ``decimal(20, 0)`` (Spark's reading of ``uint64``) or Ray's
    column of Python ints (which it writes pickled once an int is 2**63 or more; only ints
    are unpickled, nothing else); each file is read with its own types. Rows with a null
    fingerprint are skipped; a missing ``key_col`` column means no keys. Returns the number
    of documents given to the store. ``progress`` draws a progress line for a store directory.

    A load that stops part-way (an error, Ctrl-C, a lost server) leaves the store or the
    index consistent, with what was loaded before it; loading the same files again finishes
    it, since every document replaces itself by id.

    The same as ``python -m simhash_store.spark load-parquet PATH --store DIR`` (or
    ``--postgres URL``; or ``simhash_store.ray``).

    Raises:
        ValueError: a missing id or fingerprint column, a null id, an id or fingerprint
            out of range.
        TypeError: an id or fingerprint column, or value, that is not an integer.
        simhash_store.PostgresError: the PostgreSQL server cannot be reached or failed; the
            message says which batches are loaded.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.dataset as ds

    from . import PostgresIndex, Store

    if batch_rows < 1:
        raise ValueError(f"batch_rows must be at least 1, got {batch_rows}")
    where = repr(os.fspath(path))
    dataset = ds.dataset(os.fspath(path), format="parquet")
    fragments = list(dataset.get_fragments())
    for fragment in fragments:
        schema = fragment.physical_schema
        for c in (id_col, fingerprint_col):
            if c not in schema.names:
                raise ValueError(
                    f"{fragment.path!r} has no column {c!r}; its columns are {', '.join(schema.names)}"
                )
        fp_field, id_field = schema.field(fingerprint_col), schema.field(id_col)
        if not _pickled_field(fp_field):
            check_fingerprint_type(fp_field.type, fingerprint_col, repr(fragment.path))
        if not _pickled_field(id_field):
            check_id_type(id_field.type, id_col, repr(fragment.path))
    own = not isinstance(store, (Store, PostgresIndex))
    target: Union[Store, PostgresIndex] = store
    if own:
        target = PostgresIndex.open(store) if is_postgres_url(store) else Store.open(os.fspath(store))
    total = 0
    try:
        pending: List[Any] = []
        rows = 0

        def flush() -> None:
            nonlocal pending, rows, total
            if not pending:
                return
            ids = np.concatenate([p[0] for p in pending])
            fps = np.concatenate([p[1] for p in pending])
            keys = None
            if any(p[2] is not None for p in pending):
                keys = [k for p in pending for k in (p[2] if p[2] is not None else [None] * len(p[0]))]
            pending, rows = [], 0
            if isinstance(target, PostgresIndex):
                target.bulk_load_fingerprints(ids, fps, keys)
            else:
                target.bulk_load_fingerprints(ids, fps, keys, progress=progress or None)
            total += len(ids)

        for fragment in fragments:
            schema = fragment.physical_schema
            has_key = bool(key_col) and key_col in schema.names
            columns = [id_col, fingerprint_col] + ([key_col] if has_key else [])
            fp_pickled = _pickled_field(schema.field(fingerprint_col))
            id_pickled = _pickled_field(schema.field(id_col))
            for batch in fragment.to_batches(schema=schema, columns=columns):
                fps = fingerprint_array(batch.column(fingerprint_col), fingerprint_col, where, fp_pickled)
                ids = id_array(batch.column(id_col), id_col, where, id_pickled)
                keep = fps.is_valid()
                fps, ids = fps.filter(keep), ids.filter(keep)
                if ids.null_count:
                    raise ValueError(f"column {id_col!r} of {where} has nulls: every document needs an id")
                keys = batch.column(key_col).filter(keep).to_pylist() if has_key else None
                pending.append((ids.to_numpy(), fps.to_numpy(), keys))
                rows += len(ids)
                if rows >= batch_rows:
                    flush()
        flush()
    finally:
        if own:
            target.close()
    return total


def is_postgres_url(store: Any) -> bool:
    """Whether ``store`` is a PostgreSQL URL (``postgres://`` or ``postgresql://``)."""
    return isinstance(store, str) and store.startswith(("postgres://", "postgresql://"))


def load_parquet_main(engine: str, argv: Optional[List[str]] = None) -> int:
    """``python -m simhash_store.ENGINE load-parquet PATH --store DIR`` (or ``--postgres
    URL``); ``engine`` is ``"spark"`` or ``"ray"``."""
    from . import PostgresIndex
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
        "id, fingerprint and optionally key) into the store DIR with the bulk loader, or into "
        "the index in a PostgreSQL database (transactions of a million documents; a load that "
        "stops leaves whole transactions, and running it again finishes it). Examples: "
        f"python -m simhash_store.{engine} load-parquet out/ --store pages.db; "
        f"python -m simhash_store.{engine} load-parquet out/ --postgres postgres://app@db.example/dedup",
    )
    load.add_argument("path", help="a Parquet file or a folder of them")
    target = load.add_mutually_exclusive_group(required=True)
    target.add_argument("--store", help="the store directory (created if missing)")
    target.add_argument(
        "--postgres",
        metavar="URL",
        help="the index in this PostgreSQL database (postgres://user:password@host:port/db; "
        "its tables are made in an empty database)",
    )
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
    index = None
    try:
        if args.postgres is not None:
            index = PostgresIndex.open(args.postgres)
        n = load_parquet(
            args.path,
            args.store if index is None else index,
            id_col=args.id_col,
            fingerprint_col=args.fingerprint_col,
            key_col=args.key_col,
            batch_rows=args.batch_rows,
            progress=args.progress,
        )
    except (Error, ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: cannot read {args.path}: {e}", file=sys.stderr)
        return 1
    finally:
        if index is not None:
            index.close()
    where = args.store if index is None else f"the index in {index.database}"
    print(f"loaded {n} document{'' if n == 1 else 's'} into {where}")
    return 0
