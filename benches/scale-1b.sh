#!/bin/sh
# The billion-document run of docs/benchmarks.md ("Bulk loading at 10M, 100M and 1B"): default
# options, random fingerprints computed from their index (no input file); queries right after
# the load, verify, all pairs at k = 3, then queries after reopening.
#
# Needs: about 55 GB free under DIR (the store is 44 GB; at the peak, at the start of the merge,
# the spool files and the documents take about 48 GB: spools are deleted family by family as
# the merge proceeds), and about 25 minutes on 2 cores (load 5.3 to 6 minutes, verify 4, all
# pairs 4 to 5, queries the rest). Memory: the loader's default budget (a third of the
# memory available) plus the block cache; the pair scan stays under 8 GB. The store is
# deleted at the end (pass --keep to keep it).
#
#   benches/scale-1b.sh [DIR] [extra benches/scale.rs options]
set -eu
DIR=${1:-.}
[ $# -gt 0 ] && shift
df -h "$DIR"
exec cargo bench --bench scale -- --n 1000000000 --runs 1 --queries 2000 --warmup 2000 \
    --after-load 2000 --verify --pairs --dir "$DIR" "$@"
