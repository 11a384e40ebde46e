"""``progress=True``: a progress line for long loads, on standard error.

Uses tqdm when it is installed, else a line redrawn at most twice a second.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable


def bar() -> Callable[[Any], None]:
    try:
        from tqdm import tqdm  # type: ignore[import-not-found]
    except ImportError:
        return _Line()
    return _Tqdm(tqdm)


class _Tqdm:
    def __init__(self, tqdm: Any) -> None:
        self._bar = tqdm(unit=" docs", unit_scale=True, desc="loading")

    def __call__(self, p: Any) -> None:
        self._bar.set_description(p.phase)
        self._bar.update(p.documents - self._bar.n)
        if p.phase == "done":
            self._bar.close()


class _Line:
    def __init__(self) -> None:
        self._last = 0.0

    def __call__(self, p: Any) -> None:
        now = time.monotonic()
        if p.phase != "done" and now - self._last < 0.5:
            return
        self._last = now
        end = "\n" if p.phase == "done" else "\r"
        sys.stderr.write(
            f"{p.phase}: {p.documents:,} documents, {p.bytes / 1e6:,.1f} MB, "
            f"{p.rate:,.0f} docs/s, {p.runs} run(s), {p.elapsed:.1f} s   {end}"
        )
        sys.stderr.flush()
