"""bioframe-style interval operations on Spark DataFrames.

Names, arguments and output columns follow bioframe 0.8; intervals are
0-based half-open. Operations that pair rows run through the same planner
choice and join strategies as GIQL queries. Each returns a Spark DataFrame
whose rows come in no defined order; the work runs when it is collected,
except that the broadcast strategy and the counting kernel read their
smaller side when called.
"""

from .band import band_join, window
from .bins import binnify, make_chromarms
from .closest import closest
from .clusters import cluster, merge
from .complement import complement, subtract
from .coverage import coverage, frac_gene_coverage
from .expand import expand
from .nearest import nearest
from .overlap import count_overlaps, overlap, setdiff
from .pairs import pair_by_distance
from .runs import mark_runs, merge_runs
from .select import select, select_mask
from .sequence import digest, frac_gc, frac_mapped, seq_gc
from .views import assign_view, sort_bedframe, trim

__all__ = [
    "overlap",
    "count_overlaps",
    "setdiff",
    "select",
    "select_mask",
    "nearest",
    "closest",
    "coverage",
    "frac_gene_coverage",
    "merge",
    "cluster",
    "complement",
    "subtract",
    "expand",
    "window",
    "band_join",
    "trim",
    "sort_bedframe",
    "assign_view",
    "binnify",
    "make_chromarms",
    "pair_by_distance",
    "mark_runs",
    "merge_runs",
    "frac_mapped",
    "frac_gc",
    "seq_gc",
    "digest",
]
