"""Many Python threads share one Store: writers and readers at once, every answer exact."""

from __future__ import annotations

import threading

import numpy as np

import simhash_store
from conftest import popcount64


def test_threads_share_a_store(store):
    rng = np.random.default_rng(5)
    base = rng.integers(0, 2**64, size=2000, dtype=np.uint64)
    store.insert_many(np.arange(2000, dtype=np.uint64), base)
    errors: list[BaseException] = []

    def writer(t: int) -> None:
        try:
            for i in range(300):
                doc = 10_000 + t * 1000 + i
                store.insert(doc, int(base[i]) ^ (1 << t), key=f"w{doc}")
                if i % 50 == 0:
                    store.remove(doc - 25)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def reader(t: int) -> None:
        try:
            for i in range(300):
                q = int(base[(i * 7 + t) % 2000])
                found = store.query(q, k=0)
                # The original document is never touched by the writers.
                assert any(m.id == (i * 7 + t) % 2000 for m in found)
                assert all(m.distance == 0 for m in found)
            batch = store.query_many(base[:200], k=2)
            assert all(any(m.id == j for m in ms) for j, ms in enumerate(batch))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    threads += [threading.Thread(target=reader, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert store.verify().is_clean
    # Each writer removed five of its own documents (at i = 50, 100, ..., 250).
    assert len(store) == 2000 + 4 * 300 - 4 * 5
    # The final state answers as a brute-force scan does.
    docs = list(store.documents())
    fps = np.array([fp for _, fp, _ in docs], dtype=np.uint64)
    ids = [i for i, _, _ in docs]
    for q in base[:50]:
        d = popcount64(fps ^ q)
        expected = sorted((int(d[i]), ids[i]) for i in np.nonzero(d <= 3)[0])
        assert [(m.distance, m.id) for m in store.query(int(q), 3)] == expected


def test_fingerprint_many_threads():
    hasher = simhash_store.Simhasher()
    texts = [f"document number {i} about rivers, storms and city budgets" for i in range(2000)]
    expected = hasher.fingerprint_many(texts)
    results: list[np.ndarray] = []

    def run() -> None:
        results.append(hasher.fingerprint_many(texts))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    assert all((r == expected).all() for r in results)
    assert int(expected[5]) == hasher.fingerprint(texts[5])
