"""The description of one interval join, shared by every physical strategy."""

from __future__ import annotations

from dataclasses import dataclass, field


def quote(name: str) -> str:
    """A column or field name quoted for Spark SQL."""
    return "`" + name.replace("`", "``") + "`"


JOIN_TYPES = ("inner", "left", "right", "full", "semi", "anti")
PREDICATES = ("intersects", "contains", "within")


@dataclass(frozen=True)
class Interval:
    """SQL expressions, over one side's columns, for its canonical interval.

    ``start`` and ``end`` are 0-based half-open after canonicalization; a
    1-based or closed table's expressions already carry the offset.
    """

    chrom: str
    start: str
    end: str


@dataclass(frozen=True)
class JoinSpec:
    """What to join; every strategy returns the same rows for the same spec.

    Attributes
    ----------
    how
        One of :data:`JOIN_TYPES`. ``semi`` and ``anti`` return left columns
        only; the outer joins fill the missing side with NULL.
    predicate
        One of :data:`PREDICATES`; informational, since ``condition`` is exact.
    left, right
        The canonical interval of each side.
    condition
        The exact pair predicate in Spark SQL (chromosome equality included).
        A pair is joined iff ``condition`` and ``residual`` are both true; a
        NULL coordinate or chromosome makes it false. Every pair satisfying
        ``condition`` must have closed hulls ``[min(start,end), max(start,end)]``
        that share a point on the same chromosome: true for INTERSECTS,
        CONTAINS and WITHIN, which is what lets strategies prune by position.
    residual
        Further conditions on the pair (``b.score > 5``), or None.
    """

    how: str
    predicate: str
    left: Interval
    right: Interval
    condition: str
    residual: str | None = None
    options: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.how not in JOIN_TYPES:
            raise ValueError(f"join type must be one of {JOIN_TYPES}, got {self.how!r}")
        if self.predicate not in PREDICATES:
            raise ValueError(f"predicate must be one of {PREDICATES}, got {self.predicate!r}")

    @property
    def full_condition(self) -> str:
        if self.residual:
            return f"({self.condition}) AND ({self.residual})"
        return f"({self.condition})"
