#!/usr/bin/env bash
# A highly available PostgreSQL cluster on loopback, for the failover test: one etcd and three
# PostgreSQL nodes under Patroni, synchronous replication (synchronous_mode and
# synchronous_mode_strict, synchronous_commit on), everything on 127.0.0.1 at free ports, in one
# temporary directory, run as an unprivileged user (the "postgres" user, or PATRONI_RUN_AS, when
# invoked as root: PostgreSQL refuses to run as root).
#
#   scripts/patroni-cluster.sh start        install what is missing, start, wait until the leader
#                                           and both replicas stream (one synchronous), create
#                                           the client's role and database, print the URL
#   scripts/patroni-cluster.sh status       the members (patronictl list) and the processes
#   scripts/patroni-cluster.sh leader       the current leader: "name host:port"
#   scripts/patroni-cluster.sh kill-leader  kill -9 the leader's Patroni and its PostgreSQL
#                                           (postmaster and backends), as a machine dying would
#   scripts/patroni-cluster.sh revive       start Patroni again on the nodes where it is not
#                                           running (a killed leader rejoins as a replica, after
#                                           pg_rewind), wait until all three stream
#   scripts/patroni-cluster.sh url          the client URL
#   scripts/patroni-cluster.sh stop         stop everything by PID and remove the directory
#
# The client URL names all three nodes and asks libpq for the writable one:
#   postgresql://simhash:PW@127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3/simhash?target_session_attrs=read-write
# It is printed on standard output by start and written to $PATRONI_DIR/url (the superuser's
# URL to $PATRONI_DIR/url.superuser). Progress and timings go to standard error.
#
# Environment: PATRONI_DIR (default /dev/shm/simhash-patroni, or /tmp/simhash-patroni where
# /dev/shm has under 4 GiB free), PATRONI_RUN_AS (user when root),
# PG_BIN (default: the newest /usr/lib/postgresql/*/bin), PATRONI_TTL (leader key TTL in
# seconds, default 10, with loop_wait 2 and retry_timeout (TTL - 2) / 2: a leader that dies
# is replaced after about TTL seconds; Patroni 3.2 and later raise a TTL under 20 to 20),
# PATRONI_NO_INSTALL=1 to fail instead of installing, PATRONI_KEEP_FAILED=1 to leave a
# failed start's processes and logs.
set -euo pipefail

# The directory: PATRONI_DIR, else a running cluster's, else /dev/shm/simhash-patroni where
# /dev/shm is a tmpfs with room (no disk writes: start is faster, and removing the ~400 MB on
# a disk mounted with discard took 9 s), else $TMPDIR or /tmp.
pick_dir() {
    local d shm_free
    for d in /dev/shm/simhash-patroni "${TMPDIR:-/tmp}/simhash-patroni"; do
        [ -f "$d/state" ] && { echo "$d"; return; }
    done
    shm_free=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
    if [ -w /dev/shm ] && [ "${shm_free:-0}" -ge $((4 * 1024 * 1024)) ]; then
        echo /dev/shm/simhash-patroni
    else
        echo "${TMPDIR:-/tmp}/simhash-patroni"
    fi
}
DIR=${PATRONI_DIR:-$(pick_dir)}
TTL=${PATRONI_TTL:-10}
LOOP_WAIT=2
RETRY_TIMEOUT=$(( (TTL - LOOP_WAIT) / 2 ))
NODES=(pg1 pg2 pg3)
CLIENT_USER=simhash
CLIENT_DB=simhash

log() { printf '%s\n' "$*" >&2; }
die() { log "patroni-cluster: $*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The Python that Patroni runs on (its Debian package's modules are there).
PY=/usr/bin/python3

install_missing() {
    local missing=()
    command -v etcd >/dev/null || missing+=(etcd-server)
    command -v patroni >/dev/null || missing+=(patroni)
    "$PY" -c 'import psycopg2' 2>/dev/null || missing+=(python3-psycopg2)
    command -v curl >/dev/null || missing+=(curl)
    [ ${#missing[@]} -eq 0 ] && return 0
    [ "${PATRONI_NO_INSTALL:-0}" = 1 ] && die "missing: ${missing[*]}"
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    log "installing ${missing[*]}"
    "${sudo[@]}" apt-get update -q >&2
    # The packages' services must not start (this cluster runs its own processes).
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends \
        "${missing[@]}" >&2
    # Debian's etcd-server starts a system etcd where service start is allowed: stop it, so
    # that nothing listens on 2379/2380 that the cluster did not start.
    if command -v systemctl >/dev/null && systemctl is-active --quiet etcd 2>/dev/null; then
        "${sudo[@]}" systemctl disable --now etcd >&2 || true
    fi
}

pg_bin() {
    if [ -n "${PG_BIN:-}" ]; then echo "$PG_BIN"; return; fi
    local d
    d=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
    if ! [ -x "$d/postgres" ]; then
        die "no PostgreSQL server in /usr/lib/postgresql/*/bin (apt-get install postgresql-15, or set PG_BIN)"
    fi
    echo "$d"
}

# Free TCP ports on 127.0.0.1 (bound once, then released).
free_ports() {
    "$PY" - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# Runs a command in the background as the cluster's user, detached (own session), its PID
# (the process's own, after exec) in $1, its output in $2.
spawn() {
    local pidfile=$1 logfile=$2
    shift 2
    # shellcheck disable=SC2016
    setsid "${AS[@]}" env HOME="$DIR" sh -c 'echo $$ > "$0"; exec "$@"' "$pidfile" "$@" \
        >"$logfile" 2>&1 </dev/null &
}

load_state() {
    [ -f "$DIR/state" ] || die "no cluster in $DIR (run start)"
    # shellcheck disable=SC1091
    . "$DIR/state"
}

# A PID from a file, if that process is still alive.
live_pid() {
    local pid
    [ -f "$1" ] || return 1
    pid=$(head -1 "$1" 2>/dev/null) || return 1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# Index of the node whose Patroni answers 200 on /primary (the leader with a writable
# PostgreSQL), or nothing.
leader_index() {
    local i
    for i in 0 1 2; do
        if [ "$(curl -s -m 1 -o /dev/null -w '%{http_code}' "http://127.0.0.1:${REST_PORTS[$i]}/primary")" = 200 ]; then
            echo "$i"
            return 0
        fi
    done
    return 1
}

# The cluster as the leader's Patroni sees it: "name role state lag" per member.
members() {
    local i out
    for i in 0 1 2; do
        out=$(curl -s -m 1 "http://127.0.0.1:${REST_PORTS[$i]}/cluster" 2>/dev/null) || continue
        [ -n "$out" ] || continue
        "$PY" -c '
import json, sys
for m in json.loads(sys.argv[1]).get("members", []):
    print(m["name"], m["role"], m["state"], m.get("lag", 0))' "$out" && return 0
    done
    return 1
}

write_config() {
    local i=$1 name=${NODES[$1]} pg_port=${PG_PORTS[$1]} rest=${REST_PORTS[$1]}
    local nd="$DIR/$name"
    mkdir -p "$nd"
    cat >"$nd/patroni.yml" <<EOF
scope: simhash
name: $name
log:
  level: INFO
  dir: $nd
restapi:
  listen: 127.0.0.1:$rest
  connect_address: 127.0.0.1:$rest
etcd3:
  hosts: 127.0.0.1:$ETCD_PORT
bootstrap:
  dcs:
    ttl: $TTL
    loop_wait: $LOOP_WAIT
    retry_timeout: $RETRY_TIMEOUT
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    synchronous_mode_strict: true
    synchronous_node_count: 1
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        synchronous_commit: "on"
        wal_level: replica
        hot_standby: "on"
        wal_log_hints: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        max_connections: 200
        wal_keep_size: 256MB
        # A replica whose primary died retries its WAL source after this (default 5 s): with
        # synchronous_mode_strict the new leader's commits wait for it.
        wal_retrieve_retry_interval: 500ms
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - data-checksums
postgresql:
  listen: 127.0.0.1:$pg_port
  connect_address: 127.0.0.1:$pg_port
  data_dir: $nd/data
  bin_dir: $PGBIN
  pgpass: $nd/pgpass
  authentication:
    superuser:
      username: postgres
      password: $SUPER_PW
    replication:
      username: replicator
      password: $REPL_PW
    rewind:
      username: postgres
      password: $SUPER_PW
  parameters:
    unix_socket_directories: '$nd'
    # Dynamic shared memory in files of the data directory (pg_dynshmem), not in /dev/shm:
    # a postmaster killed with SIGKILL leaves its segments, which go with the directory.
    dynamic_shared_memory_type: mmap
    password_encryption: scram-sha-256
  pg_hba:
    - local all all scram-sha-256
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
watchdog:
  mode: "off"
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
EOF
}

start_failed() {
    local rc=$?
    [ $rc -ne 0 ] || return 0
    log "start failed; logs: $DIR/etcd.log $DIR/pg*/patroni.{out,log}"
    [ "${PATRONI_KEEP_FAILED:-0}" = 1 ] || cmd_stop
}

cmd_start() {
    local t0 t
    t0=$(now)
    if [ -f "$DIR/state" ]; then
        load_state
        if live_pid "$DIR/etcd.pid" >/dev/null; then
            die "a cluster is running in $DIR (scripts/patroni-cluster.sh stop first)"
        fi
    fi
    install_missing
    PGBIN=$(pg_bin)
    log "install check: $(since "$t0") s (PostgreSQL in $PGBIN, $(patroni --version 2>/dev/null), $(etcd --version 2>/dev/null | head -1))"

    # The user the servers run as.
    if [ "$(id -u)" -eq 0 ]; then
        RUN_AS=${PATRONI_RUN_AS:-postgres}
        id "$RUN_AS" >/dev/null 2>&1 || die "user $RUN_AS does not exist (set PATRONI_RUN_AS to an unprivileged user)"
        [ "$(id -u "$RUN_AS")" -ne 0 ] || die "PATRONI_RUN_AS must not be root"
        AS=(setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups --)
    else
        RUN_AS=$(id -un)
        AS=()
    fi

    rm -rf "$DIR"
    mkdir -p "$DIR"
    chmod 700 "$DIR"
    # A start that fails stops what it started.
    trap start_failed EXIT
    local ports
    read -r -a ports <<<"$(free_ports 8)"
    ETCD_PORT=${ports[0]}
    ETCD_PEER_PORT=${ports[1]}
    PG_PORTS=("${ports[2]}" "${ports[3]}" "${ports[4]}")
    REST_PORTS=("${ports[5]}" "${ports[6]}" "${ports[7]}")
    SUPER_PW=$(head -c 18 /dev/urandom | base64 | tr -d '+/=')
    REPL_PW=$(head -c 18 /dev/urandom | base64 | tr -d '+/=')
    CLIENT_PW=$(head -c 18 /dev/urandom | base64 | tr -d '+/=')
    {
        echo "RUN_AS=$RUN_AS"
        echo "PGBIN=$PGBIN"
        echo "ETCD_PORT=$ETCD_PORT"
        echo "ETCD_PEER_PORT=$ETCD_PEER_PORT"
        echo "PG_PORTS=(${PG_PORTS[*]})"
        echo "REST_PORTS=(${REST_PORTS[*]})"
        echo "SUPER_PW=$SUPER_PW"
        echo "CLIENT_PW=$CLIENT_PW"
    } >"$DIR/state"
    local i
    for i in 0 1 2; do write_config "$i"; done
    [ "$(id -u)" -eq 0 ] && chown -R "$RUN_AS:" "$DIR"
    chmod 600 "$DIR/state"

    # etcd: one member, client and peer ports on loopback.
    t=$(now)
    spawn "$DIR/etcd.pid" "$DIR/etcd.log" etcd --name etcd1 --data-dir "$DIR/etcd" \
        --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
        --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
        --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster "etcd1=http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster-state new --initial-cluster-token simhash-patroni
    local n=0
    until curl -s -m 1 "http://127.0.0.1:$ETCD_PORT/health" 2>/dev/null | grep -q '"health":"true"'; do
        n=$((n + 1))
        [ $n -lt 150 ] || { tail -n 20 "$DIR/etcd.log" >&2; die "etcd did not start"; }
        sleep 0.2
    done
    log "etcd up on 127.0.0.1:$ETCD_PORT: $(since "$t") s"

    # Three Patroni nodes at once: one wins the initialize key and runs initdb, the others
    # clone it with pg_basebackup.
    t=$(now)
    for i in 0 1 2; do
        spawn "$DIR/${NODES[$i]}/patroni.pid" "$DIR/${NODES[$i]}/patroni.out" patroni "$DIR/${NODES[$i]}/patroni.yml"
    done
    n=0
    until leader_index >/dev/null; do
        n=$((n + 1))
        [ $n -lt 300 ] || { tail -n 30 "$DIR"/pg*/patroni.out >&2; die "no leader after 60 s"; }
        sleep 0.2
    done
    local li
    li=$(leader_index)
    log "leader ${NODES[$li]} on 127.0.0.1:${PG_PORTS[$li]}: $(since "$t") s"

    # Both replicas streaming, one of them the synchronous standby.
    t=$(now)
    wait_streaming 90 || { tail -n 30 "$DIR"/pg*/patroni.out >&2; die "replicas not streaming after 90 s"; }
    log "replicas streaming, one synchronous: $(since "$t") s"

    # The client's role and database, on the leader.
    t=$(now)
    local superurl="postgresql://postgres:$SUPER_PW@127.0.0.1:${PG_PORTS[0]},127.0.0.1:${PG_PORTS[1]},127.0.0.1:${PG_PORTS[2]}/postgres?target_session_attrs=read-write"
    "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$superurl" >&2 <<EOF
CREATE ROLE $CLIENT_USER LOGIN CREATEDB PASSWORD '$CLIENT_PW';
CREATE DATABASE $CLIENT_DB OWNER $CLIENT_USER;
EOF
    local url="postgresql://$CLIENT_USER:$CLIENT_PW@127.0.0.1:${PG_PORTS[0]},127.0.0.1:${PG_PORTS[1]},127.0.0.1:${PG_PORTS[2]}/$CLIENT_DB?target_session_attrs=read-write"
    ( umask 077; echo "$url" >"$DIR/url"; echo "$superurl" >"$DIR/url.superuser" )
    [ "$(id -u)" -eq 0 ] && chown "$RUN_AS:" "$DIR/url" "$DIR/url.superuser"
    log "role and database: $(since "$t") s"
    trap - EXIT
    log "cluster up in $(since "$t0") s ($DIR, running as $RUN_AS); URL in $DIR/url"
    echo "$url"
}

cmd_leader() {
    load_state
    local li
    li=$(leader_index) || die "no leader now"
    echo "${NODES[$li]} 127.0.0.1:${PG_PORTS[$li]}"
}

# The postmaster's PID of a node (first line of postmaster.pid), if that process lives and is
# the node's postmaster.
postmaster_pid() {
    local nd="$DIR/${NODES[$1]}" pid
    pid=$(live_pid "$nd/data/postmaster.pid") || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$nd/data" || return 1
    echo "$pid"
}

# kill -9 of a postmaster and all its children (backends, walsenders, ...), by PID: each child
# calls setsid, so there is no process group to signal, and a child outlives a
# postmaster killed alone (a walsender goes on streaming, a backend goes on committing). The
# postmaster is stopped first so that it forks nothing between the listing and the kill.
kill_postgres() {
    local mpid=$1 children
    kill -STOP "$mpid" 2>/dev/null || return 0
    children=$(ps -o pid= --ppid "$mpid" | tr '\n' ' ')
    # shellcheck disable=SC2086
    kill -9 "$mpid" $children 2>/dev/null || true
}

cmd_kill_leader() {
    load_state
    local li ppid mpid
    li=$(leader_index) || die "no leader now"
    ppid=$(live_pid "$DIR/${NODES[$li]}/patroni.pid") || true
    mpid=$(postmaster_pid "$li") || true
    # Patroni first, so that it cannot restart PostgreSQL.
    [ -z "$ppid" ] || kill -9 "$ppid"
    [ -z "$mpid" ] || kill_postgres "$mpid"
    echo "${NODES[$li]} 127.0.0.1:${PG_PORTS[$li]}"
    log "killed ${NODES[$li]}: patroni ${ppid:-gone}, postgres ${mpid:-gone} and its children (kill -9)"
}

# Waits until the leader and both replicas run, one replica synchronous; $1: limit in seconds.
wait_streaming() {
    local n=0 m
    while :; do
        m=$(members 2>/dev/null || true)
        if [ "$(grep -cE ' (replica|sync_standby) (running|streaming) ' <<<"$m")" -eq 2 ] &&
            grep -q ' sync_standby ' <<<"$m" && grep -qE ' (leader|master) running ' <<<"$m"; then
            return 0
        fi
        n=$((n + 1))
        [ $n -lt $(($1 * 5)) ] || { log "$m"; return 1; }
        sleep 0.2
    done
}

cmd_revive() {
    load_state
    if [ "$(id -u)" -eq 0 ]; then
        AS=(setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups --)
    else
        AS=()
    fi
    local i t started=()
    t=$(now)
    for i in 0 1 2; do
        live_pid "$DIR/${NODES[$i]}/patroni.pid" >/dev/null && continue
        # A postmaster left without its Patroni (none after kill-leader) would be adopted.
        spawn "$DIR/${NODES[$i]}/patroni.pid" "$DIR/${NODES[$i]}/patroni.out.revived" \
            patroni "$DIR/${NODES[$i]}/patroni.yml"
        started+=("${NODES[$i]}")
    done
    [ ${#started[@]} -gt 0 ] || { log "every node's Patroni is running"; return 0; }
    wait_streaming 120 || die "not all three streaming after 120 s (see $DIR/pg*/patroni.log)"
    log "revived ${started[*]}: all three streaming after $(since "$t") s"
}

cmd_status() {
    load_state
    local i
    echo "directory $DIR, user $RUN_AS, etcd 127.0.0.1:$ETCD_PORT pid $(live_pid "$DIR/etcd.pid" || echo dead)"
    for i in 0 1 2; do
        echo "${NODES[$i]}: postgres 127.0.0.1:${PG_PORTS[$i]} pid $(postmaster_pid "$i" || echo dead)," \
            "patroni REST 127.0.0.1:${REST_PORTS[$i]} pid $(live_pid "$DIR/${NODES[$i]}/patroni.pid" || echo dead)"
    done
    local live
    for i in 0 1 2; do
        if live_pid "$DIR/${NODES[$i]}/patroni.pid" >/dev/null; then live=$i; break; fi
    done
    if [ -n "${live:-}" ]; then
        patronictl -c "$DIR/${NODES[$live]}/patroni.yml" list 2>/dev/null || members || true
    fi
}

# Waits up to $2 tenths of a second for PID $1 to exit.
wait_exit() {
    local n=0
    while kill -0 "$1" 2>/dev/null; do
        n=$((n + 1))
        [ "$n" -lt "$2" ] || return 1
        sleep 0.1
    done
}

cmd_stop() {
    [ -f "$DIR/state" ] || { rm -rf "$DIR"; log "no cluster in $DIR"; return 0; }
    load_state
    local t i pid pids=() shmids=()
    t=$(now)
    # The cluster is thrown away, so no clean shutdown is needed (a Patroni on SIGTERM waits
    # about 5 s for its synchronous role to be handed over): Patroni first with SIGKILL, so
    # that it restarts nothing, then each postmaster with SIGQUIT (immediate shutdown: it ends
    # its backends and removes its shared memory), SIGKILL to it and its children after 5 s.
    for i in 0 1 2; do
        pid=$(live_pid "$DIR/${NODES[$i]}/patroni.pid") && kill -9 "$pid" 2>/dev/null || true
    done
    for i in 0 1 2; do
        # Line 7 of postmaster.pid: the System V shared memory key and id (left behind by a
        # postmaster killed with SIGKILL, as kill-leader does).
        local shm
        shm=$(sed -n 7p "$DIR/${NODES[$i]}/data/postmaster.pid" 2>/dev/null | awk '{print $2}') || true
        [ -n "$shm" ] && shmids+=("$shm")
        pid=$(postmaster_pid "$i") || continue
        kill -QUIT "$pid" 2>/dev/null && pids+=("$pid")
    done
    local etcd_pid
    etcd_pid=$(live_pid "$DIR/etcd.pid") && kill -TERM "$etcd_pid" 2>/dev/null || true
    # Each takes about 2 s to exit; they were all signalled at once.
    for pid in "${pids[@]}"; do
        wait_exit "$pid" 50 || kill_postgres "$pid"
    done
    [ -z "$etcd_pid" ] || wait_exit "$etcd_pid" 50 || kill -9 "$etcd_pid" 2>/dev/null || true
    # Segments no process is attached to any more.
    for i in "${shmids[@]}"; do
        local info
        info=$(ipcs -m -i "$i" 2>/dev/null) || continue
        if grep -q 'nattch=0' <<<"$info" && grep -qE "^uid=$(id -u "$RUN_AS")\b" <<<"$info"; then
            ipcrm -m "$i" 2>/dev/null || true
        fi
    done
    rm -rf "$DIR"
    log "stopped and removed $DIR in $(since "$t") s"
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    leader) cmd_leader ;;
    kill-leader) cmd_kill_leader ;;
    status) cmd_status ;;
    revive) cmd_revive ;;
    url) load_state; cat "$DIR/url" ;;
    *) log "usage: $0 start|stop|status|leader|kill-leader|revive|url"; exit 2 ;;
esac
