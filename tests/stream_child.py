"""A streaming query in a process of its own, for the crash test: ``python stream_child.py FEED OUT CK``.

Runs ``Session.sql`` of the INTERSECTS full join over the two streams under
``FEED`` (files as :class:`streams.Feed` lands them), writing to a Parquet
file sink at ``OUT`` with its checkpoint at ``CK``; prints ``batch N`` as each
micro-batch commits, and stops once no file is left to read when ``--drain``.
"""

from __future__ import annotations

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
        p = q.lastProgress
        if p is not None and p["batchId"] != seen and p["numInputRows"]:
            seen = p["batchId"]
            print(f"batch {seen}", flush=True)
        time.sleep(0.05)


if __name__ == "__main__":
    main()
