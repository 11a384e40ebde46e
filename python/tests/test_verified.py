"""Verified queries from Python: a store opened with ``sketch="MinHash"`` answers
``query_text_verified`` with the Rust library's matches and similarities; a store without
sketches raises an error that names the fix."""

from __future__ import annotations

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
        with pytest.raises(simhash_store.Error, match="keeps no sketches.*--sketch"):
            store.query_text_verified(ARTICLE)
