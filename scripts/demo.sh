#!/usr/bin/env bash
# The demo of the main job: generates a synthetic crawl (a gzipped WARC of Chinese and English
# HTML pages with planted near-duplicates), loads it into a new store, queries it, and reports
# precision and recall against the planted truth with the time of each step.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --features server,postgres --bin simhash-store
exec "${CARGO_TARGET_DIR:-target}"/release/simhash-store demo "$@"
