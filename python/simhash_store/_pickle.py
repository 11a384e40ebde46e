"""Rebuilds pickled objects (a Simhasher travels to Spark workers by its settings)."""

from __future__ import annotations

from typing import Any


def simhasher(settings: dict[str, Any]) -> Any:
    from simhash_store import Simhasher

    return Simhasher(**settings)
