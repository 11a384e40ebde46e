#!/bin/sh
# The kill test of docs/benchmarks.md ("Killed in the merge"): a load of a billion random
# fingerprints (default options) killed with SIGKILL once the merge has ingested `block0` (when
# the merge's files of `block1` appear), then the store opened for writing (which finishes the
# merge) and verified. Needs about 55 GB free under DIR and about 15 minutes; deletes the store.
#
#   benches/scale-1b-kill.sh [DIR]
set -eu
DIR=${1:-.}
cargo build --release --bin simhash-store
BIN=$(cargo bench --bench scale --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
CLI=target/release/simhash-store
"$BIN" --bench --n 1000000000 --runs 1 --queries 0 --after-load 0 --dir "$DIR" --keep &
pid=$!
start=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
    if [ -n "$(find "$DIR" -name 'merge-block1-*' 2>/dev/null | head -n 1)" ]; then
        kill -9 "$pid"
        echo "killed after $(($(date +%s) - start)) s, block0 merged"
        break
    fi
    sleep 1
done
wait "$pid" 2>/dev/null || true
store=$(ls -d "$DIR"/scale-bench-*/store | head -n 1)
t=$(date +%s)
"$CLI" remove --store "$store" 99999999999
echo "reopened for writing, merge finished: $(($(date +%s) - t)) s"
t=$(date +%s)
"$CLI" verify --store "$store"
echo "verify: $(($(date +%s) - t)) s"
rm -rf "$(dirname "$store")"
