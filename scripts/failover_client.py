"""The client side of the failover test (scripts/failover-test.sh): writers insert rows without
pause, the cluster's leader is killed with SIGKILL mid-run, and afterwards every acknowledged
write must be on the new leader.

    python3 failover_client.py --url URL --kill CMD --leader CMD [--writers 4]
        [--before 5] [--after 5] [--deadline 90] [--out result.json]

It runs the whole timeline itself so that every time is taken on one clock:
  1. writers run for --before seconds;
  2. CMD of --kill is run (it kills the leader and prints "name host:port");
  3. CMD of --leader is polled until another node answers as leader;
  4. writers go on until each has had an acknowledged write at least --after seconds after the
     kill (or --deadline passes: a failure);
  5. writers stop; every acknowledged id is looked up on the leader, and on the surviving
     standby once it has replayed the leader's WAL.

A write is acknowledged when the INSERT's COMMIT returned without error. A write that raised
is uncertain: it may or may not be there; the result counts those that are.

Writers: SqlWriter inserts straight into PostgreSQL with psycopg2 (libpq follows the writable
host of the multi-host URL). With --service URL,URL,... ServiceWriter sends each write as an
insert-if-new (k = 3) by key through `simhash-store serve --postgres` processes (writer w uses
service w mod n), one write in five a near-duplicate (1 or 2 bits) of the writer's previous
fingerprint; the verification then reads the index's tables: every admitted document is there,
no refused one is, no two documents are within 3 bits, and queries through every service equal
brute force over the index.

Exit status 0 when every acknowledged write is there and the cluster failed over in time.
"""

import argparse
import json
import subprocess
import sys
import threading
import time

import random
import urllib.error
import urllib.request

import psycopg2

TABLE = "failover_acked"


def connect(url, timeout=2):
    # Keepalives so that a connection to a host that vanished without a RST is noticed; no
    # statement_timeout: cancelling a COMMIT that waits for the synchronous standby leaves the
    # transaction committed locally and returns a WARNING, not an error (an "acknowledged"
    # write that the standby may not have).
    conn = psycopg2.connect(url, connect_timeout=timeout, keepalives=1, keepalives_idle=2,
                            keepalives_interval=1, keepalives_count=2,
                            application_name="failover-test")
    conn.autocommit = True
    return conn


class SqlWriter:
    """Inserts one row per call, in its own transaction (synchronous_commit on)."""

    def __init__(self, url):
        self.url = url
        self.conn = None

    def write(self, key):
        """Inserts key; returns the server port that acknowledged it, raises on failure."""
        try:
            if self.conn is None:
                self.conn = connect(self.url)
            with self.conn.cursor() as cur:
                cur.execute(f"INSERT INTO {TABLE} (id) VALUES (%s) RETURNING inet_server_port()",
                            (key,))
                return cur.fetchone()[0]
        except Exception:
            self.close()
            raise

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:
                pass
            self.conn = None


class ServiceWriter:
    """insert-if-new of one document per call through a service; a refused near-duplicate
    returns REFUSED instead of a port (the service does not say which node committed)."""

    def __init__(self, base, seed):
        self.base = base
        self.last = None
        self.n = 0
        self.rng = random.Random(seed)

    def write(self, key):
        self.n += 1
        if self.last is not None and self.n % 5 == 0:
            fp = self.last
            for _ in range(self.rng.randint(1, 2)):
                fp ^= 1 << self.rng.randrange(64)
        else:
            fp = self.rng.getrandbits(64)
        self.last = fp
        body = {"k": 3, "documents": [{"key": str(key), "fingerprint": f"{fp:016x}"}]}
        answer = http_post(self.base + "/v1/insert-if-new", body)
        item = answer["results"][0]
        if "error" in item:
            raise RuntimeError(f"item error {item['error']['kind']}")
        return SERVICE_ACK if item["inserted"] else REFUSED

    def close(self):
        pass


# The "port" of a write the service admitted, and of one it refused as a near-duplicate.
SERVICE_ACK = 0
REFUSED = -1


def http_post(url, body, timeout=30):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        kind = ""
        try:
            kind = json.loads(e.read())["error"]["kind"]
        except Exception:
            pass
        raise RuntimeError(f"HTTP {e.code} {kind} Retry-After={e.headers.get('Retry-After')}")


def make_writer(args, w=0):
    if args.service:
        services = args.service.split(",")
        return ServiceWriter(services[w % len(services)], seed=w)
    return SqlWriter(args.url)


def check_index(args, cur, admitted, refused):
    """The service checks on the leader: admitted documents present, refused ones absent, no
    two within 3 bits, queries through each service equal brute force. Returns a dict."""
    cur.execute("SELECT convert_from(key, 'UTF8') FROM simhash_keys")
    keys = {int(r[0]) for r in cur.fetchall()}
    cur.execute("SELECT id, fingerprint FROM simhash_docs")
    docs = [(i, f & (2**64 - 1)) for i, f in cur.fetchall()]
    # Pairs within 3 bits share one of the four 16-bit blocks (pigeonhole).
    close = set()
    for b in range(4):
        groups = {}
        for i, f in docs:
            groups.setdefault((f >> (16 * b)) & 0xFFFF, []).append((i, f))
        for g in groups.values():
            for x in range(len(g)):
                for y in range(x + 1, len(g)):
                    if bin(g[x][1] ^ g[y][1]).count("1") <= 3:
                        close.add((min(g[x][0], g[y][0]), max(g[x][0], g[y][0])))
    rng = random.Random(5)
    sample = rng.sample(docs, min(40, len(docs)))
    queries = [f for _, f in sample] + [f ^ (1 << rng.randrange(64)) for _, f in sample]
    wrong = 0
    for base in args.service.split(","):
        got = http_post(base + "/v1/query",
                        {"k": 3, "fingerprints": [f"{q:016x}" for q in queries]})["results"]
        for q, lst in zip(queries, got):
            want = sorted((bin(q ^ f).count("1"), i) for i, f in docs if bin(q ^ f).count("1") <= 3)
            if sorted((m["distance"], m["id"]) for m in lst) != want:
                wrong += 1
    return {
        "documents": len(docs),
        "admitted_missing": len(admitted - keys),
        "refused_present": len(refused & keys),
        "pairs_within_3": len(close),
        "queries_checked": len(queries) * len(args.service.split(",")),
        "queries_wrong": wrong,
    }


def prepare(url):
    with connect(url, timeout=5) as conn, conn.cursor() as cur:
        cur.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (id bigint PRIMARY KEY, "
                    "at timestamptz NOT NULL DEFAULT clock_timestamp())")
        cur.execute("SHOW synchronous_commit")
        sc = cur.fetchone()[0]
        cur.execute("SHOW synchronous_standby_names")
        ssn = cur.fetchone()[0]
    conn.close()
    return sc, ssn


class Run:
    def __init__(self, args):
        self.args = args
        self.stop = threading.Event()
        self.t_kill = None
        self.lock = threading.Lock()
        # Per writer: list of (t, key, port) acknowledged; list of (t, key, error) failed.
        self.acks = [[] for _ in range(args.writers)]
        self.fails = [[] for _ in range(args.writers)]

    def writer(self, w):
        wr = make_writer(self.args, w)
        seq = 0
        while not self.stop.is_set():
            key = w * 1_000_000_000 + seq
            seq += 1
            try:
                port = wr.write(key)
                self.acks[w].append((time.monotonic(), key, port))
            except Exception as e:
                lines = str(e).strip().splitlines()
                err = type(e).__name__ + (": " + lines[0][:200] if lines else "")
                self.fails[w].append((time.monotonic(), key, err))
                time.sleep(0.05)
        wr.close()

    def all_recovered(self):
        return all(any(t >= self.t_kill + self.args.after for t, _, _ in a) for a in self.acks)


def leader_of(cmd):
    try:
        out = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=5)
    except subprocess.TimeoutExpired:
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--kill", required=True, help="command that kills the leader")
    ap.add_argument("--leader", required=True, help="command that prints the leader")
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--before", type=float, default=5)
    ap.add_argument("--after", type=float, default=5)
    ap.add_argument("--deadline", type=float, default=90)
    ap.add_argument("--out")
    ap.add_argument("--service", help="comma-separated base URLs of simhash-store services")
    args = ap.parse_args()

    sc, ssn = prepare(args.url)
    old_leader = leader_of(args.leader)
    print(f"leader {old_leader}, synchronous_commit={sc}, synchronous_standby_names={ssn}",
          flush=True)

    run = Run(args)
    t0 = time.monotonic()
    threads = [threading.Thread(target=run.writer, args=(w,), daemon=True)
               for w in range(args.writers)]
    for t in threads:
        t.start()
    time.sleep(args.before)

    # Times after the kill count from the moment the kill command returned (the leader's
    # processes are gone then; an answer received while it ran may still be the old leader's).
    t_kill_cmd = time.monotonic()
    killed = subprocess.run(args.kill, shell=True, capture_output=True, text=True)
    run.t_kill = t_killed = time.monotonic()
    if killed.returncode != 0:
        print(f"kill failed: {killed.stderr.strip()}", flush=True)
    print(f"killed {killed.stdout.strip()} in {t_killed - t_kill_cmd:.2f} s", flush=True)

    new_leader = None
    t_leader = None
    ok = False
    while time.monotonic() - run.t_kill < args.deadline:
        if t_leader is None:
            lead = leader_of(args.leader)
            if lead and lead != old_leader:
                new_leader, t_leader = lead, time.monotonic()
                print(f"new leader {new_leader} {t_leader - run.t_kill:.2f} s after the kill",
                      flush=True)
        if t_leader is not None and run.all_recovered():
            ok = True
            break
        time.sleep(0.1)
    run.stop.set()
    if not ok:
        print(f"not every writer succeeded {args.after} s after the kill within "
              f"{args.deadline} s", flush=True)
    for t in threads:
        t.join(timeout=30)
    t_end = time.monotonic()

    # Verification on the leader (the URL's read-write host).
    acked = {k: (t, p) for a in run.acks for t, k, p in a if p != REFUSED}
    refused = {k for a in run.acks for _, k, p in a if p == REFUSED}
    failed = {k for f in run.fails for _, k, _ in f}
    with connect(args.url, timeout=10) as conn, conn.cursor() as cur:
        cur.execute("SELECT inet_server_port(), pg_is_in_recovery()")
        port, in_recovery = cur.fetchone()
        if args.service:
            service_checks = check_index(args, cur, set(acked), refused)
            cur.execute("SELECT convert_from(key, 'UTF8') FROM simhash_keys")
            present = {int(r[0]) for r in cur.fetchall()}
        else:
            service_checks = None
            cur.execute(f"SELECT id FROM {TABLE}")
            present = {r[0] for r in cur.fetchall()}
        cur.execute("SELECT pg_current_wal_lsn()")
        leader_lsn = cur.fetchone()[0]
    conn.close()

    # The surviving standby, once it has replayed the leader's WAL, has them all too.
    standby = {"port": None, "missing": None, "catch_up_s": None}
    standby_url = args.url.replace("target_session_attrs=read-write",
                                   "target_session_attrs=standby")
    t_s = time.monotonic()
    try:
        with connect(standby_url, timeout=10) as conn, conn.cursor() as cur:
            cur.execute("SELECT inet_server_port()")
            standby["port"] = cur.fetchone()[0]
            while time.monotonic() - t_s < 30:
                cur.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (leader_lsn,))
                if cur.fetchone()[0]:
                    break
                time.sleep(0.1)
            standby["catch_up_s"] = round(time.monotonic() - t_s, 2)
            if args.service:
                cur.execute("SELECT convert_from(key, 'UTF8') FROM simhash_keys")
                standby["missing"] = len(set(acked) - {int(r[0]) for r in cur.fetchall()})
            else:
                cur.execute(f"SELECT id FROM {TABLE}")
                standby["missing"] = len(set(acked) - {r[0] for r in cur.fetchall()})
        conn.close()
    except psycopg2.Error as e:
        standby["error"] = str(e).strip().splitlines()[0]
    missing = sorted(set(acked) - present)
    uncertain_present = len(failed & present)
    unexpected = sorted(present - set(acked) - failed)
    if args.service:
        # A refused key is also "unexpected" if present: check_index counts it.
        unexpected = sorted(present - set(acked) - failed - refused)

    # Outage: per writer, the time from its last write acknowledged by the old leader to its
    # first acknowledged by another node; and the kill to the first write acknowledged by
    # another node. (An answer of the old leader can be taken a few ms after the kill command
    # returned: the writer thread read it before and took the time after.)
    old_port = int(old_leader.split(":")[-1]) if old_leader else None
    gaps = []
    for a in run.acks:
        before = [t for t, _, p in a if p == old_port]
        after = [t for t, _, p in a if p != old_port and t >= run.t_kill]
        if before and after:
            gaps.append(after[0] - before[-1])
    first_after = min((t for a in run.acks for t, _, p in a if p != old_port and t >= run.t_kill),
                      default=None)
    acks_before = sum(1 for a in run.acks for t, _, _ in a if t < run.t_kill)
    ports_before = sorted({p for a in run.acks for t, _, p in a if t < run.t_kill})
    ports_after = {}
    for a in run.acks:
        for t, _, p in a:
            if t >= run.t_kill:
                ports_after[p] = ports_after.get(p, 0) + 1
    errors = {}
    for f in run.fails:
        for _, _, e in f:
            errors[e] = errors.get(e, 0) + 1

    result = {
        "old_leader": old_leader,
        "new_leader": new_leader,
        "verified_on_port": port,
        "verified_in_recovery": in_recovery,
        "writers": args.writers,
        "acknowledged": len(acked),
        "acknowledged_before_kill": acks_before,
        "write_rate_before_kill_per_s": round(acks_before / (run.t_kill - t0), 1),
        "failed_attempts": sum(len(f) for f in run.fails),
        "failed_keys_present": uncertain_present,
        "missing_acknowledged": len(missing),
        "missing_sample": missing[:10],
        "unexpected_rows": len(unexpected),
        "standby": standby,
        "ports_acknowledging_before_kill": ports_before,
        "acknowledged_after_kill_by_port": ports_after,
        "kill_command_s": round(t_killed - t_kill_cmd, 3),
        "kill_to_new_leader_s": round(t_leader - run.t_kill, 2) if t_leader else None,
        "kill_to_first_ack_s": round(first_after - run.t_kill, 2) if first_after else None,
        "max_writer_gap_s": round(max(gaps), 2) if gaps else None,
        "min_writer_gap_s": round(min(gaps), 2) if gaps else None,
        "recovered_in_deadline": ok,
        "run_s": round(t_end - t0, 1),
        "errors": dict(sorted(errors.items(), key=lambda kv: -kv[1])[:8]),
        "refused_near_duplicates": len(refused),
        "service_checks": service_checks,
    }
    text = json.dumps(result, indent=2)
    print(text, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    good = ok and not missing and not unexpected and not in_recovery and \
        new_leader is not None and first_after is not None and standby["missing"] == 0 and \
        (service_checks is None or (service_checks["admitted_missing"] == 0 and
                                    service_checks["refused_present"] == 0 and
                                    service_checks["pairs_within_3"] == 0 and
                                    service_checks["queries_wrong"] == 0))
    print("PASS" if good else "FAIL", flush=True)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
