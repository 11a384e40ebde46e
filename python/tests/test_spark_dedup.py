"""`simhash_store.spark.dedup` and `dedup_against` on a real Spark cluster equal the
single-machine store's answer exactly: pairs, clusters and drop list, for k = 3 and k = 6,
with 5% of the documents sharing one block value, a task that fails once, clusters computed
on the driver and distributed."""

from __future__ import annotations

import tempfile
from typing import Dict, List, Set, Tuple

import numpy as np
import pytest

import simhash_store
from conftest import components
from spark_cluster import cluster

N = 50_000
#: Small enough that the shared block value's group (5% of N) is split into chunks.
CHUNK = 600


@pytest.fixture(scope="module")
def spark():
    return cluster()


def planted(seed: int, n: int, k: int) -> np.ndarray:
    """`n` fingerprints (uint64): random ones; near-duplicates of earlier ones (and of
    near-duplicates, so chains form) at every distance 0..=k+1, half with random bits
    flipped and half with the flips spread one per block first (so that for k >= 4 no block
    is equal and only neighbouring block values find the pair); then 5% of all documents get
    block 0 = 0xBEEF."""
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    bits = np.uint64(1) << np.arange(64, dtype=np.uint64)
    for i in range(n // 4, n):
        if i % 2:
            continue
        src = fps[rng.integers(0, i)]
        d = (i // 2) % (k + 2)
        if (i // 2) % 3 == 0:
            positions = rng.choice(64, size=d, replace=False)
        else:
            # One bit per block, then the rest anywhere else.
            per_block = [16 * (j % 4) + int(rng.integers(0, 16)) for j in range(min(d, 4))]
            rest = [p for p in rng.permutation(64) if p not in per_block][: max(0, d - 4)]
            positions = np.array(per_block + rest, dtype=np.int64)
        flip = np.bitwise_or.reduce(bits[positions]) if d else np.uint64(0)
        fps[i] = src ^ flip
    hot = rng.permutation(n)[: n // 20]
    fps[hot] = (fps[hot] & np.uint64(0x0000_FFFF_FFFF_FFFF)) | np.uint64(0xBEEF_0000_0000_0000)
    return fps


def make_ids(seed: int, n: int) -> np.ndarray:
    """Distinct ids, not 0..n in fingerprint order (int64, up to 2^40)."""
    rng = np.random.default_rng(seed + 1000)
    return np.unique(rng.integers(0, 2**40, size=2 * n))[:n][rng.permutation(n)].astype(np.int64)


def frame(spark, ids: np.ndarray, fps: np.ndarray, partitions: int = 4):
    import pyarrow as pa

    table = pa.table({"id": ids.astype(np.int64), "fingerprint": fps.view(np.int64)})
    return spark.createDataFrame(table).repartition(partitions)


def single_machine(ids: np.ndarray, fps: np.ndarray, k: int):
    """Pairs, cluster rows and drop ids of `simhash_store.Store` for the same documents."""
    with tempfile.TemporaryDirectory() as path, simhash_store.Store.open(path) as store:
        store.bulk_load_fingerprints(ids.astype(np.uint64), fps)
        a, b, d = store.pairs_numpy(k)
        clusters = store.clusters(k)
        rows = clusters.to_numpy()
        return (
            list(zip(a.tolist(), b.tolist(), d.tolist())),
            list(
                zip(
                    rows["id"].tolist(),
                    rows["cluster"].tolist(),
                    rows["representative"].tolist(),
                    rows["keep"].tolist(),
                )
            ),
            clusters.drop_ids().tolist(),
        )


def spark_answer(result) -> Tuple[list, list, list]:
    pairs = sorted(tuple(r) for r in result.pairs.collect())
    clusters = sorted(
        (r.id, r.cluster, r.representative, r.keep) for r in result.clusters.collect()
    )
    drop = sorted(r.id for r in result.drop.collect())
    return pairs, clusters, drop


@pytest.fixture(scope="module")
def data() -> Dict[int, Tuple[np.ndarray, np.ndarray]]:
    return {k: (make_ids(k, N), planted(k, N, k)) for k in (3, 6)}


@pytest.mark.parametrize("k", [3, 6])
def test_dedup_equals_the_store(spark, data, k):
    from simhash_store.spark import dedup

    ids, fps = data[k]
    want_pairs, want_clusters, want_drop = single_machine(ids, fps, k)
    # The planted data covers what the test is about.
    distances = {d for _, _, d in want_pairs}
    assert distances == set(range(k + 1)), distances
    hot = int(np.count_nonzero(fps >> np.uint64(48) == np.uint64(0xBEEF)))
    assert hot >= N // 20
    assert len(want_clusters) > 1000 and max(c for _, c, _, _ in want_clusters) > 0

    result = dedup(frame(spark, ids, fps), k=k, chunk_size=CHUNK, partitions=8)
    pairs, clusters, drop = spark_answer(result)
    assert len(pairs) == len(set(pairs)), "a pair was reported twice"
    assert pairs == want_pairs
    assert clusters == want_clusters
    assert drop == want_drop
    # The shared block value's group was split: no kernel task compared it all at once.
    assert result.stats.max_task_work < hot * (hot - 1) // 2 // 4, result.stats
    assert result.stats.total_work > 0
    result.unpersist()


def test_retried_task_gives_the_same_answer(spark, data, monkeypatch):
    from simhash_store.spark import _dedup, dedup

    # The test hook: partition 1 of the pair stage fails on its first attempt.
    monkeypatch.setattr(_dedup, "_FAIL_FIRST_ATTEMPT", 1)

    ids, fps = data[3]
    want_pairs, want_clusters, want_drop = single_machine(ids, fps, 3)
    sc = spark.sparkContext
    sc.setJobGroup("retry-test", "a pair task fails on its first attempt")
    try:
        result = dedup(
            frame(spark, ids, fps), k=3, chunk_size=CHUNK, partitions=8)
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    tracker = sc.statusTracker()
    failed = 0
    for job in tracker.getJobIdsForGroup("retry-test"):
        info = tracker.getJobInfo(job)
        for stage in info.stageIds if info else []:
            stage_info = tracker.getStageInfo(stage)
            failed += stage_info.numFailedTasks if stage_info else 0
    assert failed >= 1, "no task failed: the fault was not injected"
    assert spark_answer(result) == (want_pairs, want_clusters, want_drop)
    result.unpersist()


def test_distributed_components_equal_the_driver_ones(spark, data):
    from simhash_store.spark import dedup

    ids, fps = data[3]
    _, want_clusters, want_drop = single_machine(ids, fps, 3)
    result = dedup(frame(spark, ids, fps), k=3, chunk_size=CHUNK, driver_edge_budget=0)
    _, clusters, drop = spark_answer(result)
    assert clusters == want_clusters
    assert drop == want_drop
    result.unpersist()


#: A path 1 - 5 - 2 - 6 - 0 at k = 1 (each step flips one more bit): one round of the star
#: steps leaves 2 with two parents, 1 and 0, and no edge that chains; the rounds must go on.
PATH_IDS = np.array([1, 5, 2, 6, 0], np.int64)
PATH_FPS = np.array([0b0, 0b1, 0b11, 0b111, 0b1111], np.uint64)


def test_distributed_components_do_not_stop_at_a_node_with_two_parents(spark):
    from simhash_store.spark import dedup

    _, want_clusters, want_drop = single_machine(PATH_IDS, PATH_FPS, 1)
    assert {c[1] for c in want_clusters} == {0}
    result = dedup(frame(spark, PATH_IDS, PATH_FPS, partitions=2), k=1, driver_edge_budget=0)
    _, clusters, drop = spark_answer(result)
    assert clusters == want_clusters
    assert drop == want_drop
    result.unpersist()


def test_dedup_against_equals_the_restricted_batch_answer(spark, data):
    from simhash_store.spark import dedup_against

    ids, fps = data[3]
    rng = np.random.default_rng(7)
    is_old = rng.random(N) < 0.6
    all_pairs, _, _ = single_machine(ids, fps, 3)
    old_ids: Set[int] = set(ids[is_old].tolist())
    want_pairs = [p for p in all_pairs if not (p[0] in old_ids and p[1] in old_ids)]
    assert len(want_pairs) < len(all_pairs), "the data has no old-old pair to leave out"
    component = components(want_pairs)
    members: Dict[int, List[int]] = {}
    for x, c in component.items():
        members.setdefault(c, []).append(x)
    want_clusters = []
    for c, ms in members.items():
        olds = sorted(m for m in ms if m in old_ids)
        rep = olds[0] if olds else c
        for m in ms:
            keep = (m in old_ids) if olds else (m == rep)
            want_clusters.append((m, c, rep, keep))
    want_clusters.sort()
    want_drop = sorted(m for m, _, _, keep in want_clusters if not keep)
    assert not old_ids.intersection(want_drop)
    assert any(c[3] is False and c[2] in old_ids for c in want_clusters)

    new_df = frame(spark, ids[~is_old], fps[~is_old], partitions=3)
    old_df = frame(spark, ids[is_old], fps[is_old], partitions=3)
    result = dedup_against(new_df, old_df, k=3, chunk_size=CHUNK, partitions=8)
    assert spark_answer(result) == (want_pairs, want_clusters, want_drop)
    result.unpersist()


def test_longest_representative(spark):
    from simhash_store.spark import dedup

    rows = [(1, 0b1111, 10), (2, 0b0111, 30), (3, 0b0011, 30), (4, -1, None), (5, -2, 5)]
    df = spark.createDataFrame(rows, "id long, fingerprint long, len long")
    result = dedup(df, k=3, representative="longest", text_len_col="len")
    got = sorted(tuple(r) for r in result.clusters.collect())
    # 1-2-3 chain: 2 and 3 are the longest, 2 the lower id; 4 and 5 (null length counts 0).
    assert got == [
        (1, 1, 2, False),
        (2, 1, 2, True),
        (3, 1, 2, False),
        (4, 4, 5, False),
        (5, 4, 5, True),
    ]
    assert sorted(tuple(r) for r in result.drop.collect()) == [(1, 2), (3, 2), (4, 5)]


def test_bad_input_is_refused_clearly(spark):
    from simhash_store.spark import dedup, dedup_against

    df = spark.createDataFrame([(1, 5, "x")], "id long, fingerprint long, text string")
    with pytest.raises(ValueError, match="k must be in 0..=64, got 65"):
        dedup(df, k=65)
    with pytest.raises(TypeError, match="k must be an int"):
        dedup(df, k=3.0)
    with pytest.raises(ValueError, match="has no column 'fp'"):
        dedup(df, fingerprint_col="fp")
    with pytest.raises(TypeError, match="column 'text' of the DataFrame must be LongType"):
        dedup(df, fingerprint_col="text")
    with pytest.raises(TypeError, match="column 'text' of the DataFrame must be an integer"):
        dedup(df, id_col="text")
    with pytest.raises(ValueError, match="first-loaded"):
        dedup(df, representative="first-loaded")
    with pytest.raises(ValueError, match="needs text_len_col"):
        dedup(df, representative="longest")
    with pytest.raises(ValueError, match="new_df has no column 'id'"):
        dedup_against(df.drop("id"), df)
    negative = spark.createDataFrame([(-3, 5), (4, 5)], "id long, fingerprint long")
    with pytest.raises(Exception, match="ids must be non-negative"):
        dedup(negative, k=3)
    twice = spark.createDataFrame([(3, 5), (3, 5)], "id long, fingerprint long")
    with pytest.raises(Exception, match="id 3 is given to more than one document"):
        dedup(twice, k=3)


def test_unsigned_fingerprints_from_parquet_give_the_same_answer(spark, tmp_path):
    """A uint64 Parquet column (Ray's, numpy's) reads in Spark as decimal(20,0): dedup takes
    it as the same 64 bits; a column that cannot hold fingerprints fails at the call."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from simhash_store.spark import dedup

    ids, fps = make_ids(11, 6000), planted(11, 6000, 3)
    assert np.count_nonzero(fps >= np.uint64(2**63)) > 2000
    pq.write_table(pa.table({"id": ids, "fingerprint": pa.array(fps, pa.uint64())}), tmp_path / "a.parquet")
    df = spark.read.parquet(str(tmp_path))
    assert df.schema["fingerprint"].dataType.simpleString() == "decimal(20,0)"
    want = single_machine(ids, fps, 3)
    assert len(want[0]) > 100
    assert spark_answer(dedup(df, k=3, chunk_size=CHUNK, partitions=4)) == want

    floats = spark.createDataFrame([(1, 1.5e19)], "id long, fingerprint double")
    with pytest.raises(TypeError, match="simhash_store.to_signed converts a Python int"):
        dedup(floats, k=3)
    from decimal import Decimal

    too_big = spark.createDataFrame([(1, Decimal(2**64))], "id long, fingerprint decimal(20,0)")
    with pytest.raises(Exception, match="holds 18446744073709551616, which is not a 64-bit fingerprint"):
        dedup(too_big, k=3).pairs.collect()
