"""``dedup`` and ``dedup_against``: every pair within ``k``, clusters and drop lists on Spark.

The pigeonhole join by block, as ``Store.pairs`` does it on one machine:

1. Each document becomes one row per block family (4), keyed by a *task*: its family and
   16-bit block value, and for a group too big for one task, a pair of chunks of it or one
   of its sub-block values. For
   ``k >= 4`` (radius ``r = k // 4``) it is also sent, as a *guest*, to every non-empty group
   of the same family whose value is higher and within ``r`` bits of its own.
2. The rows are shuffled by task, packed into one binary value per (input batch, target
   partition), and sorted by task within each partition (numpy); each task's rows go to
   the crate's pair kernel (``PairKernel``, the code of ``Store::pairs``), which reports a
   pair only in the first family whose blocks are within ``r`` bits, so each pair once.
3. Connected components of the pairs and each cluster's representative, by
   :mod:`simhash_store._components` (shared with :mod:`simhash_store.ray`): on the driver
   (the crate's union-find) while the pairs fit ``driver_edge_budget``, otherwise
   distributed (its star steps on each partition of edges shuffled by node).

The task key, the chunking of big groups and their split on sub-blocks are the crate's
partition planner (``simhash_store::partition``, shared with :mod:`simhash_store.ray`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Tuple

from .._native import BLOCK_BITS, BLOCK_VALUES, BLOCKS, GROUPS
from .._scaleout import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_DRIVER_EDGE_BUDGET,
    DedupResultBase,
    PairStats,
    check_k,
    check_representative,
    check_tuning,
    partition_of,
)
from ._common import check_columns, check_type, require_pyspark, session_of

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

#: Test hook, never set outside the tests: the pair-stage partition whose first attempt
#: fails after computing its pairs (read on the driver when the job is built), so a test can
#: check that a retried task gives the same answer.
_FAIL_FIRST_ATTEMPT: Optional[int] = None

PAIR_SCHEMA = "a long, b long, distance int"
#: The exploded rows as shuffled: ``rows`` packs n rows as task, fingerprint, id (n int64
#: each) then side (n bytes); ``key`` is hashed by Spark to the pair-stage partition.
BLOB_SCHEMA = "key int, rows binary"


def _partition_keys(spark: "SparkSession", n: int) -> List[int]:
    """For each partition p in 0..n, an int key that Spark's hash partitioning
    (``pmod(hash(key), n)``) sends to partition p, so that each target gets its own."""
    from pyspark.sql import functions as F

    candidates = spark.range(0, 64 * n + 64, numPartitions=1).select(
        F.col("id").cast("int").alias("key")
    )
    rows = (
        candidates.select("key", F.expr(f"pmod(hash(key), {n})").alias("p"))
        .groupBy("p")
        .agg(F.min("key").alias("key"))
        .collect()
    )
    keys = list(range(n))  # a missing target shares a partition: slower, still right
    for row in rows:
        keys[int(row["p"])] = int(row["key"])
    return keys


class DedupResult(DedupResultBase["DataFrame"]):
    """The answer of :func:`dedup` or :func:`dedup_against`.

    - :attr:`pairs`: ``a``, ``b`` (``a < b``), ``distance``; each pair within ``k`` once.
    - :attr:`clusters`: one row per document that has a near-duplicate: ``id``,
      ``cluster`` (the lowest member id), ``representative`` (the member kept) and ``keep``.
    - :attr:`drop`: ``id`` and ``representative`` (kept instead) of every member that is not
      kept.
    - :attr:`stats`: what the pair stage did (:class:`PairStats`).

    These are the rows of ``simhash-store dedup``'s ``pairs``, ``clusters`` and ``drop``
    files for the same documents (without the external keys: join them back by ``id``).
    ``pairs`` is computed (and persisted) by :func:`dedup`; ``clusters`` and ``drop`` on first
    use. :meth:`unpersist` releases what was cached.
    """

    @property
    def drop(self) -> "DataFrame":
        """``id`` and ``representative`` of every document to drop."""
        return self.clusters.where(~self.clusters["keep"]).select("id", "representative")

    def unpersist(self) -> None:
        """Releases the cached documents, pairs and clusters."""
        self._pairs.unpersist()
        if self._docs is not None:
            self._docs.unpersist()
        if self._clusters is not None:
            self._clusters.unpersist()


def _documents(
    df: "DataFrame",
    what: str,
    id_col: str,
    fingerprint_col: str,
    text_len_col: Optional[str],
) -> "DataFrame":
    """``id``, ``fingerprint`` (and ``text_len``) of the documents of ``df`` that have a
    fingerprint, checked."""
    from decimal import Decimal

    from pyspark.sql import functions as F
    from pyspark.sql.types import ByteType, DecimalType, IntegerType, LongType, ShortType

    check_columns(df, what, [id_col, fingerprint_col] + ([text_len_col] if text_len_col else []))
    integers = [LongType, IntegerType, ShortType, ByteType]
    check_type(df, what, id_col, integers, "an integer column (LongType)")
    fp_type = df.schema[fingerprint_col].dataType
    unsigned = isinstance(fp_type, DecimalType) and fp_type.scale == 0 and fp_type.precision <= 20
    if not unsigned:
        check_type(
            df,
            what,
            fingerprint_col,
            integers,
            "LongType (the 64 bits as a signed long, as fingerprints() writes it; "
            "simhash_store.to_signed converts a Python int of 2**63 or more) or "
            "decimal(20,0) (as Spark reads a uint64 Parquet column)",
        )
    fp = F.col(fingerprint_col)
    if unsigned:
        # decimal(20,0), as Spark reads Parquet's uint64: the same 64 bits as a signed long.
        fp = (
            F.when(
                (fp < F.lit(Decimal(-(2**63)))) | (fp >= F.lit(Decimal(2**64))),
                F.raise_error(
                    F.concat(
                        F.lit(f"column {fingerprint_col!r} of {what} holds "),
                        fp.cast("string"),
                        F.lit(", which is not a 64-bit fingerprint (-2**63..2**64)"),
                    )
                ),
            )
            .when(fp >= F.lit(Decimal(2**63)), fp - F.lit(Decimal(2**64)))
            .otherwise(fp)
        )
    columns = [F.col(id_col).cast("long").alias("id"), fp.cast("long").alias("fingerprint")]
    if text_len_col:
        check_type(df, what, text_len_col, integers, "an integer column")
        columns.append(F.col(text_len_col).cast("long").alias("text_len"))
    return df.select(*columns).where(F.col("fingerprint").isNotNull())


def _group_counts(docs: "DataFrame", old: Optional[bool] = None) -> "np.ndarray":
    """Documents per (block family, block value): uint64, ``family * BLOCK_VALUES + value``.

    One histogram of 262,144 counts per input partition (numpy over the Arrow batches, no
    exploded rows and no shuffle), summed on the driver."""
    import numpy as np
    from pyspark.sql import functions as F

    if old is not None:
        docs = docs.where(F.col("old") == F.lit(old))

    def histogram(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        import pyarrow as pa

        counts = np.zeros(GROUPS, dtype=np.int64)
        for batch in batches:
            fps = batch.column("fingerprint").to_numpy(zero_copy_only=False).view(np.uint64)
            for i in range(BLOCKS):
                shift = np.uint64(BLOCK_BITS * (BLOCKS - 1 - i))
                values = ((fps >> shift) & np.uint64(BLOCK_VALUES - 1)).astype(np.intp)
                counts[i * BLOCK_VALUES : (i + 1) * BLOCK_VALUES] += np.bincount(
                    values, minlength=BLOCK_VALUES
                )
        yield pa.RecordBatch.from_arrays([pa.array([counts.tobytes()], pa.binary())], names=["counts"])

    counts = np.zeros(GROUPS, dtype=np.uint64)
    for row in docs.select("fingerprint").mapInArrow(histogram, "counts binary").collect():
        counts += np.frombuffer(row[0], dtype=np.int64).astype(np.uint64)
    return counts


class _MaxDict:
    """Accumulator of ``{key: value}`` keeping the largest value per key."""

    @staticmethod
    def zero(value: Dict[int, int]) -> Dict[int, int]:
        return {}

    @staticmethod
    def addInPlace(a: Dict[int, int], b: Dict[int, int]) -> Dict[int, int]:  # noqa: N802
        for key, v in b.items():
            if v > a.get(key, -1):
                a[key] = v
        return a


class _MaxInt:
    @staticmethod
    def zero(value: int) -> int:
        return 0

    @staticmethod
    def addInPlace(a: int, b: int) -> int:  # noqa: N802
        return max(a, b)


def _pairs(
    docs: "DataFrame",
    k: int,
    chunk_size: int,
    partitions: Optional[int],
    against: bool,
) -> Tuple["DataFrame", PairStats, Callable[[], None]]:
    """The pairs of ``docs`` (``id``, ``fingerprint``, and ``old`` when ``against``), lazily,
    and a function that fills the returned stats from the accumulators."""
    import numpy as np
    from pyspark.accumulators import AccumulatorParam

    from .._native import PartitionPlan

    fail_first_attempt = _FAIL_FIRST_ATTEMPT

    spark = session_of(docs)
    sc = spark.sparkContext
    counts = _group_counts(docs)
    new_counts = _group_counts(docs, old=False) if against else None
    plan = PartitionPlan(counts, k, chunk_size, new_counts)

    n = partitions or int(spark.conf.get("spark.sql.shuffle.partitions") or 200)
    keys = _partition_keys(spark, n)

    def explode(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        import pyarrow as pa

        for batch in batches:
            ids = batch.column("id")
            if ids.null_count:
                raise ValueError("the id column has nulls: every document needs an id")
            old = batch.column("old").to_numpy(zero_copy_only=False) if against else None
            task, side, fp, id_ = plan.explode(
                ids.to_numpy(zero_copy_only=False).astype(np.int64, copy=False),
                batch.column("fingerprint").to_numpy(zero_copy_only=False).view(np.uint64),
                old,
            )
            if not len(task):
                continue
            # Rows go to the pair stage packed, one binary value per (batch, partition):
            # Spark shuffles a few large values instead of millions of rows.
            part = partition_of(task, n)
            order = np.argsort(part, kind="stable")
            part = part[order]
            bounds = np.searchsorted(part, np.arange(n + 1))
            out_keys, blobs = [], []
            for p in range(n):
                lo, hi = bounds[p], bounds[p + 1]
                if lo == hi:
                    continue
                at = order[lo:hi]
                blobs.append(
                    task[at].tobytes()
                    + fp[at].tobytes()
                    + id_[at].tobytes()
                    + side[at].view(np.uint8).tobytes()
                )
                out_keys.append(keys[p])
            yield pa.RecordBatch.from_arrays(
                [pa.array(out_keys, pa.int32()), pa.array(blobs, pa.binary())],
                names=["key", "rows"],
            )

    class MaxDictParam(AccumulatorParam):  # type: ignore[type-arg]
        zero = staticmethod(_MaxDict.zero)
        addInPlace = staticmethod(_MaxDict.addInPlace)  # noqa: N815

    class MaxIntParam(AccumulatorParam):  # type: ignore[type-arg]
        zero = staticmethod(_MaxInt.zero)
        addInPlace = staticmethod(_MaxInt.addInPlace)  # noqa: N815

    acc_tasks = sc.accumulator(0)
    acc_total = sc.accumulator(0)
    acc_max = sc.accumulator(0, MaxIntParam())
    acc_partitions = sc.accumulator({}, MaxDictParam())

    def pairs_of(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        import pyarrow as pa
        from pyspark import TaskContext

        from .._native import task_pairs

        ctx = TaskContext.get()
        partition = ctx.partitionId() if ctx else -1
        fail = (
            fail_first_attempt is not None
            and ctx is not None
            and partition == fail_first_attempt
            and ctx.attemptNumber() == 0
        )
        work = 0
        # The whole partition, sorted by task here (numpy) rather than by Spark's external
        # sorter: a partition is a few hundred thousand narrow rows.
        parts: Dict[str, List["np.ndarray"]] = {c: [] for c in ("task", "side", "fingerprint", "id")}
        for batch in batches:
            for blob in batch.column("rows").to_pylist():
                m = len(blob) // 25
                parts["task"].append(np.frombuffer(blob, np.int64, m, 0))
                parts["fingerprint"].append(np.frombuffer(blob, np.uint64, m, 8 * m))
                parts["id"].append(np.frombuffer(blob, np.int64, m, 16 * m))
                parts["side"].append(np.frombuffer(blob, np.uint8, m, 24 * m))
        if parts["task"]:
            cols = {c: np.concatenate(v) if len(v) > 1 else v[0] for c, v in parts.items()}
            del parts
            order = np.argsort(cols["task"])
            found = task_pairs(
                cols["task"][order],
                cols["side"][order].view(np.uint8),
                cols["fingerprint"][order],
                cols["id"][order],
                k,
                True,
            )
            del cols, order
            work += found["total_work"]
            acc_tasks.add(found["tasks"])
            acc_total.add(found["total_work"])
            acc_max.add(found["max_task_work"])
            if fail:
                raise RuntimeError(
                    f"injected failure of partition {partition}, attempt 0 (a test of retries)"
                )
            if len(found["a"]):
                yield pa.RecordBatch.from_arrays(
                    [
                        pa.array(found["a"]),
                        pa.array(found["b"]),
                        pa.array(found["distance"].astype(np.int32)),
                    ],
                    names=["a", "b", "distance"],
                )
        acc_partitions.add({partition: work})

    rows = docs.mapInArrow(explode, BLOB_SCHEMA)
    pairs = rows.repartition(n, "key").mapInArrow(pairs_of, PAIR_SCHEMA)
    stats = PairStats()

    def fill() -> None:
        stats.tasks = acc_tasks.value
        stats.total_work = acc_total.value
        stats.max_task_work = acc_max.value
        stats.partition_work = dict(acc_partitions.value)

    return pairs, stats, fill


def _persisted(df: "DataFrame") -> "DataFrame":
    from pyspark import StorageLevel

    return df.persist(StorageLevel.MEMORY_AND_DISK)


def _components_on_driver(pairs: "DataFrame") -> "DataFrame":
    """``id``, ``cluster`` (lowest id of the component) by the crate's union-find
    (:func:`simhash_store._components.components`) over the pairs collected on the driver."""
    from .. import _components

    spark = session_of(pairs)
    table = _to_arrow(pairs.select("a", "b"))
    ids, clusters = _components.components(
        table.column("a").to_numpy(), table.column("b").to_numpy()
    )
    # Shipped to the executors as a broadcast and expanded there, not as a local relation
    # (which Spark keeps on the driver's heap, and copies into every plan that uses it).
    shared = spark.sparkContext.broadcast((ids, clusters))
    pieces = max(1, min(64, len(ids) // 1_000_000 + 1))

    def expand(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        import pyarrow as pa

        all_ids, all_clusters = shared.value
        step = -(-len(all_ids) // pieces)
        for batch in batches:
            for piece in batch.column("piece").to_pylist():
                lo, hi = piece * step, min(len(all_ids), (piece + 1) * step)
                if lo < hi:
                    yield pa.RecordBatch.from_arrays(
                        [pa.array(all_ids[lo:hi]), pa.array(all_clusters[lo:hi])],
                        names=["id", "cluster"],
                    )

    seeds = spark.range(0, pieces, numPartitions=pieces).selectExpr("cast(id as int) as piece")
    return seeds.mapInArrow(expand, "id long, cluster long")


def _to_arrow(df: "DataFrame") -> "pa.Table":
    """``df`` collected as a pyarrow Table (``toArrow`` from Spark 4; pandas before)."""
    import pyarrow as pa

    if hasattr(df, "toArrow"):
        return df.toArrow()
    return pa.Table.from_pandas(df.toPandas(), preserve_index=False)  # pragma: no cover


def _checkpoint(df: "DataFrame") -> "DataFrame":
    """A reliable checkpoint when the SparkContext has a checkpoint directory, otherwise a
    local one (kept on the executors)."""
    sc = session_of(df).sparkContext
    if sc.getCheckpointDir():
        return df.checkpoint(eager=True)
    return df.localCheckpoint(eager=True)


#: The edges of the star steps: ``u > v``.
EDGE_SCHEMA = "u long, v long"


def _rows(batches: Iterator["pa.RecordBatch"], columns: Tuple[str, str]) -> "np.ndarray":
    """Two long columns of a partition's batches as one ``(m, 2)`` int64 array."""
    import numpy as np

    parts = [
        np.stack([b.column(c).to_numpy(zero_copy_only=False) for c in columns], axis=1)
        for b in batches
        if b.num_rows
    ]
    return np.concatenate(parts).astype(np.int64, copy=False) if parts else np.zeros((0, 2), np.int64)


def _step(
    step: Callable[["np.ndarray"], "np.ndarray"], columns: Tuple[str, str], names: Tuple[str, str]
) -> Callable[[Iterator["pa.RecordBatch"]], Iterator["pa.RecordBatch"]]:
    """A ``mapInArrow`` function: ``step`` (a star step of :mod:`simhash_store._components`)
    over all the rows of a partition, as columns ``names``."""

    def run(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        import pyarrow as pa

        rows = _rows(batches, columns)
        out = step(rows) if len(rows) else rows
        if len(out):
            yield pa.RecordBatch.from_arrays(
                [pa.array(out[:, 0]), pa.array(out[:, 1])], names=list(names)
            )

    return run


def _components_distributed(pairs: "DataFrame", n: int, max_rounds: int = 100) -> "DataFrame":
    """``id``, ``cluster`` by the star steps of :mod:`simhash_store._components`: each step
    shuffles the rows by their node into ``n`` partitions and runs on every partition's rows
    (numpy); the edges are checkpointed every round (to the SparkContext's checkpoint
    directory if set, otherwise locally)."""
    from pyspark.sql import functions as F

    from .. import _components as C

    def pending(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        import pyarrow as pa

        yield pa.RecordBatch.from_arrays(
            [pa.array([C.pending(_rows(batches, ("node", "other")))], pa.int64())],
            names=["pending"],
        )

    uv = ("u", "v")
    edges = _checkpoint(
        pairs.mapInArrow(_step(lambda e: C.oriented(e[:, 0], e[:, 1]), ("a", "b"), uv), EDGE_SCHEMA)
    )
    for _ in range(max_rounds):
        both = edges.mapInArrow(_step(C.both_directions, uv, uv), EDGE_SCHEMA)
        large = both.repartition(n, "u").mapInArrow(_step(C.large_star, uv, uv), EDGE_SCHEMA)
        small = large.repartition(n, "u").mapInArrow(_step(C.small_star, uv, uv), EDGE_SCHEMA)
        small = _checkpoint(small)
        edges.unpersist()
        edges = small
        status = edges.mapInArrow(_step(C.status_rows, uv, ("node", "other")), "node long, other long")
        left = status.repartition(n, "node").mapInArrow(pending, "pending long")
        total = left.agg(F.sum("pending")).first()
        if total is None or not total[0]:
            break
    else:  # pragma: no cover - O(log^2 n) rounds in theory
        raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")

    def members(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        import pyarrow as pa

        ids, clusters = C.star_members(_rows(batches, uv))
        if len(ids):
            yield pa.RecordBatch.from_arrays([pa.array(ids), pa.array(clusters)], names=["id", "cluster"])

    # Each root's edges in one partition, so each root is listed once.
    return edges.repartition(n, "v").mapInArrow(members, "id long, cluster long")


def _shuffle_partitions(spark: "SparkSession") -> int:
    return int(spark.conf.get("spark.sql.shuffle.partitions") or 200)


def _components(pairs: "DataFrame", n_pairs: int, budget: int) -> "DataFrame":
    if n_pairs <= budget:
        return _components_on_driver(pairs)
    return _components_distributed(pairs, _shuffle_partitions(session_of(pairs)))


CLUSTER_SCHEMA = "id long, cluster long, representative long, keep boolean"


def _representatives(
    members: "DataFrame", docs: "DataFrame", representative: str, against: bool
) -> "DataFrame":
    """``members`` (``id``, ``cluster``) with ``representative`` and ``keep``, by
    :func:`simhash_store._components.representatives` over each cluster's members, gathered
    in one partition with their ``text_len`` (for ``"longest"``) and ``old`` flag (for
    :func:`dedup_against`)."""
    from .. import _components

    wanted = (["text_len"] if representative == "longest" else []) + (["old"] if against else [])
    rows = members.join(docs.select("id", *wanted), "id", "left") if wanted else members

    def choose(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        got = [b for b in batches if b.num_rows]
        if not got:
            return
        t = pa.Table.from_batches(got)

        def column(name: str, null: Any) -> Optional["np.ndarray"]:
            if name not in wanted:
                return None
            return pc.fill_null(t.column(name), null).to_numpy()

        ids = t.column("id").to_numpy()
        clusters = t.column("cluster").to_numpy()
        rep, keep = _components.representatives(
            ids, clusters, representative, text_len=column("text_len", 0), old=column("old", False)
        )
        yield pa.RecordBatch.from_arrays(
            [pa.array(ids), pa.array(clusters), pa.array(rep), pa.array(keep)],
            names=["id", "cluster", "representative", "keep"],
        )

    n = _shuffle_partitions(session_of(members))
    return rows.repartition(n, "cluster").mapInArrow(choose, CLUSTER_SCHEMA)


def dedup(
    df: "DataFrame",
    k: int = 3,
    id_col: str = "id",
    fingerprint_col: str = "fingerprint",
    representative: str = "lowest-id",
    *,
    text_len_col: Optional[str] = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    partitions: Optional[int] = None,
    driver_edge_budget: int = DEFAULT_DRIVER_EDGE_BUDGET,
) -> DedupResult:
    """Every pair of documents of ``df`` within Hamming distance ``k``, their clusters and
    the documents to drop: exactly what ``Store.pairs(k)``, ``Store.clusters(k)`` and
    ``simhash-store dedup -k K`` give for the same ids and fingerprints, for any ``k`` in
    ``0..=64``.

    Args:
        df: the documents: a unique, non-negative integer ``id_col`` and a ``LongType``
            ``fingerprint_col`` (as :func:`fingerprints` writes it; rows whose fingerprint is
            null are left out, as a store skips texts without features), or a
            ``decimal(20,0)`` one (as Spark reads a ``uint64`` Parquet column). A Python
            int of 2**63 or more does not fit a long: ``createDataFrame`` turns it into
            null without a word, so convert fingerprints with
            :func:`simhash_store.to_signed` first.
        k: the largest distance of a near-duplicate pair (0..=64).
        representative: which member of a cluster is kept: ``"lowest-id"`` or
            ``"longest"`` (the largest ``text_len_col``, null counting as 0, ties to the
            lowest id), as ``simhash-store dedup --representative``.
        text_len_col: the text length column ``"longest"`` needs.
        chunk_size: documents of one block group compared in one task; larger groups (many
            documents sharing a block value, such as templated pages) are split into chunks
            compared pair by pair in separate tasks, or on sub-blocks when that copies fewer
            rows (the crate's partition planner).
        partitions: partitions of the pair stage's shuffle (default
            ``spark.sql.shuffle.partitions``).
        driver_edge_budget: up to this many pairs, clusters are computed on the driver (the
            crate's union-find over the collected pairs, about 40 bytes per pair); above
            it, by large-star / small-star on the cluster, checkpointed each round (to the
            SparkContext's checkpoint directory if set, otherwise locally).

    Returns:
        A :class:`DedupResult` with ``pairs`` (computed and persisted here), ``clusters``
        and ``drop``, and the pair stage's work in ``stats``.

    Raises:
        ValueError: a missing column, ``k`` out of range, an unknown representative, a
            null or negative id, an id given to two documents within ``k``.
        TypeError: a column of the wrong type.

    >>> from simhash_store.spark import dedup                          # doctest: +SKIP
    >>> df = spark.createDataFrame([(1, 15), (2, 7), (3, -1)], "id long, fingerprint long")  # doctest: +SKIP
    >>> result = dedup(df, k=3)                                        # doctest: +SKIP
    >>> [tuple(r) for r in result.pairs.collect()]                     # doctest: +SKIP
    [(1, 2, 1)]
    >>> [r.id for r in result.drop.collect()]                          # doctest: +SKIP
    [2]
    """
    require_pyspark()
    k = check_k(k)
    representative = check_representative(representative, text_len_col, "Spark")
    check_tuning(chunk_size, partitions, driver_edge_budget)
    docs = _persisted(_documents(df, "the DataFrame", id_col, fingerprint_col, text_len_col))
    pairs, stats, fill = _pairs(docs, k, chunk_size, partitions, False)
    pairs = _persisted(pairs)
    n_pairs = pairs.count()
    fill()

    def make_clusters(pairs: "DataFrame") -> "DataFrame":
        members = _components(pairs, n_pairs, driver_edge_budget)
        return _persisted(_representatives(members, docs, representative, False))

    return DedupResult(pairs, k, representative, stats, make_clusters, docs)


def dedup_against(
    new_df: "DataFrame",
    old_df: "DataFrame",
    k: int = 3,
    id_col: str = "id",
    fingerprint_col: str = "fingerprint",
    representative: str = "lowest-id",
    *,
    text_len_col: Optional[str] = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    partitions: Optional[int] = None,
    driver_edge_budget: int = DEFAULT_DRIVER_EDGE_BUDGET,
) -> DedupResult:
    """Deduplicates a new dump against an earlier one, which is kept whole.

    Precisely, with ``U`` the union of the documents of ``new_df`` and ``old_df`` (ids
    distinct across both):

    - ``pairs``: the pairs of ``U`` within ``k`` that involve at least one new document
      (the pairs ``dedup(U)`` gives, less those of two old documents, which are not compared).
    - ``clusters``: the connected components of those pairs, ``cluster`` the lowest member
      id. In a component with an old document, every old member is kept and every new member
      dropped, and ``representative`` is the lowest old id. In a component of new documents
      only, ``representative`` follows ``representative`` as in :func:`dedup`.
    - ``drop``: the members not kept: only ever new documents. A new document within ``k``
      of an old one is always dropped; so is one linked to an old document through other new
      ones.

    The arguments are those of :func:`dedup`; both DataFrames need ``id_col`` and
    ``fingerprint_col`` (and ``text_len_col`` for ``"longest"``).
    """
    require_pyspark()
    from pyspark.sql import functions as F

    k = check_k(k)
    representative = check_representative(representative, text_len_col, "Spark")
    check_tuning(chunk_size, partitions, driver_edge_budget)
    new = _documents(new_df, "new_df", id_col, fingerprint_col, text_len_col)
    old = _documents(old_df, "old_df", id_col, fingerprint_col, text_len_col)
    docs = _persisted(
        new.withColumn("old", F.lit(False)).unionByName(old.withColumn("old", F.lit(True)))
    )
    pairs, stats, fill = _pairs(docs, k, chunk_size, partitions, True)
    pairs = _persisted(pairs)
    n_pairs = pairs.count()
    fill()

    def make_clusters(pairs: "DataFrame") -> "DataFrame":
        members = _components(pairs, n_pairs, driver_edge_budget)
        return _persisted(_representatives(members, docs, representative, True))

    return DedupResult(pairs, k, representative, stats, make_clusters, docs)


__all__: List[str] = ["DedupResult", "PairStats", "dedup", "dedup_against"]
