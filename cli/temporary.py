"""Where an inboxspec command makes its temporary directories: in memory, unless the user chose.

Every command makes its temporary directories with ``tempfile``: the fixture directories that
the writer proofs' cases are laid out in (``machines/fixtures.py``; a check lays out 170 of them,
about 3,000 files and directories, and the conformance runner one per run), and the private
directories of the checker's workers (``checker/forked.py``). On a disk filesystem each of those
creations is a journaled metadata write: on this project's ext4 machines a ``mkdir`` took 0.2 to
0.7 ms and a file's creation about 0.6 ms, against 4 and 9 µs on tmpfs, and laying out the
check's fixtures took 2.2 s of system time, which the check's explorations wait for on two cores.

So when the user has not chosen (no ``TMPDIR``, ``TEMP`` or ``TMP``, the variables ``tempfile``
reads, and no ``tempfile.tempdir`` set by a program that embeds inboxspec), a command makes them
in ``/dev/shm``, if it is a memory filesystem (tmpfs) mounted writable that this process may make
directories in, one where no other user can move them (not writable by others, or sticky as
``/tmp`` is), and with a gibibyte free. Otherwise nothing changes. The directories are made and
removed exactly as before: private (mode 0700), and gone when the command ends.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from typing import Final

MEMORY_DIRECTORY: Final = "/dev/shm"
# The least free space it must have: a container's default /dev/shm (64 MiB) is left alone, since
# what the directories hold is in memory (a fixture may hold 8 MiB, and a test session builds wheels).
MIN_FREE_BYTES: Final = 1 << 30
# The variables ``tempfile.gettempdir`` reads, in its order: any of them set is the user's choice.
CHOSEN_BY: Final = ("TMPDIR", "TEMP", "TMP")


def memory_directory(directory: str = MEMORY_DIRECTORY, mounts: str = "/proc/self/mounts") -> str | None:
    """``directory`` when it is a writable tmpfs mount point that this process may make private
    directories in (see the module), with ``MIN_FREE_BYTES`` free; None otherwise, or when the table
    of ``mounts`` cannot be read."""
    try:
        with open(mounts, encoding="utf-8", errors="replace") as table:
            lines = table.read().splitlines()
    except OSError:
        return None
    # The last mount on a point is the one a path reaches: each line is "source point type options ...".
    mounted = [line.split() for line in lines if len(line.split()) >= 4 and line.split()[1] == directory]
    if not mounted or mounted[-1][2] != "tmpfs" or "ro" in mounted[-1][3].split(","):
        return None
    try:
        status = os.lstat(directory)
    except OSError:
        return None
    if not stat.S_ISDIR(status.st_mode) or not os.access(directory, os.W_OK | os.X_OK):
        return None
    if status.st_mode & stat.S_IWOTH and not status.st_mode & stat.S_ISVTX:
        return None  # another user could rename our directories away and put a link in their place
    if free_bytes(directory) < MIN_FREE_BYTES:
        return None
    return directory


def free_bytes(directory: str) -> int:
    """The bytes this process may still write in ``directory``'s filesystem (0 when unknown)."""
    try:
        usage = os.statvfs(directory)
    except OSError:
        return 0
    return usage.f_bavail * usage.f_frsize


def unchosen_memory_directory() -> str | None:
    """:func:`memory_directory`, when the user chose no place for temporary directories."""
    chosen = tempfile.tempdir is not None or any(os.environ.get(name) for name in CHOSEN_BY)
    return None if chosen else memory_directory()


@contextlib.contextmanager
def temporary_directories_in_memory() -> Iterator[str]:
    """While it runs, ``tempfile`` makes its directories in :func:`memory_directory` when the user
    has chosen none; yields the directory they are made in (``tempfile.gettempdir()``)."""
    memory = unchosen_memory_directory()
    if memory is None:
        yield tempfile.gettempdir()
        return
    tempfile.tempdir = memory
    try:
        yield memory
    finally:
        tempfile.tempdir = None
