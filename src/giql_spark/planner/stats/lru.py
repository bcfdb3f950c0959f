"""A small thread-safe cache of at most N entries, the least recently used dropped first.

The planner keeps facts about files (:mod:`.filestats`) and answers of scans over them
(:mod:`.answers`) for the life of the process; both are read and written from the threads
that read the two sides' statistics at once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

#: What :meth:`LRU.get` returns for a key it does not hold (a kept value may be None or False).
MISSING = object()


class LRU:
    def __init__(self, size: int):
        self.size = size
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, default=MISSING):
        """The value kept for ``key`` (now the most recently used), else ``default``."""
        with self._lock:
            if key not in self._entries:
                return default
            self._entries.move_to_end(key)
            return self._entries[key]

    def put(self, key, value) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
