#!/usr/bin/env bash
# Static checks, warnings as errors: clippy on every target with every feature; the API docs
# with every feature (broken intra-doc links); and the crate as it would be published
# (`cargo publish --dry-run`: metadata and the include list); with LINT_PACKAGE_BUILD=1 also
# the packaged crate built on its own with every feature, as the dry run's verification does
# (a few minutes more; the release workflow sets it). Everything runs in the release profile,
# so RocksDB's compile is the one the tests use. scripts/test.sh runs it after the Rust tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
cargo clippy --release --locked --all-targets --all-features -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --release --locked --all-features --no-deps

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
cargo publish --dry-run --locked --no-verify --allow-dirty -p simhash-store
[ "${LINT_PACKAGE_BUILD:-0}" = 1 ] || exit 0
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
tar -xzf "$CARGO_TARGET_DIR/package/simhash-store-$version.crate" -C "$unpacked"
cargo build --release --locked --all-features --manifest-path "$unpacked/simhash-store-$version/Cargo.toml"
