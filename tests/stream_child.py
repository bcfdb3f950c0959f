"""A streaming query in a process of its own, for the crash test: ``python stream_child.py FEED OUT CK``.

Runs ``Session.sql`` of the INTERSECTS full join over the two streams under
``FEED`` (files as :class:`streams.Feed` lands them), writing to a Parquet
file sink at ``OUT`` with its checkpoint at ``CK``; prints ``batch N`` as each
micro-batch's commit lands in the checkpoint, and stops once no file is left to read when
``--drain``.
"""

from __future__ import annotations

import os
import sys
import time

import giql_spark as gs
from streams import SCHEMA

QUERY = "SELECT x.name AS a, y.name AS b FROM a x FULL JOIN b y ON x.interval INTERSECTS y.interval"


def main() -> None:
    feed, out, ck = sys.argv[1:4]
    drain = "--drain" in sys.argv
    spark = gs.local_spark("local[2]", config={"spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false",
                                               "spark.driver.memory": "1g"})
    s = gs.Session(spark)
    for name in ("a", "b"):
        s.register(name, spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(f"{feed}/{name}"))
    q = (s.sql(QUERY).writeStream.format("parquet").option("path", out).option("checkpointLocation", ck)
         .trigger(processingTime="0 seconds").start())
    seen = -1
    while True:
        if drain:
            q.processAllAvailable()
            q.stop()
            print("drained", flush=True)
            return
        if not q.isActive:
            print(f"failed: {q.exception()}", flush=True)
            return
        # A micro-batch is done when its commit lands in the checkpoint (progress reports differ by Spark line).
        commits = [int(n) for n in os.listdir(os.path.join(ck, "commits")) if n.isdigit()] \
            if os.path.isdir(os.path.join(ck, "commits")) else []
        for n in sorted(c for c in commits if c > seen):
            seen = n
            print(f"batch {n}", flush=True)
        time.sleep(0.05)


if __name__ == "__main__":
    main()
