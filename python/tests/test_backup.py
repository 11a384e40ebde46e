"""Backups from Python: ``Store.backup`` writes a copy that opens, verifies and answers as the
store does; ``Client.backup`` has a ``serve --backup-dir`` make one while the store is served;
a taken destination or name, a bad name and a server without backups are refused."""

from __future__ import annotations

import pytest

import simhash_store
from simhash_store import Client, ServiceError

from test_client import Server


def fp(i: int) -> int:
    return (i * 0x9E3779B97F4A7C15) % (1 << 64)


def test_store_backup_opens_verifies_and_answers_as_the_store(tmp_path):
    with simhash_store.Store.open(tmp_path / "store") as store:
        for i in range(300):
            store.insert(i, fp(i), key=f"k{i}")
        made = store.backup(tmp_path / "backup")
        assert made == {"path": str(tmp_path / "backup"), "documents": 300}
        answers = [store.query(fp(i) ^ 3, k=3) for i in range(0, 300, 7)]
        store.insert(1000, 7)  # after the backup: the store's alone
        with pytest.raises(simhash_store.InvalidArgumentError, match="already exists"):
            store.backup(str(tmp_path / "backup"))
        with pytest.raises(simhash_store.InvalidArgumentError, match="inside the store"):
            store.backup(tmp_path / "store" / "backup")
    with simhash_store.Store.open(tmp_path / "backup") as copy:
        assert copy.verify()
        assert len(copy) == 300
        assert copy.get(1000) is None
        assert copy.id_for_key("k42") == 42
        assert [copy.query(fp(i) ^ 3, k=3) for i in range(0, 300, 7)] == answers


def test_a_read_only_store_is_not_backed_up(tmp_path):
    with simhash_store.Store.open(tmp_path / "store") as store:
        store.insert(1, 0xFF)
    with simhash_store.Store.open(tmp_path / "store", read_only=True) as store:
        with pytest.raises(simhash_store.ReadOnlyError):
            store.backup(tmp_path / "backup")
    assert not (tmp_path / "backup").exists()


def test_client_backup_while_served(cli, tmp_path):
    server = Server(cli, tmp_path / "store", "--backup-dir", str(tmp_path / "backups"))
    try:
        with Client(server.url) as client:
            client.insert_many(list(range(100)), [fp(i) for i in range(100)])
            made = client.backup("first")
            assert made["name"] == "first" and made["documents"] == 100
            assert made["path"] == str((tmp_path / "backups" / "first").resolve())
            with pytest.raises(simhash_store.InvalidArgumentError, match="exists already"):
                client.backup("first")
            for bad in ["", "..", "a/b", ".hidden", "x" * 256]:
                with pytest.raises(simhash_store.InvalidArgumentError):
                    client.backup(bad)
            client.insert(500, 0xFF)
    finally:
        server.stop()
    with simhash_store.Store.open(tmp_path / "backups" / "first") as copy:
        assert copy.verify() and len(copy) == 100 and copy.get(500) is None

    plain = Server(cli, tmp_path / "store")
    try:
        with pytest.raises(ServiceError) as refused:
            Client(plain.url).backup("x")
        assert (refused.value.status, refused.value.kind) == (403, "backups_off")
    finally:
        plain.stop()
