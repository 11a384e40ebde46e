"""The benchmarks' fingerprint distributions, the twin of ``benches/support/workload.rs``.

``draw(name, n, rng)`` returns ``n`` fingerprints (``uint64``) of the workload ``name``:

- ``uniform``: 64 independent fair bits;
- ``real``: each 16-bit block drawn from the distribution fitted on default fingerprints of
  real texts (``benches/support/workload_real.json``, written by
  ``examples/workload_fit.rs``): a table of frequent values, else independent biased bits;
- ``templated``: ``real``, with 10% of the documents pages of one of 20,000 site templates of
  Zipf(1.1) popularity (the template with 0 to 3 bits flipped);
- ``crowded:<share>``: uniform, with ``share`` of the documents given block 0 = 0x5eed.

The draws follow the same distributions as the Rust generator, not the same random stream.
"""

from __future__ import annotations

import argparse
import json
import os
from functools import lru_cache
from typing import List

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PARAMS = os.path.join(HERE, "..", "..", "benches", "support", "workload_real.json")
CROWDED_VALUE = 0x5EED
TEMPLATES = 20_000
TEMPLATE_ZIPF = 1.1
TEMPLATED_SHARE = 0.1
NAMES = "uniform, real, templated or crowded:<share in 0..=1>"


def check(name: str) -> str:
    """``name`` if it names a workload, else ``argparse.ArgumentTypeError`` (a usage error)."""
    if name in ("uniform", "real", "templated"):
        return name
    if name.startswith("crowded:"):
        try:
            share = float(name.split(":", 1)[1])
        except ValueError:
            share = -1.0
        if 0.0 <= share <= 1.0:
            return name
    raise argparse.ArgumentTypeError(f"unknown workload {name}: {NAMES}")


@lru_cache(maxsize=1)
def block_probabilities() -> List[np.ndarray]:
    """Per block (block 0 = bits 63..48), the probability of each of its 65536 values."""
    with open(PARAMS) as f:
        params = json.load(f)
    values = np.arange(65536, dtype=np.int64)
    out = []
    for block in params["blocks"]:
        p = np.ones(65536)
        for j, one in enumerate(block["bits"]):
            p *= np.where((values >> j) & 1 == 1, one, 1.0 - one)
        top = block["top"]
        q = sum(pv for _, pv in top)
        p *= 1.0 - q
        for value, pv in top:
            p[value] += pv
        out.append(p / p.sum())
    return out


def real(n: int, rng: np.random.Generator) -> np.ndarray:
    fps = np.zeros(n, dtype=np.uint64)
    for p in block_probabilities():
        fps = (fps << np.uint64(16)) | rng.choice(65536, size=n, p=p).astype(np.uint64)
    return fps


def draw(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` fresh fingerprints of workload ``name``."""
    check(name)
    if name == "uniform":
        return rng.integers(0, 2**64, size=n, dtype=np.uint64)
    if name == "real":
        return real(n, rng)
    if name == "templated":
        fps = real(n, rng)
        pages = rng.random(n) < TEMPLATED_SHARE
        m = int(pages.sum())
        templates = real(TEMPLATES, np.random.default_rng(0x7E3A91A7))
        popularity = np.arange(1, TEMPLATES + 1, dtype=np.float64) ** -TEMPLATE_ZIPF
        site = rng.choice(TEMPLATES, size=m, p=popularity / popularity.sum())
        page = templates[site]
        flips = rng.integers(0, 4, size=m)
        for i in range(3):
            pick = flips > i
            page[pick] ^= np.uint64(1) << rng.integers(0, 64, size=int(pick.sum())).astype(np.uint64)
        fps[pages] = page
        return fps
    share = float(name.split(":", 1)[1])
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    hot = rng.random(n) < share
    fps[hot] = (fps[hot] & np.uint64(0x0000_FFFF_FFFF_FFFF)) | np.uint64(CROWDED_VALUE << 48)
    return fps


def shared_block_factor(fps: np.ndarray, block: int) -> float:
    """How much more often two of ``fps`` share block ``block``'s value than two uniform ones."""
    values = ((fps >> np.uint64(48 - 16 * block)) & np.uint64(0xFFFF)).astype(np.int64)
    c = np.bincount(values, minlength=65536).astype(np.float64)
    n = float(len(fps))
    return 65536.0 * float((c * (c - 1)).sum()) / max(n * (n - 1), 1.0)


if __name__ == "__main__":
    import sys

    for name in sys.argv[1:] or ["uniform", "real", "templated", "crowded:0.05"]:
        sample = draw(name, 300_000, np.random.default_rng(1))
        factors = " / ".join(f"{shared_block_factor(sample, b):.1f}" for b in range(4))
        ones = [float(((sample >> np.uint64(i)) & np.uint64(1)).mean()) for i in range(64)]
        print(f"{name}: shared-block factor {factors}, bits {min(ones):.0%}..{max(ones):.0%} 1s")
