#!/usr/bin/env bash
# The failover test: a Patroni cluster of three PostgreSQL nodes with synchronous replication
# (scripts/patroni-cluster.sh), clients writing without pause, the leader killed with SIGKILL
# mid-run; then every acknowledged write must be on the new leader, and the time writes failed
# is measured (scripts/failover_client.py prints it as JSON).
#
#   scripts/failover-test.sh [ROUNDS]     (default 1; a fresh cluster each round)
#
# Environment: FAILOVER_WRITERS (default 4), FAILOVER_BEFORE and FAILOVER_AFTER (seconds of
# writes before the kill and after recovery, default 5 each), FAILOVER_DEADLINE (seconds from
# the kill for every writer to succeed again, default 90), FAILOVER_KEEP=1 to leave the last
# round's cluster running; patroni-cluster.sh's variables (PATRONI_DIR, PATRONI_TTL, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-1}
CLUSTER=scripts/patroni-cluster.sh
PY=/usr/bin/python3   # Patroni's Python: psycopg2 comes with the Debian package
RESULTS=$(mktemp -d)

# ----------------------------------------------------------------------------------------
# The service part: start_services starts two `simhash-store serve --postgres <multi-host URL>`
# processes on loopback (this build: target/release/simhash-store, or $SIMHASH_STORE_BIN) and
# sets SERVICE_URLS; the client's writers then send insert-if-new by key through them (planted
# near-duplicates) and, after the failover, check that every admitted document is on the new
# leader, no refused one is, no two documents are within 3 bits, and queries through both
# services equal brute force over the index (scripts/failover_client.py --service).
# check_services asserts that both processes still run: they were never restarted.
# FAILOVER_SERVICE=0 tests the cluster alone (the clients write straight into PostgreSQL).
SERVICE_PIDS=()
SERVICE_URLS=
start_services() {
    local url=$1 bin=${SIMHASH_STORE_BIN:-target/release/simhash-store} i out line
    [ "${FAILOVER_SERVICE:-1}" = 1 ] || return 0
    SERVICE_URLS=
    for i in 1 2; do
        out="$RESULTS/service$i.out"
        "$bin" serve --postgres "$url" --listen 127.0.0.1:0 >"$out" 2>"$RESULTS/service$i.log" &
        SERVICE_PIDS+=($!)
        for _ in $(seq 1 100); do
            line=$(head -n 1 "$out" 2>/dev/null || true)
            [ -n "$line" ] && break
            sleep 0.1
        done
        [ -n "$line" ] || { cat "$RESULTS/service$i.log" >&2; echo "service $i did not start" >&2; return 1; }
        SERVICE_URLS+="${SERVICE_URLS:+,}${line#listening on }"
    done
    echo "services: $SERVICE_URLS"
}
check_services() {
    local pid
    for pid in "${SERVICE_PIDS[@]}"; do
        kill -0 "$pid" 2>/dev/null || { echo "service $pid is gone" >&2; return 1; }
    done
}
stop_services() {
    local pid
    for pid in "${SERVICE_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${SERVICE_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    SERVICE_PIDS=()
}
# ----------------------------------------------------------------------------------------

cleanup() {
    stop_services
    [ "${FAILOVER_KEEP:-0}" = 1 ] || "$CLUSTER" stop 2>/dev/null || true
    rm -rf "$RESULTS"
}
trap cleanup EXIT

fails=0
for round in $(seq 1 "$ROUNDS"); do
    echo "== round $round of $ROUNDS"
    t0=$(date +%s.%N)
    url=$("$CLUSTER" start)
    t_up=$(date +%s.%N)
    start_services "$url"
    rc=0
    "$PY" scripts/failover_client.py --url "$url" \
        --kill "$CLUSTER kill-leader" --leader "$CLUSTER leader" \
        --writers "${FAILOVER_WRITERS:-4}" --before "${FAILOVER_BEFORE:-5}" \
        --after "${FAILOVER_AFTER:-5}" --deadline "${FAILOVER_DEADLINE:-90}" \
        --out "$RESULTS/round$round.json" ${SERVICE_URLS:+--service "$SERVICE_URLS"} || rc=$?
    check_services || rc=1
    "$CLUSTER" status || true
    stop_services
    if [ "$round" -lt "$ROUNDS" ] || [ "${FAILOVER_KEEP:-0}" != 1 ]; then "$CLUSTER" stop; fi
    awk -v a="$t0" -v b="$t_up" -v c="$(date +%s.%N)" \
        'BEGIN { printf "round took %.1f s (cluster start %.1f s)\n", c - a, b - a }'
    [ "$rc" -eq 0 ] || fails=$((fails + 1))
done

echo "== summary"
"$PY" - "$RESULTS" "$ROUNDS" <<'EOF'
import json, pathlib, sys
d, n = pathlib.Path(sys.argv[1]), int(sys.argv[2])
keys = ["acknowledged", "missing_acknowledged", "failed_attempts", "failed_keys_present",
        "kill_to_new_leader_s", "kill_to_first_ack_s", "max_writer_gap_s",
        "refused_near_duplicates", "service_checks"]
print("round " + " ".join(keys))
for i in range(1, n + 1):
    p = d / f"round{i}.json"
    if p.exists():
        r = json.loads(p.read_text())
        print(f"{i} " + " ".join(str(r.get(k)) for k in keys))
    else:
        print(f"{i} (no result)")
EOF
echo "$((ROUNDS - fails)) of $ROUNDS rounds passed"
[ "$fails" -eq 0 ]
