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

import codecs
import contextlib
import errno
import io
import json
import os
import secrets
import stat
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO, cast

from inboxspec.conformance.adapter_process import EXIT_POLL_S
from inboxspec.conformance.interrupts import RunInterrupted, received_at
from inboxspec.conformance.process_tree import KILL_GRACE_S

# Characters of a printed JSON report encoded at a time (PROTO-REPORT-1): a report is never held whole.
PRINTED_CHUNK_CHARS = 1 << 20
# Bytes of one write of the writer thread: what a pipe holds, so that what a cut report says was taken
# is counted as the reader takes it, not once a whole part is.
_WRITE_BYTES = 1 << 16


class ReportCut(OSError):
    """A signal came while a report was written, and its reader did not take the rest within the kill
    grace (PROTO-REPORT-2): the report stops where the reader stopped."""

    def __init__(self, written: int) -> None:
        super().__init__(errno.EPIPE, f"the report is cut after {written:,} bytes: its reader took no "
                                      f"more within {KILL_GRACE_S:g} s of the signal")
        self.written = written


class _Report:
    """One report being written (``writing_report``): when it began, and the bytes handed on so far."""

    def __init__(self) -> None:
        self.began = time.monotonic()
        self.written = 0


_REPORTS: list[_Report] = []  # the report being written, innermost last
# When the signal came after which a write was cut (``received_at``): a later write after it gets no grace.
_CUT_AFTER: list[float] = []


@contextlib.contextmanager
def writing_report() -> Iterator[None]:
    """The writes inside are one report's (PROTO-REPORT-2): the grace after a signal runs from the later
    of the signal and the report's beginning, across all its writes, and a cut counts all their bytes.
    Without it, each ``write_whole`` is a report of its own."""
    _REPORTS.append(_Report())
    try:
        yield
    finally:
        _REPORTS.pop()


def print_json(value: Any, stream: TextIO | None = None) -> None:
    """``value`` as ``json.dumps(value, indent=2)`` and a newline, on ``stream`` (stdout), encoded a
    ``PRINTED_CHUNK_CHARS`` at a time and each part written whole (``write_whole``). A signal that
    raises where it lands (``raising_on_signals``) cuts it: the RunInterrupted says so
    (``report_cut``), so that no second report follows the part printed."""
    out = sys.stdout if stream is None else stream
    pending: list[str] = []
    size = 0
    began = False  # whether a part has gone to the stream: before it, a signal cuts nothing
    try:
        for piece in json.JSONEncoder(indent=2).iterencode(value):
            pending.append(piece)
            size += len(piece)
            if size >= PRINTED_CHUNK_CHARS:
                began = True
                write_whole(out, "".join(pending))
                pending.clear()
                size = 0
        pending.append("\n")
        began = True
        write_whole(out, "".join(pending))
    except RunInterrupted as stop:  # raised where a signal landed, under ``raising_on_signals``
        stop.report_cut = began
        raise


# Per stream written to by ``write_whole``: its encoder, kept across the writes, so that an encoding
# that begins with a byte order mark (utf-8-sig, utf-16) puts it once, not before every part.
_ENCODERS: weakref.WeakKeyDictionary[TextIO, codecs.IncrementalEncoder] = weakref.WeakKeyDictionary()


def _encoder(stream: TextIO) -> codecs.IncrementalEncoder:
    encoder = _ENCODERS.get(stream)
    if encoder is None:
        encoder = codecs.getincrementalencoder(stream.encoding or "utf-8")(stream.errors or "strict")
        with contextlib.suppress(OSError, ValueError):
            if stream.tell() > 0:  # the text layer has begun the stream: its mark is written
                encoder.setstate(0)
        _ENCODERS[stream] = encoder
    return encoder


def print_whole(print_text: Callable[[], object]) -> None:
    """What ``print_text`` prints, taken whole and then written on stdout (``write_whole``): a text
    report, printed a line at a time, written as one."""
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        print_text()
    write_whole(sys.stdout, text.getvalue())


def write_whole(stream: TextIO, text: str) -> None:
    """``text`` on ``stream``, whole, by its descriptor when it has one (by its binary layer when it
    has that alone; a stream with neither, a test's, is written to as it is).

    Whole: the text layer over an unbuffered descriptor (``PYTHONUNBUFFERED``, ``-u``) drops what a
    write leaves unwritten without an error (a part of a report that a signal, a full pipe or 2 GiB
    in one call cut short), so the bytes are written here, until every one is taken. The writes are
    a thread's, which this one waits for, looking every ``EXIT_POLL_S`` whether a signal has come
    (as a wait for a reply looks)
    (``interrupts.received_at``): a write blocked on a reader that takes nothing (a pipe, a terminal)
    is retried by Python after each signal, and held the runner for good. After a signal the reader
    has the kill grace (``writing_report``) to take the rest, and then :class:`ReportCut`
    (PROTO-REPORT-2); the writer thread is left blocked, and the process ends without it. An error
    of the descriptor (a closed pipe, a full disk) is raised as the OSError it is."""
    try:
        descriptor: int | None = stream.fileno()
    except (AttributeError, OSError, ValueError):  # no descriptor: a test's stream, or another layer's
        descriptor = None
    binary = getattr(stream, "buffer", None)
    if descriptor is None and binary is None:
        stream.write(text)
        return
    stream.flush()  # what the text layer holds goes first
    data = memoryview(_encoder(stream).encode(text))
    if descriptor is None:  # a binary layer alone: each write's count taken as it is given
        assert binary is not None
        done = 0
        while done < len(data):
            done += binary.write(data[done:]) or 0
        binary.flush()
        return
    report = _REPORTS[-1] if _REPORTS else _Report()
    failed: list[OSError] = []

    def write() -> None:
        written = 0
        while written < len(data):
            try:
                taken = os.write(descriptor, data[written:written + _WRITE_BYTES])
            except BlockingIOError:  # a descriptor another process made non-blocking: room comes later
                time.sleep(EXIT_POLL_S / 10)
                continue
            except OSError as error:
                failed.append(error)
                return
            written += taken
            report.written += taken

    writer = threading.Thread(target=write, name="inboxspec-report", daemon=True)
    writer.start()
    while True:
        writer.join(EXIT_POLL_S)
        if not writer.is_alive():
            break
        signalled = received_at()
        if signalled is None:
            continue
        # After a cut, a later write after the same signal (the line on stderr that says so, into the
        # same stalled pipe) has had its grace: it held the command a second more.
        if signalled in _CUT_AFTER or time.monotonic() - max(signalled, report.began) > KILL_GRACE_S:
            _CUT_AFTER[:] = [signalled]
            raise ReportCut(report.written)
    if failed:
        raise failed[0]


class _WrittenWhole(io.TextIOBase):
    """A text stream whose every write goes through ``write_whole``: standard error while a command
    runs (``stderr_written_whole``). Once a signal's grace has cut a write (``ReportCut``), what is
    left is dropped: no reader takes it, and the command is ending."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self._cut = False

    def write(self, text: str) -> int:
        if not self._cut:
            try:
                write_whole(self._stream, text)
            except OSError:  # ReportCut, or a stderr that takes nothing (/dev/full, a closed pipe)
                self._cut = True
        return len(text)

    def flush(self) -> None:
        # Not once the stream under it is closed: this object's finalizer flushes too, and on Python
        # 3.13 that finalizer ran after a test's captured stream was closed ("Exception ignored").
        if not self._cut and not self._stream.closed:
            self._stream.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()


def standard_streams_present() -> None:
    """Where the command was started with stdout or stderr closed (``>&-``, ``2>&-``), Python has no
    stream there: a closed stdout ended a command in an AttributeError traceback, and a closed stderr's
    lines went to stdout after a JSON report. Each missing one writes to /dev/null instead."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (the process's, for good)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115


def in_system_directory(path: Path) -> bool:
    """Whether ``path`` names something in ``/dev``, ``/proc`` or ``/sys``, its folder's links followed
    (``/dev/stdout``, ``/dev/fd/3``): a descriptor's name, which no report replaces."""
    return _is_system_directory(os.path.realpath(path.parent))


def _is_system_directory(resolved: str) -> bool:
    """Whether the resolved folder ``resolved`` is ``/dev``, ``/proc`` or ``/sys``, or lies in one."""
    return any(resolved == system or resolved.startswith(system + "/") for system in _SYSTEM_DIRECTORIES)


@contextlib.contextmanager
def stderr_written_whole() -> Iterator[None]:
    """Standard error, for the duration, written as a report is (``write_whole``): a line of the
    command's own (a warning, the word that a signal ended it) that its reader does not take waits
    for it, looking for a signal as a report does, and is dropped once the reader has not taken it
    within the grace after one (PROTO-SIG-1). Without it, ``conform ... 2>&1 | reader`` with a reader
    that stopped taking never ended on a signal: the report was cut after the grace, and the line
    saying so blocked on the same full pipe."""
    previous = sys.stderr
    if previous is None:  # started with stderr closed (``2>&-``): Python has no stream to write to
        yield
        return
    sys.stderr = cast("TextIO", _WrittenWhole(previous))
    try:
        yield
    finally:
        sys.stderr = previous


# The system's own directories, which no report replaces a file or a link in (``write_atomically``).
_SYSTEM_DIRECTORIES = ("/dev", "/proc", "/sys")


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one rename; no partial file is ever left.

    The temporary file lies in the destination's directory so that the rename
    stays on one filesystem. A symbolic link at the destination is replaced,
    not followed. A regular file there (or behind the link) gives the new file
    its permission bits, not its special ones (a private report stays private), and, run as root,
    a regular file there its owner and group; otherwise it gets an
    ordinary file's under the umask. Anything else there (a device such as ``/dev/null``, a
    FIFO, a socket, a directory) is refused, not replaced: run as root, a
    report named ``/dev/null`` would otherwise replace the system's; and nothing in ``/dev``,
    ``/proc`` or ``/sys`` is replaced at all (``/dev/stdout`` is a link, which a rename would replace
    with a file). Raises
    OSError when the directory cannot be written or the destination is refused.
    """
    if path.name in ("", ".", ".."):  # ``/``, ``.``: a temporary file was made there before the refusal
        raise OSError(errno.EISDIR, "names a directory, not a file", str(path))
    # Every step below is taken in the directory opened once, by its descriptor: a path checked by its
    # name and then written by its name again could have a link put in it between the two, and the
    # file went where the check refused it (/dev/shm) or replaced a FIFO there (found by an attack).
    directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _write_in(directory, path, data)
    finally:
        os.close(directory)


def _write_in(directory: int, path: Path, data: bytes) -> None:
    """``write_atomically``'s work, in the directory open as ``directory`` (``path``'s, for messages)."""
    try:  # where the descriptor's directory is now, whatever its name was when it was opened
        resolved = os.readlink(f"/proc/self/fd/{directory}")
    except OSError:  # no /proc: its name, as it was resolved a moment ago
        resolved = os.path.realpath(path.parent)
    if _is_system_directory(resolved):
        # Run as root, ``--junit /dev/stdout`` replaced the system's link with a file.
        raise OSError(errno.EPERM, "a report is not written into /dev, /proc or /sys", str(path))
    name = path.name
    try:
        existing: os.stat_result | None = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        existing = None
    if existing is not None and not (stat.S_ISREG(existing.st_mode) or stat.S_ISLNK(existing.st_mode)):
        raise OSError(errno.EEXIST, "not a regular file; a report replaces only a file or a link", str(path))
    try:
        behind = os.stat(name, dir_fd=directory)  # the file itself, or the one a link there names
    except OSError:
        behind = None
    if behind is not None and stat.S_ISREG(behind.st_mode):
        # Its permission bits alone: a set-user-ID bit kept on a file written as root would make it one
        # that runs as root.
        mode = stat.S_IMODE(behind.st_mode) & 0o777
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    # Not the destination's name with more around it: a legal name of 250 bytes made one past the
    # system's 255 (ENAMETOOLONG), and the report could not be written (found by an attack helper).
    temporary = f".inboxspec-{secrets.token_hex(6)}.tmp"
    created = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(temporary, created, 0o600, dir_fd=directory)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            # Made private (0600). The mode by its descriptor, not its name: whoever may write the
            # directory can put a link at the name while the data is written, and a change of mode by
            # name follows it (run as root, to any file).
            os.fchmod(stream.fileno(), mode)
            if existing is not None and stat.S_ISREG(existing.st_mode) and os.geteuid() == 0:
                # Run as root (a CI job), a user's file rewritten became root's, and its user could no
                # longer write it: the file replaced gives its owner and group too.
                os.fchown(stream.fileno(), existing.st_uid, existing.st_gid)
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=directory)
        raise
