"""Checks shared by the Ray functions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable

if TYPE_CHECKING:
    import ray.data


def require_ray() -> None:
    """Raises ImportError with the install command when ray or pyarrow is missing."""
    try:
        import pyarrow  # noqa: F401
        import ray.data  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"simhash_store.ray needs ray[data] and pyarrow ({e.name} is missing): "
            'pip install "ray[data]" pyarrow (or the wheel with its ray extra: '
            'pip install "simhash_store-*.whl[ray]")'
        ) from e


def check_columns(ds: "ray.data.Dataset", what: str, columns: Iterable[str]) -> Dict[str, Any]:
    """A ValueError naming the missing columns of ``ds`` and the ones it has; otherwise the
    type of each column as the schema shows it (the type of the first block that has one:
    a column of Python ints can be int64 in one block and Python objects in another)."""
    schema = ds.schema()
    have = list(schema.names)
    missing = [c for c in columns if c not in have]
    if missing:
        raise ValueError(
            f"{what} has no column {', '.join(repr(c) for c in missing)}; "
            f"its columns are {', '.join(repr(c) for c in have)}"
        )
    return dict(zip(have, schema.types))
