"""Throughput per core for 1 to 16 cores (or more) in one run, from an installed wheel and the
release binary: nothing is built. ``benches/scaling.sh`` runs it.

    python benches/scaling.py --n 200000000 --cores 1,2,4,8,16 --dir /mnt/fast \
        [--bin /usr/local/bin/simhash-store] [--service-bench PATH] [--queries 100000]

For each core count T, every phase runs in a fresh process pinned to cores 0..T-1 with
``taskset`` and ``RAYON_NUM_THREADS=T``:

- bulk load: ``Store.bulk_load_fingerprints`` of N fingerprints (uniform, 1% planted copies
  of earlier ones 0..=3 bits away, from a file written once) into a new store, default
  options; seconds, M fingerprints/s, per core, and the process's bytes written (its
  ``write_bytes``) per byte stored;
- ``query_many``: ``--queries`` fresh k = 3 queries (half near a stored fingerprint) on the
  store of the first load, reopened, its files in the page cache; queries/s, per core;
- all pairs at k = 3 (``pairs_numpy``) on the same store; seconds, documents/s per core;
- the service, when ``--service-bench`` names the executable of ``benches/service.rs`` (built
  elsewhere with ``cargo bench --features server --bench service --no-run``): it runs with
  ``--threads T`` and ``SIMHASH_STORE_BIN=--bin``, the server on cores 0..T-1 and its load
  generator on the others, and its table is printed as it is.

Prints one Markdown table; the per-core columns divide by T, so flat per-core numbers mean
linear scaling. Needs ``taskset``, N x 8 bytes for the file and about 60 bytes per
fingerprint for a store (one store at a time besides the first).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

LOAD = r"""
import json, sys, time
import numpy as np
import simhash_store
def written():
    for line in open("/proc/self/io"):
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    return 0
fps = np.fromfile(sys.argv[1], dtype=np.uint64)
ids = np.arange(len(fps), dtype=np.uint64)
w0 = written()
with simhash_store.Store.open(sys.argv[2]) as store:
    start = time.perf_counter()
    summary = store.bulk_load_fingerprints(ids, fps)
    seconds = time.perf_counter() - start
    stored = sum(store.disk_usage().values())
print(json.dumps({"seconds": seconds, "added": summary.added, "runs": summary.runs,
                  "written": written() - w0, "stored": stored}))
"""

QUERIES = r"""
import json, sys, time
import numpy as np
import simhash_store
fps = np.fromfile(sys.argv[1], dtype=np.uint64)
n, count = len(fps), int(sys.argv[3])
rng = np.random.default_rng(int(sys.argv[4]))
near = fps[rng.integers(0, n, count // 2)] ^ (np.uint64(1) << rng.integers(0, 64, count // 2).astype(np.uint64))
qs = np.concatenate([near, rng.integers(0, 2**64, count - count // 2, dtype=np.uint64)])
with simhash_store.Store.open(sys.argv[2], read_only=True) as store:
    store.query_many(qs[:2000], 3)
    start = time.perf_counter()
    store.query_many(qs, 3)
    q_seconds = time.perf_counter() - start
    start = time.perf_counter()
    a, b, d = store.pairs_numpy(3)
    p_seconds = time.perf_counter() - start
print(json.dumps({"queries": count / q_seconds, "pairs_seconds": p_seconds, "pairs": len(a)}))
"""


def pinned(cores: int, argv: list[str]) -> list[str]:
    return ["taskset", "-c", f"0-{cores - 1}", *argv]


def run_json(cores: int, argv: list[str]) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS=str(cores), OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(pinned(cores, argv), check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def write_fingerprints(path: Path, n: int) -> None:
    import numpy as np

    rng = np.random.default_rng(46)
    fps = rng.integers(0, 2**64, n, dtype=np.uint64)
    planted = rng.choice(n - 1, n // 100, replace=False) + 1
    sources = (rng.random(len(planted)) * planted).astype(np.int64)
    flips = np.zeros(len(planted), dtype=np.uint64)
    for _ in range(3):
        flips ^= np.uint64(1) << rng.integers(0, 64, len(planted)).astype(np.uint64)
    fps[planted] = fps[sources] ^ flips
    fps.tofile(path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200_000_000)
    ap.add_argument("--cores", default="1,2,4,8,16")
    ap.add_argument("--dir", type=Path, default=Path("."))
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--bin", default=shutil.which("simhash-store") or "simhash-store")
    ap.add_argument("--service-bench", default=None)
    ap.add_argument("--service-n", type=int, default=10_000_000)
    a = ap.parse_args()
    cores = [int(c) for c in a.cores.split(",")]
    available = len(os.sched_getaffinity(0))
    if max(cores) > available:
        print(f"only {available} cores here: --cores {a.cores} asks for {max(cores)}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="scaling-", dir=a.dir))
    try:
        fps = work / "fps.u64"
        write_fingerprints(fps, a.n)
        first = work / "first.db"
        rows = []
        for t in cores:
            store = first if t == cores[0] else work / f"load-{t}.db"
            load = run_json(t, [sys.executable, "-c", LOAD, str(fps), str(store)])
            if store != first:
                shutil.rmtree(store)
            q = run_json(t, [sys.executable, "-c", QUERIES, str(fps), str(first), str(a.queries), str(t)])
            rows.append((t, load, q))
            print(f"{t} cores: load {load}, queries {q}", file=sys.stderr, flush=True)
        print(f"\nN = {a.n:,}, {available} cores here, each phase pinned with taskset\n")
        print("| cores | load M/s | per core | bytes written / stored | runs | query_many k=3 /s | per core | pairs k=3 s | documents/s per core |")
        print("|---|---|---|---|---|---|---|---|---|")
        for t, load, q in rows:
            rate = a.n / load["seconds"] / 1e6
            print(
                f"| {t} | {rate:.2f} | {rate / t:.2f} | {load['written'] / max(load['stored'], 1):.2f} | {load['runs']} "
                f"| {q['queries']:,.0f} | {q['queries'] / t:,.0f} | {q['pairs_seconds']:.1f} | {a.n / q['pairs_seconds'] / t:,.0f} |"
            )
        if a.service_bench:
            for t in cores:
                if t >= available:
                    print(f"\nservice at {t} cores: skipped (no core left for the load generator)")
                    continue
                print(f"\nservice, server on {t} cores:", flush=True)
                subprocess.run(
                    [a.service_bench, "--n", str(a.service_n), "--threads", str(t), "--runs", "3",
                     "--store", str(work / "service.db"), "--dir", str(work)],
                    check=True,
                    env=dict(os.environ, SIMHASH_STORE_BIN=a.bin),
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
