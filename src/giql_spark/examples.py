"""The example files shipped with the package.

``peaks.bed`` and ``genes.bed`` are BED6 (0-based half-open); ``variants.vcf``
(60 variants, half of them inside peaks) and ``genes.gtf`` (a gene line and
two exons for each gene of ``genes.bed``) are 1-based closed, as those formats
are, on the same chromosomes.
"""

from __future__ import annotations

from importlib import resources

EXAMPLES = ("peaks.bed", "genes.bed", "variants.vcf", "genes.gtf")


def example_path(name: str) -> str:
    """Filesystem path of a shipped example file: one of :data:`EXAMPLES`."""
    if name not in EXAMPLES:
        raise ValueError(f"no example named {name!r}; examples: {', '.join(EXAMPLES)}")
    return str(resources.files("giql_spark").joinpath("data", name))
