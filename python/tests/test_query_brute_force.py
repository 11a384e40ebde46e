"""Every answer equals a numpy brute-force scan: queries for k in 0..=8 over random and
planted fingerprints (skewed block values included), all pairs and clusters."""

from __future__ import annotations

import numpy as np
import pytest

import simhash_store
from conftest import brute_pairs, components, planted, popcount64

N = 3000


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    rng = np.random.default_rng(11)
    fps = planted(rng, N, k=8)
    ids = rng.permutation(np.arange(10, 10 + 3 * N, 3, dtype=np.uint64))
    with simhash_store.Store.open(tmp_path_factory.mktemp("bf") / "store") as store:
        store.insert_many(ids[: N // 2], fps[: N // 2])
        store.bulk_load_fingerprints(ids[N // 2 :], fps[N // 2 :])
        yield store, ids, fps


@pytest.mark.parametrize("k", range(0, 9))
def test_query_equals_brute_force(loaded, k):
    store, ids, fps = loaded
    rng = np.random.default_rng(k)
    bits = np.uint64(1) << np.arange(64, dtype=np.uint64)
    # Stored fingerprints moved by 0..=k+1 bits, and fresh random ones.
    queries = []
    for i in rng.choice(N, size=60, replace=False):
        d = int(rng.integers(0, k + 2))
        flip = np.bitwise_or.reduce(bits[rng.choice(64, size=d, replace=False)]) if d else np.uint64(0)
        queries.append(int(fps[i] ^ flip))
    queries += [int(x) for x in rng.integers(0, 2**64, size=20, dtype=np.uint64)]
    many = store.query_many(np.array(queries, dtype=np.uint64), k=k)
    assert len(many) == len(queries)
    checked = 0
    for q, batch in zip(queries, many):
        d = popcount64(fps ^ np.uint64(q))
        hit = np.nonzero(d <= k)[0]
        expected = sorted((int(d[i]), int(ids[i])) for i in hit)
        got = [(m.distance, m.id) for m in store.query(q, k)]
        assert got == expected
        assert [(m.distance, m.id) for m in batch] == expected
        for m in batch:
            assert m.fingerprint == int(fps[np.nonzero(ids == m.id)[0][0]])
            assert m.key is None
        checked += len(expected)
    assert checked > 0


@pytest.mark.parametrize("k", [0, 3, 6])
def test_pairs_and_clusters_equal_brute_force(loaded, k):
    store, ids, fps = loaded
    expected = brute_pairs(ids, fps, k)
    assert len(expected) > 100
    streamed = list(store.pairs(k))
    assert len(streamed) == len(set(streamed)), "a pair reported twice"
    assert set(streamed) == expected
    a, b, d = store.pairs_numpy(k)
    assert a.dtype == np.uint64 and d.dtype == np.uint8
    assert set(zip(a.tolist(), b.tolist(), d.tolist())) == expected
    assert list(zip(a.tolist(), b.tolist())) == sorted(zip(a.tolist(), b.tolist()))

    groups: dict[int, list[int]] = {}
    for x, lowest in components(expected).items():
        groups.setdefault(lowest, []).append(x)
    want = sorted(sorted(g) for g in groups.values())

    clusters = store.clusters(k)
    got = [c.members for c in clusters]
    assert got == want
    assert clusters.pairs == len(expected)
    assert sum(clusters.per_distance) == len(expected)
    assert all(c.id == c.members[0] == c.representative for c in clusters)
    drop = clusters.drop_ids().tolist()
    assert drop == sorted(m for g in want for m in g[1:])
    table = clusters.to_numpy()
    assert table["id"].tolist() == sorted(m for g in want for m in g)
    assert int(table["keep"].sum()) == len(want)


def test_pairs_arrow(loaded):
    pa = pytest.importorskip("pyarrow")
    store, ids, fps = loaded
    table = store.pairs_arrow(3)
    assert isinstance(table, pa.Table)
    assert table.column_names == ["a", "b", "distance"]
    assert set(zip(*(table.column(c).to_pylist() for c in table.column_names))) == brute_pairs(ids, fps, 3)


def test_packed_store_through_single_writes_removals_and_compact(tmp_path):
    """A new store is format 9 (packed posting blocks): a bulk load, single inserts, removals
    and a compaction (which folds them all into packed chunks) answer like brute force."""
    rng = np.random.default_rng(5)
    n = 2000
    fps = planted(rng, n, k=6)
    ids = np.arange(100, 100 + n, dtype=np.uint64)
    with simhash_store.Store.open(tmp_path / "store") as store:
        assert store.format_version == 9
        store.bulk_load_fingerprints(ids[: n // 2], fps[: n // 2])
        store.insert_many(ids[n // 2 :], fps[n // 2 :])
        kept = np.ones(n, dtype=bool)
        for i in range(0, n, 3):
            assert store.remove(int(ids[i]))
            kept[i] = False

        def check():
            for q in fps[:80]:
                d = popcount64(fps[kept] ^ q)
                expected = sorted((int(d[i]), int(ids[kept][i])) for i in np.nonzero(d <= 6)[0])
                assert [(m.distance, m.id) for m in store.query(int(q), 6)] == expected

        check()
        store.compact()
        check()
        assert store.verify().is_clean
        assert len(store) == int(kept.sum())


@pytest.mark.parametrize("concurrent", [True, False])
@pytest.mark.parametrize("mmap", [True, False])
def test_every_way_of_reading_equals_brute_force(tmp_path, concurrent, mmap):
    rng = np.random.default_rng(23)
    fps = planted(rng, N, k=6)
    ids = np.arange(N, dtype=np.uint64)
    with simhash_store.Store.open(tmp_path / "store") as store:
        store.bulk_load_fingerprints(ids, fps)
    # Reopened: the files are read as the options say (a new store's are written by it).
    with simhash_store.Store.open(
        tmp_path / "store", concurrent_reads=concurrent, mmap_reads=mmap
    ) as store:
        for k in (0, 3, 6):
            for q in [int(x) for x in fps[:40]] + [int(x) for x in rng.integers(0, 2**64, size=10, dtype=np.uint64)]:
                d = popcount64(fps ^ np.uint64(q))
                expected = sorted((int(d[i]), int(ids[i])) for i in np.nonzero(d <= k)[0])
                assert [(m.distance, m.id) for m in store.query(q, k)] == expected


@pytest.mark.parametrize("option", ["concurrent_reads", "mmap_reads"])
def test_read_options_must_be_bools(tmp_path, option):
    with pytest.raises(TypeError):
        simhash_store.Store.open(tmp_path / "store", **{option: "yes"})


@pytest.mark.parametrize("k", [0, 3, 6])
def test_insert_many_if_new_equals_brute_force(tmp_path, k):
    """Each document is kept out exactly by the documents within ``k`` that are stored
    before it: those loaded first and those of the same call accepted before it."""
    rng = np.random.default_rng(100 + k)
    fps = planted(rng, 600, k=k)
    ids = np.arange(600, dtype=np.uint64)
    with simhash_store.Store.open(tmp_path / "store") as store:
        store.insert_many(ids[:200], fps[:200])
        found = store.insert_many_if_new(ids[200:], fps[200:], k=k)
        stored = list(range(200))
        for i, matches in zip(range(200, 600), found):
            near = [j for j in stored if bin(int(fps[i]) ^ int(fps[j])).count("1") <= k]
            assert sorted(m.id for m in matches) == near, i
            if not near:
                stored.append(i)
        assert len(store) == len(stored)
        assert all(i in store for i in stored)
