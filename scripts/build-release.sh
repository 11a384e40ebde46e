#!/usr/bin/env bash
# Builds the command's release archive:
#   dist/simhash-store-VERSION-x86_64-unknown-linux-gnu.tar.gz
# holding the `simhash-store` binary, README.md, CHANGELOG.md, the licenses and completion
# scripts for bash, zsh and fish. The binary is built with zig for glibc 2.17 with RocksDB and
# the C++ runtime linked in (see scripts/zig-env.sh): it needs only the C library, so it runs
# on any x86_64 Linux since 2014 (CentOS 7, Debian 8, Ubuntu 14.04 and later) without Rust.
# It shares its RocksDB compile with scripts/build-wheels.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${DIST_DIR:-$PWD/dist}
mkdir -p "$out"
source scripts/zig-env.sh

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
name=simhash-store-$version-$release_target
# maturin builds the binary (into a throwaway wheel) with the same zig wrappers as the
# extension, so RocksDB is not compiled again, and checks it against the manylinux2014 policy.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
maturin build --release --locked --strip --zig --compatibility "$release_compat" \
  --target "$release_target" -m Cargo.toml --bindings bin --features server,postgres -o "$scratch"
bin=$CARGO_TARGET_DIR/$release_target/release/simhash-store

stage=$scratch/$name
mkdir -p "$stage/completions"
cp "$bin" "$stage/"
cp README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$stage/"
"$bin" completions bash > "$stage/completions/simhash-store.bash"
"$bin" completions zsh > "$stage/completions/_simhash-store"
"$bin" completions fish > "$stage/completions/simhash-store.fish"
"$bin" --version
tar -C "$scratch" --owner=0 --group=0 -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz: $(stat -c %s "$out/$name.tar.gz") bytes"
