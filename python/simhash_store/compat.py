"""``SimhashIndex`` with the method names of the PyPI ``simhash`` package.

Users of ``from simhash import SimhashIndex`` switch with one line::

    from simhash_store.compat import SimhashIndex

The index is a simhash-store :class:`~simhash_store.Store` (in a temporary directory unless
``path`` is given, so it can also persist), its queries exact for every ``k`` (the
``simhash`` package's index is exact only while ``k`` is below its block count). Object ids
are the stores' external keys. Fingerprints may be ``simhash.Simhash`` objects (their
``.value`` is used) or ints.

>>> from simhash_store.compat import SimhashIndex
>>> index = SimhashIndex([("a", 0b1111), ("b", 0b0111)], k=2)
>>> sorted(index.get_near_dups(0b1110))
['a', 'b']
>>> index.delete("a", 0b1111)
>>> index.get_near_dups(0b1110)
['b']
"""

from __future__ import annotations

import tempfile
from typing import Any, Iterable, List, Optional, Tuple, Union

from . import Store

Fingerprintish = Union[int, Any]


def _value(simhash: Fingerprintish) -> int:
    value = getattr(simhash, "value", simhash)
    if not isinstance(value, int):
        raise TypeError(f"expected an int or an object with .value, not {type(simhash).__name__}")
    return value


class SimhashIndex:
    """A near-duplicate index with ``get_near_dups``, ``add`` and ``delete``.

    ``objs`` is an iterable of ``(obj_id, simhash)``; ``k`` the largest Hamming distance of a
    near-duplicate (default 2, as in the ``simhash`` package); ``f`` must be 64. ``path``
    keeps the index in that store directory; without it, a temporary one is used and
    deleted with the index.
    """

    def __init__(
        self,
        objs: Iterable[Tuple[str, Fingerprintish]] = (),
        f: int = 64,
        k: int = 2,
        log: Any = None,
        path: Optional[str] = None,
    ) -> None:
        if f != 64:
            raise ValueError(f"simhash_store fingerprints have 64 bits, not f={f}")
        self.k = k
        self.f = f
        self._tmp = None if path is not None else tempfile.TemporaryDirectory(prefix="simhash-index-")
        self.store = Store.open(path if path is not None else self._tmp.name)
        objs = list(objs)
        if objs:
            start = self.store.assign_id()
            self.store.bulk_load(
                (start + i, str(obj_id), _value(sh)) for i, (obj_id, sh) in enumerate(objs)
            )

    def get_near_dups(self, simhash: Fingerprintish) -> List[str]:
        """The ids of the objects within ``k`` bits of ``simhash``, nearest first."""
        return [m.key for m in self.store.query(_value(simhash), self.k) if m.key is not None]

    def add(self, obj_id: str, simhash: Fingerprintish) -> None:
        """Adds (or replaces) the object ``obj_id``."""
        key = str(obj_id)
        self.store.insert(self.store.assign_id(key), _value(simhash), key=key)

    def delete(self, obj_id: str, simhash: Fingerprintish = None) -> None:
        """Removes the object ``obj_id`` (``simhash`` is accepted for compatibility)."""
        self.store.remove_key(str(obj_id))

    @property
    def bucket_size(self) -> int:
        """The number of objects in the index."""
        return len(self.store)

    def close(self) -> None:
        """Closes the store (and deletes it, if it is a temporary one)."""
        self.store.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> "SimhashIndex":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
