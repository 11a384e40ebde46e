"""`PostgresIndex`, the index in PostgreSQL, against a real server: queries equal a numpy
brute-force scan, Parquet output loads (with and without keys, fingerprints past 2**63) and
loads again as upserts, the command's `--postgres`, a load that fails says what it left,
the docstrings' and the README's examples, and a bad URL is the package's error naming the
server.

Needs the server `SIMHASH_TEST_POSTGRES_URL` names (`scripts/postgres-test-server.sh start`,
then `. target/postgres-test-server.env`; scripts/test.sh does both); skipped when it is unset.
Each test makes its own database (with `psql`) and drops it."""

from __future__ import annotations

import doctest
import glob
import itertools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import simhash_store
from conftest import planted, popcount64

SERVER = os.environ.get("SIMHASH_TEST_POSTGRES_URL")

pytestmark = pytest.mark.skipif(
    not SERVER,
    reason="SIMHASH_TEST_POSTGRES_URL is not set: start a test server with "
    "`scripts/postgres-test-server.sh start`, then `. target/postgres-test-server.env`",
)

_NEXT = itertools.count()


def _psql() -> str:
    """The `psql` of the server's installation; fails (never skips) without one."""
    found = shutil.which("psql") or next(iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))), None)
    if found is None:
        pytest.fail("these tests make their databases with psql: install postgresql-client", pytrace=False)
    return found


def _sql(statement: str) -> None:
    assert SERVER is not None
    done = subprocess.run(
        [_psql(), SERVER, "-v", "ON_ERROR_STOP=1", "-q", "-c", statement],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"{statement}: {done.stderr}"


def _with_database(url: str, name: str) -> str:
    """`url` naming database `name` instead of its own."""
    base, sep, query = url.partition("?")
    return f"{base.rsplit('/', 1)[0]}/{name}{sep}{query}"


@pytest.fixture
def database(request):
    """The URL of a new, empty database, dropped after the test."""
    test = re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:30]
    name = f"simhash_py_{test}_{os.getpid()}_{next(_NEXT)}"
    _sql(f"DROP DATABASE IF EXISTS {name}")
    _sql(f"CREATE DATABASE {name}")
    assert SERVER is not None
    try:
        yield _with_database(SERVER, name)
    finally:
        _sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _moved(rng: np.random.Generator, fp: int, d: int) -> int:
    """`fp` with `d` random bits flipped."""
    for bit in rng.choice(64, size=d, replace=False):
        fp ^= 1 << int(bit)
    return fp


def test_query_and_query_many_equal_brute_force(database):
    n = 2000
    rng = np.random.default_rng(55)
    fps = planted(rng, n, k=3)
    # Ids on both sides of 2**63 (stored as negative bigints).
    ids = rng.permutation(np.concatenate([
        np.arange(1, 1 + n // 2, dtype=np.uint64),
        np.arange(2**63 - n // 4, 2**63 + n // 4, dtype=np.uint64),
    ]))
    keys = [f"https://example.com/{int(i)}" if j % 3 == 0 else None for j, i in enumerate(ids)]
    with simhash_store.PostgresIndex.open(database) as index:
        # Most by the bulk load (several transactions), the rest as single writes.
        summary = index.bulk_load_fingerprints(ids[:1900], fps[:1900], keys[:1900], batch_size=700)
        assert (summary.added, summary.batches, summary.documents) == (1900, 3, 1900)
        for i in range(1900, n):
            index.insert(int(ids[i]), int(fps[i]), key=keys[i])
        assert len(index) == n
        key_of = dict(zip((int(i) for i in ids), keys))

        seen_distances = set()
        for k in range(0, 5):
            queries = [_moved(rng, int(fps[i]), int(rng.integers(0, k + 2))) for i in rng.choice(n, 40, replace=False)]
            queries += [int(x) for x in rng.integers(0, 2**64, size=10, dtype=np.uint64)]
            many = index.query_many(np.array(queries, dtype=np.uint64), k=k)
            assert len(many) == len(queries)
            for q, batch in zip(queries, many):
                d = popcount64(fps ^ np.uint64(q))
                expected = sorted((int(d[i]), int(ids[i])) for i in np.nonzero(d <= k)[0])
                got = index.query(q, k=k)
                assert [(m.distance, m.id) for m in got] == expected
                assert [(m.distance, m.id) for m in batch] == expected
                for m in got:
                    assert m.fingerprint == int(fps[np.nonzero(ids == m.id)[0][0]])
                    assert m.key == key_of[m.id]
                seen_distances.update(m.distance for m in got)
        # The planted near-duplicates were found at every distance up to 3.
        assert {0, 1, 2, 3} <= seen_distances
        # int64 arrays are read as the fingerprints' bits, as Spark stores them.
        signed = fps[:5].view(np.int64)
        assert index.query_many(signed, k=0) == index.query_many([int(x) for x in fps[:5]], k=0)


def test_insert_if_new_keeps_near_duplicates_out(database):
    with simhash_store.PostgresIndex.open(database) as index:
        assert index.insert_if_new(1, 0b1111) == []
        found = index.insert_if_new(2, 0b0111, k=1)
        assert [(m.id, m.distance) for m in found] == [(1, 1)]
        assert index.get(2) is None
        assert index.insert_if_new(3, 0b0111, k=0, key="c") == []
        assert index.id_for_key("c") == 3
        assert len(index) == 2


def _parquet(tmp_path, n: int):
    """A folder of two Parquet files as a Spark job writes them: `id`, `fingerprint` as
    uint64 with `key` in one, as signed longs without `key` in the other; fingerprints past
    2**63 in both. Returns the folder, ids, fingerprints and keys (None without)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(7)
    ids = np.arange(5, 5 + 3 * n, 3, dtype=np.int64)
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    fps[:10] = np.arange(2**64 - 10, 2**64, dtype=np.uint64)
    fps[-10:] = np.arange(2**63, 2**63 + 10, dtype=np.uint64)
    half = n // 2
    keys = [f"https://example.com/{i}" for i in range(half)] + [None] * (n - half)
    out = tmp_path / "out"
    out.mkdir()
    pq.write_table(
        pa.table({"id": ids[:half], "fingerprint": pa.array(fps[:half], pa.uint64()), "key": keys[:half]}),
        out / "part-0.parquet",
    )
    pq.write_table(
        pa.table({"id": ids[half:], "fingerprint": fps[half:].view(np.int64)}),
        out / "part-1.parquet",
    )
    return out, ids, fps, keys


def _check_every_row(index, ids, fps, keys) -> None:
    assert len(index) == len(ids)
    for i, fp, key in zip(ids, fps, keys):
        assert index.get(int(i)) == int(fp), int(i)
        if key is not None:
            assert index.id_for_key(key) == int(i)


def test_load_parquet_into_postgres_then_again_upserts(database, tmp_path):
    from simhash_store.spark import load_parquet

    n = 3000
    out, ids, fps, keys = _parquet(tmp_path, n)
    # A URL: the index is opened and closed by the load.
    assert load_parquet(out, database, batch_rows=1000) == n
    with simhash_store.PostgresIndex.open(database) as index:
        _check_every_row(index, ids, fps, keys)
        assert index.query(int(fps[0]), k=0)[0].key == keys[0]
        # Again, into an open index: every document replaces itself.
        assert load_parquet(out, index) == n
        _check_every_row(index, ids, fps, keys)
        again = index.bulk_load_fingerprints(ids.astype(np.uint64), fps, keys)
        assert (again.added, again.replaced, again.documents) == (0, n, n)
        assert len(index) == n


def test_load_parquet_command_takes_postgres(database, tmp_path):
    n = 400
    out, ids, fps, keys = _parquet(tmp_path, n)
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "simhash_store.ray", "load-parquet", str(out), "--postgres", database],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        assert f"loaded {n} documents into the index in postgres://" in done.stdout
    with simhash_store.PostgresIndex.open(database) as index:
        _check_every_row(index, ids, fps, keys)
    both = subprocess.run(
        [sys.executable, "-m", "simhash_store.spark", "load-parquet", str(out), "--postgres", database,
         "--store", str(tmp_path / "s")],
        capture_output=True,
        text=True,
    )
    assert both.returncode == 2
    assert "not allowed with argument" in both.stderr


def test_a_load_that_fails_says_what_is_loaded(database):
    with simhash_store.PostgresIndex.open(database) as index:
        ids = np.arange(10, dtype=np.uint64)
        keys = [f"k{i}" for i in range(10)]
        keys[7] = "x" * 5000  # over the 4,096-byte limit of a key: its batch fails
        with pytest.raises(simhash_store.InvalidArgumentError) as failed:
            index.bulk_load_fingerprints(ids, ids * np.uint64(1 << 40), keys, batch_size=3)
        message = str(failed.value)
        assert "the 2 batches of this load before the one that failed (6 entries) are in the index" in message
        assert "call bulk_load_fingerprints again" in message
        assert len(index) == 6
        assert sorted(index.id_for_key(f"k{i}") for i in range(6)) == list(range(6))


def test_bad_urls_are_the_packages_errors():
    # Nothing listens on port 1 of loopback.
    with pytest.raises(simhash_store.PostgresError) as refused:
        simhash_store.PostgresIndex.open("postgres://nobody@127.0.0.1:1/none")
    assert "127.0.0.1:1" in str(refused.value)
    assert "connect" in str(refused.value)
    with pytest.raises(simhash_store.InvalidArgumentError) as malformed:
        simhash_store.PostgresIndex.open("postgres://[not a url")
    assert "PostgreSQL URL" in str(malformed.value)
    with pytest.raises(simhash_store.PostgresError) as unknown:
        simhash_store.PostgresIndex.open(_with_database(SERVER or "", "simhash_py_no_such_database"))
    assert "simhash_py_no_such_database" in str(unknown.value)


def test_other_settings_are_refused_and_closed_index_says_so(database):
    with simhash_store.PostgresIndex.open(database, seed=42) as index:
        assert index.simhasher.settings["seed"] == 42
    with pytest.raises(simhash_store.SettingsMismatchError) as mismatch:
        simhash_store.PostgresIndex.open(database, seed=7)
    assert "PostgresIndex.open(url)" in str(mismatch.value)
    index = simhash_store.PostgresIndex.open(database)
    assert index.simhasher.settings["seed"] == 42
    index.close()
    assert index.closed
    with pytest.raises(ValueError, match="closed"):
        len(index)


def _example(name: str) -> str:
    """The docstring of `PostgresIndex` (or of its method `name`), or the PostgreSQL example
    of python/README.md: each names `postgres://app@db.example/dedup` and is skipped where
    no server is given."""
    if name == "README":
        readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
        blocks = [b.split("```")[0] for b in readme.split("```python\n")[1:]]
        doc = next((b for b in blocks if "PostgresIndex" in b), "")
    else:
        obj = simhash_store.PostgresIndex
        doc = (obj if name == "PostgresIndex" else getattr(obj, name)).__doc__ or ""
    assert "postgres://app@db.example/dedup" in doc and "# doctest: +SKIP" in doc, name
    return doc


@pytest.mark.parametrize("name", ["PostgresIndex", "bulk_load_fingerprints", "README"])
def test_docstring_examples_run_against_a_new_database(name, database):
    code = _example(name).replace("postgres://app@db.example/dedup", database).replace("# doctest: +SKIP", "")
    test = doctest.DocTestParser().get_doctest(code, {}, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.tries >= 2
    assert runner.failures == 0, f"the example of {name} printed something else (run pytest -s to see it)"
