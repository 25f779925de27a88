"""Report files (``--junit``, the matrix's ``--markdown`` and ``--json``), replaced in one step.

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
import os
import stat
import tempfile
from pathlib import Path


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
