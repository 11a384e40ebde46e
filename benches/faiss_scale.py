#!/usr/bin/env python3
"""FAISS on the workload of benches/scale.rs: the same fingerprints and the same queries.

benches/scale.rs runs this itself with `--faiss` and prints both sides in one table; by hand
(after `cargo bench --bench scale -- --n N --faiss --keep` left the files in place):

    .venv/bin/python benches/faiss_scale.py --dir scale-bench-XXXX --runs 3 --ks 3,6

Needs numpy and faiss (`pip install faiss-cpu numpy`); exits with 3 when it cannot import them.

The index is `faiss.IndexBinaryMultiHash(64, nhash=4, b=16)` in memory, over `data.u64`
(little-endian u64 fingerprints; the position of each is its id, as in the store). A query
at distance k is `range_search` with radius k + 1 (FAISS keeps distances below the radius)
and `nflip = k // 4` (each of the 4 hash tables is probed with up to nflip of its 16 bits
flipped): a code within distance k differs from the query in at most k // 4 bits of one of
the four 16-bit substrings, so the answer is exactly the set of stored codes within
distance k, the store's answer. The bit order of the codes does not matter to Hamming
distance: data and queries are converted alike (the 8 bytes of each u64, little-endian).

With `--limit M` only the first M queries of each warm-up and measured set are used (at 100M
a k = 6 query takes FAISS tens of milliseconds).

`warmup.u64` and `queries.u64` hold one warm-up set and one measured set per phase, in the
order run 0 k = ks[0], run 0 k = ks[1], ..., run 1 k = ks[0], ... (see
benches/support/faiss.rs). For each phase: the warm-up set in one call, then each measured
query in its own `range_search` call on one thread (p50, p99: "fresh"), then the same again
("repeated"); each latency includes the Python call overhead, which is printed (the same
calls on an empty index). The answers of the first queries of run 0 are compared with the
store's (`answers.txt`): a query whose id set differs prints a MISMATCH line.
"""

import argparse
import json
import os
import sys
import time


def status_kib(field):
    """A field of /proc/self/status in KiB (VmRSS, VmHWM), 0 where it cannot be read."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def percentile(sorted_values, p):
    """The same rank as benches/scale.rs: round((n - 1) * p)."""
    if not sorted_values:
        return 0.0
    i = min(int(round((len(sorted_values) - 1) * p)), len(sorted_values) - 1)
    return sorted_values[i]


def median(values):
    values = sorted(values)
    n = len(values)
    if n == 0:
        return 0.0
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def read_answers(path):
    """{(k, index): set of ids} from answers.txt; empty when the file is missing."""
    answers = {}
    if not os.path.exists(path):
        return answers
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2:
                answers[(int(parts[0]), int(parts[1]))] = {int(x) for x in parts[2:]}
    return answers


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", required=True, help="where scale.rs wrote data.u64, warmup.u64, queries.u64, answers.txt")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ks", default="3,6", help="distances, comma-separated, in the files' order")
    parser.add_argument("--nhash", type=int, default=4)
    parser.add_argument("--bits", type=int, default=16, help="bits per hash table")
    parser.add_argument("--limit", type=int, default=0,
                        help="use only the first LIMIT queries of each warm-up and measured set (0: all)")
    parser.add_argument("--json", action="store_true", help="also print the report as one line `JSON {...}`")
    args = parser.parse_args()
    ks = [int(k) for k in args.ks.split(",") if k]

    try:
        import numpy as np
        import faiss
    except ImportError as e:
        print(f"faiss_scale.py: {e}; install with `pip install faiss-cpu numpy`", file=sys.stderr)
        return 3

    faiss.omp_set_num_threads(1)

    def codes(name):
        return np.ascontiguousarray(np.fromfile(os.path.join(args.dir, name), dtype="<u8").view(np.uint8).reshape(-1, 8))

    data = codes("data.u64")
    warmup = codes("warmup.u64")
    queries = codes("queries.u64")
    phases = args.runs * len(ks)
    if phases == 0 or len(warmup) % phases or len(queries) % phases:
        print(f"faiss_scale.py: {len(warmup)} warm-up and {len(queries)} measured queries do not split into {phases} phases", file=sys.stderr)
        return 2
    per_warmup = len(warmup) // phases
    per_phase = len(queries) // phases
    answers = read_answers(os.path.join(args.dir, "answers.txt"))
    use_warmup = min(per_warmup, args.limit) if args.limit else per_warmup
    use_measured = min(per_phase, args.limit) if args.limit else per_phase

    print(f"faiss {faiss.__version__}: IndexBinaryMultiHash(64, nhash={args.nhash}, b={args.bits}), {len(data)} codes, "
          f"{args.runs} runs x k in {ks}, {use_warmup} warm-up + {use_measured} measured queries per phase, 1 thread")
    rss0 = status_kib("VmRSS")
    t = time.perf_counter()
    index = faiss.IndexBinaryMultiHash(64, args.nhash, args.bits)
    index.add(data)
    build_s = time.perf_counter() - t
    index_mib = (status_kib("VmRSS") - rss0) / 1024
    print(f"build: {build_s:.2f} s, index {index_mib:.0f} MiB resident ({index_mib * 1024 * 1024 / max(len(data), 1):.1f} bytes/code)")

    # The per-call cost of the Python wrapper: the same calls on an empty index.
    empty = faiss.IndexBinaryMultiHash(64, args.nhash, args.bits)
    overhead = []
    for i in range(min(use_measured, 2000)):
        q = queries[i : i + 1]
        t0 = time.perf_counter_ns()
        empty.range_search(q, 4)
        overhead.append(time.perf_counter_ns() - t0)
    overhead.sort()
    call_overhead_us = percentile(overhead, 0.5) / 1e3

    def timed(qs, radius):
        lat = []
        found = 0
        ids = []
        for i in range(len(qs)):
            q = qs[i : i + 1]
            t0 = time.perf_counter_ns()
            lims, _, labels = index.range_search(q, radius)
            lat.append(time.perf_counter_ns() - t0)
            found += int(lims[1])
            ids.append(labels)
        lat.sort()
        return lat, found, ids

    results = []
    checked = 0
    mismatches = 0
    for phase in range(phases):
        run, k = divmod(phase, len(ks))
        k = ks[k]
        index.nflip = k // args.nhash
        radius = k + 1
        index.range_search(warmup[phase * per_warmup : phase * per_warmup + use_warmup], radius)
        measured = queries[phase * per_phase : phase * per_phase + use_measured]
        fresh, found, ids = timed(measured, radius)
        repeated, again, _ = timed(measured, radius)
        if found != again:
            print(f"MISMATCH run {run} k={k}: {found} matches fresh, {again} repeated")
        if run == 0:
            for i, labels in enumerate(ids):
                want = answers.get((k, i))
                if want is None:
                    continue
                checked += 1
                got = {int(x) for x in labels}
                if got != want:
                    mismatches += 1
                    print(f"MISMATCH k={k} query {i}: FAISS {len(got)} ids, the store {len(want)}; "
                          f"only FAISS {sorted(got - want)[:5]}, only the store {sorted(want - got)[:5]}")
        row = {
            "run": run,
            "k": k,
            "fresh_p50_us": percentile(fresh, 0.5) / 1e3,
            "fresh_p99_us": percentile(fresh, 0.99) / 1e3,
            "repeated_p50_us": percentile(repeated, 0.5) / 1e3,
            "repeated_p99_us": percentile(repeated, 0.99) / 1e3,
            "matches": found,
        }
        results.append(row)
        print(f"run {run} k={k}: fresh p50 {row['fresh_p50_us']:.1f} p99 {row['fresh_p99_us']:.1f} µs, "
              f"repeated p50 {row['repeated_p50_us']:.1f} p99 {row['repeated_p99_us']:.1f} µs, {found} matches")

    print(f"answers compared with the store's: {checked} queries, {mismatches} differ")
    print(f"per-call overhead (empty index) {call_overhead_us:.1f} µs; medians over {args.runs} runs, µs:")
    print("| k | fresh p50 | fresh p99 | repeated p50 | repeated p99 |")
    print("|---|---|---|---|---|")
    for k in ks:
        rows = [r for r in results if r["k"] == k]
        cols = [median([r[c] for r in rows]) for c in ("fresh_p50_us", "fresh_p99_us", "repeated_p50_us", "repeated_p99_us")]
        print(f"| {k} | " + " | ".join(f"{c:.1f}" for c in cols) + " |")
    peak_rss_mib = status_kib("VmHWM") / 1024
    print(f"peak RSS {peak_rss_mib:.0f} MiB")
    if args.json:
        report = {
            "faiss_version": faiss.__version__,
            "build_s": build_s,
            "index_mib": index_mib,
            "peak_rss_mib": peak_rss_mib,
            "call_overhead_us": call_overhead_us,
            "phases": results,
            "checked": checked,
            "mismatches": mismatches,
        }
        print("JSON " + json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
