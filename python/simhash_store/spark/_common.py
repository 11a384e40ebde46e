"""Checks and helpers shared by the Spark functions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def require_pyspark() -> None:
    """Raises ImportError with the install command when pyspark or pyarrow is missing."""
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"simhash_store.spark needs pyspark and pyarrow ({e.name} is missing): "
            'pip install pyspark pyarrow "pandas<3" (or the wheel with its spark extra: '
            'pip install "simhash_store-*.whl[spark]")'
        ) from e


def check_columns(df: "DataFrame", what: str, columns: Iterable[str]) -> None:
    """A ValueError naming the missing columns of ``df`` and the ones it has."""
    have = df.columns
    missing = [c for c in columns if c not in have]
    if missing:
        raise ValueError(
            f"{what} has no column {', '.join(repr(c) for c in missing)}; "
            f"its columns are {', '.join(repr(c) for c in have)}"
        )


def check_type(df: "DataFrame", what: str, column: str, allowed: Sequence[type], hint: str) -> None:
    """A TypeError when ``column`` of ``df`` is not of one of the ``allowed`` Spark types."""
    field = df.schema[column]
    if not isinstance(field.dataType, tuple(allowed)):
        raise TypeError(
            f"column {column!r} of {what} must be {hint}, not {field.dataType.simpleString()}"
        )


def session_of(df: "DataFrame") -> "SparkSession":
    """The SparkSession of ``df`` (``df.sparkSession`` from pyspark 3.3 on)."""
    return df.sparkSession
