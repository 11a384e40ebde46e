"""Shared fixtures: temporary stores, the `simhash-store` command, random fingerprints."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import simhash_store

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path):
    with simhash_store.Store.open(tmp_path / "store") as s:
        yield s


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `simhash-store` command of this checkout: `$SIMHASH_STORE_BIN` (scripts/test.sh
    sets it to the binary its Rust tests built), or built with cargo into target/release
    with the `server` feature, which includes `cli`. Fails, never skips, without it."""
    given = os.environ.get("SIMHASH_STORE_BIN")
    if given:
        binary = Path(given)
        if not (binary.is_file() and os.access(binary, os.X_OK)):
            pytest.fail(
                f"SIMHASH_STORE_BIN={given} is not an executable file: build the command with "
                "`cargo build --release --features server` (scripts/test.sh does, and sets "
                "SIMHASH_STORE_BIN to $CARGO_TARGET_DIR/release/simhash-store), or point "
                "SIMHASH_STORE_BIN at a release archive's binary",
                pytrace=False,
            )
        return binary
    if shutil.which("cargo") is None:
        pytest.fail(
            "these tests compare with the `simhash-store` command: set SIMHASH_STORE_BIN to "
            "it (target/release/simhash-store, or a release archive's binary), or put cargo "
            "on the PATH to build it",
            pytrace=False,
        )
    binary = REPO / os.environ.get("CARGO_TARGET_DIR", "target") / "release" / "simhash-store"
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--features", "server", "--bin", "simhash-store"],
        cwd=REPO,
        check=True,
    )
    return binary


def planted(rng: np.random.Generator, n: int, k: int, skew: float = 0.05) -> np.ndarray:
    """`n` fingerprints: random ones, near-duplicates of earlier ones planted at every
    distance 0..=k+1, and a `skew` share that all carry the same top block value."""
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    bits = np.uint64(1) << np.arange(64, dtype=np.uint64)
    for i in range(n // 4, n):
        if rng.random() < 0.5:
            src = fps[rng.integers(0, i)]
            d = int(rng.integers(0, k + 2))
            flip = np.bitwise_or.reduce(bits[rng.choice(64, size=d, replace=False)]) if d else np.uint64(0)
            fps[i] = src ^ flip
    hot = rng.random(n) < skew
    fps[hot] = (fps[hot] & np.uint64(0x0000_FFFF_FFFF_FFFF)) | np.uint64(0xBEEF_0000_0000_0000)
    return fps


def popcount64(x: np.ndarray) -> np.ndarray:
    """Bits set in each uint64."""
    x = x.astype(np.uint64)
    return np.unpackbits(x.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)


def components(pairs) -> dict[int, int]:
    """Each id in a pair `(a, b, ...)` -> the lowest id of its connected component, by a
    plain union-find (the reference for the clusters)."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b, *_ in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {x: find(x) for x in list(parent)}


def brute_pairs(ids: np.ndarray, fps: np.ndarray, k: int) -> set[tuple[int, int, int]]:
    """Every pair within `k`, by comparing every fingerprint with every later one."""
    out: set[tuple[int, int, int]] = set()
    for i in range(len(fps) - 1):
        d = popcount64(fps[i + 1 :] ^ fps[i])
        for j in np.nonzero(d <= k)[0]:
            a, b = int(ids[i]), int(ids[i + 1 + j])
            out.add((min(a, b), max(a, b), int(d[j])))
    return out
