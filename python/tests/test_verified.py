"""Verified queries from Python: a store opened with ``sketch="MinHash"`` answers
``query_text_verified`` with the Rust library's matches and similarities; a store without
sketches raises an error that names the fix."""

from __future__ import annotations

import numpy as np
import pytest

import simhash_store

ARTICLE = (
    "The city council approved a new budget for the river bridge on Monday after a long debate "
    "about traffic, taxes and the cost of steel. Engineers said the old bridge could carry trains "
    "for another ten years but that repairs would close the road every summer."
)
OTHER = (
    "Scientists at the university laboratory reported that a new rice variety survived a dry "
    "summer with half the usual water."
)


def test_verified_query_keeps_the_copy(tmp_path):
    with simhash_store.Store.open(tmp_path, sketch="MinHash") as store:
        assert store.simhasher.settings["sketch"] == "MinHash"
        store.insert_text(1, ARTICLE, key="a")
        store.insert_text(2, ARTICLE + " Share this story with your friends.", key="b")
        store.insert_text(3, OTHER, key="c")
        assert [m.id for m, _ in store.query_text_verified(ARTICLE)] == [1]
        # The copy is 9 bits away from this short text: past the default k, within 12.
        found = store.query_text_verified(ARTICLE, k=12)
        assert [(m.id, m.key) for m, _ in found] == [(1, "a"), (2, "b")]
        assert found[0][1] == 1.0
        assert 0.75 <= found[1][1] < 1.0
        assert [m.id for m, _ in store.query_text_verified(ARTICLE, k=12, min_similarity=1.0)] == [1]
        # Plain k = 64 finds the unrelated text too; verification drops it.
        assert len(store.query_text(ARTICLE, k=64)) == 3
        assert len(store.query_text_verified(ARTICLE, k=64)) == 2
        with pytest.raises(ValueError):
            store.query_text_verified(ARTICLE, min_similarity=2.0)
        with pytest.raises(ValueError):
            store.query_text_verified(ARTICLE, k=65)


def test_a_store_without_sketches_names_the_fix(tmp_path):
    with simhash_store.Store.open(tmp_path) as store:
        store.insert_text(1, ARTICLE)
        with pytest.raises(simhash_store.NoSketchesError, match='keeps no sketches.*sketch="MinHash"'):
            store.query_text_verified(ARTICLE)


def _pages():
    """Articles, each with edited copies, and unrelated texts."""
    import random

    rng = random.Random(7)
    words = (
        "river bridge council budget steel traffic engineers summer market square contracts "
        "village harvest rice water laboratory university farmers spring festival museum "
        "library concert reading room ferry harbour storm island school teacher"
    ).split()
    pages = []
    for _ in range(12):
        base = [rng.choice(words) for _ in range(90)]
        pages.append(" ".join(base))
        for _ in range(2):
            copy = list(base)
            for _ in range(rng.randrange(1, 12)):
                copy[rng.randrange(len(copy))] = rng.choice(words)
            pages.append(" ".join(copy))
    return pages


def test_verified_pairs_and_clusters_equal_brute_force(tmp_path):
    """The pair scan's verified pairs equal those found by querying every stored text, and
    their distances equal the fingerprints' own."""
    pages = _pages()
    with simhash_store.Store.open(tmp_path, sketch="MinHash") as store:
        store.bulk_load([(i, f"https://example.com/{i}", t) for i, t in enumerate(pages)])
        fps = {i: store.get(i) for i in range(len(pages))}
        for k, min_similarity in ((8, 0.75), (12, 0.5), (3, 0.9)):
            expected = []
            for a, text in enumerate(pages):
                for m, s in store.query_text_verified(text, k=k, min_similarity=min_similarity):
                    if m.id > a:
                        assert m.distance == simhash_store.distance(fps[a], fps[m.id])
                        expected.append((a, m.id, m.distance, s))
            expected.sort()
            if k == 12:
                assert len(expected) >= 10, "the planted copies are verified near-duplicates"
            got = store.verified_pairs(k=k, min_similarity=min_similarity)
            assert [(a, b, d) for a, b, d, _ in got] == [(a, b, d) for a, b, d, _ in expected]
            assert [s for *_, s in got] == pytest.approx([s for *_, s in expected])
            a, b, d, s = store.verified_pairs_numpy(k=k, min_similarity=min_similarity)
            assert list(zip(a.tolist(), b.tolist(), d.tolist())) == [(x, y, z) for x, y, z, _ in expected]
            assert s.dtype == np.float64 and len(s) == len(expected)
            # Clusters: the connected components of the expected pairs.
            parent = list(range(len(pages)))

            def find(x):
                while parent[x] != x:
                    parent[x] = parent[parent[x]]
                    x = parent[x]
                return x

            for x, y, *_ in expected:
                parent[find(x)] = find(y)
            components = {}
            for x, y, *_ in expected:
                for member in (x, y):
                    components.setdefault(find(member), set()).add(member)
            want = sorted(sorted(c) for c in components.values())
            clusters = store.verified_clusters(k=k, min_similarity=min_similarity)
            assert sorted(c.members for c in clusters) == want
            assert sorted(clusters.drop_ids().tolist()) == sorted(m for c in want for m in c[1:])
