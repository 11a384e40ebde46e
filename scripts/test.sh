#!/usr/bin/env bash
# The test suite. Installs build dependencies first. Everything runs in release mode: RocksDB
# is built once (about 7 minutes on 2 cores the first time) and shared by tests, benchmarks
# and the command.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --release "$@"
