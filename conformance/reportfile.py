"""Report files (``--junit``, the matrix's ``--markdown`` and ``--json``), replaced in one step; and
reports printed on stdout, written whole whatever their size and however the stream is buffered.

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
import select
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

from inboxspec.conformance.interrupts import RunInterrupted, received
from inboxspec.conformance.process_tree import KILL_GRACE_S

# Characters of a printed JSON report encoded at a time (PROTO-REPORT-1): a report is never held whole.
PRINTED_CHUNK_CHARS = 1 << 20
# Bytes handed to the descriptor in one write: no more than a pipe that polls writable takes without
# blocking (PIPE_BUF), so that a reader that stops reading never holds the runner inside a write.
_WRITE_BYTES = 4096
# How often a write that waits for the reader looks whether a signal has come (as a reply's wait does).
_POLL_S = 0.05


class ReportCut(OSError):
    """A signal came while a report was written, and its reader did not take the rest within the kill
    grace (PROTO-REPORT-2): the report stops where the reader stopped."""

    def __init__(self, written: int, total: int) -> None:
        super().__init__(errno.EPIPE, f"its reader took {written:,} of its {total:,} bytes within "
                                      f"{KILL_GRACE_S:g} s of the signal: the report is cut")
        self.written, self.total = written, total


def print_json(value: Any, stream: TextIO | None = None) -> None:
    """``value`` as ``json.dumps(value, indent=2)`` and a newline, on ``stream`` (stdout), encoded a
    ``PRINTED_CHUNK_CHARS`` at a time and each part written whole (``write_whole``). A signal that
    raises where it lands (``raising_on_signals``) cuts it: the RunInterrupted says so
    (``report_cut``), so that no second report follows the part printed."""
    out = sys.stdout if stream is None else stream
    pending: list[str] = []
    size = 0
    try:
        for piece in json.JSONEncoder(indent=2).iterencode(value):
            pending.append(piece)
            size += len(piece)
            if size >= PRINTED_CHUNK_CHARS:
                write_whole(out, "".join(pending))
                pending.clear()
                size = 0
        pending.append("\n")
        write_whole(out, "".join(pending))
    except RunInterrupted as stop:  # raised where a signal landed, under ``raising_on_signals``
        stop.report_cut = True
        raise


def write_whole(stream: TextIO, text: str) -> None:
    """``text`` on ``stream``, whole, by its descriptor when it has one (by its binary layer when it
    has that alone; a stream with neither, a test's, is written to as it is).

    Whole: the text layer over an unbuffered descriptor (``PYTHONUNBUFFERED``, ``-u``) drops what a
    write leaves unwritten without an error (a part of a report that a signal, a full pipe or 2 GiB
    in one call cut short), so the bytes are written here, a write at a time, until every one is
    taken. A write that the reader is not ready for waits, looking every ``_POLL_S`` whether a signal
    has come (``interrupts.received``); after one, the reader has the kill grace to take the rest,
    and then :class:`ReportCut` (PROTO-REPORT-2). An error of the descriptor (a closed pipe, a full
    disk) is raised as the OSError it is."""
    try:
        descriptor: int | None = stream.fileno()
    except (AttributeError, OSError, ValueError):  # no descriptor: a test's stream, or another layer's
        descriptor = None
    binary = getattr(stream, "buffer", None)
    if descriptor is None and binary is None:
        stream.write(text)
        return
    stream.flush()  # what the text layer holds goes first
    data = memoryview(text.encode(stream.encoding or "utf-8", stream.errors or "strict"))
    if descriptor is None:  # a binary layer alone: each write's count taken as it is given
        assert binary is not None
        done = 0
        while done < len(data):
            done += binary.write(data[done:done + _WRITE_BYTES]) or 0
        binary.flush()
        return
    written, total = 0, len(data)
    signalled_at: float | None = None
    waiting = select.poll()  # not select.select, which refuses a descriptor past FD_SETSIZE
    waiting.register(descriptor, select.POLLOUT)
    while written < total:
        if not waiting.poll(_POLL_S * 1000):
            if signalled_at is None and received() is not None:
                signalled_at = time.monotonic()
            if signalled_at is not None and time.monotonic() - signalled_at > KILL_GRACE_S:
                raise ReportCut(written, total)
            continue
        try:
            written += os.write(descriptor, data[written:written + _WRITE_BYTES])
        except BlockingIOError:  # a descriptor another process made non-blocking: wait, as for a reader
            continue


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
