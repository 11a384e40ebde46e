#!/usr/bin/env bash
# Builds the Python package's release artifacts into dist/ (or $DIST_DIR):
#   - simhash_store-VERSION-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl: one
#     wheel for CPython 3.9 and every later version, RocksDB and the C++ runtime linked in,
#     built with zig for glibc 2.17 (see scripts/zig-env.sh);
#   - simhash_store-VERSION.tar.gz: the sdist, which builds from source (Rust, libclang, a
#     C++ compiler).
# Then checks the wheel: auditwheel finds no library outside the manylinux2014 policy, and it
# is at most 25 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${DIST_DIR:-$PWD/dist}
mkdir -p "$out"
source scripts/zig-env.sh

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' python/Cargo.toml | head -n 1)
rm -f "$out"/simhash_store-"$version"-*.whl "$out"/simhash_store-"$version".tar.gz
maturin build --release --locked --strip --zig --compatibility "$release_compat" \
  --target "$release_target" -m python/Cargo.toml -o "$out"
maturin sdist -m python/Cargo.toml -o "$out"

wheel=$(ls "$out"/simhash_store-"$version"-*.whl)
auditwheel show "$wheel"
bytes=$(stat -c %s "$wheel")
echo "$wheel: $bytes bytes"
if [ "$bytes" -gt 25000000 ]; then
  echo "build-wheels: the wheel is over 25 MB" >&2
  exit 1
fi
