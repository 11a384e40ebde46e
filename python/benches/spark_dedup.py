"""Spark dedup next to the one-process Rust dedup, on the same fingerprints.

N 64-bit fingerprints of ``--workload`` (``uniform``, ``real``, ``templated`` or
``crowded:<share>``, see ``workload.py``; default uniform) with planted near-duplicates (a
quarter of the documents are copies of earlier ones with 0..=k+1 bits flipped) and ``--hot``
(5%) of the documents sharing one block value, written once to Parquet. Then, in one run:

- one process: ``Store.bulk_load_fingerprints`` then ``Store.pairs_numpy(k)`` and
  ``Store.clusters(k)`` (what ``simhash-store dedup`` does), all cores;
- ``simhash_store.spark.dedup`` on ``local-cluster[W,1,MEM]`` for each W in ``--workers``
  (one core per worker): pairs, clusters and drop list computed and counted, with about
  2 million rows per pair-stage partition (``--partitions``).

For each Spark run: wall time, shuffle bytes written (Spark's REST API), the pair stage's
task times (the largest task's share) and the comparisons of the largest Spark partition and
kernel task. Every answer is checked against the one-process one (pair count, drop count).
Prints a table of medians and writes every measurement as JSON (``--json``).

    python python/benches/spark_dedup.py --n 10000000 --repeat 3 --workers 1,2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from typing import Any, Dict, List

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workload import NAMES, check, draw  # noqa: E402


def planted(n: int, k: int, seed: int = 1, hot: float = 0.05, workload: str = "uniform") -> np.ndarray:
    rng = np.random.default_rng(seed)
    if workload == "uniform":
        fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    else:
        fps = draw(workload, n, rng)
    copies = rng.random(n) < 0.25
    copies[: n // 4] = False
    idx = np.nonzero(copies)[0]
    src = (rng.random(len(idx)) * idx).astype(np.int64)
    flipped = fps[src].copy()
    distance = rng.integers(0, k + 2, size=len(idx))
    for bit in range(k + 1):
        pick = distance > bit
        flipped[pick] ^= np.uint64(1) << rng.integers(0, 64, size=int(pick.sum())).astype(np.uint64)
    fps[idx] = flipped
    in_hot = rng.random(n) < hot
    fps[in_hot] = (fps[in_hot] & np.uint64(0x0000_FFFF_FFFF_FFFF)) | np.uint64(0xBEEF_0000_0000_0000)
    return fps


def one_process(fps: np.ndarray, k: int, workdir: str) -> Dict[str, Any]:
    import simhash_store

    path = os.path.join(workdir, "store")
    shutil.rmtree(path, ignore_errors=True)
    ids = np.arange(len(fps), dtype=np.uint64)
    with simhash_store.Store.open(path) as store:
        t0 = time.perf_counter()
        store.bulk_load_fingerprints(ids, fps)
        t1 = time.perf_counter()
        a, _, _ = store.pairs_numpy(k)
        t2 = time.perf_counter()
        clusters = store.clusters(k)
        drop = len(clusters.drop_ids())
        t3 = time.perf_counter()
    shutil.rmtree(path, ignore_errors=True)
    return {
        "load_s": t1 - t0,
        "pairs_s": t2 - t1,
        "clusters_s": t3 - t2,
        "dedup_s": (t2 - t1) + (t3 - t2),
        "pairs": int(len(a)),
        "drop": drop,
    }


def rest(ui: str, app: str, what: str) -> Any:
    with urllib.request.urlopen(f"{ui}/api/v1/applications/{app}/{what}") as r:
        return json.load(r)


def spark_run(parquet: str, k: int, workers: int, memory_mb: int, args: argparse.Namespace) -> Dict[str, Any]:
    from pyspark.sql import SparkSession

    from simhash_store.spark import dedup

    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master(f"local-cluster[{workers},1,{memory_mb}]")
        .appName(f"spark_dedup_bench_{workers}")
        .config("spark.pyspark.python", sys.executable)
        .config("spark.driver.memory", "4g")
        .config("spark.executor.memory", f"{memory_mb - 200}m")
        .config("spark.sql.shuffle.partitions", str(args.partitions))
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "65536")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    sc = spark.sparkContext
    app, ui = sc.applicationId, sc.uiWebUrl
    try:
        df = spark.read.parquet(parquet)
        t0 = time.perf_counter()
        result = dedup(df, k=k, chunk_size=args.chunk_size, partitions=args.partitions)
        t1 = time.perf_counter()
        n_drop = result.drop.count()
        t2 = time.perf_counter()
        n_pairs = result.pairs.count()
        stages = rest(ui, app, "stages?status=complete")
        shuffle = sum(s.get("shuffleWriteBytes", 0) for s in stages)
        # The pair stage: the one running the pair kernel reads the big shuffle.
        pair_stage = max(stages, key=lambda s: s.get("shuffleReadBytes", 0))
        tasks = rest(
            ui, app, f"stages/{pair_stage['stageId']}/{pair_stage['attemptId']}/taskList?length=100000"
        )
        times = [t["taskMetrics"]["executorRunTime"] for t in tasks if t.get("status") == "SUCCESS"]
        all_tasks = sum(s.get("executorRunTime", 0) for s in stages)
        return {
            "workers": workers,
            "pairs_s": t1 - t0,
            "dedup_s": t2 - t0,
            "pairs": n_pairs,
            "drop": n_drop,
            "shuffle_bytes": shuffle,
            "pair_stage_tasks": len(times),
            "pair_stage_largest_task_share": max(times) / sum(times) if times else 0.0,
            "task_time_total_s": all_tasks / 1000,
            "largest_partition_work_share": result.stats.largest_partition_share,
            "largest_kernel_task_work_share": result.stats.max_task_work / max(1, result.stats.total_work),
            "kernel_tasks": result.stats.tasks,
        }
    finally:
        spark.stop()
        import pyspark

        home = os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
        shutil.rmtree(os.path.join(home, "work", app), ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument(
        "--hot",
        type=float,
        default=0.05,
        help="share of the documents given one value of block 0 (a group that big is split "
        "into chunk tasks whose rows grow as its size squared over --chunk-size)",
    )
    parser.add_argument("--workload", type=check, default="uniform", help=NAMES)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--worker-memory-mb", type=int, default=6144)
    parser.add_argument(
        "--partitions",
        type=int,
        help="pair-stage partitions (default: about 2 million rows each, 4N / 2M, at least 2)",
    )
    parser.add_argument("--chunk-size", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="write every measurement here")
    args = parser.parse_args()
    if args.partitions is None:
        args.partitions = max(2, round(4 * args.n / 2_000_000))

    import pyarrow as pa
    import pyarrow.parquet as pq

    workdir = tempfile.mkdtemp(prefix="spark_dedup_bench_")
    try:
        fps = planted(args.n, args.k, hot=args.hot, workload=args.workload)
        parquet = os.path.join(workdir, "docs.parquet")
        pq.write_table(
            pa.table({"id": np.arange(args.n, dtype=np.int64), "fingerprint": fps.view(np.int64)}),
            parquet,
            row_group_size=1 << 20,
        )
        runs: Dict[str, List[Dict[str, Any]]] = {"one_process": []}
        for _ in range(args.repeat):
            runs["one_process"].append(one_process(fps, args.k, workdir))
            print("one process", runs["one_process"][-1], flush=True)
            for w in [int(x) for x in args.workers.split(",")]:
                r = spark_run(parquet, args.k, w, args.worker_memory_mb, args)
                runs.setdefault(f"spark_{w}", []).append(r)
                print(f"spark {w} workers", r, flush=True)
                want = runs["one_process"][-1]
                if (r["pairs"], r["drop"]) != (want["pairs"], want["drop"]):
                    print("MISMATCH with the one-process answer", file=sys.stderr)
                    return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    def med(rows: List[Dict[str, Any]], key: str) -> float:
        return statistics.median(r[key] for r in rows)

    one = runs["one_process"]
    print(f"\nN = {args.n:,}, workload {args.workload}, k = {args.k}, medians of {args.repeat}")
    print(f"one process: load {med(one, 'load_s'):.1f} s, dedup {med(one, 'dedup_s'):.1f} s "
          f"({one[0]['pairs']:,} pairs, {one[0]['drop']:,} to drop)")
    for name, rows in runs.items():
        if name == "one_process":
            continue
        print(
            f"{name}: dedup {med(rows, 'dedup_s'):.1f} s (pairs {med(rows, 'pairs_s'):.1f} s), "
            f"{med(rows, 'dedup_s') / med(one, 'dedup_s'):.1f}x the one-process dedup, "
            f"{(med(rows, 'dedup_s')) / (med(one, 'dedup_s') + med(one, 'load_s')):.1f}x load+dedup; "
            f"shuffle {med(rows, 'shuffle_bytes') / 1e6:.0f} MB "
            f"({med(rows, 'shuffle_bytes') / args.n:.0f} B/doc); task time {med(rows, 'task_time_total_s'):.0f} s; "
            f"largest pair task {100 * med(rows, 'pair_stage_largest_task_share'):.1f}% of the stage's time "
            f"(even: {100 / args.partitions:.1f}%), largest partition {100 * med(rows, 'largest_partition_work_share'):.1f}% "
            f"of comparisons, largest kernel task {100 * med(rows, 'largest_kernel_task_work_share'):.2f}%"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "runs": runs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
