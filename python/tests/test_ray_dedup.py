"""`simhash_store.ray` on a real local Ray cluster (two nodes, one worker each) equals the
single-machine store exactly: pairs, clusters and drop list for k = 3 and k = 6 with every
distance 0..=k+1 planted and 5% of the documents sharing one block value; a pair task that
fails once; clusters computed distributed; `dedup_against`; fingerprints and read_warc."""

from __future__ import annotations

import os
from typing import Dict, List, Set, Tuple

import numpy as np
import pytest

import simhash_store
from conftest import components
from ray_cluster import FAIL_ONCE, cluster
from test_spark_dedup import CHUNK, N, PATH_FPS, PATH_IDS, make_ids, planted, single_machine


@pytest.fixture(scope="module")
def ray_cluster():
    return cluster()


@pytest.fixture(scope="module")
def data() -> Dict[int, Tuple[np.ndarray, np.ndarray]]:
    return {k: (make_ids(k, N), planted(k, N, k)) for k in (3, 6)}


def dataset(ids: np.ndarray, fps: np.ndarray, blocks: int = 4):
    import pyarrow as pa
    import ray.data

    table = pa.table({"id": ids.astype(np.int64), "fingerprint": pa.array(fps, pa.uint64())})
    step = -(-len(ids) // blocks)
    return ray.data.from_arrow([table.slice(i, step) for i in range(0, len(ids), step)])


def answer(result) -> Tuple[list, list, list]:
    pairs = sorted((r["a"], r["b"], r["distance"]) for r in result.pairs.take_all())
    clusters = sorted(
        (r["id"], r["cluster"], r["representative"], bool(r["keep"])) for r in result.clusters.take_all()
    )
    drop = sorted(r["id"] for r in result.drop.take_all())
    return pairs, clusters, drop


@pytest.mark.parametrize("k", [3, 6])
def test_dedup_equals_the_store(ray_cluster, data, k):
    from simhash_store._native import PartitionPlan, group_counts
    from simhash_store.ray import dedup

    ids, fps = data[k]
    want_pairs, want_clusters, want_drop = single_machine(ids, fps, k)
    assert {d for _, _, d in want_pairs} == set(range(k + 1))
    assert int(np.count_nonzero(fps >> np.uint64(48) == np.uint64(0xBEEF))) >= N // 20
    # The shared block value's group is split by the plan: on sub-blocks at k = 3, into
    # chunks at k = 6 (where its guests make sub-blocks the costlier split).
    chunked, split = PartitionPlan(group_counts(fps), k, CHUNK).split_groups()
    assert (split if k == 3 else chunked) >= 1, (chunked, split)

    result = dedup(dataset(ids, fps), k=k, chunk_size=CHUNK, partitions=8)
    pairs, clusters, drop = answer(result)
    assert len(pairs) == len(set(pairs)), "a pair was reported twice"
    assert pairs == want_pairs
    assert clusters == want_clusters
    assert drop == want_drop


def test_retried_task_gives_the_same_answer(ray_cluster, data):
    from simhash_store.ray import dedup

    ids, fps = data[3]
    want = single_machine(ids, fps, 3)
    open(FAIL_ONCE, "w").close()
    try:
        result = dedup(dataset(ids, fps), k=3, chunk_size=CHUNK, partitions=8)
        assert os.path.exists(FAIL_ONCE + ".fired"), "no task failed: the fault was not injected"
    finally:
        for path in (FAIL_ONCE, FAIL_ONCE + ".fired"):
            if os.path.exists(path):
                os.remove(path)
    assert answer(result) == want


def test_distributed_components_equal_the_driver_ones(ray_cluster, data):
    from simhash_store.ray import dedup

    ids, fps = data[3]
    _, want_clusters, want_drop = single_machine(ids, fps, 3)
    result = dedup(dataset(ids, fps), k=3, chunk_size=CHUNK, partitions=4, driver_edge_budget=0)
    _, clusters, drop = answer(result)
    assert clusters == want_clusters
    assert drop == want_drop


def test_distributed_components_do_not_stop_at_a_node_with_two_parents(ray_cluster):
    from simhash_store.ray import dedup

    _, want_clusters, want_drop = single_machine(PATH_IDS, PATH_FPS, 1)
    result = dedup(dataset(PATH_IDS, PATH_FPS, blocks=2), k=1, partitions=3, driver_edge_budget=0)
    _, clusters, drop = answer(result)
    assert clusters == want_clusters
    assert drop == want_drop


def test_dedup_against_keeps_old_and_drops_new_near_duplicates(ray_cluster, data):
    from simhash_store.ray import dedup_against

    ids, fps = data[3]
    rng = np.random.default_rng(7)
    is_old = rng.random(N) < 0.6
    all_pairs, _, _ = single_machine(ids, fps, 3)
    old_ids: Set[int] = set(ids[is_old].tolist())
    want_pairs = [p for p in all_pairs if not (p[0] in old_ids and p[1] in old_ids)]
    assert len(want_pairs) < len(all_pairs)
    component = components(want_pairs)
    members: Dict[int, List[int]] = {}
    for x, c in component.items():
        members.setdefault(c, []).append(x)
    want_clusters = []
    for c, ms in members.items():
        olds = sorted(m for m in ms if m in old_ids)
        rep = olds[0] if olds else c
        for m in ms:
            want_clusters.append((m, c, rep, (m in old_ids) if olds else (m == rep)))
    want_clusters.sort()
    want_drop = sorted(m for m, _, _, keep in want_clusters if not keep)

    result = dedup_against(
        dataset(ids[~is_old], fps[~is_old], 3), dataset(ids[is_old], fps[is_old], 3), k=3,
        chunk_size=CHUNK, partitions=8,
    )
    pairs, clusters, drop = answer(result)
    assert (pairs, clusters, drop) == (want_pairs, want_clusters, want_drop)
    assert not old_ids.intersection(drop), "an old document was dropped"
    near_old = {b if a in old_ids else a for a, b, _ in want_pairs if (a in old_ids) != (b in old_ids)}
    assert near_old and near_old <= set(drop), "a new near-duplicate of an old document was kept"


def test_longest_representative(ray_cluster):
    import ray.data

    from simhash_store.ray import dedup

    rows = [(1, 0b1111, 10), (2, 0b0111, 30), (3, 0b0011, 30), (4, 2**64 - 1, None), (5, 2**64 - 2, 5)]
    import pyarrow as pa

    table = pa.table(
        {
            "id": [r[0] for r in rows],
            "fingerprint": pa.array([r[1] for r in rows], pa.uint64()),
            "len": pa.array([r[2] for r in rows], pa.int64()),
        }
    )
    result = dedup(ray.data.from_arrow(table), k=3, representative="longest", text_len_col="len")
    _, clusters, drop = answer(result)
    assert clusters == [(1, 1, 2, False), (2, 1, 2, True), (3, 1, 2, False), (4, 4, 5, False), (5, 4, 5, True)]
    assert drop == [1, 3, 4]


def test_fingerprints_are_uint64_and_equal_the_hasher(ray_cluster, tmp_path):
    import pyarrow as pa
    import ray.data

    from simhash_store.ray import fingerprints, read_warc

    texts = ["a page about storage engines and their write paths", "the the the", None]
    ds = ray.data.from_arrow(pa.table({"id": [1, 2, 3], "text": pa.array(texts, pa.string())}))
    out = fingerprints(ds)
    assert out.schema().base_schema.field("fingerprint").type == pa.uint64()
    rows = sorted(out.take_all(), key=lambda r: r["id"])
    assert rows[0]["fingerprint"] == simhash_store.Simhasher().fingerprint(texts[0])
    assert rows[1]["fingerprint"] is None and rows[2]["fingerprint"] is None
    with pytest.raises(ValueError, match="already has a column 'fingerprint'"):
        fingerprints(out)

    warc = tmp_path / "a.warc"
    body = "<html><body><p>" + "storage engines compact their files in the background. " * 20 + "</p></body></html>"
    http = f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{body}".encode()
    head = (
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://example.com/a\r\n"
        f"WARC-Record-ID: <urn:uuid:1>\r\nContent-Type: application/http; msgtype=response\r\n"
        f"Content-Length: {len(http)}\r\n\r\n"
    ).encode()
    warc.write_bytes(head + http + b"\r\n\r\n")
    pages = read_warc(str(warc)).take_all()
    assert [p["url"] for p in pages] == ["https://example.com/a"]
    assert "storage engines" in pages[0]["text"] and pages[0]["text_len"] == len(pages[0]["text"].encode())


def test_bad_input_is_refused_clearly(ray_cluster):
    import ray.data

    from simhash_store.ray import dedup

    ds = ray.data.from_items([{"id": 1, "fingerprint": 5, "text": "x"}])
    with pytest.raises(ValueError, match="k must be in 0..=64, got 65"):
        dedup(ds, k=65)
    with pytest.raises(ValueError, match="has no column 'fp'"):
        dedup(ds, fingerprint_col="fp")
    with pytest.raises(ValueError, match="needs text_len_col"):
        dedup(ds, representative="longest")
    twice = ray.data.from_items([{"id": 3, "fingerprint": 5}, {"id": 3, "fingerprint": 5}])
    with pytest.raises(Exception, match="id 3 is given to more than one document"):
        dedup(twice, k=3)


def test_stats_show_the_shared_block_value_split_and_unpersist_releases(ray_cluster, data):
    from simhash_store.ray import PairStats, dedup

    ids, fps = data[3]
    hot = int(np.count_nonzero(fps >> np.uint64(48) == np.uint64(0xBEEF)))
    result = dedup(dataset(ids, fps), k=3, chunk_size=CHUNK, partitions=8)
    assert isinstance(result.stats, PairStats)
    # The shared block value's group was split: no kernel task compared it all at once.
    assert result.stats.max_task_work < hot * (hot - 1) // 2 // 4, result.stats
    assert result.stats.tasks > 0 and result.stats.total_work >= result.stats.max_task_work
    assert sum(result.stats.partition_work.values()) == result.stats.total_work
    assert set(result.stats.partition_work) <= set(range(8))
    assert 1 / 8 <= result.stats.largest_partition_share <= 1
    assert f"kernel_tasks={result.stats.tasks}" in repr(result)
    drop = result.drop.materialize()
    result.unpersist()
    with pytest.raises(RuntimeError, match="unpersisted"):
        result.pairs
    with pytest.raises(RuntimeError, match="unpersisted"):
        result.clusters
    # What was taken from the result before stays valid.
    assert sorted(r["id"] for r in drop.take_all()) == single_machine(ids, fps, 3)[2]


def test_load_parquet_command_loads_a_ray_result(ray_cluster, tmp_path):
    import subprocess
    import sys

    import pyarrow as pa
    import ray.data

    from simhash_store.ray import load_parquet

    rng = np.random.default_rng(5)
    fps = rng.integers(0, 2**64, size=3000, dtype=np.uint64)
    table = pa.table(
        {
            "id": pa.array(np.arange(3000, dtype=np.int64) * 7),
            "key": [f"https://example.com/{i}" for i in range(3000)],
            "fingerprint": pa.array(fps, pa.uint64()),
        }
    )
    none = pa.table({"id": [10**9], "key": ["https://example.com/none"], "fingerprint": pa.array([None], pa.uint64())})
    out = tmp_path / "out"
    ray.data.from_arrow([table.slice(0, 1500), table.slice(1500), none]).write_parquet(str(out))
    store_dir = tmp_path / "store"
    done = subprocess.run(
        [sys.executable, "-m", "simhash_store.ray", "load-parquet", str(out), "--store", str(store_dir)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "loaded 3000 documents" in done.stdout
    with simhash_store.Store.open(store_dir) as store:
        assert len(store) == 3000
        for i in (0, 17, 2999):
            assert store.get(i * 7) == int(fps[i])
            assert store.id_for_key(f"https://example.com/{i}") == i * 7
        assert 10**9 not in store
    # The function, into an open store, without keys.
    with simhash_store.Store.open(tmp_path / "store2") as store:
        assert load_parquet(out, store, key_col=None) == 3000
        assert store.get(7 * 42) == int(fps[42]) and store.id_for_key("https://example.com/42") is None

    missing = subprocess.run(
        [sys.executable, "-m", "simhash_store.ray", "load-parquet", str(out), "--store",
         str(tmp_path / "s3"), "--fingerprint-col", "fp"],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 1
    assert "has no column 'fp'" in missing.stderr


#: Documents of the fingerprint-type tests (planted as the others', fewer).
SMALL = 6000


def _small(data) -> Tuple[np.ndarray, np.ndarray]:
    return make_ids(11, SMALL), planted(11, SMALL, 3)


def _python_ints(ids: np.ndarray, fps: np.ndarray, blocks: int = 4):
    """The natural input: rows of Python ints, as ``help(dedup)`` shows. Ray keeps a block's
    fingerprints as pickled Python objects when one is 2**63 or more."""
    import ray.data

    rows = [{"id": int(i), "fingerprint": int(f)} for i, f in zip(ids, fps)]
    return ray.data.from_items(rows, override_num_blocks=blocks)


def _block_types(ds, column: str) -> Set[str]:
    import ray

    return {str(t.schema.field(column).type) for t in ray.get(ds.to_arrow_refs())}


def test_every_fingerprint_column_users_build_gives_the_same_answer(ray_cluster, data):
    import pandas as pd
    import pyarrow as pa
    import ray.data

    from simhash_store.ray import dedup

    ids, fps = _small(data)
    assert np.count_nonzero(fps >= np.uint64(2**63)) > SMALL // 3
    want = single_machine(ids, fps, 3)
    assert len(want[0]) > 100, "near-duplicates are planted"

    python_ints = _python_ints(ids, fps)
    # The column really is Ray's pickled Python objects (not something Ray converted).
    assert any("arrow_pickled_object" in t for t in _block_types(python_ints, "fingerprint"))
    inputs = {
        "Python ints": python_ints,
        "numpy uint64 (pandas)": ray.data.from_pandas(pd.DataFrame({"id": ids, "fingerprint": fps})),
        "numpy int64 (pandas)": ray.data.from_pandas(pd.DataFrame({"id": ids, "fingerprint": fps.view(np.int64)})),
        "Arrow uint64": dataset(ids, fps),
        "Arrow int64": ray.data.from_arrow(pa.table({"id": ids, "fingerprint": pa.array(fps.view(np.int64))})),
    }
    for name, ds in inputs.items():
        assert answer(dedup(ds, k=3, chunk_size=CHUNK, partitions=4)) == want, name


def test_dedup_against_takes_python_ints(ray_cluster, data):
    from simhash_store.ray import dedup_against

    ids, fps = _small(data)
    is_old = np.arange(SMALL) % 3 == 0
    pairs, _, drop = answer(
        dedup_against(_python_ints(ids[~is_old], fps[~is_old]), dataset(ids[is_old], fps[is_old]), k=3)
    )
    old_ids = set(ids[is_old].tolist())
    want_pairs = [p for p in single_machine(ids, fps, 3)[0] if not (p[0] in old_ids and p[1] in old_ids)]
    assert pairs == want_pairs and want_pairs
    assert drop and not old_ids.intersection(drop)


def test_unusable_fingerprint_columns_fail_at_the_call(ray_cluster):
    import pyarrow as pa
    import ray.data

    from simhash_store.ray import dedup, dedup_against

    good = ray.data.from_items([{"id": 1, "fingerprint": 2**64 - 1}, {"id": 2, "fingerprint": 7}])
    floats = ray.data.from_items([{"id": 1, "fingerprint": 1.5e19}])
    strings = ray.data.from_arrow(pa.table({"id": [1], "fingerprint": ["ffffffffffffffff"]}))
    for bad in (floats, strings):
        # Refused from the schema, by the call itself (a TypeError, not a failed Ray task).
        with pytest.raises(TypeError, match="cannot hold 64-bit fingerprints: give uint64") as e:
            dedup(bad, k=3)
        assert type(e.value) is TypeError
        with pytest.raises(TypeError, match="column 'fingerprint' of old_ds"):
            dedup_against(good, bad, k=3)
    with pytest.raises(TypeError, match="column 'id' of the Dataset must be an integer column"):
        dedup(ray.data.from_items([{"id": "a", "fingerprint": 1}]), k=3)
    # Python objects that are not ints, or ints beyond 64 bits, are found when read.
    with pytest.raises(Exception, match=r"holds 'x' \(str\), not an int"):
        dedup(ray.data.from_items([{"id": 1, "fingerprint": 2**64 - 1}, {"id": 2, "fingerprint": "x"}],
                                  override_num_blocks=1), k=3)
    with pytest.raises(Exception, match="not a 64-bit fingerprint"):
        dedup(ray.data.from_items([{"id": 1, "fingerprint": 2**64}]), k=3)


def test_load_parquet_takes_python_int_fingerprints(ray_cluster, data, tmp_path):
    import subprocess
    import sys

    from simhash_store.ray import load_parquet

    ids, fps = _small(data)
    out = tmp_path / "out"
    _python_ints(ids, fps, blocks=6).write_parquet(str(out))
    # The files differ in type: Ray pickled the blocks with an int of 2**63 or more.
    import pyarrow.parquet as pq

    kinds = {str(pq.read_schema(p).field("fingerprint").type) for p in out.iterdir()}
    assert any("pickled" in k or "binary" in k for k in kinds), kinds
    with simhash_store.Store.open(tmp_path / "a") as store:
        assert load_parquet(out, store) == SMALL
        assert all(store.get(int(i)) == int(f) for i, f in zip(ids[:50], fps[:50]))
    # The command, in a process without Ray's extension type registered.
    done = subprocess.run(
        [sys.executable, "-m", "simhash_store.ray", "load-parquet", str(out), "--store", str(tmp_path / "b")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert f"loaded {SMALL} documents" in done.stdout
    with simhash_store.Store.open(tmp_path / "b") as store:
        assert all(store.get(int(i)) == int(f) for i, f in zip(ids[-50:], fps[-50:]))
