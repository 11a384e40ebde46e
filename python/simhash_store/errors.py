"""Exceptions raised by simhash_store.

Every error of the Rust library arrives as an instance of :class:`Error` (or one of its
subclasses, one per kind), with the Rust library's message: it names the path, the column
family or the input line, and says how to fix the problem, in Python calls
(``Store.open(path, read_only=True)``) where the Rust message names a Rust one.

>>> import simhash_store
>>> try:
...     simhash_store.Simhasher().fingerprint("  ,.  ")
... except simhash_store.NoFeaturesError as e:
...     print("skipped:", e)
skipped: the text has no features to fingerprint (empty, or only punctuation, whitespace or stop words)
"""

from __future__ import annotations

__all__ = [
    "Error",
    "NoFeaturesError",
    "LockedError",
    "CorruptionError",
    "RocksDbError",
    "DiskFullError",
    "UnsupportedFormatError",
    "NotAStoreError",
    "SettingsMismatchError",
    "DecodeError",
    "ParseFingerprintError",
    "InvalidArgumentError",
    "WriterBusyError",
    "ReadOnlyError",
    "StoreIOError",
    "CancelledError",
    "BadRecordError",
    "NoSketchesError",
    "PostgresError",
]


class Error(Exception):
    """Base class of every error simhash_store raises for the store or its inputs."""


class NoFeaturesError(Error, ValueError):
    """The text has nothing to fingerprint: empty, or only punctuation, whitespace or stop words."""


class LockedError(Error):
    """Another process (or another open Store in this one) holds the store's lock.

    Close the other one first, or open this one with ``Store.open(path, read_only=True)``.
    """


class CorruptionError(Error):
    """RocksDB found damaged data (a checksum mismatch, a truncated file)."""


class RocksDbError(Error):
    """Any other RocksDB failure: I/O errors, a full disk; the message names the operation."""


class DiskFullError(RocksDbError):
    """The disk holding the store is full.

    The write that failed was not stored, and nothing stored before it is lost. The open
    Store refuses every later write: free space, close it and open the store again.
    """


class UnsupportedFormatError(Error):
    """The store was written by a format version this build cannot read, or records a
    fingerprint setting it does not know (a newer simhash-store made it): upgrade."""


class NotAStoreError(Error):
    """The directory holds files but is not a simhash-store store."""


class SettingsMismatchError(Error):
    """The fingerprint settings given to ``Store.open`` differ from those the store records
    (the message names each setting that differs, with both values): open it without
    settings to use the stored ones, or use a new store.

    Also raised when a built-in word list the store's fingerprints depend on (stop words,
    the IDF table, boilerplate markers) differs in this build: load the texts again into a
    new store.
    """


class DecodeError(CorruptionError):
    """A value in the store could not be decoded."""


class ParseFingerprintError(Error, ValueError):
    """A fingerprint string that is not 1 to 16 hex digits."""


class InvalidArgumentError(Error, ValueError):
    """A parameter out of range (a key too long, a budget too small, an unknown rule)."""


class WriterBusyError(Error):
    """A read-only open found the writer changing its files on every attempt: try again."""


class ReadOnlyError(Error):
    """The store was opened read-only and a write was attempted."""


class StoreIOError(Error, OSError):
    """An I/O error outside RocksDB; the message names the path."""


class CancelledError(Error):
    """The operation was cancelled; nothing in the store changed."""


class BadRecordError(Error, ValueError):
    """A record of an input file could not be read: the message gives the file and line."""


class NoSketchesError(Error):
    """Verified near-duplicates were asked of a store that keeps no sketches.

    Sketches come from the texts: load them into a new store made with
    ``Store.open(path, sketch="MinHash")``, or ask without verification.
    """


class PostgresError(Error):
    """A statement or a connection of a :class:`~simhash_store.PostgresIndex` failed: the
    server cannot be reached (the message names it), refused the login, or answered with an
    error (the message gives its SQLSTATE code).

    A write that failed was not stored, unless the connection failed during its commit: then
    it may or may not be; writing it again (by id or key) stores it once either way.
    """
