#!/usr/bin/env bash
# The test suite: the Rust tests (cargo test --release), then the Python package's tests
# (pytest, Spark on a local cluster included). Installs build dependencies first. Everything
# builds in release mode: RocksDB is compiled once (about 7-10 minutes on 2 cores the first
# time) and shared by the tests, the benchmarks, the command and the Python extension.
# Arguments go to cargo test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --release "$@"
scripts/python-setup.sh
.venv/bin/python -m pytest -q python/tests
