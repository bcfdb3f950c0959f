"""Small hand-built tables with the edge cases every operator must get right."""

from conftest import Table

PEAKS = [
    ("chr1", 100, 200, "p1", 5.0, "+"),
    ("chr1", 150, 250, "p2", 1.0, "-"),
    ("chr1", 250, 300, "p3", 7.5, "+"),   # book-ended with p2
    ("chr1", 100, 200, "p4", 2.0, "."),   # identical to p1
    ("chr1", 500, 500, "p5", 3.0, "+"),   # zero-length point
    ("chr2", 0, 50, "p6", 9.0, "+"),
    ("chrX", 1000, 2000, "p7", None, None),
    (None, 10, 20, "p8", 4.0, "+"),       # NULL chromosome
    ("chr1", 5000, 6000, "p9", 6.0, "-"),
    ("chr1", 3000, 3300, "p10", 8.0, "+"),
]

GENES = [
    ("chr1", 120, 180, "g1", 1.0, "+"),    # within p1 and p4
    ("chr1", 190, 260, "g2", 6.0, "-"),
    ("chr1", 300, 400, "g3", 2.0, "+"),    # book-ended with p3
    ("chr1", 450, 550, "g4", 9.0, "-"),    # holds the point p5
    ("chr2", 40, 45, "g5", 4.0, "+"),
    ("chr3", 0, 100, "g6", 5.0, "+"),      # a chromosome peaks lack
    (None, 0, 10, "g7", 3.0, "-"),
    ("chr1", 4000, 4100, "g8", 7.0, "."),
    ("chr1", 7000, 7001, "g9", 8.0, "?"),
    ("chr1", 3100, 3200, "g10", 2.5, "+"),
    ("chr1", 3250, 3250, "g11", 1.5, "-"), # zero-length inside p10
]


def peaks(**mapping):
    return Table(PEAKS, **mapping)


def genes(**mapping):
    return Table(GENES, **mapping)


def empty(**mapping):
    return Table([], **mapping)
