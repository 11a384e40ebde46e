"""The online index past one machine, on paper: a simulation of the four block families split
by block-value range over nodes, as an ordered distributed key-value store (TiKV) would hold
them. Used for the numbers of ``docs/scale-out.md``.

Model:

- The block keys of the store (family i: block i (2 B), the other blocks (6 B), id (8 B))
  become keys ``[i] + block key`` of one ordered key space; ``docs`` and ``keys`` entries
  ``[4] + id`` and ``[5] + external key``. Each family's key range is cut into ``--shards``
  ranges holding equal numbers of documents (TiKV splits regions by size), at block-value
  boundaries where it can: a block value holding more documents than a shard is split by key
  and spans several shards. Shards are placed on ``--replicas`` nodes, round robin.
- A k <= 3 query scans, in each family, the key range of its block value: one shard (one
  node) per family unless the value is split, so at most four nodes for all but hot values.
  It goes to the replica with the least work so far. Its cost on a node is
  ``seek_us + key_ns * keys scanned`` per shard range (defaults from the single-machine
  numbers of ``docs/benchmarks.md``: a k=3 query at 1M documents through RocksDB, four
  ranges of about 15 keys, 26-42 us).
- Queries are drawn from the same distribution as the documents (new pages resemble stored
  ones; a popular template is queried as often as it is stored).

The block-value skew comes from ``--fingerprints FILE.npy`` (uint64 fingerprints of a real
crawl, e.g. the ``fingerprint`` column of a Spark job's output) or from a model: uniform
fingerprints plus ``--templated`` of the documents drawn from templates with Zipf
(``--zipf``) popularity, each a template's fingerprint with 0-3 bits flipped (so it keeps
most blocks of its template), plus ``--hot`` of them in one block value (the test suite's
extreme case).

    python python/benches/online_index_sim.py --docs 1e9 --nodes 16
"""

from __future__ import annotations

import argparse
import sys
from typing import Dict, List, Tuple

import numpy as np

BLOCK_KEY = 16
ENTRY_OVERHEAD = 12  # per key-value pair in an LSM tree (lengths, sequence number, index)


def model_fingerprints(n: int, templated: float, templates: int, zipf: float, hot: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    t = rng.random(n) < templated
    if t.any():
        base = rng.integers(0, 2**64, size=templates, dtype=np.uint64)
        weights = 1.0 / np.arange(1, templates + 1) ** zipf
        pick = rng.choice(templates, size=int(t.sum()), p=weights / weights.sum())
        flips = np.zeros(int(t.sum()), dtype=np.uint64)
        for _ in range(3):
            on = rng.random(len(flips)) < 0.5
            flips[on] ^= np.uint64(1) << rng.integers(0, 64, size=int(on.sum())).astype(np.uint64)
        fps[t] = base[pick] ^ flips
    h = rng.random(n) < hot
    fps[h] = (fps[h] & np.uint64(0x0000_FFFF_FFFF_FFFF)) | np.uint64(0xBEEF_0000_0000_0000)
    return fps


def blocks(fps: np.ndarray) -> np.ndarray:
    """(n, 4) block values."""
    return np.stack([((fps >> np.uint64(48 - 16 * i)) & np.uint64(0xFFFF)).astype(np.int64) for i in range(4)], 1)


def shard_map(counts: np.ndarray, shards: int) -> List[Tuple[int, int, float]]:
    """For one family: the shard pieces of every block value, as a list indexed by value of
    ``[(shard, share of the value's keys)]``, shards of equal document counts."""
    total = counts.sum()
    per = total / shards
    pieces: List[List[Tuple[int, float]]] = [[] for _ in range(len(counts))]
    shard, filled = 0, 0.0
    for v in range(len(counts)):
        c = float(counts[v])
        if c == 0:
            continue
        # Move to a new shard at a value boundary when this one is full enough.
        if filled >= per * 0.999 and shard < shards - 1:
            shard, filled = shard + 1, 0.0
        left = c
        while left > 0:
            room = per - filled if shard < shards - 1 else left
            take = min(left, max(room, 0.0)) if room > 0 else 0.0
            if take <= 0:
                shard, filled = min(shard + 1, shards - 1), 0.0
                continue
            pieces[v].append((shard, take / c))
            filled += take
            left -= take
            if left > 0 and shard < shards - 1:
                shard, filled = shard + 1, 0.0
    return pieces  # type: ignore[return-value]


def simulate(fps: np.ndarray, docs: float, nodes: int, replicas: int, shards: int, queries: int,
             seek_us: float, key_ns: float, key_bytes: int, seed: int, cores: int) -> Dict[str, float]:
    rng = np.random.default_rng(seed)
    scale = docs / len(fps)
    b = blocks(fps)
    counts = [np.bincount(b[:, i], minlength=65536).astype(np.float64) * scale for i in range(4)]
    maps = [shard_map(counts[i], shards) for i in range(4)]
    # Shard s of family i lives on nodes (4*s + i + r) % nodes, r < replicas.
    def home(family: int, shard: int) -> List[int]:
        return [(4 * shard + family + r * max(1, nodes // replicas)) % nodes for r in range(replicas)]

    # Bytes per node: block keys of the shards it holds, plus docs/keys entries spread evenly.
    per_doc_other = (8 + 28 + key_bytes + ENTRY_OVERHEAD) + (key_bytes + 8 + ENTRY_OVERHEAD)
    node_bytes = np.zeros(nodes)
    for i in range(4):
        shard_docs = np.zeros(shards)
        for v, ps in enumerate(maps[i]):
            for s, share in ps:
                shard_docs[s] += counts[i][v] * share
        for s in range(shards):
            for n in home(i, s):
                node_bytes[n] += shard_docs[s] * (BLOCK_KEY + ENTRY_OVERHEAD)
    node_bytes += docs * per_doc_other * replicas / nodes

    load = np.zeros(nodes)
    touched = np.zeros(queries)
    q = b[rng.integers(0, len(fps), size=queries)]
    for j in range(queries):
        seen = set()
        for i in range(4):
            v = q[j, i]
            for s, share in maps[i][v]:
                keys = counts[i][v] * share
                options = home(i, s)
                n = min(options, key=lambda x: load[x])
                load[n] += seek_us + keys * key_ns / 1000
                seen.add(n)
        touched[j] = len(seen)
    per_query = load / queries  # us of work per query, per node
    scanned = np.array([sum(counts[i][q[j, i]] for i in range(4)) for j in range(queries)])
    work = per_query.sum()
    return {
        "docs": docs,
        "nodes": nodes,
        "replicas": replicas,
        "us_per_query_total": work,
        "keys_scanned_per_query_mean": float(scanned.mean()),
        "keys_scanned_per_query_p50": float(np.median(scanned)),
        "keys_scanned_per_query_p99": float(np.quantile(scanned, 0.99)),
        "nodes_touched_mean": float(touched.mean()),
        "nodes_touched_max": float(touched.max()),
        "share_over_4_nodes": float((touched > 4).mean()),
        "load_max_over_mean": float(per_query.max() / per_query.mean()),
        # The cluster saturates when its busiest node does: cores * 1 s / its work per query.
        "cluster_queries_per_s": cores * 1e6 / per_query.max(),
        "queries_per_s_per_node": cores * 1e6 / per_query.max() / nodes,
        "bytes_per_node": float(node_bytes.mean()),
        "bytes_per_node_max": float(node_bytes.max()),
        "largest_block_value_share": float(max(c.max() for c in counts) / docs),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--docs", type=float, default=1e9, help="documents in the index")
    p.add_argument("--nodes", type=int, default=16)
    p.add_argument("--replicas", type=int, default=3)
    p.add_argument("--shards", type=int, default=256, help="shards (regions) per block family")
    p.add_argument("--sample", type=int, default=2_000_000, help="fingerprints simulated (scaled to --docs)")
    p.add_argument("--fingerprints", help="a .npy file of uint64 fingerprints to take the skew from")
    p.add_argument("--templated", type=float, default=0.10)
    p.add_argument("--templates", type=int, default=20_000)
    p.add_argument("--zipf", type=float, default=1.1)
    p.add_argument("--hot", type=float, default=0.0, help="share of documents in one block value")
    p.add_argument("--queries", type=int, default=50_000)
    p.add_argument("--seek-us", type=float, default=6.0)
    p.add_argument("--key-ns", type=float, default=8.0)
    p.add_argument("--key-bytes", type=int, default=60, help="mean external key (URL) length")
    p.add_argument("--cores", type=int, default=16, help="cores per node serving queries")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    if a.fingerprints:
        fps = np.load(a.fingerprints).astype(np.uint64)
    else:
        fps = model_fingerprints(a.sample, a.templated, a.templates, a.zipf, a.hot, a.seed)
    r = simulate(fps, a.docs, a.nodes, a.replicas, a.shards, a.queries, a.seek_us, a.key_ns, a.key_bytes, a.seed, a.cores)
    for k, v in r.items():
        print(f"{k:28s} {v:,.3f}" if isinstance(v, float) else f"{k:28s} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
