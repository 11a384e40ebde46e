#!/usr/bin/env bash
# Throughput per core at 1, 2, 4, 8 and 16 cores in one run, on a machine with 16 or more cores
# and no Rust toolchain: the installed wheel and the release binary, each phase pinned with
# taskset (benches/scaling.py says what it measures).
#
#   python3 -m venv v && v/bin/pip install simhash_store-*.whl
#   PATH=$PWD/v/bin:$PATH benches/scaling.sh --n 200000000 --dir /mnt/fast \
#       --bin ./simhash-store [--service-bench ./service-<hash>]
#
# The service bench's executable comes from a build elsewhere (`cargo bench --features server
# --bench service --no-run` prints its path); without it the service is not measured.
set -euo pipefail
command -v taskset >/dev/null || { echo "scaling.sh: taskset is needed (util-linux)" >&2; exit 2; }
python=${PYTHON:-python3}
"$python" -c 'import simhash_store' || { echo "scaling.sh: install the wheel into $python first" >&2; exit 2; }
exec "$python" "$(dirname "$0")/scaling.py" "$@"
