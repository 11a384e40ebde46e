"""Streaming iterators (documents, pairs) and progress reports of scans."""

from __future__ import annotations

import numpy as np
import pytest

import simhash_store


@pytest.fixture
def filled(store):
    rng = np.random.default_rng(4)
    ids = np.arange(0, 30_000, 3, dtype=np.uint64)
    fps = rng.integers(0, 2**64, size=len(ids), dtype=np.uint64)
    fps[1::50] = fps[0::50][: len(fps[1::50])] ^ np.uint64(0b11)
    keys = [f"k{i}" if i % 7 == 0 else None for i in range(len(ids))]
    store.bulk_load_fingerprints(ids, fps, keys)
    return store, ids, fps, keys


def test_documents_stream_in_id_order(filled):
    store, ids, fps, keys = filled
    docs = list(store.documents())
    assert [d[0] for d in docs] == ids.tolist()
    assert [d[1] for d in docs] == fps.tolist()
    assert [d[2] for d in docs] == keys
    got_ids, got_fps = store.documents_numpy()
    assert got_ids.dtype == np.uint64 and (got_ids == ids).all() and (got_fps == fps).all()


def test_documents_see_one_snapshot(filled):
    store, ids, _, _ = filled
    it = store.documents()
    first = next(it)
    store.insert(10**9, 1)
    rest = list(it)
    assert len(rest) + 1 == len(ids)
    assert first[0] == 0


def test_closing_an_iterator_stops_it(filled):
    store, _, _, _ = filled
    it = store.documents()
    next(it)
    it.close()
    assert list(it) == []
    pairs = store.pairs(3)
    pairs.close()
    assert list(pairs) == []
    # Dropping an unfinished iterator leaves the store usable.
    it = store.pairs(20)
    del it
    assert store.verify().is_clean


def test_scan_progress(filled):
    store, _, _, _ = filled
    seen = []
    a, _, _ = store.pairs_numpy(3, progress=lambda scanned, total: seen.append((scanned, total)))
    assert seen, "the progress callable was not called"
    assert seen[-1][0] == seen[-1][1] == 4 * len(store)
    assert all(s <= t for s, t in seen)
    calls = []
    clusters = store.clusters(3, progress=lambda s, t: calls.append(s))
    assert calls and calls[-1] == 4 * len(store)
    assert clusters.pairs == len(a) > 0
    store.clusters(3, progress=True)
    with pytest.raises(TypeError, match="progress"):
        store.clusters(3, progress="yes")

    def boom(scanned, total):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        store.pairs_numpy(3, progress=boom)
