"""Ctrl-C (SIGINT) during bulk_load, pairs and clusters raises KeyboardInterrupt promptly
and leaves the store consistent with everything acknowledged still there. Each case runs a
real Python process and interrupts it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import simhash_store

# The child prints READY when the long call has begun, then INTERRUPTED if
# KeyboardInterrupt reached Python.
PRELUDE = """
import signal, sys, numpy as np, simhash_store
# Python installs its KeyboardInterrupt handler only when SIGINT is not ignored at start-up,
# and a shell without job control starts background jobs with SIGINT ignored (CI may run the
# tests that way): install it, as an interactive Python has it.
signal.signal(signal.SIGINT, signal.default_int_handler)
store = simhash_store.Store.open(sys.argv[1])
"""

BULK = """
store.bulk_load((i, f"acked{i}", i * 7919) for i in range(1000))  # acknowledged
def records():
    words = "river storm city budget road school crawl page".split()
    i = 10_000
    while True:
        if i == 10_100:
            print("READY", flush=True)
        yield (i, None, " ".join(words[(i * j) % 8] for j in range(200)))
        i += 1
try:
    store.bulk_load(records())
except KeyboardInterrupt:
    print("INTERRUPTED", flush=True)
"""

SCAN = """
rng = np.random.default_rng(3)
n = 300_000
store.bulk_load_fingerprints(np.arange(n, dtype=np.uint64), rng.integers(0, 2**64, size=n, dtype=np.uint64))
print("READY", flush=True)
try:
    {call}
except KeyboardInterrupt:
    print("INTERRUPTED", flush=True)
"""


def interrupt(tmp_path, body: str) -> float:
    """Runs `body` in a child, sends SIGINT once it is READY and asserts the child saw
    KeyboardInterrupt. Returns the seconds from the signal to the child's exit (reported by
    python/benches/bench_python.py, never asserted: timing is not a test)."""
    script = tmp_path / "child.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    child = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "store")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    try:
        line = child.stdout.readline()
        assert line.strip() == "READY", (line, child.stderr.read() if child.stderr else "")
        time.sleep(0.5)
        os.kill(child.pid, signal.SIGINT)
        sent = time.monotonic()
        out, err = child.communicate(timeout=60)
        elapsed = time.monotonic() - sent
    finally:
        # A child that ignored the signal must not outlive the test (it loads or scans forever).
        if child.poll() is None:
            child.kill()
            child.wait()
    assert "INTERRUPTED" in out, (out, err)
    assert child.returncode == 0, err
    return elapsed


def test_ctrl_c_during_bulk_load(tmp_path):
    interrupt(tmp_path, BULK)
    with simhash_store.Store.open(tmp_path / "store") as store:
        assert store.verify().is_clean
        assert all(store.id_for_key(f"acked{i}") == i for i in range(0, 1000, 37))
        assert store.get(999) == 999 * 7919


def test_ctrl_c_during_pairs(tmp_path):
    interrupt(tmp_path, SCAN.format(call="for p in store.pairs(k=24): pass"))
    with simhash_store.Store.open(tmp_path / "store") as store:
        assert store.verify().is_clean and len(store) == 300_000


def test_ctrl_c_during_clusters(tmp_path):
    interrupt(tmp_path, SCAN.format(call="store.clusters(k=24)"))
    with simhash_store.Store.open(tmp_path / "store") as store:
        assert len(store) == 300_000


def test_an_exception_between_items_stops_the_scan_before_the_process_exits(tmp_path):
    # The iterator is dropped by the exception while its scan runs; the process exits right
    # after. The scan must have stopped by then: one still inside RocksDB while the process
    # tears it down aborted it ("pthread lock: Invalid argument", exit status -6).
    body = """
rng = np.random.default_rng(5)
n = 200_000
store.bulk_load_fingerprints(np.arange(n, dtype=np.uint64), rng.integers(0, 2**64, size=n, dtype=np.uint64))
for _ in range(20):
    try:
        for p in store.pairs(k=24):
            raise ValueError("stop")
    except ValueError:
        pass
print("DONE", flush=True)
"""
    script = tmp_path / "child.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    # Several at once, each with its own store: on a busy machine a stopped scan thread may
    # not run again before its process exits, which is when the race showed.
    children = [
        subprocess.Popen(
            [sys.executable, str(script), str(tmp_path / f"store{i}")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(6)
    ]
    for child in children:
        try:
            out, err = child.communicate(timeout=180)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        assert child.returncode == 0 and "DONE" in out, (child.returncode, err)
