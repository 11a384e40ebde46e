#!/usr/bin/env bash
# The test suite: the Rust tests with the command, its service and the index in PostgreSQL
# (cargo test --release --features server,postgres; server includes cli), then
# the Python package as a user installs it: a wheel built from the same target/ (so RocksDB is
# compiled once), installed into a fresh virtual environment whose PATH has no cargo and no
# C compiler, and the Python tests (Spark on a local cluster included) run against the
# installed package. Everything builds in release mode; the first build compiles RocksDB
# (about 7-10 minutes on 2 cores). Installs build dependencies first. Arguments go to
# cargo test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The tests of the `postgres` feature, Rust and Python (python/tests/test_postgres.py, which
# reads SIMHASH_TEST_POSTGRES_URL), run against a throwaway PostgreSQL server on loopback
# (scripts/postgres-test-server.sh), stopped and deleted when this script ends.
host_path=$PATH
pg_env=$(scripts/postgres-test-server.sh start)
trap 'scripts/postgres-test-server.sh stop' EXIT
# shellcheck disable=SC1090
. "$pg_env"
cargo test --release --features server,postgres "$@"
# The failover test: etcd and three PostgreSQL nodes under Patroni (synchronous replication),
# two `serve --postgres` processes, the leader killed mid-run (about a minute).
scripts/failover-test.sh 1
# Warnings as errors: clippy, the API docs, the crate as published.
scripts/lint.sh

target=${CARGO_TARGET_DIR:-$PWD/target}
[ -x .venv-build/bin/python ] || python3 -m venv .venv-build
.venv-build/bin/python -m pip install -q --upgrade pip
.venv-build/bin/python -m pip install -q "maturin>=1.9,<2"
wheels=$(mktemp -d)
nocc=$(mktemp -d)
trap 'PATH=$host_path scripts/postgres-test-server.sh stop; rm -rf "$wheels" "$nocc"' EXIT
# The host's own build (glibc and libstdc++ of this machine); scripts/build-wheels.sh builds
# the portable release wheel.
.venv-build/bin/maturin build --release --locked -m python/Cargo.toml -o "$wheels"
wheel=$(ls "$wheels"/simhash_store-*.whl)

# A PATH of everything in the system's directories except compilers, linkers and build tools.
for dir in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
  for f in "$dir"/*; do
    name=${f##*/}
    case $name in
      cc | c++ | c89 | c99 | cpp | gcc* | g++* | clang* | *-gcc* | *-g++* | *-cpp* | *-clang* | \
        ld | ld.* | *-ld | *-ld.* | lld* | llc* | llvm-* | as | *-as | cargo* | rustc | rustup | \
        rustdoc | zig | maturin | make | cmake) continue ;;
    esac
    [ -e "$nocc/$name" ] || ln -s "$f" "$nocc/$name"
  done
done
python=$(command -v python3)
venv=$PWD/.venv-wheel
"$python" -m venv --clear "$venv"
export PATH=$venv/bin:$nocc
for tool in cargo rustc cc gcc c++ clang zig maturin; do
  if command -v "$tool" >/dev/null; then
    echo "test: $tool is on the PATH of the wheel's test" >&2
    exit 1
  fi
done
python -m pip install -q --upgrade pip
start=$EPOCHREALTIME
python -m pip install -q --only-binary simhash-store "$wheel"
python -c 'import sys; print(f"test: installed {sys.argv[1]} in {float(sys.argv[3]) - float(sys.argv[2]):.1f} s", file=sys.stderr)' \
  "$(basename "$wheel")" "$start" "$EPOCHREALTIME"
python -m pip install -q "$wheel[test,spark,ray,datatrove]"
python - <<'PY'
import sysconfig, simhash_store
assert simhash_store.__file__.startswith(sysconfig.get_paths()["purelib"]), simhash_store.__file__
PY
# The command the Python tests compare with (test_cli_interop.py, the datatrove batch path):
# the binary the Rust tests above built. Without it those tests fail, they do not skip.
export SIMHASH_STORE_BIN=$target/release/simhash-store
python -m pytest -q python/tests
