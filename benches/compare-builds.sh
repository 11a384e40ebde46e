#!/usr/bin/env bash
# Two builds of the project side by side: the same answers, byte for byte, and their load, query
# and pair speeds as medians of alternating runs. For changes that must not change behaviour
# (a restructuring, a dependency update).
#
#   benches/compare-builds.sh OLD_CHECKOUT NEW_CHECKOUT [N] [PAIRS]
#   git worktree add ../old main~3 && benches/compare-builds.sh ../old . 2000000 3
#
# Builds each checkout's `simhash-store` (features `server`) and `scale` bench in its own
# target/ (NO_BUILD=1: use what is built there). Then:
#
# 1. Behaviour. 20,000 fingerprints (one in ten planted within 0..=6 bits of another, keys,
#    ids out of order, some ids and keys given twice) as JSON Lines: each build loads them
#    into a store of its own; `export`, 300 queries at k = 3 and k = 6 (`--json`) and `dedup`
#    (pairs, sorted: their scan order varies from run to run; clusters, drop list) must give
#    the same bytes. Each `scale` bench loads N/10
#    fingerprints with a budget of 2 MB (many spooled runs and their merge) and keeps the
#    store: the two exports must be the same bytes. The new build opens the old build's
#    stores: `verify` clean, the same export.
# 2. Speed. Each build's `scale` bench (N fingerprints, default options: load, k = 3 and
#    k = 6 fresh queries, all pairs), old and new alternating PAIRS times; prints the medians
#    and the median of the new/old ratios of the same pair.
#
# Logs and stores go to target/compare-builds/DATE-TIME (stores deleted at the end).
set -euo pipefail
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd) n=${3:-2000000} pairs=${4:-3}
out=$new/target/compare-builds/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
if [ -z "${NO_BUILD:-}" ]; then
    for tree in "$old" "$new"; do
        (cd "$tree" && cargo build --release --features server --bin simhash-store -q &&
            cargo bench --bench scale --no-run -q 2>/dev/null)
    done
fi
bin() { echo "$1/target/release/simhash-store"; }
# The newest build of the scale bench.
scale() { ls -t "$1"/target/release/deps/scale-* | grep -v '\.d$' | head -1; }
python3 - "$out/input.jsonl" "$out/queries.txt" <<'PY'
import json, random, sys
r = random.Random(7)
fps = []
with open(sys.argv[1], "w") as f:
    for i in range(20_000):
        fp = r.getrandbits(64)
        if fps and r.random() < 0.1:
            fp = r.choice(fps)
            for bit in r.sample(range(64), r.randint(0, 6)):
                fp ^= 1 << bit
        fps.append(fp)
        doc = {"id": r.randrange(1 << 40) if r.random() < 0.98 else 12345, "fingerprint": format(fp, "016x")}
        if r.random() < 0.5:
            doc["key"] = f"https://example.com/{r.randrange(15_000)}"
        f.write(json.dumps(doc) + "\n")
with open(sys.argv[2], "w") as f:
    for _ in range(300):
        fp = r.choice(fps) if r.random() < 0.5 else r.getrandbits(64)
        f.write(format(fp ^ (1 << r.randrange(64)), "016x") + "\n")
PY
same() { cmp -s "$1" "$2" && echo "same: $3" || { echo "DIFFERENT: $3 ($1 $2)"; status=1; }; }
status=0
for side in old new; do
    tree=$old; [ $side = new ] && tree=$new
    b=$(bin "$tree")
    $b load "$out/input.jsonl" --store "$out/$side.db" -q >/dev/null
    $b export --store "$out/$side.db" >"$out/$side.export"
    for k in 3 6; do
        while read -r q; do $b query --store "$out/$side.db" --fingerprint "$q" -k $k --json; done \
            <"$out/queries.txt" >"$out/$side.query-k$k"
    done
    $b dedup --store "$out/$side.db" --out "$out/$side.dedup" -q --json >/dev/null
    "$(scale "$tree")" --n $((n / 10)) --budget 2000000 --queries 0 \
        --dir "$out/$side.scale" --keep >"$out/$side.scale-spooled.log" 2>&1
    grep -q Merging "$out/$side.scale-spooled.log" ||
        { echo "DIFFERENT: the $side build's load of many runs was not spooled and merged"; status=1; }
    store=$(find "$out/$side.scale" -name CURRENT -printf '%h\n' | head -1)
    $b export --store "$store" >"$out/$side.spooled-export"
done
same "$out/old.export" "$out/new.export" "export after a JSON Lines load"
for k in 3 6; do same "$out/old.query-k$k" "$out/new.query-k$k" "300 queries at k = $k"; done
for f in $(cd "$out/old.dedup" && ls | grep -v -e summary.svg -e summary.json); do
    if [ "$f" = pairs.jsonl ]; then
        # In scan order, which the threads interleave differently from run to run.
        sort "$out/old.dedup/$f" >"$out/old.pairs-sorted"
        sort "$out/new.dedup/$f" >"$out/new.pairs-sorted"
        same "$out/old.pairs-sorted" "$out/new.pairs-sorted" "dedup $f (sorted)"
    else
        same "$out/old.dedup/$f" "$out/new.dedup/$f" "dedup $f"
    fi
done
same "$out/old.spooled-export" "$out/new.spooled-export" "export after a load of many spooled runs"
nb=$(bin "$new")
$nb verify --store "$out/old.db" >/dev/null && echo "same: the new build verifies the old build's store" ||
    { echo "DIFFERENT: verify of the old store"; status=1; }
$nb export --store "$out/old.db" >"$out/old-by-new.export"
same "$out/old.export" "$out/old-by-new.export" "the old build's store exported by the new build"
rm -rf "$out"/*.db "$out"/*.scale

for i in $(seq 1 "$pairs"); do
    for side in old new; do
        tree=$old; [ $side = new ] && tree=$new
        "$(scale "$tree")" --n "$n" --pairs --runs 3 --queries 5000 \
            --dir "$out/scale-$side" >"$out/speed-$side-$i.log" 2>&1
        rm -rf "$out/scale-$side"
        echo "$out/speed-$side-$i.log: load average $(cut -d' ' -f1 /proc/loadavg)"
    done
done
python3 - "$out" "$pairs" <<'PY'
import re, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
def grab(text):
    r = {}
    def num(pattern, key):
        m = re.search(pattern, text, re.M)
        if m:
            r[key] = float(m.group(1).replace(",", ""))
    num(r"^\| load \| [\d.]+ s \| ([\d.]+) M fps/s", "load M/s")
    num(r"^\| 3 \| fresh \| ([\d.]+) \|", "k=3 fresh p50 us")
    num(r"^\| 3 \| fresh \| [\d.]+ \| ([\d.]+)", "k=3 fresh p99 us")
    num(r"^\| 6 \| fresh \| ([\d.]+) \|", "k=6 fresh p50 us")
    num(r"^\| all pairs k=3 \| ([\d.]+) s", "all pairs s")
    return r
runs = {side: [grab(open(f"{out}/speed-{side}-{i}.log").read()) for i in range(1, pairs + 1)]
        for side in ("old", "new")}
print(f"| measure | old (median of {pairs}) | new | new / old (median of pairs) |")
print("|---|---|---|---|")
for key in runs["old"][0]:
    o = [r[key] for r in runs["old"] if key in r]
    w = [r[key] for r in runs["new"] if key in r]
    ratios = [b / a for a, b in zip(o, w) if a]
    if o and w:
        print(f"| {key} | {statistics.median(o):.3g} | {statistics.median(w):.3g} | {statistics.median(ratios):.3f} |")
PY
exit $status
