#!/usr/bin/env bash
# Builds and installs the Python package (python/) with its test, Spark, Ray and datatrove
# extras into the virtual environment .venv, creating it if needed. maturin compiles the
# extension into the workspace's target/ with the release profile, so RocksDB is compiled
# once for the crate, its tests and the extension.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "./python[test,spark,ray,datatrove]"
