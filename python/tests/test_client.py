"""simhash_store.Client against a real `simhash-store serve` on 127.0.0.1 (an ephemeral
port): the Store's answers, typed errors, tokens, threads, and brute force."""

from __future__ import annotations

import json
import subprocess
import threading

import numpy as np
import pytest

import simhash_store
from simhash_store import Client, ServiceError

from conftest import planted, popcount64

PAGE = (
    "Near-duplicate detection finds web pages that are almost the same: the same article "
    "under two addresses, a copy with another advert, a reposted story."
)
TOKEN = "0123456789abcdef0123456789abcdef"


class Server:
    def __init__(self, cli, store, *args):
        self.proc = subprocess.Popen(
            [str(cli), "serve", "--store", str(store), "--listen", "127.0.0.1:0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError(f"the server did not start: {line!r}")
        self.url = line.split()[-1]

    def stop(self):
        self.proc.terminate()
        assert self.proc.wait(timeout=60) == 0


@pytest.fixture
def server(cli, tmp_path):
    s = Server(cli, tmp_path / "store")
    yield s
    s.stop()


def test_store_methods_over_http(server):
    with Client(server.url, timeout=30) as client:
        fp = client.insert_text(None, PAGE, key="https://example.com/a")
        assert fp == simhash_store.Simhasher().fingerprint(PAGE)
        assert client.insert(100, 0xFF) == 100
        assert client.insert(None, 0x1FF, key="k2") == 101
        [m] = client.query_text(PAGE)
        assert (m.id, m.key) == (0, "https://example.com/a")
        assert isinstance(m, simhash_store.Match)
        assert [(m.id, m.distance) for m in client.query(0xFF, k=1)] == [(100, 0), (101, 1)]
        assert client.get(100) == 0xFF
        assert client.get(7) is None
        assert client.id_for_key("https://example.com/a") == 0
        assert client.id_for_key("nope") is None
        assert client.insert_if_new(None, 0xFE, k=2)[0].id == 100
        assert client.insert_if_new(500, 0xFF00FF00FF00FF00) == []
        assert client.remove(100) is True
        assert client.remove(100) is False
        assert len(client) == 3
        stats = client.stats()
        assert stats["documents"] == 3 and stats["read_only"] is False


def test_stats_are_the_stores(server, tmp_path):
    """``Client.stats(top)`` takes ``Store.stats``'s argument and returns its dict (block
    values as ints), plus the service's own ``read_only``, ``sketches`` and ``queued_writes``."""
    rng = np.random.default_rng(11)
    fps = rng.integers(0, 2**64, size=300, dtype=np.uint64)
    fps[::3] = (fps[::3] & np.uint64(0xFFFF_FFFF_FFFF_0000)) | np.uint64(0xBEEF)
    with Client(server.url, timeout=30) as client:
        client.insert_many(list(range(300)), fps)
        remote = client.stats(top=3)
        default = client.stats()
        with pytest.raises(simhash_store.InvalidArgumentError):
            client.stats(top=101)
        assert len(client) == 300
    with simhash_store.Store.open(tmp_path / "store", read_only=True) as store:
        local = store.stats(top=3)
    assert set(remote) == set(local) | {"read_only", "sketches", "queued_writes"}
    for key in ("documents", "format_version", "expected_scan_per_query", "scan_vs_uniform"):
        assert remote[key] == local[key], key
    assert remote["format_version"] == simhash_store.FORMAT_VERSION
    assert remote["blocks"] == local["blocks"]
    assert remote["blocks"][3]["largest"][0] == (0xBEEF, 100)
    assert all(len(b["largest"]) == 5 for b in default["blocks"])


def test_typed_errors(server):
    client = Client(server.url)
    with pytest.raises(simhash_store.NoFeaturesError):
        client.insert_text(1, " ,. ")
    with pytest.raises(simhash_store.NoFeaturesError):
        client.query_text("  ")
    with pytest.raises(simhash_store.InvalidArgumentError):
        client.query(1, k=65)
    with pytest.raises(simhash_store.InvalidArgumentError):
        client.insert(1, 2, key="")
    with pytest.raises(simhash_store.InvalidArgumentError):
        client.insert(1, 1 << 64)
    with pytest.raises(ServiceError) as e:
        Client("http://127.0.0.1:9", retries=0, timeout=5).stats()
    assert e.value.status == 0


def test_errors_are_the_classes_the_store_raises(server, tmp_path):
    """The same failure through the Store and through the Client raises the same class (or,
    where the binding checks an argument itself and raises ValueError, the library's
    ValueError subclass)."""
    client = Client(server.url)
    with simhash_store.Store.open(tmp_path / "local") as store:
        store.insert(1, 0xFF)
        cases = {
            "a store without sketches": lambda s: s.query_text_verified(PAGE),
            "a text without features": lambda s: s.insert_text(2, " ,. "),
            "a distance out of range": lambda s: s.query(1, k=65),
            "an empty key": lambda s: s.insert(3, 2, key=""),
            "a fingerprint over 64 bits": lambda s: s.insert(4, 1 << 64),
        }
        checked_by_the_binding = ("a distance out of range", "a fingerprint over 64 bits")
        for what, call in cases.items():
            expected = ValueError if what in checked_by_the_binding else simhash_store.Error
            with pytest.raises(expected) as local:
                call(store)
            with pytest.raises(simhash_store.Error) as remote:
                call(client)
            if isinstance(local.value, simhash_store.Error):
                assert type(remote.value) is type(local.value), (what, remote.value, local.value)
            else:
                assert isinstance(remote.value, simhash_store.InvalidArgumentError), (what, remote.value)
    with pytest.raises(simhash_store.NoSketchesError):
        client.query_text_verified(PAGE)


def test_every_error_kind_of_the_service_has_a_class():
    """Each kind the server can answer (src/server/) is raised as a library class (a
    failure of the request) or as ServiceError (a failure of the service), and the kinds
    docs/service.md lists are exactly those."""
    import re

    from conftest import REPO
    from simhash_store import client as client_module

    source = "\n".join(p.read_text() for p in sorted((REPO / "src" / "server").glob("*.rs")))
    kinds = set(re.findall(r'ApiError::new\(\s*StatusCode::\w+,\s*"(\w+)"', source))
    kinds |= set(re.findall(r'=>\s*\{?\s*\(\s*"(\w+)",', source))  # the layers' errors (error.rs)
    assert {"bad_request", "no_sketches", "unauthorized", "overloaded", "timeout"} <= kinds, kinds
    service = {
        "not_found",
        "method_not_allowed",
        "unauthorized",
        "timeout",
        "overloaded",
        "disk_full",
        "shutting_down",
        "internal",
        "backups_off",
        "unavailable",
        "not_on_postgres",
    }
    assert set(client_module._KINDS) | service == kinds
    assert not set(client_module._KINDS) & service
    for kind in service - {"not_found"}:
        error = client_module._error(500, json.dumps({"error": {"kind": kind, "message": "m"}}).encode())
        assert type(error) is ServiceError and error.kind == kind
    for kind, cls in client_module._KINDS.items():
        error = client_module._error(400, json.dumps({"error": {"kind": kind, "message": "m"}}).encode())
        assert type(error) is cls and issubclass(cls, simhash_store.Error)
    doc = (REPO / "docs" / "service.md").read_text()
    listed = doc.split("kinds: ", 1)[1].split("The examples", 1)[0]
    assert set(re.findall(r"`(\w+)`", listed)) == kinds


def test_insert_text_tells_the_id_the_server_chose(server):
    with Client(server.url) as client:
        first = client.insert_text(None, PAGE, key="https://example.com/a")
        second = client.insert_text(None, PAGE + " Share this!", key="https://example.com/b")
        again = client.insert_text(None, PAGE, key="https://example.com/a")
        given = client.insert_text(77, "A recipe for green tea ice cream with matcha powder.")
    assert first == simhash_store.Simhasher().fingerprint(PAGE) and isinstance(first, int)
    assert (first.id, second.id, again.id, given.id) == (0, 1, 0, 77)
    assert first.fingerprint == int(first) and client.get(second.id) == second
    assert "id=0" in repr(first)


def test_token_and_read_only(cli, tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKEN + "\n")
    writer = Server(cli, tmp_path / "s", "--token-file", str(tokens))
    try:
        with pytest.raises(ServiceError) as e:
            Client(writer.url).stats()
        assert (e.value.status, e.value.kind) == (401, "unauthorized")
        Client(writer.url, token=TOKEN).insert(1, 0xABC)
        reader = Server(cli, tmp_path / "s", "--read-only")
        try:
            with pytest.raises(simhash_store.ReadOnlyError):
                Client(reader.url).insert(2, 0xABC)
            assert Client(reader.url).get(1) == 0xABC
        finally:
            reader.stop()
    finally:
        writer.stop()


def test_query_many_from_threads_equals_brute_force(server):
    rng = np.random.default_rng(5)
    fps = planted(rng, 3000, 4)
    client = Client(server.url)
    ids = list(range(len(fps)))
    threads = [
        threading.Thread(target=lambda lo=lo: client.insert_many(ids[lo : lo + 500], fps[lo : lo + 500]))
        for lo in range(0, len(fps), 500)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(client) == len(fps)
    queries = np.concatenate([fps[:100] ^ np.uint64(0b101), rng.integers(0, 2**64, 100, dtype=np.uint64)])
    for k in (0, 3, 5):
        got = client.query_many(queries, k=k)
        for q, matches in zip(queries, got):
            d = popcount64(fps ^ q)
            want = sorted((int(d[i]), i) for i in np.nonzero(d <= k)[0])
            assert [(m.distance, m.id) for m in matches] == want
    # int64 arrays are read as their bits.
    assert client.query_many(fps[:3].view(np.int64), k=0)[2][0].id == 2
