#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests of the `postgres` feature.
#
#   scripts/postgres-test-server.sh start   # prints the env file to source
#   . target/postgres-test-server.env       # SIMHASH_TEST_POSTGRES_URL=postgres://...
#                                           # SIMHASH_TEST_POSTGRES_STANDBY_URL=postgres://...
#   cargo test --release --features server,postgres --test postgres_query
#   scripts/postgres-test-server.sh stop
#
# `start` installs postgresql-15 if it is missing (Debian), makes a data directory under
# /tmp owned by an unprivileged user (`simhash-pg`, created when run as root: PostgreSQL
# refuses to run as root), starts the server on 127.0.0.1 on a free port with the default
# durability settings (fsync and synchronous_commit on), creates the database `simhash_test`
# and writes `SIMHASH_TEST_POSTGRES_URL=...` to the env file. Beside it, `start` makes a
# streaming hot standby of it (`pg_basebackup -R`, another port, asynchronous replication):
# `SIMHASH_TEST_POSTGRES_STANDBY_URL`, the same database on the standby, for the tests of
# `serve --postgres-read`. The primary also takes TLS, with a certificate for 127.0.0.1 signed by
# a CA made for it (`SIMHASH_TEST_POSTGRES_CA`, a PEM file), and has a role `simhash_tls`
# (superuser) that may connect only over TLS, for the tests of `sslmode`. The URL's user is a superuser:
# the tests create one database each. `start` when the server of the env file is running does
# nothing; `stop` stops it (`pg_ctl stop -m fast`, then the postmaster's PID), deletes its data
# directory and the env file, and does nothing when there is no server. So a caller can run
# `start`, then `trap '... stop' EXIT`.
#
# `pause` stops the running server (the primary; the standby waits for it) and keeps its data; `resume` starts it again on the same
# port (tests of clients that must get past a database restart: every database of the server
# is unreachable meanwhile, so two test runs must not share a server).
#
# The env file is `target/postgres-test-server.env` (or $SIMHASH_TEST_POSTGRES_ENV).
set -euo pipefail
cd "$(dirname "$0")/.."
env_file=${SIMHASH_TEST_POSTGRES_ENV:-$PWD/target/postgres-test-server.env}
pg_user=simhash-pg

bindir() {
  local dir
  for dir in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    [ -x "$dir/pg_ctl" ] && { echo "$dir"; return; }
  done
  return 1
}

# Runs a PostgreSQL program as the server's user.
as_pg() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$pg_user" -- "$@"
  else
    "$@"
  fi
}

running() {
  [ -f "$env_file" ] || return 1
  # shellcheck disable=SC1090
  . "$env_file"
  [ -d "${SIMHASH_TEST_POSTGRES_DATA:-}" ] && as_pg "$(bindir)/pg_ctl" status -D "$SIMHASH_TEST_POSTGRES_DATA/db" >/dev/null 2>&1
}

start() {
  if running; then
    echo "postgres-test-server: running: . $env_file" >&2
    echo "$env_file"
    return
  fi
  rm -f "$env_file"
  if ! bindir >/dev/null; then
    echo "postgres-test-server: installing postgresql-15" >&2
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql-15
  fi
  local bin data port
  bin=$(bindir)
  if [ "$(id -u)" = 0 ] && ! id "$pg_user" >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin "$pg_user"
  fi
  data=$(mktemp -d /tmp/simhash-store-pg.XXXXXX)
  chmod 755 "$data"
  [ "$(id -u)" = 0 ] && chown "$pg_user" "$data"
  # initdb's own files need no fsync: the directory is thrown away. The server keeps the
  # default durability settings.
  as_pg "$bin/initdb" -D "$data/db" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >"$data/initdb.log" 2>&1 ||
    { cat "$data/initdb.log" >&2; exit 1; }
  make_certificates "$data"
  # Before initdb's lines: the TLS test role only over TLS.
  { printf 'hostssl all simhash_tls 127.0.0.1/32 trust\nhostnossl all simhash_tls 127.0.0.1/32 reject\n'
    cat "$data/db/pg_hba.conf"; } >"$data/pg_hba.conf" && cat "$data/pg_hba.conf" >"$data/db/pg_hba.conf"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  as_pg "$bin/pg_ctl" -D "$data/db" -l "$data/server.log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $data -c max_connections=300 $(tls_options "$data")" >/dev/null ||
    { cat "$data/server.log" >&2; exit 1; }
  as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres simhash_test
  as_pg "$bin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d simhash_test -c "CREATE ROLE simhash_tls SUPERUSER LOGIN" >/dev/null
  # The standby: a base backup of the primary that follows it (`-R` writes standby.signal
  # and the primary's address), on its own port. initdb's pg_hba.conf lets loopback
  # replication connections in.
  local standby_port
  standby_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  as_pg "$bin/pg_basebackup" -h 127.0.0.1 -p "$port" -U postgres -D "$data/standby" -R -X stream --no-sync \
    >"$data/basebackup.log" 2>&1 || { cat "$data/basebackup.log" >&2; exit 1; }
  as_pg "$bin/pg_ctl" -D "$data/standby" -l "$data/standby.log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $standby_port -k $data -c max_connections=300" >/dev/null ||
    { cat "$data/standby.log" >&2; exit 1; }
  mkdir -p "$(dirname "$env_file")"
  cat >"$env_file" <<EOF
export SIMHASH_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$port/simhash_test
export SIMHASH_TEST_POSTGRES_STANDBY_URL=postgres://postgres@127.0.0.1:$standby_port/simhash_test
export SIMHASH_TEST_POSTGRES_CA=$data/ca.pem
export SIMHASH_TEST_POSTGRES_DATA=$data
EOF
  echo "postgres-test-server: started on 127.0.0.1:$port, standby on 127.0.0.1:$standby_port ($data): . $env_file" >&2
  echo "$env_file"
}

# A CA and a certificate for 127.0.0.1 that it signs, in data directory $1 (server.crt and
# server.key for the server, ca.pem for the clients).
make_certificates() {
  local d=$1
  command -v openssl >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q openssl
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 \
    -subj "/CN=simhash-store test CA" -keyout "$d/ca.key" -out "$d/ca.pem" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' >"$d/server.ext"
  openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
    -days 7 -extfile "$d/server.ext" -out "$d/server.crt" 2>/dev/null
  chmod 600 "$d/server.key"
  [ "$(id -u)" = 0 ] && chown "$pg_user" "$d/server.key" "$d/server.crt"
  return 0
}

# The primary's TLS options, for data directory $1.
tls_options() {
  echo "-c ssl=on -c ssl_cert_file=$1/server.crt -c ssl_key_file=$1/server.key"
}

# The server's options: loopback, the port of the env file's URL.
server_options() {
  local port=${SIMHASH_TEST_POSTGRES_URL##*:}
  port=${port%%/*}
  echo "-c listen_addresses=127.0.0.1 -p $port -k $1 -c max_connections=300 $(tls_options "$1")"
}

pause() {
  running || { echo "postgres-test-server: not running" >&2; exit 1; }
  as_pg "$(bindir)/pg_ctl" stop -D "$SIMHASH_TEST_POSTGRES_DATA/db" -m fast -w -t 30 >/dev/null
  echo "postgres-test-server: paused" >&2
}

resume() {
  [ -f "$env_file" ] || { echo "postgres-test-server: no server to resume" >&2; exit 1; }
  # shellcheck disable=SC1090
  . "$env_file"
  running && return 0
  local data=$SIMHASH_TEST_POSTGRES_DATA
  as_pg "$(bindir)/pg_ctl" -D "$data/db" -l "$data/server.log" -w -t 60 start \
    -o "$(server_options "$data")" >/dev/null || { tail -n 20 "$data/server.log" >&2; exit 1; }
  echo "postgres-test-server: resumed" >&2
}

# Stops the server of data directory $1 (`pg_ctl stop -m fast`, then its postmaster's PID).
stop_cluster() {
  [ -d "$1" ] || return 0
  local pid=
  [ -f "$1/postmaster.pid" ] && pid=$(head -n 1 "$1/postmaster.pid")
  as_pg "$(bindir)/pg_ctl" stop -D "$1" -m fast -w -t 30 >/dev/null 2>&1 || true
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
  fi
}

stop() {
  [ -f "$env_file" ] || return 0
  # shellcheck disable=SC1090
  . "$env_file"
  local data=${SIMHASH_TEST_POSTGRES_DATA:-}
  if [ -n "$data" ]; then
    stop_cluster "$data/standby"
    stop_cluster "$data/db"
  fi
  case $data in /tmp/simhash-store-pg.*) rm -rf "$data" ;; esac
  rm -f "$env_file"
  echo "postgres-test-server: stopped" >&2
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  pause) pause ;;
  resume) resume ;;
  *)
    echo "usage: $0 start|stop|pause|resume" >&2
    exit 2
    ;;
esac
