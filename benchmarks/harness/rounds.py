"""How the benchmarks go through their runs: which contenders, in which order, until when."""

from __future__ import annotations

import time


def select_contenders(known: dict, spec: str | None, error) -> dict:
    """The contenders named in ``spec`` (comma-separated; all when empty), in ``known``'s
    order; ``error`` (an argument parser's) is called with a message for unknown names."""
    if not spec:
        return dict(known)
    wanted = [c.strip() for c in spec.split(",") if c.strip()]
    unknown = [w for w in wanted if w not in known]
    if unknown:
        error(f"unknown contender(s) {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
    return {k: v for k, v in known.items() if k in wanted}


def rotated(names: list, k: int) -> list:
    """``names`` rotated by ``k``: each round starts with another contender, so that noise on
    the shared machine spreads over them."""
    if not names:
        return []
    k %= len(names)
    return names[k:] + names[:k]


class Budget:
    """``--budget-minutes``: once that much wall time has passed, no new run starts."""

    def __init__(self, minutes: float | None):
        self.minutes = minutes
        self.start = time.monotonic()

    def elapsed_minutes(self) -> float:
        return (time.monotonic() - self.start) / 60

    def over(self) -> bool:
        return self.minutes is not None and time.monotonic() - self.start > self.minutes * 60
