"""Reader work in the driver that must end: run in a child process, given up after a time limit.

oxbow runs in the calling process holding Python's lock, so a file it loops on forever (as its
GFF attribute scan once did on GTF-style attributes) would hang the user's process, deaf to
SIGTERM. What the oxbow reader does on the driver (the header, the first records, a small
file's validation) runs in a forked child instead; after :data:`SECONDS` the child is killed and
the read fails in one line naming the file.
"""

from __future__ import annotations

import multiprocessing
import os

from .formats import InputError

__all__ = ["SECONDS", "bounded"]

#: The time limit, in seconds (``GIQL_SPARK_READER_TIMEOUT``).
SECONDS = float(os.environ.get("GIQL_SPARK_READER_TIMEOUT", "300"))


def _run(conn, fn, args):
    try:
        result = ("ok", fn(*args))
    except InputError as e:
        result = ("input", str(e))
    except BaseException as e:  # noqa: BLE001 - a Rust panic is a BaseException; say what it was
        text = str(e).strip().splitlines()
        result = ("error", f"{type(e).__name__}: {text[0] if text else ''}")
    try:
        conn.send(result)
    finally:
        conn.close()


def bounded(fn, *args, path: str, seconds: float | None = None):
    """``fn(*args)`` in a forked child; its result, its InputError, or an InputError naming
    ``path`` when it does not finish in ``seconds``."""
    limit = SECONDS if seconds is None else seconds
    if limit <= 0 or multiprocessing.current_process().daemon:
        return fn(*args)  # no limit, or already inside a child
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_run, args=(send, fn, args), daemon=True)
    child.start()
    send.close()
    try:
        if not receive.poll(limit):
            raise InputError(f"{path}: reading its header and first records did not finish in {limit:g} s "
                             "(GIQL_SPARK_READER_TIMEOUT); the file may be one the reader cannot end on")
        try:
            kind, value = receive.recv()
        except EOFError:
            raise InputError(f"{path}: the reader stopped without an answer (exit code {child.exitcode})") from None
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
    if kind == "ok":
        return value
    if kind == "input":
        raise InputError(value)
    raise InputError(f"{path}: cannot read it ({value})")
