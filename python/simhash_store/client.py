"""A client of ``simhash-store serve``: the :class:`Store` methods over HTTP.

>>> client = Client("http://127.0.0.1:7700")                    # doctest: +SKIP
>>> fp = client.insert_text(None, "a page's text", key="https://example.com/a")  # doctest: +SKIP
>>> fp.id                                                        # doctest: +SKIP
0
>>> [(m.id, m.distance) for m in client.query_text("a page's text!")]       # doctest: +SKIP

Method names and return types follow :class:`simhash_store.Store` (``query`` returns
:class:`simhash_store.Match` objects, sorted by distance, then id). Errors are the classes
the store raises for the same failure (``NoFeaturesError``, ``InvalidArgumentError``,
``NoSketchesError``, ``ReadOnlyError``, ``ParseFingerprintError``); failures of the service
itself (401, 503, 5xx, a timeout, the network) are :class:`ServiceError`. One keep-alive connection per thread is reused. Reads (queries,
``get``, ``stats``) are retried on connection failures and 503; writes are retried only on a
503 ``overloaded``, which the server sends before doing anything.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.parse
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ._native import Match
from .errors import (
    Error,
    InvalidArgumentError,
    NoFeaturesError,
    NoSketchesError,
    ParseFingerprintError,
    ReadOnlyError,
)

__all__ = ["Client", "InsertedText", "ServiceError"]

#: Items sent per request by the ``*_many`` methods (the server's default limit is 100,000).
CHUNK = 10_000


class ServiceError(Error):
    """The service failed or refused the request: unauthorized (401), overloaded, shutting
    down or a full disk (503, kinds ``overloaded``, ``shutting_down``, ``disk_full``), a
    server error (5xx), a timeout, or no connection. ``status`` is the HTTP
    status (0 for a network failure), ``kind`` the error's kind in the response body."""

    def __init__(self, message: str, status: int = 0, kind: str = "network") -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


#: The error kinds of the service that are failures of the request, each raised as the class
#: the store raises for the same failure. Every other kind (``unauthorized``, ``overloaded``,
#: ``shutting_down``, ``timeout``, ``internal``, ...) is a failure of the service:
#: :class:`ServiceError`.
_KINDS = {
    "no_features": NoFeaturesError,
    "invalid_argument": InvalidArgumentError,
    "no_id_left": InvalidArgumentError,
    "bad_request": InvalidArgumentError,
    "too_many_items": InvalidArgumentError,
    "body_too_large": InvalidArgumentError,
    "no_sketches": NoSketchesError,
    "parse_fingerprint": ParseFingerprintError,
    "read_only": ReadOnlyError,
    "backup_exists": InvalidArgumentError,
}


class InsertedText(int):
    """What :meth:`Client.insert_text` returns: the fingerprint, as an int (as
    :meth:`Store.insert_text` returns it), with the id the document was stored under in
    :attr:`id` (the server's choice when the id given was ``None``).

    >>> fp = InsertedText(0x3F2A, 7)
    >>> fp == 0x3F2A, fp.id, fp.fingerprint
    (True, 7, 16170)
    """

    id: int

    def __new__(cls, fingerprint: int, id: int) -> "InsertedText":
        self = super().__new__(cls, fingerprint)
        self.id = id
        return self

    @property
    def fingerprint(self) -> int:
        """The fingerprint as a plain int."""
        return int(self)

    def __repr__(self) -> str:
        return f"InsertedText(fingerprint=0x{int(self):016x}, id={self.id})"

    def __reduce__(self) -> Any:
        return (InsertedText, (int(self), self.id))


def _error(status: int, body: bytes) -> Error:
    try:
        err = json.loads(body)["error"]
        kind, message = str(err["kind"]), str(err["message"])
    except (ValueError, KeyError, TypeError):
        kind, message = "internal", body[:200].decode("utf-8", "replace")
    cls = _KINDS.get(kind)
    if cls is not None:
        return cls(message)
    return ServiceError(message, status, kind)


def _hex(fingerprint: Any) -> str:
    fp = int(fingerprint)
    if fp < 0:
        fp += 1 << 64  # int64 arrays (Spark, Arrow) hold the bits as two's complement
    if not 0 <= fp < 1 << 64:
        raise InvalidArgumentError(f"{fingerprint} is not a 64-bit fingerprint")
    return format(fp, "x")


def _match(m: Dict[str, Any]) -> Match:
    return Match(int(m["id"]), int(m["fingerprint"], 16), int(m["distance"]), m.get("key"))


class Client:
    """A connection to a ``simhash-store serve`` at ``url`` (``http://HOST:PORT`` or
    ``https://...``), with an optional bearer ``token``, a ``timeout`` in seconds per
    request, and up to ``retries`` retries of safe requests."""

    def __init__(
        self,
        url: str = "http://127.0.0.1:7700",
        token: Optional[str] = None,
        timeout: float = 30.0,
        retries: int = 3,
    ) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise InvalidArgumentError(f"{url!r} is not an http:// or https:// URL")
        self.url = url
        self._https = parsed.scheme == "https"
        self._host = parsed.hostname
        self._port = parsed.port or (443 if self._https else 80)
        self._prefix = parsed.path.rstrip("/")
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token is not None:
            self._headers["Authorization"] = f"Bearer {token}"
        self.timeout = timeout
        self.retries = retries
        self._local = threading.local()

    # ---- plumbing ----

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=self.timeout)
            self._local.conn = conn
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _request(self, method: str, path: str, body: Any = None, *, safe: bool) -> Tuple[int, Any]:
        payload = None if body is None else json.dumps(body).encode()
        attempt = 0
        while True:
            try:
                conn = self._connection()
                conn.request(method, self._prefix + path, body=payload, headers=self._headers)
                response = conn.getresponse()
                data = response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self._drop_connection()
            except (OSError, http.client.HTTPException) as e:
                self._drop_connection()
                if safe and attempt < self.retries:
                    attempt += 1
                    time.sleep(0.05 * 2**attempt)
                    continue
                raise ServiceError(f"{method} {path} failed: {e}") from e
            status = response.status
            if status == 503 and attempt < self.retries:
                kind = ""
                try:
                    kind = json.loads(data)["error"]["kind"]
                except (ValueError, KeyError, TypeError):
                    pass
                if safe or kind == "overloaded":
                    attempt += 1
                    retry_after = response.getheader("Retry-After")
                    time.sleep(float(retry_after) if retry_after and retry_after.isdigit() else 0.1 * attempt)
                    continue
            if status == 404:
                return status, None
            if status >= 400:
                raise _error(status, data)
            return status, json.loads(data)

    def _post(self, path: str, body: Any, *, safe: bool) -> Any:
        return self._request("POST", path, body, safe=safe)[1]

    # ---- reads ----

    def query(self, fingerprint: int, k: int = 3) -> List[Match]:
        """The stored documents within Hamming distance ``k`` of ``fingerprint``, sorted by
        distance, then id."""
        return self.query_many([fingerprint], k)[0]

    def query_many(self, fingerprints: Iterable[Any], k: int = 3) -> List[List[Match]]:
        """:meth:`query` of each fingerprint (a list, or a numpy array of uint64 or int64),
        in order; sent in requests of :data:`CHUNK` fingerprints."""
        fps = [_hex(fp) for fp in fingerprints]
        out: List[List[Match]] = []
        for start in range(0, len(fps), CHUNK):
            body = {"fingerprints": fps[start : start + CHUNK], "k": k}
            results = self._post("/v1/query", body, safe=True)["results"]
            out.extend([_match(m) for m in ms] for ms in results)
        return out

    def query_text(self, text: str, k: int = 3) -> List[Match]:
        """:meth:`query` of the fingerprint of ``text``, fingerprinted by the server with the
        store's settings."""
        return [_match(m) for m in self._post("/v1/query-text", {"texts": [text], "k": k}, safe=True)["results"][0]]

    def query_text_verified(
        self, text: str, k: int = 8, min_similarity: float = 0.75
    ) -> List[Tuple[Match, float]]:
        """Verified near-duplicates of ``text`` (a store that keeps sketches), as ``(match,
        similarity)`` pairs."""
        body = {"texts": [text], "k": k, "verified": True, "min_similarity": min_similarity}
        return [
            (_match(m), float(m["similarity"]))
            for m in self._post("/v1/query-text", body, safe=True)["results"][0]
        ]

    def get(self, id: int) -> Optional[int]:
        """The fingerprint of document ``id``, or ``None``."""
        _, doc = self._request("GET", f"/v1/documents/{int(id)}", safe=True)
        return None if doc is None else int(doc["fingerprint"], 16)

    def document(self, id: int) -> Optional[Dict[str, Any]]:
        """What is stored for document ``id`` (``id``, ``key``, ``fingerprint`` as an int,
        ``text_len``, ``added_micros``), or ``None``."""
        doc: Optional[Dict[str, Any]] = self._request("GET", f"/v1/documents/{int(id)}", safe=True)[1]
        if doc is not None:
            doc["fingerprint"] = int(doc["fingerprint"], 16)
        return doc

    def id_for_key(self, key: str) -> Optional[int]:
        """The id of the document with external key ``key``, or ``None``."""
        _, doc = self._request("GET", "/v1/keys/" + urllib.parse.quote(key, safe=""), safe=True)
        return None if doc is None else int(doc["id"])

    def stats(self, top: int = 5) -> Dict[str, Any]:
        """What :meth:`Store.stats` returns for the served store (``GET /v1/stats?groups=TOP``,
        one pass over the documents on the server): ``documents``, ``format_version``,
        ``disk_bytes``, ``blocks`` (per block family its ``top`` largest groups as
        ``(block value, documents)`` with the value an int, ``max_share``,
        ``shared_block_factor``, ``expected_scan``, ``split_groups``),
        ``expected_scan_per_query``, ``uniform_scan_per_query`` and ``scan_vs_uniform``; and
        the service's ``read_only``, ``sketches`` and ``queued_writes``. ``top`` is 1 to 100
        (the service's limit; else :class:`InvalidArgumentError`)."""
        body: Dict[str, Any] = self._request("GET", f"/v1/stats?groups={int(top)}", safe=True)[1]
        groups = body.pop("groups")
        for block in groups["blocks"]:
            block["largest"] = [(int(value, 16), int(n)) for value, n in block["largest"]]
        body.update(groups)
        return body

    def __len__(self) -> int:
        body: Dict[str, Any] = self._request("GET", "/v1/stats", safe=True)[1]
        return int(body["documents"])

    # ---- writes ----

    def _insert(self, documents: List[Dict[str, Any]]) -> Dict[str, Any]:
        result: Dict[str, Any] = self._post("/v1/insert", {"documents": documents}, safe=False)
        for err in result.get("errors", []):
            e = err["error"]
            raise _error(400, json.dumps({"error": e}).encode())
        return result

    def insert(self, id: Optional[int], fingerprint: int, key: Optional[str] = None) -> int:
        """Stores a document (an upsert, as :meth:`Store.insert`); ``id=None`` lets the
        server choose (a stored ``key`` keeps its id). Returns the id."""
        doc: Dict[str, Any] = {"fingerprint": _hex(fingerprint)}
        if id is not None:
            doc["id"] = int(id)
        if key is not None:
            doc["key"] = key
        return int(self._insert([doc])["ids"][0])

    def insert_text(self, id: Optional[int], text: str, key: Optional[str] = None) -> InsertedText:
        """Stores ``text``, fingerprinted by the server; ``id=None`` lets the server choose
        (a stored ``key`` keeps its id). Returns the fingerprint, an int as
        :meth:`Store.insert_text` returns it, whose ``id`` attribute is the id the document
        was stored under (:class:`InsertedText`)."""
        doc: Dict[str, Any] = {"text": text}
        if id is not None:
            doc["id"] = int(id)
        if key is not None:
            doc["key"] = key
        result = self._insert([doc])
        return InsertedText(int(result["fingerprints"][0], 16), int(result["ids"][0]))

    def insert_many(
        self,
        ids: Optional[Iterable[Any]],
        fingerprints: Iterable[Any],
        keys: Optional[Iterable[Optional[str]]] = None,
    ) -> List[int]:
        """Stores many documents, :data:`CHUNK` per request (each request one atomic
        write; a failure leaves earlier requests stored). Returns the ids."""
        fps = [_hex(fp) for fp in fingerprints]
        id_list: Sequence[Any] = [None] * len(fps) if ids is None else list(ids)
        key_list: Sequence[Optional[str]] = [None] * len(fps) if keys is None else list(keys)
        if len(id_list) != len(fps) or len(key_list) != len(fps):
            raise InvalidArgumentError("ids, fingerprints and keys must have the same length")
        out: List[int] = []
        for start in range(0, len(fps), CHUNK):
            docs = []
            for i in range(start, min(start + CHUNK, len(fps))):
                doc: Dict[str, Any] = {"fingerprint": fps[i]}
                if id_list[i] is not None:
                    doc["id"] = int(id_list[i])
                if key_list[i] is not None:
                    doc["key"] = key_list[i]
                docs.append(doc)
            out.extend(int(i) for i in self._insert(docs)["ids"])
        return out

    def _if_new(self, doc: Dict[str, Any], k: int) -> List[Match]:
        result = self._post("/v1/insert-if-new", {"documents": [doc], "k": k}, safe=False)["results"][0]
        if "error" in result:
            raise _error(400, json.dumps(result).encode())
        return [] if result["inserted"] else [_match(m) for m in result["matches"]]

    def insert_if_new(
        self, id: Optional[int], fingerprint: int, k: int = 3, key: Optional[str] = None
    ) -> List[Match]:
        """Stores the document only if nothing stored is within ``k``, atomically against
        every other client; returns the near-duplicates that kept it out (empty: stored)."""
        doc: Dict[str, Any] = {"fingerprint": _hex(fingerprint)}
        if id is not None:
            doc["id"] = int(id)
        if key is not None:
            doc["key"] = key
        return self._if_new(doc, k)

    def insert_text_if_new(
        self, id: Optional[int], text: str, k: int = 3, key: Optional[str] = None
    ) -> List[Match]:
        """:meth:`insert_if_new` of the fingerprint of ``text``."""
        doc: Dict[str, Any] = {"text": text}
        if id is not None:
            doc["id"] = int(id)
        if key is not None:
            doc["key"] = key
        return self._if_new(doc, k)

    def remove(self, id: int) -> bool:
        """Removes document ``id``; whether it was stored."""
        return bool(self._request("DELETE", f"/v1/documents/{int(id)}", safe=False)[1]["removed"])

    # ---- upkeep ----

    def backup(self, name: str) -> Dict[str, Any]:
        """Has the server write a consistent copy of its store to ``NAME`` inside its
        ``--backup-dir`` while writes go on, and returns once the copy is complete:
        ``{"name": str, "path": str, "documents": int}`` (``path`` as the server sees it;
        every write acknowledged before the call is in the copy). ``name`` is one directory
        name: not empty, no ``/``, not starting with ``.``, at most 255 bytes.

        Raises ``InvalidArgumentError`` for a bad name or one already taken (backups are never
        written over), and ``ServiceError`` (kind ``backups_off``) from a server started
        without ``--backup-dir``. Never retried: a retry of a backup that was made would find
        its name taken. To another file system the copy takes as long as copying the store's
        files (about 9 s for 100M documents to a tmpfs): give the client a ``timeout`` to
        match."""
        made: Dict[str, Any] = self._post("/v1/backup", {"name": name}, safe=False)
        return made

    # ---- lifetime ----

    def close(self) -> None:
        """Closes this thread's connection (others close when their threads end)."""
        self._drop_connection()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.url!r})"

