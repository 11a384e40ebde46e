"""Ray dedup next to Spark and the one-process dedup, and a datatrove filter against a store.

The fingerprints of ``spark_dedup.py`` (N of ``--workload``, default uniform random, a quarter
copies of earlier ones with 0..=k+1 bits flipped, ``--hot`` of them sharing one block value), in
one run:

- one process: ``Store.bulk_load_fingerprints`` then ``Store.pairs_numpy(k)`` and
  ``Store.clusters(k)`` (what ``simhash-store dedup`` does), all cores;
- ``simhash_store.spark.dedup`` on ``local-cluster[2,1,MEM]`` (``--spark``);
- ``simhash_store.ray.dedup`` on a local Ray cluster of W nodes of one CPU each
  (``ray.cluster_utils.Cluster``), for each W in ``--workers``: pairs, clusters and drop list
  computed and counted;
- with ``--datatrove-docs M``: ``SimhashIndexFilter`` over M JSONL documents against the
  store of the N fingerprints (documents/s per task; one task, as each task is one core).

Every answer is checked against the one-process one (pair and drop counts). Prints medians
over ``--repeat`` runs and writes every measurement as JSON (``--json``).

    python python/benches/ray_dedup.py --n 10000000 --repeat 3 --workers 1,2 --spark \\
        --datatrove-docs 1000000
    python python/benches/ray_dedup.py --plan-cost --n 2000000 --chunk-size 400
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any, Dict, List

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spark_dedup import one_process, planted, spark_run  # noqa: E402
from workload import NAMES, check  # noqa: E402


def ray_run(fps: np.ndarray, k: int, workers: int, args: argparse.Namespace) -> Dict[str, Any]:
    import pyarrow as pa
    import ray
    from ray.cluster_utils import Cluster

    from simhash_store.ray import dedup

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    memory = args.object_store_mb * 1024 * 1024
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "object_store_memory": memory, "include_dashboard": False},
    )
    for _ in range(workers - 1):
        cluster.add_node(num_cpus=1, object_store_memory=memory)
    ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
    cluster.wait_for_nodes()
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        table = pa.table({"id": np.arange(len(fps), dtype=np.int64), "fingerprint": pa.array(fps, pa.uint64())})
        blocks = max(1, len(fps) // 1_000_000)
        step = -(-len(fps) // blocks)
        ds = ray.data.from_arrow([table.slice(i, step) for i in range(0, len(fps), step)])
        t0 = time.perf_counter()
        result = dedup(ds, k=k, chunk_size=args.chunk_size, partitions=args.partitions)
        n_pairs = result.pairs.count()
        t1 = time.perf_counter()
        n_drop = result.drop.count()
        t2 = time.perf_counter()
        return {"workers": workers, "pairs_s": t1 - t0, "dedup_s": t2 - t0, "pairs": n_pairs, "drop": n_drop}
    finally:
        ray.shutdown()
        cluster.shutdown()


def datatrove_run(store: str, m: int, workdir: str) -> Dict[str, Any]:
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader

    from simhash_store.datatrove import SimhashIndexFilter

    rng = random.Random(5)
    words = [f"w{i}" for i in range(5000)]
    folder = os.path.join(workdir, "docs")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "part-0.jsonl"), "w") as f:
        for i in range(m):
            f.write(json.dumps({"id": str(i), "text": " ".join(rng.choices(words, k=100))}) + "\n")
    filt = SimhashIndexFilter(store, k=3, batch_size=4096)
    t0 = time.perf_counter()
    LocalPipelineExecutor(
        pipeline=[JsonlReader(folder), filt], tasks=1, logging_dir=os.path.join(workdir, "logs")
    ).run()
    t = time.perf_counter() - t0
    return {"docs": m, "seconds": t, "docs_per_s_per_task": m / t}


def plan_cost(n: int, k: int, hot: float, chunk_size: int, workload: str) -> None:
    """Rows and comparisons of the partition plan, with and without ``hot`` of the documents
    in one block value (one process; what the pair stage of either engine does)."""
    from simhash_store._native import PartitionPlan, group_counts, task_pairs

    for h in (0.0, hot):
        fps = planted(n, k, hot=h, workload=workload)
        plan = PartitionPlan(group_counts(fps), k, chunk_size)
        task, side, fp, id_ = plan.explode(np.arange(n, dtype=np.int64), fps)
        order = np.argsort(task, kind="stable")
        found = task_pairs(task[order], side[order], fp[order], id_[order], k, True)
        print(
            f"hot={h}: split groups (chunked, sub-blocks) {plan.split_groups()}, rows {len(task):,}, "
            f"comparisons {found['total_work']:,}, largest task {found['max_task_work']:,}, "
            f"pairs {len(found['a']):,}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--hot", type=float, default=0.05)
    parser.add_argument("--workload", type=check, default="uniform", help=NAMES)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--spark", action="store_true", help="also Spark on local-cluster[2,1,MEM]")
    parser.add_argument("--worker-memory-mb", type=int, default=6144)
    parser.add_argument("--object-store-mb", type=int, default=2048)
    parser.add_argument("--partitions", type=int, default=None)
    parser.add_argument("--chunk-size", type=int, default=20_000)
    parser.add_argument("--datatrove-docs", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="write every measurement here")
    parser.add_argument("--plan-cost", action="store_true", help="only the plan's rows and comparisons")
    args = parser.parse_args()
    if args.plan_cost:
        plan_cost(args.n, args.k, args.hot, args.chunk_size, args.workload)
        return 0
    args.partitions = args.partitions or max(4, 4 * args.n // 2_000_000)
    workers = [int(w) for w in args.workers.split(",") if w]
    fps = planted(args.n, args.k, hot=args.hot, workload=args.workload)
    runs: Dict[str, List[Dict[str, Any]]] = {"one": [], "spark": [], "datatrove": []}
    runs.update({f"ray{w}": [] for w in workers})
    work = tempfile.mkdtemp(prefix="ray-bench-")
    try:
        parquet = os.path.join(work, "fps.parquet")
        if args.spark:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(
                pa.table({"id": np.arange(args.n, dtype=np.int64), "fingerprint": fps.view(np.int64)}), parquet
            )
        for r in range(args.repeat):
            one = one_process(fps, args.k, work)
            runs["one"].append(one)
            print(f"run {r}: one process {one['dedup_s']:.1f} s", flush=True)
            if args.spark:
                s = spark_run(parquet, args.k, 2, args.worker_memory_mb, args)
                assert (s["pairs"], s["drop"]) == (one["pairs"], one["drop"]), (s, one)
                runs["spark"].append(s)
                print(f"run {r}: spark 2 workers {s['dedup_s']:.1f} s", flush=True)
            for w in workers:
                x = ray_run(fps, args.k, w, args)
                assert (x["pairs"], x["drop"]) == (one["pairs"], one["drop"]), (x, one)
                runs[f"ray{w}"].append(x)
                print(f"run {r}: ray {w} workers {x['dedup_s']:.1f} s", flush=True)
        if args.datatrove_docs:
            import simhash_store

            store = os.path.join(work, "store")
            with simhash_store.Store.open(store) as s:
                s.bulk_load_fingerprints(np.arange(args.n, dtype=np.uint64), fps)
            for _ in range(args.repeat):
                d = datatrove_run(store, args.datatrove_docs, tempfile.mkdtemp(dir=work))
                runs["datatrove"].append(d)
                print(f"datatrove: {d['docs_per_s_per_task']:.0f} docs/s per task", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def med(rows: List[Dict[str, Any]], key: str) -> float:
        return statistics.median(r[key] for r in rows) if rows else float("nan")

    one = med(runs["one"], "dedup_s")
    print(f"\nN={args.n:,} k={args.k} hot={args.hot} workload={args.workload}: medians of {args.repeat}")
    print(f"one process: load {med(runs['one'], 'load_s'):.1f} s, dedup {one:.1f} s")
    if runs["spark"]:
        s = med(runs["spark"], "dedup_s")
        print(f"spark, 2 workers: {s:.1f} s ({s / one:.1f}x dedup)")
    for w in workers:
        x = med(runs[f"ray{w}"], "dedup_s")
        print(f"ray, {w} workers: {x:.1f} s ({x / one:.1f}x dedup)")
    if runs["datatrove"]:
        print(f"datatrove filter: {med(runs['datatrove'], 'docs_per_s_per_task'):.0f} docs/s per task")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "runs": runs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
