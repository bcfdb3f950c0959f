"""The example tables shipped with the package (BED6, 0-based half-open)."""

from __future__ import annotations

from importlib import resources

EXAMPLES = ("peaks.bed", "genes.bed")


def example_path(name: str) -> str:
    """Filesystem path of a shipped example file: ``peaks.bed`` or ``genes.bed``."""
    if name not in EXAMPLES:
        raise ValueError(f"no example named {name!r}; examples: {', '.join(EXAMPLES)}")
    return str(resources.files("giql_spark").joinpath("data", name))
