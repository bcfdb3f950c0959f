"""What the benchmark scripts share: generated data, the frozen package copy, Spark runs
with a timeout, machine facts, peak memory, the peer libraries' runs and report helpers.

The scripts in ``benchmarks/`` import it as ``harness`` (their folder is first on
``sys.path`` when run as ``python benchmarks/<script>.py``). Nothing here is imported
by ``giql_spark``.
"""
