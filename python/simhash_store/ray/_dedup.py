"""``dedup`` and ``dedup_against`` on Ray Data: every pair within ``k``, clusters and drop
lists, with the pair stage of :mod:`simhash_store.spark` (the crate's partition planner).

1. The documents per (block family, block value) are counted (one native histogram per
   block) and the crate's ``PartitionPlan`` is made from them on the driver.
2. Each document becomes its rows ``(task, side, fingerprint, id)`` (``PartitionPlan.explode``),
   and each row is given a partition from its task (a multiplicative hash).
3. The rows are grouped by partition (``groupby(...).map_groups``), sorted by task within it
   (numpy), and each task's rows go to the crate's pair kernel (``task_pairs``), which
   reports each pair in exactly one task.
4. Connected components of the pairs and each cluster's representative, by
   :mod:`simhash_store._components` (shared with :mod:`simhash_store.spark`): on the driver
   (the crate's union-find) while the pairs fit ``driver_edge_budget``, otherwise
   distributed (its star steps as Ray tasks that scatter and gather the edges by node).

Every stage is a pure function of its input blocks, so a task that Ray retries (a lost
worker, an exception with ``retry_exceptions``) gives the same rows again.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from .._scaleout import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_DRIVER_EDGE_BUDGET,
    DedupResultBase,
    PairStats,
    check_k,
    check_representative,
    check_fingerprint_type,
    check_id_type,
    check_tuning,
    fingerprint_array,
    id_array,
    partition_of,
)
from ._common import check_columns, require_ray

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    import ray.data

#: Ray options of the pair and component stages: a failed task is run again.
_RETRY = {"max_retries": 3, "retry_exceptions": True}

#: Test-only: a path; while a file exists there, the first pair-stage task to rename it away
#: fails once (a test of retries).
_FAIL_ONCE_ENV = "SIMHASH_STORE_RAY_TEST_FAIL_ONCE"


class DedupResult(DedupResultBase["ray.data.Dataset"]):
    """The answer of :func:`dedup` or :func:`dedup_against`, as Ray Datasets.

    - :attr:`pairs`: ``a``, ``b`` (``a < b``), ``distance``; each pair within ``k`` once.
    - :attr:`clusters`: ``id``, ``cluster`` (the lowest member id), ``representative`` (the
      member kept) and ``keep``, one row per document that has a near-duplicate.
    - :attr:`drop`: ``id`` and ``representative`` of every member that is not kept.
    - :attr:`stats`: what the pair stage did (:class:`PairStats`).

    The rows of ``simhash-store dedup``'s files and of :class:`simhash_store.spark.DedupResult`
    for the same documents. ``pairs`` is computed (materialized) by :func:`dedup`;
    ``clusters`` and ``drop`` on first use. :meth:`unpersist` releases what was
    materialized.
    """

    @property
    def pairs(self) -> "ray.data.Dataset":
        """Every pair within ``k``: ``a``, ``b`` (``a < b``), ``distance`` (materialized)."""
        self._check_live()
        return self._pairs

    @property
    def clusters(self) -> "ray.data.Dataset":
        """``id``, ``cluster``, ``representative``, ``keep`` for every clustered document."""
        self._check_live()
        return super().clusters

    @property
    def drop(self) -> "ray.data.Dataset":
        """``id`` and ``representative`` of every document to drop."""

        def dropped(t: "pa.Table") -> "pa.Table":
            import pyarrow.compute as pc

            return t.filter(pc.invert(t.column("keep"))).select(["id", "representative"])

        return self.clusters.map_batches(dropped, batch_format="pyarrow")

    def unpersist(self) -> None:
        """Releases the materialized documents, pairs and clusters (Ray frees their blocks
        from the object store once nothing else refers to them). The result cannot be used
        afterwards; Datasets taken from it before stay valid."""
        self._docs = None
        self._clusters = None
        self._pairs = None  # type: ignore[assignment]
        self._make_clusters = _released  # drops the closure's reference to the documents

    def _check_live(self) -> None:
        if self._pairs is None:
            raise RuntimeError("this DedupResult was unpersisted: run dedup again")


def _released(pairs: "ray.data.Dataset") -> "ray.data.Dataset":
    raise RuntimeError("this DedupResult was unpersisted: run dedup again")


def _documents(
    ds: "ray.data.Dataset",
    what: str,
    id_col: str,
    fingerprint_col: str,
    text_len_col: Optional[str],
    old: Optional[bool],
) -> "ray.data.Dataset":
    """``id`` (int64), ``fingerprint`` (uint64), ``text_len`` (int64, 0 for null), and
    ``old`` when ``old`` is not None, of the documents of ``ds`` that have a fingerprint."""
    import numpy as np

    columns = [id_col, fingerprint_col] + ([text_len_col] if text_len_col else [])
    types = check_columns(ds, what, columns)
    check_fingerprint_type(types[fingerprint_col], fingerprint_col, what)
    check_id_type(types[id_col], id_col, what)

    def normalise(t: "pa.Table") -> "pa.Table":
        import pyarrow as pa
        import pyarrow.compute as pc

        fp = fingerprint_array(t.column(fingerprint_col), fingerprint_col, what)
        ids = id_array(t.column(id_col), id_col, what)
        t = pa.table({"id": ids, "fp": fp, **({"len": t.column(text_len_col).combine_chunks()} if text_len_col else {})})
        t = t.filter(pc.is_valid(t.column("fp")))
        ids = t.column("id")
        if ids.null_count:
            raise ValueError("the id column has nulls: every document needs an id")
        id_np = ids.to_numpy().astype(np.int64, copy=False)
        if len(id_np) and id_np.min() < 0:
            raise ValueError("ids must be non-negative (document ids are 0..2**63-1)")
        fp_np = t.column("fp").to_numpy().view(np.uint64)
        out = {"id": pa.array(id_np), "fingerprint": pa.array(fp_np, pa.uint64())}
        if text_len_col:
            lens = pc.fill_null(t.column("len"), 0).to_numpy().astype(np.int64, copy=False)
            out["text_len"] = pa.array(lens)
        if old is not None:
            out["old"] = pa.array(np.full(len(id_np), old, dtype=bool))
        return pa.table(out)

    return ds.select_columns(columns).map_batches(normalise, batch_format="pyarrow")


def _group_counts(docs: "ray.data.Dataset", only_new: bool) -> "np.ndarray":
    """Documents per (block family, block value), summed over per-block native histograms."""
    import numpy as np
    import pyarrow as pa

    def histogram(t: "pa.Table") -> "pa.Table":
        import pyarrow.compute as pc

        from .._native import group_counts

        if only_new:
            t = t.filter(pc.invert(t.column("old")))
        counts = group_counts(t.column("fingerprint").to_numpy().view(np.uint64).copy())
        return pa.table({"counts": pa.array([counts.tobytes()], pa.binary())})

    counts = np.zeros(4 * 65536, dtype=np.uint64)
    for batch in docs.map_batches(histogram, batch_format="pyarrow", batch_size=None).iter_batches(
        batch_format="pyarrow"
    ):
        for blob in batch.column("counts").to_pylist():
            counts += np.frombuffer(blob, dtype=np.uint64)
    return counts


def _empty_pairs() -> "pa.Table":
    import pyarrow as pa

    return pa.table(
        {"a": pa.array([], pa.int64()), "b": pa.array([], pa.int64()), "distance": pa.array([], pa.int32())}
    )


class _StatsSink:
    """An actor the pair tasks report their work to as they succeed (Ray's stand-in for
    Spark's accumulators): sums, the largest task, and the work per pair-stage partition
    (the last report of each)."""

    def __init__(self) -> None:
        self.tasks = 0
        self.total_work = 0
        self.max_task_work = 0
        self.partition_work: Dict[int, int] = {}

    def add(self, partition: int, tasks: int, total_work: int, max_task_work: int) -> None:
        self.tasks += tasks
        self.total_work += total_work
        self.max_task_work = max(self.max_task_work, max_task_work)
        self.partition_work[partition] = total_work

    def get(self) -> Tuple[int, int, int, Dict[int, int]]:
        return self.tasks, self.total_work, self.max_task_work, dict(self.partition_work)


def _pairs(
    docs: "ray.data.Dataset", k: int, chunk_size: int, partitions: Optional[int], against: bool
) -> Tuple["ray.data.Dataset", PairStats]:
    """The pairs of ``docs`` (``id``, ``fingerprint``, and ``old`` when ``against``),
    materialized, and what the pair stage did."""
    import numpy as np
    import ray
    import ray.data

    from .._native import PartitionPlan

    counts = _group_counts(docs, False)
    new_counts = _group_counts(docs, True) if against else None
    plan = PartitionPlan(counts, k, chunk_size, new_counts)
    n = partitions or max(8, 4 * int(ray.cluster_resources().get("CPU", 2)))
    sink: Any = ray.remote(_StatsSink).options(num_cpus=0).remote()

    def explode(t: "pa.Table") -> "pa.Table":
        import pyarrow as pa

        old = t.column("old").to_numpy(zero_copy_only=False) if against else None
        task, side, fp, id_ = plan.explode(
            t.column("id").to_numpy().astype(np.int64, copy=False),
            t.column("fingerprint").to_numpy().view(np.uint64),
            old,
        )
        return pa.table(
            {
                "part": pa.array(partition_of(task, n).astype(np.int32)),
                "task": pa.array(task),
                "side": pa.array(side),
                "fingerprint": pa.array(fp, pa.uint64()),
                "id": pa.array(id_),
            }
        )

    def pairs_of(rows: Dict[str, "np.ndarray"]) -> Dict[str, "np.ndarray"]:
        import ray

        from .._native import task_pairs

        order = np.argsort(rows["task"], kind="stable")
        found = task_pairs(
            np.ascontiguousarray(rows["task"][order]),
            np.ascontiguousarray(rows["side"][order]).view(np.uint8),
            np.ascontiguousarray(rows["fingerprint"][order]).view(np.uint64),
            np.ascontiguousarray(rows["id"][order]),
            k,
            True,
        )
        armed = os.environ.get(_FAIL_ONCE_ENV)
        if armed:
            try:
                os.rename(armed, armed + ".fired")
            except FileNotFoundError:
                pass
            else:
                raise RuntimeError("injected failure of a pair task (a test of retries)")
        ray.get(
            sink.add.remote(
                int(rows["part"][0]), found["tasks"], found["total_work"], found["max_task_work"]
            )
        )
        return {"a": found["a"], "b": found["b"], "distance": found["distance"].astype(np.int32)}

    rows = docs.map_batches(explode, batch_format="pyarrow")
    try:
        pairs = (
            rows.groupby("part", num_partitions=min(n, 64))
            .map_groups(pairs_of, batch_format="numpy", **_RETRY)
            .materialize()
        )
        tasks, total, largest, per_partition = ray.get(sink.get.remote())
    finally:
        ray.kill(sink)  # also when the stage fails (a duplicate id), not to leak the actor
    stats = PairStats(tasks, total, largest, per_partition)
    if pairs.count() == 0:
        return ray.data.from_arrow(_empty_pairs()), stats
    return pairs, stats


def _collect(ds: "ray.data.Dataset", columns: List[str]) -> Dict[str, "np.ndarray"]:
    """Columns of ``ds`` gathered on the driver as numpy arrays."""
    import numpy as np
    import pyarrow as pa
    import ray

    tables = [t for t in ray.get(ds.select_columns(columns).to_arrow_refs()) if t.num_rows]
    if not tables:
        return {c: np.zeros(0, dtype=np.int64) for c in columns}
    table = pa.concat_tables(tables)
    return {c: table.column(c).to_numpy() for c in columns}


def _member_rows(docs: "ray.data.Dataset", ids: "np.ndarray", columns: List[str]) -> Dict[str, "np.ndarray"]:
    """``columns`` of the documents whose id is in ``ids`` (sorted), gathered on the driver."""
    import numpy as np

    def members(t: "pa.Table") -> "pa.Table":
        import pyarrow as pa

        mine = t.column("id").to_numpy()
        return t.select(columns).filter(pa.array(np.isin(mine, ids)))

    return _collect(docs.map_batches(members, batch_format="pyarrow"), columns)


def _lookup(ids: "np.ndarray", keys: "np.ndarray", values: "np.ndarray", default: Any) -> "np.ndarray":
    """``values`` of each of ``ids`` by ``keys`` (``default`` when absent)."""
    import numpy as np

    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    at = np.searchsorted(keys, ids)
    at = np.minimum(at, max(0, len(keys) - 1))
    found = (len(keys) > 0) & (keys[at] == ids) if len(keys) else np.zeros(len(ids), dtype=bool)
    out = np.full(len(ids), default, dtype=values.dtype if len(values) else np.int64)
    if len(keys):
        out[found] = values[at[found]]
    return out


def _scatter(edges: "np.ndarray", both: bool, n: int) -> Any:
    """Rows (``(m, 2)`` int64; with ``both`` each edge also reversed) cut into ``n`` pieces
    by a hash of their first column, the node each step gathers by."""
    import numpy as np

    from .. import _components

    if both:
        edges = _components.both_directions(edges)
    part = partition_of(np.ascontiguousarray(edges[:, 0]), n)
    order = np.argsort(part, kind="stable")
    bounds = np.searchsorted(part[order], np.arange(n + 1))
    edges = edges[order]
    pieces = tuple(edges[bounds[j] : bounds[j + 1]] for j in range(n))
    return pieces if n > 1 else pieces[0]


def _gathered(step: Any, *pieces: "np.ndarray") -> Any:
    """``step`` (a function of :mod:`simhash_store._components`) over one partition's pieces."""
    import numpy as np

    return step(np.concatenate(pieces) if pieces else np.zeros((0, 2), np.int64))


def _components_distributed(
    pairs: "ray.data.Dataset", n: int, max_rounds: int = 100
) -> Tuple["np.ndarray", "np.ndarray"]:
    """``(ids, clusters)`` (lowest id of the component), sorted by id, by the star steps of
    :mod:`simhash_store._components` as Ray tasks: each step scatters every partition's rows
    by a hash of their node into ``n`` pieces and gathers each node's rows in one task. The
    edges stay in the object store; only the final stars come to the driver."""
    import numpy as np
    import ray

    from .. import _components

    scatter = ray.remote(_scatter).options(num_returns=n, **_RETRY)
    gathered = ray.remote(_gathered).options(**_RETRY)
    status = ray.remote(_components.status_rows).options(**_RETRY)

    def to_edges(t: "pa.Table") -> "np.ndarray":
        from .. import _components

        return _components.oriented(t.column("a").to_numpy(), t.column("b").to_numpy())

    def shuffle(parts: List[Any], both: bool) -> List[List[Any]]:
        outs = [scatter.remote(p, both, n) for p in parts]
        outs = [o if n > 1 else [o] for o in outs]
        return [[o[j] for o in outs] for j in range(n)]

    edges = [ray.remote(to_edges).options(**_RETRY).remote(r) for r in pairs.to_arrow_refs()]
    for _ in range(max_rounds):
        large = [gathered.remote(_components.large_star, *p) for p in shuffle(edges, True)]
        edges = [gathered.remote(_components.small_star, *p) for p in shuffle(large, False)]
        rows = shuffle([status.remote(e) for e in edges], False)
        if sum(ray.get([gathered.remote(_components.pending, *p) for p in rows])) == 0:
            break
    else:  # pragma: no cover - O(log^2 n) rounds in theory
        raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")
    final = [e for e in ray.get(edges) if len(e)]
    return _components.star_members(np.concatenate(final) if final else np.zeros((0, 2), np.int64))


def _clusters(
    pairs: "ray.data.Dataset",
    docs: "ray.data.Dataset",
    representative: str,
    against: bool,
    n_pairs: int,
    budget: int,
    partitions: int,
) -> "ray.data.Dataset":
    """The cluster rows (``id``, ``cluster``, ``representative``, ``keep``): the components
    on the driver or distributed, and the representative rule, of
    :mod:`simhash_store._components`; here only the members' lengths and old flags are
    gathered."""
    import numpy as np
    import pyarrow as pa
    import ray.data

    from .. import _components

    if n_pairs <= budget:
        p = _collect(pairs, ["a", "b"])
        ids, clusters = _components.components(p["a"], p["b"])
    else:
        ids, clusters = _components_distributed(pairs, partitions)
    wanted = (["text_len"] if representative == "longest" else []) + (["old"] if against else [])
    text_len = old = None
    if wanted:
        rows = _member_rows(docs, ids, ["id"] + wanted)
        if "text_len" in wanted:
            text_len = _lookup(ids, rows["id"], rows["text_len"].astype(np.int64), 0)
        if against:
            old = _lookup(ids, rows["id"], rows["old"].astype(bool), False).astype(bool)
    rep, keep = _components.representatives(ids, clusters, representative, text_len=text_len, old=old)
    return ray.data.from_arrow(
        pa.table(
            {
                "id": pa.array(ids.astype(np.int64)),
                "cluster": pa.array(clusters.astype(np.int64)),
                "representative": pa.array(rep.astype(np.int64)),
                "keep": pa.array(keep.astype(bool)),
            }
        )
    )


def _dedup(
    docs: "ray.data.Dataset",
    k: int,
    representative: str,
    chunk_size: int,
    partitions: Optional[int],
    driver_edge_budget: int,
    against: bool,
) -> DedupResult:
    import ray

    docs = docs.materialize()
    pairs, stats = _pairs(docs, k, chunk_size, partitions, against)
    n_pairs = pairs.count()
    n = partitions or max(8, 4 * int(ray.cluster_resources().get("CPU", 2)))

    def make_clusters(pairs: "ray.data.Dataset") -> "ray.data.Dataset":
        return _clusters(pairs, docs, representative, against, n_pairs, driver_edge_budget, n)

    return DedupResult(pairs, k, representative, stats, make_clusters, docs)


def dedup(
    ds: "ray.data.Dataset",
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
    """Every pair of documents of ``ds`` within Hamming distance ``k``, their clusters and
    the documents to drop: exactly what ``Store.pairs(k)``, ``Store.clusters(k)`` and
    ``simhash-store dedup -k K`` give for the same ids and fingerprints, for any ``k`` in
    ``0..=64``. The arguments are those of :func:`simhash_store.spark.dedup`:

    Args:
        ds: the documents: a unique, non-negative integer ``id_col`` and a
            ``fingerprint_col`` of ``uint64`` (as :func:`fingerprints` writes it), ``int64``
            (read as the 64 bits in two's complement) or Python ints in -2**63..2**64 (as
            ``ray.data.from_items`` makes it: Ray keeps a block's ints as Python objects
            once one is 2**63 or more); rows with a null fingerprint are left out. A
            column of another type (a float, a string) is refused at the call.
        k: the largest distance of a near-duplicate pair (0..=64).
        representative: ``"lowest-id"`` or ``"longest"`` (the largest ``text_len_col``,
            ties to the lowest id).
        chunk_size: documents of one block group compared in one task; a larger group is
            split into chunks, or on sub-blocks when that copies fewer rows.
        partitions: groups of the pair stage (default four per CPU of the cluster).
        driver_edge_budget: up to this many pairs, clusters are computed on the driver;
            above it, distributed.

    >>> import ray                                                    # doctest: +SKIP
    >>> from simhash_store.ray import dedup
    >>> ds = ray.data.from_items([{"id": 1, "fingerprint": 15}, {"id": 2, "fingerprint": 7},
    ...                           {"id": 3, "fingerprint": 2**64 - 1}])  # doctest: +SKIP
    >>> result = dedup(ds, k=3)                                       # doctest: +SKIP
    >>> result.pairs.take_all()                                       # doctest: +SKIP
    [{'a': 1, 'b': 2, 'distance': 1}]

    Raises:
        ValueError: a missing column, ``k`` out of range, an unknown representative, a
            null or negative id, an id given to two documents within ``k``.
        TypeError: a column of a type that cannot hold ids or fingerprints, or a value
            that is not an int in a column of Python objects.
    """
    require_ray()
    k = check_k(k)
    representative = check_representative(representative, text_len_col, "Ray")
    check_tuning(chunk_size, partitions, driver_edge_budget)
    docs = _documents(ds, "the Dataset", id_col, fingerprint_col, text_len_col, None)
    return _dedup(docs, k, representative, chunk_size, partitions, driver_edge_budget, False)


def dedup_against(
    new_ds: "ray.data.Dataset",
    old_ds: "ray.data.Dataset",
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
    """Deduplicates a new dump against an earlier one, which is kept whole: the rule of
    :func:`simhash_store.spark.dedup_against`. Pairs of two old documents are not compared;
    in a cluster with an old member every old member is kept, every new one dropped, and the
    representative is the lowest old id; a cluster of new documents only follows
    ``representative``. Ids must be distinct across both Datasets; each Dataset's columns
    may be of any type :func:`dedup` takes.
    """
    require_ray()
    k = check_k(k)
    representative = check_representative(representative, text_len_col, "Ray")
    check_tuning(chunk_size, partitions, driver_edge_budget)
    new = _documents(new_ds, "new_ds", id_col, fingerprint_col, text_len_col, False)
    old = _documents(old_ds, "old_ds", id_col, fingerprint_col, text_len_col, True)
    return _dedup(new.union(old), k, representative, chunk_size, partitions, driver_edge_budget, True)


__all__: List[str] = ["DedupResult", "PairStats", "dedup", "dedup_against"]
