"""Where ``inboxspec check`` makes its temporary directories: in memory, unless the user chose.

The check makes its temporary directories with ``tempfile``: the fixture directories that the
writer proofs' cases are laid out in (``machines/fixtures.py``; it lays out 170 of them, about
3,000 files and directories, to replay the cases, and more to refine), and the private
directories of its workers (``checker/forked.py``). On a disk filesystem each of those creations
is a journaled metadata write: on this project's ext4 machines a ``mkdir`` took 0.2 to 0.7 ms and
a file's creation about 0.6 ms, against 4 and 9 µs on tmpfs, and laying out the check's fixtures
took 2.2 s of system time, which the check's explorations wait for on two cores.

So when the user has not chosen (none of ``TMPDIR``, ``TEMP`` and ``TMP``, the variables
``tempfile`` reads, and no ``tempfile.tempdir`` set by a program that embeds inboxspec), the check
makes them in ``/dev/shm``, if all of these hold:

- it is the mount point of a memory filesystem (tmpfs) mounted read-write: the last mount on it in
  ``/proc/self/mountinfo``, whose device is the directory's own;
- it is a directory (not a link), which this process may make directories in;
- no other user can move what is made there: it belongs to this user or to root, and is writable
  by no one else, or sticky as ``/tmp`` is;
- it has a gibibyte free (a container's default ``/dev/shm`` is 64 MiB, and what it holds is held
  in memory; a memory limit of the container's own is not seen here).

Otherwise nothing changes. The directories are made and removed exactly as before: private
(mode 0700), and gone when the check ends. Only ``check`` does this: ``conform`` hands its fixture
directories to an adapter, which may expect them on the filesystem of its own ``TMPDIR`` (to move
a file in, say, or inside a container that shares ``/tmp``), so they stay where ``tempfile`` puts them.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from typing import Final

MEMORY_DIRECTORY: Final = "/dev/shm"
MIN_FREE_BYTES: Final = 1 << 30
# The variables ``tempfile.gettempdir`` reads, in its order: any of them set is the user's choice.
CHOSEN_BY: Final = ("TMPDIR", "TEMP", "TMP")


def memory_directory(directory: str = MEMORY_DIRECTORY,
                     mountinfo: str = "/proc/self/mountinfo") -> str | None:
    """``directory`` when it is a memory filesystem that this process may keep private directories in
    (the module says when); None otherwise, or when the table of mounts cannot be read."""
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as table:
            lines = table.read().splitlines()
    except OSError:
        return None
    # Each line: "id parent major:minor root point options [optional fields...] - type source super".
    # A point with a space or a backslash is written escaped (\040), so it never equals ``directory``.
    mounted = [fields for fields in (line.split() for line in lines)
               if len(fields) >= 7 and fields[4] == directory and "-" in fields[6:]]
    if not mounted:
        return None
    fields = mounted[-1]  # the mount a path reaches is the last one on it
    filesystem = fields[fields.index("-", 6) + 1:]
    if not filesystem or filesystem[0] != "tmpfs" or "ro" in fields[5].split(","):
        return None
    try:
        status = os.lstat(directory)
    except OSError:
        return None
    if f"{os.major(status.st_dev)}:{os.minor(status.st_dev)}" != fields[2]:
        return None  # another mount (over a parent, say) hides the one the table names
    if not stat.S_ISDIR(status.st_mode) or not os.access(directory, os.W_OK | os.X_OK):
        return None
    if status.st_uid not in (0, os.geteuid()):
        return None  # its owner may move what is in it, sticky or not
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not status.st_mode & stat.S_ISVTX:
        return None  # others could rename our directories away and put a link in their place
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


@contextlib.contextmanager
def temporary_directories_in_memory() -> Iterator[str | None]:
    """While it runs, ``tempfile`` makes its directories in :func:`memory_directory` when the user
    has chosen none; yields that directory, or None where ``tempfile`` chooses as ever. (It never
    asks ``tempfile.gettempdir()``, which raises where no directory is usable: the check reports
    that where it first makes one, as its other temporary-directory failures.)"""
    chosen = tempfile.tempdir is not None or any(os.environ.get(name) for name in CHOSEN_BY)
    memory = None if chosen else memory_directory()
    if memory is None:
        yield None
        return
    tempfile.tempdir = memory
    try:
        yield memory
    finally:
        tempfile.tempdir = None
