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
# The service part. Until `simhash-store serve --postgres URL` exists these do nothing and
# the clients write straight into PostgreSQL (SqlWriter in scripts/failover_client.py).
# To test the service: start_services starts two service processes on the cluster's
# multi-host URL and exports their addresses (SERVICE_URLS); the client gets a writer that
# sends insert_if_new through them (with planted near-duplicates); check_services asserts
# what the issue asks after the failover: both processes answer again without a restart, no
# two admitted documents are within 3 bits, queries equal brute force over what was
# acknowledged.
SERVICE_PIDS=()
start_services() {
    local url=$1
    : "$url"
    # e.g. for port in P1 P2: target/release/simhash-store serve --postgres "$url" \
    #     --listen 127.0.0.1:$port & SERVICE_PIDS+=($!)
}
check_services() {
    :
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
        --out "$RESULTS/round$round.json" || rc=$?
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
        "kill_to_new_leader_s", "kill_to_first_ack_s", "max_writer_gap_s"]
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
