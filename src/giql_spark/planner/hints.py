"""The query hint that forces an interval-join strategy or its parameters.

``/*+ INTERVAL_JOIN(binned, bin_size=20000) */`` anywhere in a query applies
to every interval join of that query; each part is optional
(``/*+ INTERVAL_JOIN(bin_size=5000) */`` leaves the strategy to the model).
The hint is removed before the query is parsed.
"""

from __future__ import annotations

import re

from ..errors import QuerySyntaxError

_HINT = re.compile(r"/\*\+\s*INTERVAL_JOIN\s*\((?P<args>[^)]*)\)\s*\*/", re.IGNORECASE)
_SIZES = ("bin_size", "tile_size")


def parse_hint(query: str) -> tuple[str, dict]:
    """(the query without hints, the options they set)."""
    options: dict = {}
    for m in _HINT.finditer(query):
        for part in filter(None, (p.strip() for p in m.group("args").split(","))):
            key, eq, value = (x.strip() for x in part.partition("="))
            if not eq:
                options["strategy"] = key.lower()
                continue
            if key.lower() not in _SIZES or not value.isdigit() or int(value) < 1:
                raise QuerySyntaxError(
                    f"INTERVAL_JOIN hint at position {m.start()}: expected a strategy name or "
                    f"bin_size=N / tile_size=N with N a positive integer, got {part!r}"
                )
            options[key.lower()] = int(value)
    if options:
        options["_source"] = "query hint"
    return _HINT.sub(" ", query), options
