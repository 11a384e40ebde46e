"""``Store.stats``: crowded groups, the shared-block factor and what a query scans."""

from __future__ import annotations

import numpy as np

import simhash_store


def test_a_planted_crowded_value_is_reported(tmp_path):
    rng = np.random.default_rng(3)
    n = 20_000
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    hot = np.arange(n) % 5 == 0  # a fifth of the documents share block 2 = 0xbeef
    fps[hot] = (fps[hot] & np.uint64(0xFFFF_FFFF_0000_FFFF)) | np.uint64(0xBEEF << 16)
    with simhash_store.Store.open(tmp_path / "s") as store:
        store.bulk_load_fingerprints(np.arange(n, dtype=np.uint64), fps)
        stats = store.stats(top=3)
    assert stats["documents"] == n
    block = stats["blocks"][2]
    assert block["family"] == "block2"
    value, size = block["largest"][0]
    assert value == 0xBEEF and n // 5 <= size <= n // 5 + 10  # and a random one now and then
    assert abs(block["max_share"] - size / n) < 1e-9
    assert 2_500 <= block["shared_block_factor"] <= 2_750
    assert 750 <= stats["expected_scan_per_query"] <= 850
    assert abs(stats["uniform_scan_per_query"] - 4 * n / 65536) < 1e-9
    for b in (0, 1, 3):
        assert 0.6 <= stats["blocks"][b]["shared_block_factor"] <= 1.4


def test_uniform_fingerprints_have_factors_near_one(tmp_path):
    rng = np.random.default_rng(4)
    n = 50_000
    with simhash_store.Store.open(tmp_path / "s") as store:
        fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
        store.bulk_load_fingerprints(np.arange(n, dtype=np.uint64), fps)
        stats = store.stats()
    for block in stats["blocks"]:
        assert 0.8 <= block["shared_block_factor"] <= 1.2
        assert len(block["largest"]) == 5
    assert 0.8 <= stats["scan_vs_uniform"] <= 1.2


def test_a_split_group_is_counted_and_costs_a_query_a_few_thousandths_of_itself(tmp_path):
    # 80,000 of 100,000 documents share block 0: more than a group is let grow before it is
    # written split (65,536 by default).
    rng = np.random.default_rng(5)
    n = 100_000
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    crowd = np.arange(n) % 5 != 0
    fps[crowd] = (fps[crowd] & np.uint64(0x0000_FFFF_FFFF_FFFF)) | np.uint64(0x5EED << 48)
    with simhash_store.Store.open(tmp_path / "s") as store:
        store.bulk_load_fingerprints(np.arange(n, dtype=np.uint64), fps)
        stats = store.stats(top=1)
    assert [b["split_groups"] for b in stats["blocks"]] == [1, 0, 0, 0]
    # Unsplit, a query drawn like the documents would scan about 64,000 entries of block0.
    assert 55 <= stats["blocks"][0]["expected_scan"] <= 70
