#!/usr/bin/env bash
# Static checks: clippy on every target with every feature, warnings as errors; the API docs
# with every feature, warnings (broken intra-doc links) as errors; the crate as it would be
# published (`cargo publish --dry-run`: metadata, the include list, and the packaged crate
# builds on its own). clippy and rustdoc run in the release profile, so they share RocksDB's
# compile with the tests; the dry run builds the packaged crate in the dev profile, which
# compiles RocksDB once more (with -O0) the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo clippy --release --all-targets --all-features -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --release --all-features --no-deps
cargo publish --dry-run --locked -p simhash-store
