"""The rows one side holds for one key, kept sorted by the prune column.

A :class:`Held` is columns of equal length: the prune value (ascending), the
hull ``[lo, hi]`` the candidate search uses, whether the row has matched,
the row itself (its columns as one JSON text, opaque here) and the values of
the condition's columns the operator evaluates (each an array plus a NULL
mask). Forgetting the rows that can no longer match is a binary search and a
slice (:meth:`Held.cut`), not a scan.

A key's state is both sides' :class:`Held` and each side's newest order
value; it is stored as one pickled value in Spark's state store.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass

import numpy as np


@dataclass
class Held:
    prune: np.ndarray   # int64, ascending
    lo: np.ndarray      # int64
    hi: np.ndarray      # int64
    matched: np.ndarray  # bool
    rows: np.ndarray    # object: the row's JSON text
    values: list        # per evaluated column: (values, NULL mask)

    @classmethod
    def empty(cls, n_values: int, value_dtypes=None) -> Held:
        dtypes = value_dtypes or [object] * n_values
        return cls(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, bool),
                   np.empty(0, object), [(np.empty(0, d), np.empty(0, bool)) for d in dtypes])

    def __len__(self) -> int:
        return len(self.prune)

    def take(self, idx) -> Held:
        return Held(self.prune[idx], self.lo[idx], self.hi[idx], self.matched[idx], self.rows[idx],
                    [(v[idx], m[idx]) for v, m in self.values])

    def concat(self, other: Held) -> Held:
        """Both row sets, in this one's order then ``other``'s (not sorted)."""
        if not len(other):
            return self
        if not len(self):
            return other
        return Held(np.concatenate([self.prune, other.prune]), np.concatenate([self.lo, other.lo]),
                    np.concatenate([self.hi, other.hi]), np.concatenate([self.matched, other.matched]),
                    np.concatenate([self.rows, other.rows]),
                    [(np.concatenate([a, c]), np.concatenate([b, d]))
                     for (a, b), (c, d) in zip(self.values, other.values)])

    def sorted(self) -> Held:
        """Rows in ascending prune order; already sorted runs cost little (a stable merge sort)."""
        if len(self) < 2 or bool(np.all(self.prune[:-1] <= self.prune[1:])):
            return self
        return self.take(np.argsort(self.prune, kind="stable"))

    def cut(self, bound: float) -> tuple[Held, Held]:
        """(rows with prune value >= ``bound``, rows below it): the held rows and the released prefix."""
        if bound == -np.inf or not len(self):
            return self, self.take(slice(0, 0))
        if bound == np.inf:
            return self.take(slice(0, 0)), self
        at = int(np.searchsorted(self.prune, int(bound), side="left"))
        if at == 0:
            return self, self.take(slice(0, 0))
        return self.take(slice(at, None)), self.take(slice(0, at))


@dataclass
class KeyState:
    """Both sides' held rows for one key and each side's newest order value (None: none yet)."""

    held: list        # [left Held, right Held]
    newest: list      # [left newest or None, right newest or None]

    def dumps(self) -> bytes:
        return pickle.dumps(self, protocol=5)

    @staticmethod
    def loads(blob: bytes) -> KeyState:
        return pickle.loads(blob)
