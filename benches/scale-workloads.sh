#!/usr/bin/env bash
# Alternating `benches/scale.rs` runs of several workloads, and their medians and same-pair ratios.
#
#   benches/scale-workloads.sh N PAIRS WORKLOAD... [-- SCALE OPTIONS]
#   benches/scale-workloads.sh 10000000 3 uniform real -- --runs 3 --queries 5000 --warmup 5000 --after-load 5000 --pairs
#
# Runs the workloads one after the other, PAIRS times (uniform, real, uniform, real, ...), each
# a fresh store under the current directory (deleted after the run; `--dir` to put it
# elsewhere), logs in $LOGS/scale-workloads-N-WORKLOAD-I.log ($LOGS: a new folder
# target/scale-workloads/DATE-TIME), then prints per workload the median
# over its runs of: load rate, disk, shared-block factor and query scan against uniform (as
# the loaded set gives them), k=3 right after the load p50 / p99, k=3 and k=6 fresh p50 /
# p99 (each itself the median over the invocation's --runs), all pairs; and for each workload
# after the first, the median over pairs of its ratio to the first workload of the same pair.
set -euo pipefail
n=$1 pairs=$2
shift 2
workloads=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do workloads+=("$1"); shift; done
[ $# -gt 0 ] && shift
logs=${LOGS:-target/scale-workloads/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$logs"
cargo bench --bench scale --no-run 2>/dev/null
for i in $(seq 1 "$pairs"); do
    for w in "${workloads[@]}"; do
        log="$logs/scale-workloads-$n-${w//:/_}-$i.log"
        cargo bench --bench scale -- --n "$n" --workload "$w" "$@" >"$log" 2>&1
        echo "$log: $(grep -c . "$log") lines, load average $(cut -d' ' -f1 /proc/loadavg)"
    done
done
python3 - "$logs" "$n" "$pairs" "${workloads[@]}" <<'PY'
import re, statistics, sys
logs, n, pairs, workloads = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
def grab(text):
    r = {}
    def num(pattern, key, group=1):
        m = re.search(pattern, text, re.M)
        if m:
            r[key] = float(m.group(group).replace(",", ""))
    num(r"^\| load \| [\d.]+ s \| ([\d.]+) M fps/s", "load M/s")
    num(r"^disk \(after the load\): ([\d.]+) bytes/fp", "disk B/fp")
    num(r"^workload .*: shared-block factor ([\d.]+) / ([\d.]+) / ([\d.]+) / ([\d.]+)", "factor b0")
    num(r"scans [\d.]+ entries, uniform [\d.]+: ([\d.]+)x", "scan vs uniform")
    num(r"^\| right after the load, k=3 \| fresh p50 ([\d.]+)", "k3 after p50")
    num(r"^\| right after the load, k=3 \| fresh p50 [\d.]+ µs \| p99 ([\d.]+)", "k3 after p99")
    num(r"^\| 3 \| fresh \| ([\d.]+) \| ([\d.]+)", "k3 fresh p50")
    num(r"^\| 3 \| fresh \| ([\d.]+) \| ([\d.]+)", "k3 fresh p99", 2)
    num(r"^\| 3 \| fresh, in the crowded group \(\d+ per run\) \| ([\d.]+) \| ([\d.]+)", "k3 crowded p50")
    num(r"^\| 3 \| fresh, in the crowded group \(\d+ per run\) \| ([\d.]+) \| ([\d.]+)", "k3 crowded p99", 2)
    num(r"^\| 6 \| fresh \| ([\d.]+) \| ([\d.]+)", "k6 fresh p50")
    num(r"^\| 6 \| fresh \| ([\d.]+) \| ([\d.]+)", "k6 fresh p99", 2)
    num(r"^\| all pairs k=3 \| ([\d.]+) s", "pairs s")
    num(r"^\| all pairs k=3 \| [\d.]+ s \| (\d+) pairs", "pairs found")
    return r
runs = {w: [grab(open(f"{logs}/scale-workloads-{n}-{w.replace(':', '_')}-{i}.log").read()) for i in range(1, pairs + 1)] for w in workloads}
keys = [k for k in runs[workloads[0]][0] if all(k in r for w in workloads for r in runs[w])]
keys += [k for w in workloads for k in runs[w][0] if k not in keys]
print(f"N = {n}, {pairs} runs of each workload, alternating; medians")
print("| workload | " + " | ".join(keys) + " |")
print("|---" * (len(keys) + 1) + "|")
for w in workloads:
    cells = [f"{statistics.median(r[k] for r in runs[w]):g}" if all(k in r for r in runs[w]) else "-" for k in keys]
    print(f"| {w} | " + " | ".join(cells) + " |")
base = workloads[0]
for w in workloads[1:]:
    cells = []
    for k in keys:
        ratios = [r[k] / b[k] for r, b in zip(runs[w], runs[base]) if k in r and k in b and b[k]]
        cells.append(f"{statistics.median(ratios):.2f}" if ratios else "-")
    print(f"| {w} / {base}, same pair | " + " | ".join(cells) + " |")
PY
