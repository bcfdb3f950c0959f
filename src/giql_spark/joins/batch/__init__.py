"""The work a Python strategy does on one Arrow batch, as module-level functions.

Spark runs them inside ``mapInArrow`` / ``applyInArrow`` closures that only
carry state and iterate; each function here takes Arrow batches or tables
and returns Arrow record batches, so it is tested without Spark.
"""
