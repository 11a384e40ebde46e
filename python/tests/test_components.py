"""`simhash_store._components`, the clusters both scale-out engines use: the components
(the crate's union-find and the star steps) equal a breadth-first search over random edge
lists, chains, stars, self-loops and repeated edges included; the representative rule
equals a plain reading of the rule, and the Rust library's `Clusters` on a real store."""

from __future__ import annotations

from collections import deque
from typing import Dict, List, Tuple

import numpy as np
import pytest

import simhash_store
from simhash_store import _components as C


def brute_components(edges: List[Tuple[int, int]]) -> Dict[int, int]:
    """Each id linked to another id -> the lowest id reachable from it, by a breadth-first
    search from every id (a self-loop links nothing)."""
    adjacent: Dict[int, set] = {}
    for a, b in edges:
        if a != b:
            adjacent.setdefault(a, set()).add(b)
            adjacent.setdefault(b, set()).add(a)
    out: Dict[int, int] = {}
    for start in adjacent:
        seen, queue = {start}, deque([start])
        while queue:
            for y in adjacent[queue.popleft()]:
                if y not in seen:
                    seen.add(y)
                    queue.append(y)
        out[start] = min(seen)
    return out


def random_edges(rng: np.random.Generator) -> List[Tuple[int, int]]:
    """A random mix of chains (ids in random order along the chain), stars (around a random
    centre, not always the lowest id), random edges, self-loops and repeated edges, over
    ids that are sparse (up to 2**40) or dense (a few dozen)."""
    span = int(rng.choice([30, 1_000, 2**40]))
    edges: List[Tuple[int, int]] = []
    for _ in range(int(rng.integers(0, 6))):
        shape = rng.integers(0, 3)
        nodes = [int(x) for x in rng.integers(0, span, size=int(rng.integers(2, 40)))]
        if shape == 0:  # a chain
            edges += list(zip(nodes, nodes[1:]))
        elif shape == 1:  # a star
            edges += [(nodes[0], x) for x in nodes[1:]]
        else:  # random edges among these nodes
            edges += [
                (nodes[int(rng.integers(len(nodes)))], nodes[int(rng.integers(len(nodes)))])
                for _ in range(len(nodes))
            ]
    edges += [(x, x) for x in rng.integers(0, span, size=int(rng.integers(0, 4))).tolist()]
    if edges:
        again = rng.integers(0, len(edges), size=int(rng.integers(0, len(edges) + 1)))
        edges += [edges[i][::-1] if rng.random() < 0.5 else edges[i] for i in again]
    order = rng.permutation(len(edges))
    return [edges[i] for i in order]


def as_dict(ids: np.ndarray, clusters: np.ndarray) -> Dict[int, int]:
    assert ids.dtype == np.int64 and clusters.dtype == np.int64
    assert list(ids) == sorted(set(ids.tolist())), "ids must be distinct and sorted"
    return dict(zip(ids.tolist(), clusters.tolist()))


def arrays(edges: List[Tuple[int, int]]) -> Tuple[np.ndarray, np.ndarray]:
    pairs = np.array(edges, np.int64).reshape(-1, 2)
    return pairs[:, 0], pairs[:, 1]


@pytest.mark.parametrize("seed", range(300))
def test_components_equal_a_breadth_first_search(seed):
    edges = random_edges(np.random.default_rng(seed))
    want = brute_components(edges)
    a, b = arrays(edges)
    assert as_dict(*C.components(a, b)) == want
    assert as_dict(*C.star_components(a, b)) == want


@pytest.mark.parametrize(
    "edges",
    [
        [],
        [(3, 3)],
        [(1, 2), (2, 1), (1, 2)],
        [(i, i + 1) for i in range(200)],  # a long chain, lowest id at one end
        [(i + 1, i) for i in reversed(range(200))],
        [(100, i) for i in range(100)] + [(100, i) for i in range(101, 200)],  # a star
        [(1, 5), (2, 5), (2, 6), (0, 6)],  # a node left with two parents by one round
        [(2 * i, 2 * i + 2) for i in range(60)] + [(2 * i + 1, 2 * i + 3) for i in range(60)],
    ],
    ids=["none", "self-loop", "repeated", "chain", "chain-reversed", "star", "two-parents", "two-chains"],
)
def test_components_of_shapes(edges):
    want = brute_components(edges)
    a, b = arrays(edges)
    assert as_dict(*C.components(a, b)) == want
    assert as_dict(*C.star_components(a, b)) == want


def test_star_steps_split_over_partitions_give_the_same_components():
    """The steps as an engine runs them: edges shuffled by node into partitions, each step
    called per partition, the pending counts summed."""
    edges = [e for s in range(40) for e in random_edges(np.random.default_rng(1000 + s))]
    a, b = arrays(edges)

    def shuffle(parts: List[np.ndarray], n: int, by: int = 0) -> List[np.ndarray]:
        rows = np.concatenate(parts) if parts else np.zeros((0, 2), np.int64)
        where = rows[:, by] % n
        return [rows[where == j] for j in range(n)]

    n = 5
    edges_parts = [C.oriented(a[i::3], b[i::3]) for i in range(3)]
    for _ in range(100):
        large = [C.large_star(p) for p in shuffle([C.both_directions(e) for e in edges_parts], n)]
        edges_parts = [C.small_star(p) for p in shuffle(large, n)]
        if sum(C.pending(p) for p in shuffle([C.status_rows(e) for e in edges_parts], n)) == 0:
            break
    else:
        pytest.fail("the star steps did not converge")
    members = [C.star_members(p) for p in shuffle(edges_parts, n, by=1)]
    ids = np.concatenate([m[0] for m in members])
    clusters = np.concatenate([m[1] for m in members])
    order = np.argsort(ids)
    assert as_dict(ids[order], clusters[order]) == brute_components(edges)


def brute_representatives(
    ids: List[int],
    clusters: List[int],
    rule: str,
    text_len: List[int],
    added: List[int],
    old: List[bool],
) -> Tuple[List[int], List[bool]]:
    """The rule read plainly: per cluster, the lowest old id if it has old members, else the
    lowest id / the longest (ties to the lowest id) / the first added (ties to the lowest id)."""
    members: Dict[int, List[int]] = {}
    for i, c in enumerate(clusters):
        members.setdefault(c, []).append(i)
    chosen: Dict[int, int] = {}
    for c, rows in members.items():
        olds = [r for r in rows if old[r]]
        if olds:
            best = min(olds, key=lambda r: ids[r])
        elif rule == "longest":
            best = max(rows, key=lambda r: (text_len[r], -ids[r]))
        elif rule == "first-loaded":
            best = min(rows, key=lambda r: (added[r], ids[r]))
        else:
            best = min(rows, key=lambda r: ids[r])
        chosen[c] = best
    reps = [ids[chosen[c]] for c in clusters]
    has_old = {c for c, rows in members.items() if any(old[r] for r in rows)}
    keep = [old[i] if c in has_old else ids[i] == reps[i] for i, c in enumerate(clusters)]
    return reps, keep


@pytest.mark.parametrize("seed", range(100))
@pytest.mark.parametrize("rule", C.RULES)
def test_representatives_follow_the_rule(seed, rule):
    rng = np.random.default_rng(seed)
    edges = random_edges(rng) or [(1, 2)]
    ids, clusters = C.components(*arrays(edges))
    n = len(ids)
    # Few distinct lengths and load times, so that ties are common.
    text_len = rng.integers(0, 4, size=n)
    added = rng.choice(np.array([5, 9, 2**64 - 1], np.uint64), size=n)
    with_old = seed % 2 == 1
    old = rng.random(n) < 0.2 if with_old else np.zeros(n, bool)
    shuffled = rng.permutation(n)  # members in any order
    got_rep, got_keep = C.representatives(
        ids[shuffled],
        clusters[shuffled],
        rule,
        text_len=text_len[shuffled],
        added=added[shuffled],
        old=old[shuffled] if with_old else None,
    )
    want_rep, want_keep = brute_representatives(
        ids[shuffled].tolist(),
        clusters[shuffled].tolist(),
        rule,
        text_len[shuffled].tolist(),
        added[shuffled].tolist(),
        old[shuffled].tolist(),
    )
    assert got_rep.tolist() == want_rep
    assert got_keep.tolist() == want_keep
    assert got_rep.dtype == np.int64 and got_keep.dtype == bool


def test_representatives_refuse_what_they_cannot_decide():
    ids, clusters = np.array([1, 2]), np.array([1, 1])
    with pytest.raises(ValueError, match="unknown representative"):
        C.representatives(ids, clusters, "biggest")
    with pytest.raises(ValueError, match="needs text_len"):
        C.representatives(ids, clusters, "longest")
    with pytest.raises(ValueError, match="needs added"):
        C.representatives(ids, clusters, "first-loaded")
    with pytest.raises(ValueError, match="one value per id"):
        C.representatives(ids, clusters, "longest", text_len=[1])
    with pytest.raises(ValueError, match="non-negative"):
        C.components([-1], [2])
    rep, keep = C.representatives(np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert len(rep) == len(keep) == 0


WORDS = (
    "storage engines keep sorted runs of keys on disk and merge them in the background while "
    "readers see one consistent snapshot of every table compaction bloom filter block cache"
).split()


@pytest.mark.parametrize("rule", C.RULES)
def test_representatives_equal_the_rust_clusters(tmp_path, rule):
    """Documents with texts of many lengths (equal ones too), loaded in an order unlike
    their ids, and documents given by fingerprint only (no known length): the rule here
    picks the members `Store.clusters` picks."""
    rng = np.random.default_rng(11)
    with simhash_store.Store.open(tmp_path / "store") as store:
        ids = rng.permutation(np.arange(1, 400))
        for i, id_ in enumerate(ids.tolist()):
            base = " ".join(WORDS[(i % 13) : (i % 13) + 12])
            if i % 7 == 3:
                store.insert(id_, store.simhasher.fingerprint(base))
            else:
                tail = " ".join(rng.choice(WORDS, size=int(rng.integers(0, 3))).tolist())
                store.insert_text(id_, base + " " + tail + " ," * int(rng.integers(0, 4)))
        want = store.clusters(k=3, representative=rule).to_numpy()
        a, b, _ = store.pairs_numpy(k=3)
        got_ids, got_clusters = C.components(a.astype(np.int64), b.astype(np.int64))
        docs = [store.document(int(x)) for x in got_ids]
        text_len = np.array([(d.text_len or 0) if d else 0 for d in docs], np.int64)
        added = np.array([d.added if d else 2**64 - 1 for d in docs], np.uint64)
    assert len(want["id"]) > 100 and len(set(want["cluster"].tolist())) > 5
    rep, keep = C.representatives(got_ids, got_clusters, rule, text_len=text_len, added=added)
    assert got_ids.tolist() == want["id"].tolist()
    assert got_clusters.tolist() == want["cluster"].tolist()
    assert rep.tolist() == want["representative"].tolist()
    assert keep.tolist() == want["keep"].tolist()
    if rule != "lowest-id":
        assert (rep != got_clusters).any(), "the rule never differed from the lowest id"


def test_module_example_runs():
    import doctest

    result = doctest.testmod(C, raise_on_error=False)
    assert result.attempted > 0 and result.failed == 0
