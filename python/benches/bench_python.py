"""Speed of the Python package next to Rust and next to the Python peers, in one run.

    python python/benches/bench_python.py [--rounds 5] [--n 1000000] [--texts N]
        [--corpus ../shared/quality/originals.jsonl.gz]

Sections (medians over --rounds alternating rounds; ratios from the same rounds):

1. Batch fingerprinting: ``Simhasher.fingerprint_many`` against the same texts fingerprinted
   in Rust on all cores (``examples/python_baseline.rs``), as a share of Rust's throughput.
2. Queries: ``Store.query_many`` (all cores) against Rust's ``Store::query_batch``, and one
   ``Store.query`` call at a time against Rust's ``Store::query``: throughput share and the
   microseconds each Python call adds. Every round asks fingerprints no other round asks
   (half planted within distance 3) of a freshly opened store without the query cache, the
   same for both sides, so caches flatter neither.
3. Peers on the same 1M-fingerprint workload (load, then k = 3 queries): this package's
   ``Store`` (bulk loaded from numpy arrays), the PyPI ``simhash`` package's ``SimhashIndex``
   and, since gaoya's SimHash index takes only texts, gaoya on a text workload next to
   ``Store.bulk_load`` + ``query_many`` of the same texts.
4. One call: a query that costs almost nothing (k = 0 in a store of one document), Python
   against Rust: the binding's own cost per call.
5. Ctrl-C: the time from SIGINT to ``KeyboardInterrupt`` during a pair scan.

Prints a Markdown table per section (docs/benchmarks.md, "Python package").
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# numpy's OpenBLAS starts worker threads that spin for a while after each call, taking a core
# from the measured work on a 2-core machine (8.6% of the samples of a query loop under
# perf): one BLAS thread, as for any benchmark that is not about BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import simhash_store  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BASELINE = REPO / "target" / "release" / "examples" / "python_baseline"


def median(xs):
    return statistics.median(xs)


def build_baseline() -> None:
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--example", "python_baseline"],
        cwd=REPO,
        check=True,
    )


def rust(*args: str) -> dict:
    out = subprocess.run([str(BASELINE), *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def load_texts(corpus: Path | None, n: int) -> list[str]:
    texts: list[str] = []
    if corpus and corpus.exists():
        opener = gzip.open if corpus.suffix == ".gz" else open
        with opener(corpus, "rt", encoding="utf-8") as f:
            for line in f:
                t = json.loads(line).get("text")
                if t:
                    texts.append(t)
    if not texts:
        rng = np.random.default_rng(0)
        words = [f"w{i}" for i in range(5000)]
        texts = [" ".join(rng.choice(words, size=300)) for _ in range(2000)]
    out = []
    while len(out) < n:
        out.extend(texts)
    return out[:n]


def fingerprinting(texts: list[str], rounds: int) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        for t in texts:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
        path = f.name
    hasher = simhash_store.Simhasher()
    py_s, rs_s = [], []
    try:
        for r in range(rounds):
            order = [0, 1] if r % 2 == 0 else [1, 0]
            for side in order:
                if side == 0:
                    start = time.perf_counter()
                    hasher.fingerprint_many(texts, on_empty="zero")
                    py_s.append(time.perf_counter() - start)
                else:
                    res = rust("fingerprint", path)
                    rs_s.append(res["seconds"])
        mb = sum(len(t.encode()) for t in texts) / 1e6
    finally:
        os.unlink(path)
    ratios = [rs / py for py, rs in zip(py_s, rs_s)]
    return {
        "texts": len(texts),
        "MB": round(mb, 1),
        "python_MB_s": round(mb / median(py_s), 2),
        "rust_MB_s": round(mb / median(rs_s), 2),
        "share_of_rust": round(median(ratios), 3),
    }


def make_queries(rng, fps: np.ndarray, n: int) -> np.ndarray:
    """Half planted within distance 3 of stored fingerprints, half random: never asked before."""
    bits = np.uint64(1) << np.arange(64, dtype=np.uint64)
    base = fps[rng.integers(0, len(fps), size=n // 2)]
    flips = np.zeros(n // 2, dtype=np.uint64)
    for i in range(n // 2):
        d = int(rng.integers(0, 4))
        if d:
            flips[i] = np.bitwise_or.reduce(bits[rng.choice(64, size=d, replace=False)])
    q = np.concatenate([base ^ flips, rng.integers(0, 2**64, size=n - n // 2, dtype=np.uint64)])
    rng.shuffle(q)
    return q


def queries(n: int, rounds: int, per_round: int) -> dict:
    rng = np.random.default_rng(7)
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    tmp = tempfile.mkdtemp(prefix="bench-py-")
    path = os.path.join(tmp, "store")
    with simhash_store.Store.open(path) as s:
        s.bulk_load_fingerprints(np.arange(n, dtype=np.uint64), fps)
        s.compact()
    py_batch, rs_batch, py_single, rs_single = [], [], [], []
    for r in range(rounds):
        # Fresh queries each round, the same for both sides (each in its own process, with a
        # cold block cache and no query cache): batch half, single half.
        q_py = make_queries(rng, fps, 2 * per_round)
        qfile = os.path.join(tmp, "q.u64")
        q_py.astype("<u8").tofile(qfile)
        for side in ([0, 1] if r % 2 == 0 else [1, 0]):
            if side == 1:
                res = rust("query", path, qfile, "3")
                rs_batch.append(res["batch_seconds"] / res["batch_queries"])
                rs_single.append(res["single_seconds"] / res["single_queries"])
            else:
                with simhash_store.Store.open(path, read_only=True, query_cache_size=0) as s:
                    batch, rest = q_py[:per_round], q_py[per_round:]
                    start = time.perf_counter()
                    s.query_many(batch, k=3)
                    py_batch.append((time.perf_counter() - start) / len(batch))
                    items = [int(x) for x in rest]
                    query = s.query
                    start = time.perf_counter()
                    for q in items:
                        query(q, 3)
                    py_single.append((time.perf_counter() - start) / len(items))
    return {
        "documents": n,
        "queries_per_round": 2 * per_round,
        "python_query_many_us": round(median(py_batch) * 1e6, 2),
        "rust_query_batch_us": round(median(rs_batch) * 1e6, 2),
        "query_many_share_of_rust": round(median([r / p for p, r in zip(py_batch, rs_batch)]), 3),
        "python_query_us": round(median(py_single) * 1e6, 2),
        "rust_query_us": round(median(rs_single) * 1e6, 2),
        "python_adds_us": round(median([p - r for p, r in zip(py_single, rs_single)]) * 1e6, 2),
    }


def call_overhead(rounds: int, n: int = 200_000) -> dict:
    """What one call costs when the query costs almost nothing (k = 0, nothing found, a store
    of one document): the binding's own overhead, Python against Rust."""
    tmp = tempfile.mkdtemp(prefix="bench-call-")
    path = os.path.join(tmp, "s")
    with simhash_store.Store.open(path) as s:
        s.insert(1, 12345)
    py, rs = [], []
    for r in range(rounds):
        for side in ([0, 1] if r % 2 == 0 else [1, 0]):
            if side == 1:
                rs.append(rust("tiny", path, str(n))["call_seconds"])
            else:
                with simhash_store.Store.open(path, read_only=True, query_cache_size=0) as s:
                    query = s.query
                    top = 2**64 - 1
                    start = time.perf_counter()
                    for i in range(n):
                        query(top - i, 0)
                    py.append((time.perf_counter() - start) / n)
    return {
        "python_call_us": round(median(py) * 1e6, 3),
        "rust_call_us": round(median(rs) * 1e6, 3),
        "python_adds_us": round(median([p - q for p, q in zip(py, rs)]) * 1e6, 3),
    }


def peers_fingerprints(n: int, nq: int) -> list[dict]:
    rng = np.random.default_rng(9)
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    q = make_queries(rng, fps, nq)  # for query_many
    q_single = make_queries(rng, fps, nq)  # for one call at a time: also never asked before
    rows = []
    tmp = tempfile.mkdtemp(prefix="bench-peers-")
    start = time.perf_counter()
    with simhash_store.Store.open(os.path.join(tmp, "s")) as s:
        s.bulk_load_fingerprints(np.arange(n, dtype=np.uint64), fps)
        load = time.perf_counter() - start
        start = time.perf_counter()
        found = sum(len(m) for m in s.query_many(q, k=3))
        many = time.perf_counter() - start
        items = [int(x) for x in q_single]
        start = time.perf_counter()
        for x in items:
            s.query(x, 3)
        single = time.perf_counter() - start
    rows.append({"index": "simhash_store.Store", "load_s": load, "query_us": single / nq * 1e6,
                 "query_many_us": many / nq * 1e6, "found": found})
    try:
        import simhash as pypi_simhash
    except ImportError:
        return rows
    start = time.perf_counter()
    objs = [(str(i), pypi_simhash.Simhash(int(v))) for i, v in enumerate(fps)]
    index = pypi_simhash.SimhashIndex(objs, k=3)
    load = time.perf_counter() - start
    sample = [pypi_simhash.Simhash(int(x)) for x in q_single[: max(1, nq // 10)]]
    start = time.perf_counter()
    found = sum(len(index.get_near_dups(x)) for x in sample)
    single = time.perf_counter() - start
    rows.append({"index": "simhash.SimhashIndex (PyPI)", "load_s": load,
                 "query_us": single / len(sample) * 1e6, "query_many_us": float("nan"),
                 "found": f"{found} of {len(sample)} queries"})
    return rows


def peers_texts(texts: list[str], nq: int) -> list[dict]:
    rows = []
    queries_ = [t + " extra" for t in texts[:nq]]
    tmp = tempfile.mkdtemp(prefix="bench-gaoya-")
    start = time.perf_counter()
    with simhash_store.Store.open(os.path.join(tmp, "s")) as s:
        s.bulk_load((i, None, t) for i, t in enumerate(texts))
        load = time.perf_counter() - start
        start = time.perf_counter()
        fps = s.simhasher.fingerprint_many(queries_, on_empty="zero")
        s.query_many(fps, k=3)
        q = time.perf_counter() - start
    rows.append({"index": "simhash_store (texts)", "load_s": load, "query_us": q / nq * 1e6})
    try:
        from gaoya.simhash import SimHashStringIndex
    except ImportError:
        return rows
    index = SimHashStringIndex(hash_size=64, num_blocks=4, hamming_distance=3)
    start = time.perf_counter()
    index.index.par_bulk_insert_docs(list(range(len(texts))), texts)
    load = time.perf_counter() - start
    start = time.perf_counter()
    index.par_bulk_query(queries_)
    q = time.perf_counter() - start
    rows.append({"index": "gaoya SimHashStringIndex (texts)", "load_s": load, "query_us": q / nq * 1e6})
    return rows


def ctrl_c(rounds: int) -> dict:
    script = f"""
import signal, sys, numpy as np, simhash_store
signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with SIGINT ignored
s = simhash_store.Store.open(sys.argv[1])
rng = np.random.default_rng(3)
s.bulk_load_fingerprints(np.arange(300_000, dtype=np.uint64), rng.integers(0, 2**64, size=300_000, dtype=np.uint64))
print("READY", flush=True)
try:
    s.clusters(k=24)
except KeyboardInterrupt:
    print("INTERRUPTED", flush=True)
"""
    times = []
    for _ in range(rounds):
        tmp = tempfile.mkdtemp(prefix="bench-sigint-")
        child = subprocess.Popen([sys.executable, "-c", script, os.path.join(tmp, "s")],
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "READY"
        time.sleep(1.0)
        sent = time.perf_counter()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline().strip()
        times.append(time.perf_counter() - sent)
        child.wait()
        assert line == "INTERRUPTED", line
    return {"sigint_to_keyboardinterrupt_s": round(median(times), 3), "max_s": round(max(times), 3)}


def table(rows: list[dict]) -> str:
    keys = list(rows[0])
    fmt = lambda v: f"{v:,.2f}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(fmt(r.get(k, "")) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--n", type=int, default=1_000_000, help="documents of the query and peer workloads")
    p.add_argument("--texts", type=int, default=20_000, help="texts of the fingerprint and gaoya workloads")
    p.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "quality" / "originals.jsonl.gz")
    p.add_argument("--skip", nargs="*", default=[], choices=["fingerprint", "query", "peers", "gaoya", "sigint"])
    a = p.parse_args()
    build_baseline()
    texts = load_texts(a.corpus, a.texts)
    print(f"simhash_store {simhash_store.__version__}, {os.cpu_count()} cores, rounds={a.rounds}\n")
    if "fingerprint" not in a.skip:
        print("## Batch fingerprinting\n\n" + table([fingerprinting(texts, a.rounds)]) + "\n", flush=True)
    if "query" not in a.skip:
        print("## Queries, k = 3\n\n" + table([queries(a.n, a.rounds, 10_000)]) + "\n", flush=True)
    if "query" not in a.skip:
        print("## One call\n\n" + table([call_overhead(a.rounds)]) + "\n", flush=True)
    if "peers" not in a.skip:
        print("## Peers, fingerprints\n\n" + table(peers_fingerprints(a.n, 20_000)) + "\n", flush=True)
    if "gaoya" not in a.skip:
        print("## Peers, texts\n\n" + table(peers_texts(texts, 5_000)) + "\n", flush=True)
    if "sigint" not in a.skip:
        print("## Ctrl-C\n\n" + table([ctrl_c(a.rounds)]) + "\n", flush=True)


if __name__ == "__main__":
    main()
