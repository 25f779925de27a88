"""Report files (``--junit``, the matrix's ``--markdown`` and ``--json``), replaced in one step; and
JSON reports printed on stdout, written whole whatever their size.

A CI job reads a report the moment the run ends, and may read the previous
run's when this one is killed: it must never see half a file. The data goes
to a temporary file in the destination's own directory (so the rename stays
on one filesystem), which is then renamed over the destination. A rename
replaces a symbolic link at the destination rather than writing through it,
so a link planted there cannot redirect the write elsewhere; a device, FIFO or
socket there is refused, and a file replaced keeps its permission bits.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

# Characters of a printed JSON report handed to the stream in one write (PROTO-REPORT-1): a text of
# 2 GiB or more written in one call reaches a pipe or a file cut short, with no error, on Linux.
PRINTED_CHUNK_CHARS = 1 << 20


def print_json(value: Any, stream: TextIO | None = None) -> None:
    """``value`` as ``json.dumps(value, indent=2)`` and a newline, on ``stream`` (stdout), written a
    ``PRINTED_CHUNK_CHARS`` at a time as it is encoded: whole whatever its size, and never held whole."""
    out = sys.stdout if stream is None else stream
    pending: list[str] = []
    size = 0
    for piece in json.JSONEncoder(indent=2).iterencode(value):
        pending.append(piece)
        size += len(piece)
        if size >= PRINTED_CHUNK_CHARS:
            _write_in_chunks(out, "".join(pending))
            pending.clear()
            size = 0
    pending.append("\n")
    _write_in_chunks(out, "".join(pending))


def _write_in_chunks(out: TextIO, text: str) -> None:
    for start in range(0, len(text), PRINTED_CHUNK_CHARS):
        out.write(text[start:start + PRINTED_CHUNK_CHARS])


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one rename; no partial file is ever left.

    The temporary file lies in the destination's directory so that the rename
    stays on one filesystem. A symbolic link at the destination is replaced,
    not followed. A regular file there (or behind the link) gives the new file
    its permission bits (a private report stays private); otherwise it gets an
    ordinary file's under the umask. Anything else there (a device such as ``/dev/null``, a
    FIFO, a socket, a directory) is refused, not replaced: run as root, a
    report named ``/dev/null`` would otherwise replace the system's. Raises
    OSError when the directory cannot be written or the destination is refused.
    """
    try:
        existing: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        existing = None
    if existing is not None and not (stat.S_ISREG(existing.st_mode) or stat.S_ISLNK(existing.st_mode)):
        raise OSError(errno.EEXIST, "not a regular file; a report replaces only a file or a link", str(path))
    try:
        behind = os.stat(path)  # the file itself, or the one a link there names
    except OSError:
        behind = None
    if behind is not None and stat.S_ISREG(behind.st_mode):
        mode = stat.S_IMODE(behind.st_mode)
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    directory = path.parent
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)  # mkstemp creates the file private (0600)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
