"""Each kind of Rust error arrives as its own `simhash_store.Error` subclass with the Rust
message; bad arguments are TypeError/ValueError, never a crash."""

from __future__ import annotations

import numpy as np
import pytest

import simhash_store
from simhash_store import errors


def test_no_features():
    with pytest.raises(simhash_store.NoFeaturesError, match="no features") as e:
        simhash_store.Simhasher().fingerprint(" ,. the ")
    assert isinstance(e.value, ValueError)


def test_locked(tmp_path):
    with simhash_store.Store.open(tmp_path) as first:
        with pytest.raises(simhash_store.LockedError, match=str(tmp_path)) as e:
            simhash_store.Store.open(tmp_path)
        # In this process's terms: another Store here, what to call instead.
        message = str(e.value)
        assert "another Store in this process" in message
        assert "Store.open(path, read_only=True)" in message
        assert "store.close()" in message
        with simhash_store.Store.open(tmp_path, read_only=True) as reader:
            assert len(reader) == len(first)


def test_read_only(tmp_path):
    with simhash_store.Store.open(tmp_path) as s:
        s.insert(1, 5)
    with simhash_store.Store.open(tmp_path, read_only=True) as s:
        assert s.get(1) == 5
        with pytest.raises(simhash_store.ReadOnlyError, match=r"read-only: open it with Store\.open\(path\)"):
            s.insert(2, 6)
        with pytest.raises(simhash_store.ReadOnlyError):
            s.bulk_load([(3, None, 7)])


def test_settings_mismatch(tmp_path):
    with simhash_store.Store.open(tmp_path, seed=3) as s:
        assert s.simhasher.settings["seed"] == 3
    with pytest.raises(simhash_store.SettingsMismatchError, match=r"Store\.open\(path\) and no settings") as e:
        simhash_store.Store.open(tmp_path, seed=4)
    assert "`seed` is 3 in the store, 4 requested" in str(e.value)
    with simhash_store.Store.open(tmp_path) as s:
        assert s.simhasher == simhash_store.Simhasher(seed=3)


def test_not_a_store(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(simhash_store.NotAStoreError, match="not a simhash-store store"):
        simhash_store.Store.open(tmp_path)


def test_read_only_of_missing_store(tmp_path):
    with pytest.raises(simhash_store.Error):
        simhash_store.Store.open(tmp_path / "missing", read_only=True)


def test_corruption(tmp_path):
    with simhash_store.Store.open(tmp_path) as s:
        s.bulk_load_fingerprints(np.arange(20_000, dtype=np.uint64), np.arange(20_000, dtype=np.uint64) * 7919)
        s.compact()
    for sst in tmp_path.glob("*.sst"):
        data = bytearray(sst.read_bytes())
        mid = len(data) // 2
        data[mid : mid + 64] = bytes(64)
        sst.write_bytes(data)
    with pytest.raises(simhash_store.CorruptionError) as e:
        with simhash_store.Store.open(tmp_path) as s:
            s.verify()
            list(s.pairs(3))
    assert "corrupt" in str(e.value)


def test_a_damaged_footer_is_refused_by_a_read_only_open_naming_the_file(tmp_path):
    fps = np.arange(3_000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    with simhash_store.Store.open(tmp_path) as s:
        s.bulk_load_fingerprints(np.arange(3_000, dtype=np.uint64), fps)
    ssts = sorted(tmp_path.glob("*.sst"))
    assert ssts
    for sst in ssts:
        data = bytearray(sst.read_bytes())
        data[-5] ^= 0xFF
        sst.write_bytes(data)
        # A wrong answer (an empty one from an older state) is never given: an error naming
        # the file.
        with pytest.raises(simhash_store.CorruptionError, match=sst.name):
            with simhash_store.Store.open(tmp_path, read_only=True) as r:
                r.query(int(fps[7]), 3)
        data[-5] ^= 0xFF
        sst.write_bytes(data)
    with simhash_store.Store.open(tmp_path, read_only=True) as r:
        assert [m.id for m in r.query(int(fps[7]), 0)] == [7]


def test_invalid_argument_from_rust(store):
    with pytest.raises(simhash_store.InvalidArgumentError) as e:
        store.insert(1, 1, key="x" * 100_000)
    assert isinstance(e.value, ValueError)
    with pytest.raises(simhash_store.InvalidArgumentError, match="unknown representative"):
        store.clusters(3, representative="newest")


def test_settings_validation():
    with pytest.raises(simhash_store.InvalidArgumentError):
        simhash_store.Simhasher(word_shingles=1)
    with pytest.raises(TypeError, match="unknown fingerprint setting"):
        simhash_store.Simhasher(shingles=3)
    with pytest.raises(ValueError, match="tf must be one of"):
        simhash_store.Simhasher(tf="tfidf")
    with pytest.raises(TypeError, match="must be a bool"):
        simhash_store.Simhasher(normalize=1)
    with pytest.raises(ValueError, match="durability"):
        simhash_store.Store.open("/nonexistent/x", durability="always")


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda s: s.insert(-1, 5), ValueError),
        (lambda s: s.insert(1, 2**64), ValueError),
        (lambda s: s.insert(1, -1), ValueError),
        (lambda s: s.insert("1", 5), TypeError),
        (lambda s: s.insert(1, 5.0), TypeError),
        (lambda s: s.insert_text(1, b"bytes"), TypeError),
        (lambda s: s.insert_text(1, None), TypeError),
        (lambda s: s.insert(1, 5, key=7), TypeError),
        (lambda s: s.query(5, k=65), ValueError),
        (lambda s: s.query(5, k=-1), ValueError),
        (lambda s: s.query(2**64), ValueError),
        (lambda s: s.query_many([1, -2]), ValueError),
        (lambda s: s.query_many("12"), TypeError),
        (lambda s: s.insert_many([1, 2], [1]), ValueError),
        (lambda s: s.insert_many(np.array([-1], dtype=np.int64), [1]), ValueError),
        (lambda s: s.insert_many(np.zeros((2, 2), dtype=np.uint64), [1, 2]), ValueError),
        (lambda s: s.insert_many(np.array([1.5]), [1]), TypeError),
        (lambda s: s.insert_many([1], [1], keys=["a", "b"]), ValueError),
        (lambda s: s.bulk_load([(1, None)]), ValueError),
        (lambda s: s.bulk_load([{"key": "a", "text": "x"}]), ValueError),
        (lambda s: s.bulk_load([(1, None, b"x")]), TypeError),
        (lambda s: s.bulk_load(5), TypeError),
        (lambda s: s.bulk_load([], progress=5), TypeError),
        (lambda s: s.remove(-3), ValueError),
    ],
)
def test_bad_arguments(store, call, exc):
    with pytest.raises(exc):
        call(store)
    assert len(store) == 0
    assert store.verify().is_clean


def test_fingerprint_many_names_the_text():
    with pytest.raises(simhash_store.NoFeaturesError) as e:
        simhash_store.Simhasher().fingerprint_many(["some words here", "", "more words"])
    assert any("texts[1]" in n for n in getattr(e.value, "__notes__", []))
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        simhash_store.Simhasher().fingerprint_many(["words", 3])


def test_closed_store(tmp_path):
    s = simhash_store.Store.open(tmp_path)
    s.close()
    s.close()
    assert s.closed
    with pytest.raises(ValueError, match="closed"):
        s.query(1)
    with simhash_store.Store.open(tmp_path) as again:
        assert len(again) == 0


def test_every_class_is_an_error():
    for name in errors.__all__:
        cls = getattr(simhash_store, name)
        assert issubclass(cls, simhash_store.Error)


def test_unsupported_format(tmp_path):
    # A store whose meta family records format version 99 (made once by a Rust program
    # that wrote the version with RocksDB directly).
    import shutil
    from pathlib import Path

    store = tmp_path / "future"
    shutil.copytree(Path(__file__).parent / "fixtures" / "format-v99", store)
    with pytest.raises(simhash_store.UnsupportedFormatError, match="format version 99") as e:
        simhash_store.Store.open(store)
    assert "upgrade simhash-store" in str(e.value)


def test_no_sketches_is_its_own_class_with_python_advice(tmp_path):
    with simhash_store.Store.open(tmp_path) as store:
        store.insert_text(1, "a page about rivers and bridges of the north")
        for call in (
            lambda: store.query_text_verified("a page about rivers and bridges"),
            lambda: store.verified_pairs(),
            lambda: store.verified_clusters(),
        ):
            with pytest.raises(simhash_store.NoSketchesError) as e:
                call()
            message = str(e.value)
            assert 'Store.open(new_path, sketch="MinHash")' in message
            assert "SimhashConfig" not in message and "--" not in message


def test_the_namespace_holds_only_the_package():
    for name in ("os", "Any", "Union"):
        assert not hasattr(simhash_store, name), name
    assert set(simhash_store.__all__) <= set(dir(simhash_store))
