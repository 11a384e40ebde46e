#!/usr/bin/env bash
# Runs one fuzz target: fuzz/run.sh TARGET [SECONDS] [extra libFuzzer flags...]
#
#   TARGET   fingerprint, decode_values, warc, html, jsonl, store_model or server_request (`cargo fuzz list`)
#   SECONDS  how long to fuzz (default 600); 0 replays the corpus once and stops
#
# Also `fuzz/run.sh build` (build every target), `fuzz/run.sh cmin TARGET` (minimize the
# corpus in place) and `fuzz/run.sh repro TARGET FILE...` (run the given inputs once, e.g. a
# crash in fuzz/artifacts/TARGET/).
#
# cargo-fuzz needs nightly flags (-Zsanitizer, sanitizer coverage); RUSTC_BOOTSTRAP=1 lets the
# stable toolchain accept them. It builds every crate with those flags in fuzz/target, which
# would rebuild RocksDB from source (20+ minutes); instead librocksdb-sys links an already
# built static librocksdb.a (the C++ library is not instrumented; the Rust code is, and that
# is what is fuzzed). It is looked for in the main crate's target directory, or given with
# ROCKSDB_LIB_DIR=/dir/holding/librocksdb.a. lz4-sys and zstd-sys still build (seconds), and
# libstdc++ is linked dynamically.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

if [[ -z "${ROCKSDB_LIB_DIR:-}" ]]; then
    lib="$(ls -t "$root"/target/{release,debug}/build/librocksdb-sys-*/out/librocksdb.a 2>/dev/null | head -n 1 || true)"
    if [[ -z "$lib" ]]; then
        echo "no prebuilt librocksdb.a: run \`cargo build --release\` in $root first," >&2
        echo "or set ROCKSDB_LIB_DIR to a directory holding one (librocksdb-sys 0.19)" >&2
        exit 1
    fi
    ROCKSDB_LIB_DIR="$(dirname "$lib")"
fi
export ROCKSDB_LIB_DIR ROCKSDB_STATIC=1 RUSTC_BOOTSTRAP=1
# One core for the fuzzer: the store's query_batch and pair scan would use every core.
export RAYON_NUM_THREADS="${RAYON_NUM_THREADS:-1}"

cd "$here"
# -a: debug assertions (overflow checks) on; address sanitizer (the default).
build_flags=(--debug-assertions)

case "${1:-}" in
    "" | -h | --help)
        sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
        exit 2
        ;;
    build)
        exec cargo fuzz build "${build_flags[@]}"
        ;;
    cmin)
        target="${2:?usage: fuzz/run.sh cmin TARGET}"
        # Edge coverage only (-use_counters=0): a few hundred inputs per target instead of
        # thousands, so the committed corpora stay small.
        exec cargo fuzz cmin "${build_flags[@]}" "$target" -- -use_counters=0 -rss_limit_mb=4096 -timeout=30
        ;;
    repro)
        target="${2:?usage: fuzz/run.sh repro TARGET FILE...}"
        shift 2
        exec cargo fuzz run "${build_flags[@]}" "$target" "$@"
        ;;
esac

target="$1"
seconds="${2:-600}"
shift $(($# > 1 ? 2 : 1))

# Per target: a slow input is a finding (-timeout), and so is a large allocation for the
# decoders, which must stay within their 64 KiB bound.
flags=(-timeout=10 -print_final_stats=1)
case "$target" in
    decode_values) flags+=(-rss_limit_mb=512 -malloc_limit_mb=256 -max_len=4096) ;;
    store_model) flags+=(-rss_limit_mb=2048 -max_len=512) ;;
    warc | html | jsonl) flags+=(-rss_limit_mb=2048 -max_len=16384) ;;
    *) flags+=(-rss_limit_mb=2048 -max_len=8192) ;;
esac
if [[ "$seconds" == 0 ]]; then
    flags+=(-runs=0)
else
    flags+=(-max_total_time="$seconds")
fi

mkdir -p "corpus/$target"
exec cargo fuzz run "${build_flags[@]}" "$target" "corpus/$target" -- "${flags[@]}" "$@"
