#!/bin/sh
# The billion-document run of docs/benchmarks.md ("Bulk loading at 10M, 100M and 1B"): default options,
# random fingerprints computed from their index (no input file), then queries right after
# the load and after reopening, verify and all pairs at k = 3.
#
# Needs: about 85 GB free under DIR (the store is about 47 GB; during the load the spool files
# add up to about 38 GB, deleted family by family as the merge proceeds), and about 30 to 60
# minutes on 2 cores. Memory: the loader's 1 GiB budget plus the block cache; the pair scan
# stays under 8 GB. The store is deleted at the end (pass --keep to keep it).
#
#   benches/scale-1b.sh [DIR] [extra benches/scale.rs options]
set -eu
DIR=${1:-.}
[ $# -gt 0 ] && shift
df -h "$DIR"
exec cargo bench --bench scale -- --n 1000000000 --runs 1 --queries 10000 --warmup 10000 \
    --after-load 10000 --verify --pairs --dir "$DIR" "$@"
