"""`simhash_store.compat.SimhashIndex` behaves as the PyPI `simhash` package's index does
(exactly, where that one is exact), with fingerprints from either package."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import popcount64
from simhash_store.compat import SimhashIndex


def test_matches_brute_force_and_the_api():
    rng = np.random.default_rng(2)
    fps = rng.integers(0, 2**64, size=500, dtype=np.uint64)
    fps[100:150] = fps[:50] ^ np.uint64(0b101)
    objs = [(f"doc{i}", int(fp)) for i, fp in enumerate(fps)]
    with SimhashIndex(objs, k=2) as index:
        assert index.bucket_size == 500
        for i in range(0, 500, 7):
            d = popcount64(fps ^ fps[i])
            expected = sorted(f"doc{j}" for j in np.nonzero(d <= 2)[0])
            assert sorted(index.get_near_dups(int(fps[i]))) == expected
        index.add("new", int(fps[3]) ^ 1)
        assert "new" in index.get_near_dups(int(fps[3]))
        index.add("new", 12345)  # replaces
        assert index.bucket_size == 501
        assert index.get_near_dups(12345) == ["new"]
        index.delete("new", 12345)
        assert index.get_near_dups(12345) == []


def test_with_the_simhash_package_objects(tmp_path):
    simhash = pytest.importorskip("simhash")
    a = simhash.Simhash("the quick brown fox jumps over the lazy dog")
    b = simhash.Simhash("the quick brown fox jumps over the lazy dogs")
    reference = simhash.SimhashIndex([("a", a)], k=8)
    with SimhashIndex([("a", a)], k=8, path=str(tmp_path / "idx")) as index:
        assert index.get_near_dups(b) == reference.get_near_dups(b)
    # The index persists in `path`.
    with SimhashIndex(path=str(tmp_path / "idx"), k=0) as again:
        assert again.get_near_dups(a) == ["a"]


def test_only_64_bits():
    with pytest.raises(ValueError, match="64 bits"):
        SimhashIndex([], f=128)
