"""Clusters of near-duplicates without an engine: the connected components of the pairs and
the rule that picks the document each cluster keeps.

The Spark and Ray jobs (:mod:`simhash_store.spark`, :mod:`simhash_store.ray`) call these
functions and keep only their own input, output and shuffles, so both engines give the same
clusters and the same drop lists, and the same as the command line. Everything here works on
numpy arrays of non-negative int64 document ids and knows nothing of DataFrames or Datasets.

The rule mirrors ``Clusters`` in src/dedup/clusters.rs (``ClusterBuilder::finish`` and
``Clusters::choose_representatives``), tie-breaks included:

- a cluster is a connected component of the pairs; its id is its lowest member id;
- ``"lowest-id"`` keeps the lowest id;
- ``"longest"`` keeps the longest text, an unknown length counting as 0, ties to the lowest
  id;
- ``"first-loaded"`` keeps the first stored (the lowest ``added``; a member that is not
  stored counts as loaded last), ties to the lowest id.

Deduplicating a new dump against an old one (``dedup_against``) adds one rule on top: in a
cluster with an old member, every old member is kept, every new one is dropped, and the
representative is the lowest old id.

Components are found in one of two ways:

- :func:`components`: on one machine, with the crate's union-find (``ClusterBuilder``,
  through the compiled extension), for as many pairs as the driver can hold;
- the star steps (:func:`large_star`, :func:`small_star`, :func:`pending`,
  :func:`star_members`): the same components computed on many machines by large-star /
  small-star (Kiveris et al., "Connected Components in MapReduce and Beyond", 2014), where
  each step only needs the edges of one node at a time, so an engine can shuffle the edges
  by node and call the step on each partition. :func:`star_components` runs the whole loop
  on one machine: the protocol an engine follows, with its shuffles taken out.

A pair of a document with itself (a self-loop) links nothing: a document that is only in
such pairs is in no cluster, as a document without a near-duplicate.

>>> import numpy as np
>>> a, b = np.array([30, 10, 7]), np.array([10, 20, 8])
>>> ids, clusters = components(a, b)
>>> ids.tolist(), clusters.tolist()
([7, 8, 10, 20, 30], [7, 7, 10, 10, 10])
>>> representative, keep = representatives(ids, clusters, "longest",
...                                        text_len=np.array([5, 9, 1, 40, 40]))
>>> representative.tolist(), keep.tolist()
([8, 8, 20, 20, 20], [False, True, False, True, False])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

#: The representative rules, as ``simhash-store dedup --representative`` spells them.
RULES = ("lowest-id", "longest", "first-loaded")

#: In the rows of :func:`pending`, the ``other`` of a row that marks a node as an edge's
#: target (ids are non-negative).
TARGET = -1

Edges = np.ndarray
"""Edges as an ``(m, 2)`` int64 array of rows ``[u, v]``."""


def _ids(values: "npt.ArrayLike", name: str) -> np.ndarray:
    """``values`` as a contiguous one-dimensional int64 array of non-negative ids."""
    out = np.ascontiguousarray(values, dtype=np.int64)
    if out.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {out.shape}")
    if len(out) and out.min() < 0:
        raise ValueError(f"ids must be non-negative, got {int(out.min())} in {name}")
    return out


def _no_edges() -> Edges:
    return np.zeros((0, 2), np.int64)


def components(a: "npt.ArrayLike", b: "npt.ArrayLike") -> Tuple[np.ndarray, np.ndarray]:
    """The connected components of the pairs ``(a[i], b[i])`` on one machine, by the crate's
    union-find (``ClusterBuilder``): ``(ids, clusters)``, int64, one row per id in a pair
    (self-loops aside), sorted by id, ``clusters`` the lowest id of the component.

    About 40 bytes per pair while it runs; the pairs may come in any order and repeat.
    """
    from ._native import spark_components

    a, b = _ids(a, "a"), _ids(b, "b")
    if len(a) != len(b):
        raise ValueError(f"a has {len(a)} ids and b {len(b)}: one of each per pair")
    linked = a != b
    if not linked.all():
        a, b = np.ascontiguousarray(a[linked]), np.ascontiguousarray(b[linked])
    ids, clusters = spark_components(a, b)
    return np.asarray(ids, np.int64), np.asarray(clusters, np.int64)


def oriented(a: "npt.ArrayLike", b: "npt.ArrayLike") -> Edges:
    """The pairs as the edges the star steps take: ``[u, v]`` with ``u > v`` (the higher
    id first), distinct, self-loops left out."""
    a, b = _ids(a, "a"), _ids(b, "b")
    if len(a) != len(b):
        raise ValueError(f"a has {len(a)} ids and b {len(b)}: one of each per pair")
    e = np.stack([np.maximum(a, b), np.minimum(a, b)], axis=1)
    e = e[e[:, 0] != e[:, 1]]
    return np.unique(e, axis=0) if len(e) else _no_edges()


def both_directions(edges: Edges) -> Edges:
    """Every edge ``[u, v]`` and its reverse ``[v, u]``: what :func:`large_star` is shuffled
    by ``u`` from, so that each node sees all its neighbours."""
    edges = np.asarray(edges, np.int64).reshape(-1, 2)
    return np.concatenate([edges, edges[:, ::-1]])


def _neighbourhoods(edges: Edges) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The distinct edges sorted by ``u``, then ``v`` (as ``u``, ``v``), and for each edge
    the least of its ``u`` and all of ``u``'s neighbours; with the first row of each ``u``."""
    e = np.unique(np.asarray(edges, np.int64).reshape(-1, 2), axis=0)
    u, v = e[:, 0], e[:, 1]
    starts = np.flatnonzero(np.r_[True, u[1:] != u[:-1]])
    least = np.minimum(np.minimum.reduceat(v, starts), u[starts])
    return u, v, least[np.searchsorted(u[starts], u)], starts


def large_star(edges: Edges) -> Edges:
    """One large-star step over the edges of some nodes, both directions (every edge of
    each node ``u`` here, as :func:`both_directions` gives them shuffled by ``u``): each
    neighbour of ``u`` higher than ``u`` is linked to the least of ``u`` and its neighbours.
    Returns distinct edges ``[u, v]`` with ``u > v``."""
    if not len(edges):
        return _no_edges()
    u, v, least, _ = _neighbourhoods(edges)
    higher = v > u
    out = np.stack([v[higher], least[higher]], axis=1)
    return np.unique(out, axis=0) if len(out) else _no_edges()


def small_star(edges: Edges) -> Edges:
    """One small-star step over edges ``[u, v]`` with ``u > v`` (every edge of each ``u``
    here, shuffled by ``u``): ``u`` and each of its neighbours are linked to the least
    neighbour. Returns distinct edges ``[u, v]`` with ``u > v``."""
    if not len(edges):
        return _no_edges()
    u, v, least, starts = _neighbourhoods(edges)
    out = np.concatenate(
        [np.stack([v, least], axis=1), np.stack([u[starts], least[starts]], axis=1)]
    )
    out = out[out[:, 0] != out[:, 1]]
    return np.unique(out, axis=0) if len(out) else _no_edges()


def status_rows(edges: Edges) -> np.ndarray:
    """The rows :func:`pending` counts from, to be shuffled by their first column (the node):
    ``[u, v]`` for each edge (``u`` has parent ``v``) and ``[v, TARGET]`` (``v`` is a parent)."""
    edges = np.asarray(edges, np.int64).reshape(-1, 2)
    marks = np.stack([edges[:, 1], np.full(len(edges), TARGET, np.int64)], axis=1)
    return np.concatenate([edges, marks])


def pending(rows: np.ndarray) -> int:
    """How far the edges are from the end of the star steps, over the :func:`status_rows` of
    some nodes (every row of each node here): the number of nodes that have a parent and
    are a parent themselves, plus the number of extra parents of nodes that have more than
    one. Zero when the edges are stars, one per component, around its lowest id: then
    :func:`star_members` gives the components."""
    rows = np.asarray(rows, np.int64).reshape(-1, 2)
    if not len(rows):
        return 0
    is_target = rows[:, 1] == TARGET
    edges = np.unique(rows[~is_target], axis=0)
    children = np.unique(edges[:, 0])
    extra_parents = len(edges) - len(children)
    parents = np.unique(rows[is_target, 0])
    chained = int(np.isin(parents, children).sum()) if len(children) else 0
    return chained + extra_parents


def star_members(edges: Edges) -> Tuple[np.ndarray, np.ndarray]:
    """``(ids, clusters)`` of the stars once :func:`pending` is zero, over the edges of some
    roots (every edge of each root ``v`` here, shuffled by ``v``): each ``u`` with its root
    as cluster, and each root with itself; int64, sorted by id."""
    edges = np.asarray(edges, np.int64).reshape(-1, 2)
    if not len(edges):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    e = np.unique(edges, axis=0)
    roots = np.unique(e[:, 1])
    ids = np.concatenate([e[:, 0], roots])
    clusters = np.concatenate([e[:, 1], roots])
    order = np.argsort(ids, kind="stable")
    return ids[order], clusters[order]


def star_components(
    a: "npt.ArrayLike", b: "npt.ArrayLike", max_rounds: int = 100
) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`components` by the star steps on one machine: what the engines do, with one
    partition. Each round is a large-star then a small-star step, until :func:`pending` is
    zero (O(log^2 n) rounds at worst, a few in practice).

    Raises:
        RuntimeError: not finished in ``max_rounds`` rounds.
    """
    edges = oriented(a, b)
    for _ in range(max_rounds):
        edges = small_star(large_star(both_directions(edges)))
        if pending(status_rows(edges)) == 0:
            return star_members(edges)
    raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")


def check_rule(rule: str) -> str:
    """``rule`` if it is one of :data:`RULES`, else a ValueError naming them."""
    if rule not in RULES:
        raise ValueError(f"unknown representative {rule!r}: expected one of {', '.join(RULES)}")
    return rule


def _column(
    values: Optional["npt.ArrayLike"], n: int, name: str, dtype: "npt.DTypeLike"
) -> np.ndarray:
    out = np.asarray(values, dtype=dtype)
    if out.shape != (n,):
        raise ValueError(f"{name} has shape {out.shape}, expected ({n},): one value per id")
    return out


def representatives(
    ids: "npt.ArrayLike",
    clusters: "npt.ArrayLike",
    rule: str = "lowest-id",
    *,
    text_len: Optional["npt.ArrayLike"] = None,
    added: Optional["npt.ArrayLike"] = None,
    old: Optional["npt.ArrayLike"] = None,
) -> Tuple[np.ndarray, np.ndarray]:
    """Each member's ``representative`` (the member its cluster keeps) and ``keep``
    (whether it is that member), aligned with ``ids``.

    Args:
        ids: the members (distinct), every member of each of their clusters given.
        clusters: each member's cluster (any value shared by exactly the members of one
            cluster, such as its lowest id).
        rule: one of :data:`RULES`.
        text_len: the text length of each member, for ``"longest"`` (an unknown length is
            passed as 0).
        added: the load order of each member (``Document.added``), for ``"first-loaded"``
            (a member no longer stored is passed as ``2**64 - 1``).
        old: whether each member comes from the old dump (``dedup_against``): a cluster
            with an old member keeps exactly its old members, represented by the lowest.

    Raises:
        ValueError: an unknown rule, a rule without its column, columns of other lengths.
    """
    check_rule(rule)
    ids = np.asarray(ids, np.int64)
    n = len(ids)
    clusters = _column(clusters, n, "clusters", np.int64)
    if rule == "longest":
        if text_len is None:
            raise ValueError('representative "longest" needs text_len, the text lengths')
        key = -_column(text_len, n, "text_len", np.int64)
    elif rule == "first-loaded":
        if added is None:
            raise ValueError('representative "first-loaded" needs added, the load order')
        key = _column(added, n, "added", np.uint64)
    else:
        key = np.zeros(n, np.int64)
    is_old = None if old is None else _column(old, n, "old", bool)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, bool)
    if is_old is None:
        order = np.lexsort((ids, key, clusters))
    else:
        # Old members first, among them the lowest id (the rule's key does not apply).
        key = key.copy()
        key[is_old] = 0
        order = np.lexsort((ids, key, ~is_old, clusters))
    sorted_clusters = clusters[order]
    starts = np.flatnonzero(np.r_[True, sorted_clusters[1:] != sorted_clusters[:-1]])
    group = np.searchsorted(sorted_clusters[starts], clusters)
    chosen = order[starts][group]
    representative = ids[chosen]
    keep = ids == representative
    if is_old is not None:
        keep = np.where(is_old[chosen], is_old, keep)
    return representative, keep
