"""CRAM files for oxbow: split by container, read through a view of the file's bytes.

A CRAM file is its file definition and header container, data containers, and an end-of-file
container. Any run of its data containers between the header and the EOF container is itself a
valid CRAM file, so a split is a *view* of the file: the header bytes, the split's containers and
the EOF container, read through one file object (:class:`Segments`) without copying anything.
The containers are found in the ``.crai`` index (each line: reference, start, span, container
offset, ...), or, without one, by reading each container's header and skipping its blocks. A
split's containers hold its reads whatever their reference, the unplaced ones included.

The reference sequence, when the reads are stored against one, is the ``reference=`` FASTA,
else found as samtools finds it: by each ``@SQ`` line's ``M5`` checksum in ``REF_PATH`` /
``REF_CACHE``, or its ``UR:`` path when that is a local file.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import struct

from .formats import InputError

__all__ = ["Segments", "containers", "reference_for", "split"]

# A split holds containers up to about this many bytes.
SPLIT_BYTES = 64 << 20


class Segments(io.RawIOBase):
    """A read-only file made of byte ranges ``[(start, end), ...]`` of another file."""

    def __init__(self, opener, segments: list[tuple[int, int]]):
        self._fh = opener()
        self._segs = [(int(a), int(b)) for a, b in segments if b > a]
        self._starts = []
        total = 0
        for a, b in self._segs:
            self._starts.append(total)
            total += b - a
        self._size = total
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buf) -> int:
        want = len(buf)
        done = 0
        view = memoryview(buf)
        while done < want and self._pos < self._size:
            i = max(k for k, s in enumerate(self._starts) if s <= self._pos)
            a, b = self._segs[i]
            off = self._pos - self._starts[i]
            n = min(want - done, (b - a) - off)
            self._fh.seek(a + off)
            chunk = self._fh.read(n)
            if not chunk:
                break
            view[done:done + len(chunk)] = chunk
            done += len(chunk)
            self._pos += len(chunk)
        return done

    def close(self) -> None:
        self._fh.close()
        super().close()


def _itf8(fh) -> int:
    b0 = fh.read(1)[0]
    if b0 < 0x80:
        return b0
    if b0 < 0xC0:
        return ((b0 & 0x3F) << 8) | fh.read(1)[0]
    if b0 < 0xE0:
        b = fh.read(2)
        return ((b0 & 0x1F) << 16) | (b[0] << 8) | b[1]
    if b0 < 0xF0:
        b = fh.read(3)
        return ((b0 & 0x0F) << 24) | (b[0] << 16) | (b[1] << 8) | b[2]
    b = fh.read(4)
    v = ((b0 & 0x0F) << 28) | (b[0] << 20) | (b[1] << 12) | (b[2] << 4) | (b[3] & 0x0F)
    return v - (1 << 32) if v >= 1 << 31 else v


def _ltf8(fh) -> int:
    b0 = fh.read(1)[0]
    n = 0
    while n < 8 and b0 & (0x80 >> n):
        n += 1
    value = b0 & (0xFF >> (n + 1)) if n < 8 else 0
    for byte in fh.read(n):
        value = (value << 8) | byte
    return value


def _container_header(fh, at: int, major: int) -> tuple[int, int, int]:
    """(end of the container, its record count, its reference id) for the container at ``at``."""
    fh.seek(at)
    raw = fh.read(4)
    if len(raw) < 4:
        raise InputError("truncated container header")
    (length,) = struct.unpack("<i", raw)
    ref = _itf8(fh)
    _itf8(fh)  # alignment start
    _itf8(fh)  # span
    n_records = _itf8(fh)
    (_ltf8 if major >= 3 else _itf8)(fh)  # record counter
    if major >= 2:
        (_ltf8 if major >= 3 else _itf8)(fh)  # bases
    _itf8(fh)  # blocks
    for _ in range(_itf8(fh)):  # landmarks
        _itf8(fh)
    if major >= 3:
        fh.read(4)  # crc32
    return fh.tell() + length, n_records, ref


def containers(opener, index: str | None) -> tuple[int, list[tuple[int, int]], tuple[int, int]]:
    """The header's end, the data containers as (start, end) and the EOF container's range."""
    with opener() as fh:
        head = fh.read(26)
        if head[:4] != b"CRAM":
            raise InputError("not a CRAM file (no CRAM magic)")
        major = head[4]
        fh.seek(0, 2)
        size = fh.tell()
        header_end, _, _ = _container_header(fh, 26, major)  # the SAM header container
        starts: list[int] = []
        if index is not None:
            from .files import py_open

            with py_open(index) as raw, gzip.open(raw, "rt") as crai:
                starts = sorted({int(line.split("\t")[3]) for line in crai if line.strip()})
            starts = [s for s in starts if s >= header_end]
        out = []
        at = starts[0] if starts else header_end
        while at < size:
            end, n_records, _ = _container_header(fh, at, major)
            if n_records == 0 and end == size:  # the EOF container
                return header_end, out, (at, size)
            if end > size:
                raise InputError(f"container at byte {at} runs past the end of the file (truncated?)")
            out.append((at, end))
            at = end
        return header_end, out, (size, size)


def header_text(opener) -> str:
    """The SAM header text of a CRAM file (the first block of its header container)."""
    import zlib

    with opener() as fh:
        head = fh.read(26)
        major = head[4]
        fh.seek(26)
        _container_header(fh, 26, major)
        method = fh.read(1)[0]
        fh.read(1)  # content type
        _itf8(fh)  # content id
        size = _itf8(fh)
        _itf8(fh)  # raw size
        data = fh.read(size)
    if method == 1:
        data = zlib.decompress(data, 31)
    elif method != 0:
        return ""
    (n,) = struct.unpack("<i", data[:4])
    return data[4:4 + n].decode("utf-8", "replace")


def split(opener, index: str | None, size: int | None = None) -> tuple[list[tuple[int, int]], list[list[tuple[int, int]]]]:
    """The header and EOF segments, and the data containers grouped into splits of about ``size``."""
    header_end, conts, eof = containers(opener, index)
    size = SPLIT_BYTES if size is None else size
    groups, group, bytes_ = [], [], 0
    for a, b in conts:
        group.append((a, b))
        bytes_ += b - a
        if bytes_ >= size:
            groups.append(group)
            group, bytes_ = [], 0
    if group or not groups:
        groups.append(group)
    return [(0, header_end), eof], groups


def view(opener, header_eof: list[tuple[int, int]], group: list[tuple[int, int]]):
    """A callable opening the CRAM file of the header, ``group``'s containers and the EOF container."""
    (h0, h1), (e0, e1) = header_eof
    segments = [(h0, h1), *group, (e0, e1)]
    return lambda: io.BufferedReader(Segments(opener, segments), buffer_size=1 << 20)


_SQ = re.compile(r"^@SQ\t(.*)$", re.M)


def reference_for(header_text: str) -> str | None:
    """A FASTA built from ``REF_PATH``/``REF_CACHE`` (by each @SQ's M5), or the @SQ's UR: local
    file when every @SQ names the same one; None when neither is found."""
    urs, md5s = set(), []
    for m in _SQ.finditer(header_text):
        tags = dict(f.split(":", 1) for f in m.group(1).split("\t") if ":" in f)
        if "UR" in tags:
            ur = tags["UR"]
            urs.add(ur[len("file://"):] if ur.startswith("file://") else ur[len("file:"):] if ur.startswith("file:") else ur)
        if "M5" in tags and "SN" in tags:
            md5s.append((tags["SN"], tags["M5"]))
    if len(urs) == 1:
        ur = next(iter(urs))
        if os.path.exists(ur) and os.path.exists(ur + ".fai"):
            return ur
    found = [_by_md5(m5) for _, m5 in md5s]
    if md5s and all(found):
        return _fasta_of(list(zip([sn for sn, _ in md5s], found)))
    return None


def _by_md5(m5: str) -> str | None:
    for var in ("REF_CACHE", "REF_PATH"):
        for pattern in (os.environ.get(var) or "").split(":"):
            if not pattern or pattern.startswith(("http", "ftp")):
                continue
            path = _expand(pattern, m5)
            if os.path.exists(path):
                return path
    return None


def _expand(pattern: str, m5: str) -> str:
    """samtools' REF_PATH pattern: %2s takes two characters of the checksum, %s the rest."""
    out, rest = "", m5
    i = 0
    while i < len(pattern):
        if pattern[i] == "%":
            m = re.match(r"%(\d*)s", pattern[i:])
            if m:
                n = int(m.group(1)) if m.group(1) else len(rest)
                out, rest = out + rest[:n], rest[n:]
                i += len(m.group(0))
                continue
        out += pattern[i]
        i += 1
    if "%" not in pattern:
        out = os.path.join(out, m5)
    return out


def _fasta_of(parts: list[tuple[str, str]]) -> str:
    """A FASTA (with its .fai) of the raw sequences REF_CACHE holds, cached by their checksums."""
    import hashlib
    import tempfile

    key = hashlib.sha1("".join(f"{n}\0{p}\0" for n, p in parts).encode()).hexdigest()[:16]
    path = os.path.join(tempfile.gettempdir(), f"giql-spark-ref-{key}.fa")
    if not os.path.exists(path + ".fai"):
        tmp = path + f".{os.getpid()}"
        with open(tmp, "wb") as out, open(tmp + ".fai", "w") as fai:
            for name, p in parts:
                with open(p, "rb") as fh:
                    seq = fh.read().strip()
                out.write(f">{name}\n".encode())
                offset = out.tell()
                out.write(seq + b"\n")
                fai.write(f"{name}\t{len(seq)}\t{offset}\t{len(seq)}\t{len(seq) + 1}\n")
        os.replace(tmp + ".fai", path + ".fai")
        os.replace(tmp, path)
    return path
