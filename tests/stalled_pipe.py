"""A pipe whose reader has stopped taking: the smallest a pipe can be (Linux's ``F_SETPIPE_SZ``) and
full, so that a process given its writing end as stdout and stderr (``2>&1``) blocks at its first
write, as under a pager left on its first page."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator

import pytest

needs_pipe_sizes = pytest.mark.skipif(not hasattr(fcntl, "F_SETPIPE_SZ"), reason="needs Linux's pipe sizes")


@contextlib.contextmanager
def stalled_pipe() -> Iterator[int]:
    """The writing end of a full pipe whose reading end stays open, unread, until the block ends. A
    process started with it keeps its own copy: the caller's is closed at the block's end."""
    reading, writing = os.pipe()
    try:
        fcntl.fcntl(writing, fcntl.F_SETPIPE_SZ, 4096)
        os.set_blocking(writing, False)
        with contextlib.suppress(BlockingIOError):
            while True:
                os.write(writing, b"x" * 4096)
        os.set_blocking(writing, True)
        yield writing
    finally:
        os.close(writing)
        os.close(reading)
