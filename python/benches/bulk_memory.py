"""Peak memory and rate of ``Store.bulk_load_fingerprints`` against the Rust bulk loader.

    cargo build --release --example python_baseline
    .venv/bin/python python/benches/bulk_memory.py --n 100000000 --runs 3

Writes N random fingerprints to a file (little-endian uint64, 8 bytes each) in ``--dir``,
then in alternating rounds loads them into a new store with default options, each load in
a fresh process: the Python side reads the file with ``np.fromfile``, makes ``ids =
np.arange(N)`` and calls ``bulk_load_fingerprints(ids, fps)``; the Rust side
(``examples/python_baseline.rs bulk``) reads the file into memory and adds each fingerprint
to ``Store::bulk_loader()``. Each load reports its time (the load alone) and the process's
peak resident memory; the table gives medians over ``--runs``. Needs ``--dir`` with room for
the file and a store (about 60 bytes per fingerprint); both are deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PYTHON_LOAD = r"""
import json, resource, sys, time
import numpy as np
import simhash_store
fps = np.fromfile(sys.argv[1], dtype=np.uint64)
ids = np.arange(len(fps), dtype=np.uint64)
with simhash_store.Store.open(sys.argv[2]) as store:
    start = time.perf_counter()
    summary = store.bulk_load_fingerprints(ids, fps)
    seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": seconds, "added": summary.added, "peak_rss": peak}))
"""


def run(cmd: list[str]) -> dict:
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", default=None, help="where to write the file and the stores")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    import numpy as np

    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    baseline = target / "release" / "examples" / "python_baseline"
    if not baseline.exists():
        print("build it first: cargo build --release --example python_baseline", file=sys.stderr)
        return 1
    work = Path(tempfile.mkdtemp(prefix="bulk-memory-", dir=args.dir))
    try:
        fps_path = work / "fps.u64"
        rng = np.random.default_rng(args.seed)
        rng.integers(0, 2**64, size=args.n, dtype=np.uint64).tofile(fps_path)
        results: dict[str, list[dict]] = {"python": [], "rust": []}
        for r in range(args.runs):
            for side in ("python", "rust"):
                store = work / f"store-{side}-{r}"
                if side == "python":
                    got = run([sys.executable, "-c", PYTHON_LOAD, str(fps_path), str(store)])
                else:
                    got = run([str(baseline), "bulk", str(store), str(fps_path)])
                assert got["added"] == args.n, got
                results[side].append(got)
                print(f"run {r} {side}: {got['seconds']:.1f} s, peak {got['peak_rss'] / 1e9:.2f} GB", file=sys.stderr)
                shutil.rmtree(store)
        arrays = 16 * args.n
        print(f"| side | load (M fp/s, median) | peak RSS (GB, median) | arrays (GB) |")
        print(f"|---|---|---|---|")
        for side, runs in results.items():
            rate = statistics.median(args.n / x["seconds"] for x in runs) / 1e6
            peak = statistics.median(x["peak_rss"] for x in runs) / 1e9
            print(f"| {side} | {rate:.2f} | {peak:.2f} | {arrays / 1e9:.2f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
