"""Bulk loading from Python: tuples, dicts and arrays; upserts as inserts; progress."""

from __future__ import annotations

import numpy as np
import pytest

import simhash_store

WORDS = "storage engine crawler page text index query block family fingerprint bits near duplicate river city news report".split()


def text(rng, n=40):
    return " ".join(rng.choice(WORDS, size=n))


def test_bulk_load_equals_inserts(tmp_path):
    rng = np.random.default_rng(1)
    records = [(i, f"k{i % 50}" if i % 3 else None, text(rng)) for i in range(300)]
    records.append((5, "fresh", text(rng)))  # a later add of an id wins
    with simhash_store.Store.open(tmp_path / "a") as a, simhash_store.Store.open(tmp_path / "b") as b:
        summary = a.bulk_load(records)
        for i, key, t in records:
            b.insert_text(i, t, key=key)
        assert summary.added == len(a)
        assert list(a.documents()) == list(b.documents())
        assert a.verify().is_clean


def test_records_forms_and_progress(store):
    reports = []
    summary = store.bulk_load(
        iter(
            [
                (1, "a", "the first page about rivers and storms"),
                {"id": 2, "key": "b", "text": "a second page about city budgets"},
                {"id": 3, "fingerprint": 12345},
                (4, None, 2**64 - 1),
                (5, None, " .,"),
            ]
        ),
        progress=reports.append,
    )
    assert (summary.added, summary.skipped) == (4, 1)
    assert store.get(3) == 12345 and store.get(4) == 2**64 - 1
    assert store.id_for_key("b") == 2
    assert reports and reports[-1].phase == "done" and reports[-1].documents == 5
    assert "4 added" in str(summary)


def test_progress_true_and_failing_callback(store, capsys):
    store.bulk_load([(1, None, 7)], progress=True)

    def boom(p):
        raise RuntimeError("progress failed")

    with pytest.raises(RuntimeError, match="progress failed"):
        store.bulk_load(((i, None, i * 31) for i in range(10, 100_000)), progress=boom)
    assert store.verify().is_clean


def test_failing_records_leave_a_consistent_store(store):
    def records():
        for i in range(50_000):
            yield (i, None, i * 7919)
        raise OSError("the crawl file ended early")

    with pytest.raises(OSError, match="ended early"):
        store.bulk_load(records(), memory_budget=200_000)
    report = store.verify()
    assert report.is_clean
    # Runs ingested before the failure stay; loading again completes the job.
    assert 0 < len(store) < 50_000
    store.bulk_load((i, None, i * 7919) for i in range(50_000))
    assert len(store) == 50_000


def test_bulk_load_fingerprints_arrays(store):
    ids = np.arange(1000, dtype=np.uint64)
    fps = (ids * np.uint64(0x9E37_79B9_7F4A_7C15)).astype(np.uint64)
    signed = fps.view(np.int64)
    keys = [f"u{i}" if i % 2 else None for i in range(1000)]
    summary = store.bulk_load_fingerprints(ids, signed, keys)
    assert summary.added == 1000
    assert [store.get(i) for i in (0, 1, 999)] == [int(fps[0]), int(fps[1]), int(fps[999])]
    assert store.id_for_key("u7") == 7 and store.id_for_key("u8") is None


def test_insert_many_iterables_and_arrays(store):
    store.insert_many(range(5), [10, 11, 12, 13, 14], keys=["a", None, "c", None, "e"])
    store.insert_many(np.array([5, 6], dtype=np.int64), np.array([-1, 2], dtype=np.int64))
    assert store.get(5) == 2**64 - 1
    assert store.get(4) == 14 and store.id_for_key("e") == 4
    assert len(store) == 7
    assert 3 in store and 42 not in store
    # A key is looked up as a key, an id as an id.
    assert "e" in store and "b" not in store and "nosuch" not in store


def test_large_arrays_go_in_slices(store):
    """More documents than one slice (131,072): every one stored, from uint64 arrays read in
    place, int64 arrays read as bits, and keys read as the slices are."""
    n = 300_000
    ids = np.arange(n, dtype=np.uint64)
    fps = (ids * np.uint64(0x9E37_79B9_7F4A_7C15)) ^ np.uint64(0xABCD)
    keys = (f"k{i}" if i % 100_000 == 0 else None for i in range(n))

    class Sized:
        """A sized iterable that is not a list, read lazily."""

        def __len__(self):
            return n

        def __iter__(self):
            return keys

    summary = store.bulk_load_fingerprints(ids, fps, Sized())
    assert summary.added == n and len(store) == n
    got_ids, got_fps = store.documents_numpy()
    assert np.array_equal(got_ids, ids) and np.array_equal(got_fps, fps)
    assert store.id_for_key("k200000") == 200_000

    # insert_many of a large int64 array replaces them all, slice by slice.
    store.insert_many(ids.view(np.int64), (fps ^ np.uint64(1)).view(np.int64))
    _, got_fps = store.documents_numpy()
    assert np.array_equal(got_fps, fps ^ np.uint64(1))


def test_column_errors_name_the_position(store):
    with pytest.raises(ValueError, match=r"ids\[200000\] must be in 0\.\.2\*\*64-1"):
        ids = np.arange(300_000, dtype=np.int64)
        ids[200_000] = -5
        store.bulk_load_fingerprints(ids, np.zeros(300_000, dtype=np.uint64))
    with pytest.raises(ValueError, match="same length"):
        store.bulk_load_fingerprints(np.arange(3, dtype=np.uint64), np.arange(3, dtype=np.uint64), ["a"])
    with pytest.raises(ValueError, match="same length"):
        store.insert_many(np.arange(3, dtype=np.uint64), np.arange(4, dtype=np.uint64))


def test_progress_phases_are_the_stubs(store):
    """Every phase a load reports, the merge of a load of several runs included, is one the
    type stub lists."""
    import ast
    import pathlib

    stub = pathlib.Path(simhash_store.__file__).with_name("_native.pyi").read_text()
    klass = next(
        n for n in ast.parse(stub).body if isinstance(n, ast.ClassDef) and n.name == "BulkProgress"
    )
    annotation = next(
        n.annotation
        for n in klass.body
        if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", None) == "phase"
    )
    listed = {e.value for e in annotation.slice.elts}
    reports = []
    store.bulk_load(
        ((i, None, i * 7919) for i in range(50_000)),
        progress=reports.append,
        memory_budget=200_000,
    )
    seen = {r.phase for r in reports}
    assert {"writing", "merging", "done"} <= seen, seen
    assert seen <= listed, seen - listed
