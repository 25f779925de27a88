"""Report files (``--junit``, the matrix's ``--markdown`` and ``--json``), replaced in one step.

A CI job reads a report the moment the run ends, and may read the previous
run's when this one is killed: it must never see half a file. The data goes
to a temporary file in the destination's own directory (so the rename stays
on one filesystem), which is then renamed over the destination. A rename
replaces a symbolic link at the destination rather than writing through it,
so a link planted there cannot redirect the write elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` in one rename; no partial file is ever left.

    The temporary file lies in the destination's directory so that the rename
    stays on one filesystem. A symbolic link at the destination is replaced,
    not followed. The file gets the permission bits ``mode`` (those of the file
    it replaces, say), or an ordinary file's under the umask. Raises OSError
    when the directory cannot be written or the destination is a directory.
    """
    directory = path.parent
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        # mkstemp creates the file private (0600); a report is an ordinary file.
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
