"""The signals that end a command, and the clean-ups they must not cut.

A command ends on SIGINT, SIGTERM or SIGHUP (``conformance/interrupts.py``, PROTO-SIG-1), and where it
ends its work in place (``inboxspec check``, ``explore``) the signal raises where it lands. The
reference's own clean-ups (a fixture directory's lay-out and removal, ``machines/fixtures.py``; the
in-process fixtures' removal at the process's end, ``machines/writer_proofs_driver.py``) hold those
signals off here, below the runner: a signal raised inside them left the directories behind.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

# WARNING: spec/conformance-protocol.md (PROTO-SIG-1) gives these signals and their exit codes
# (128 + the signal's number); change both together.
INTERRUPTING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A clean-up that no interrupting signal cuts: one that comes meanwhile is recorded, and sent again
    once the block is done, to whatever handles it then (``conformance/interrupts.py``'s
    ``raising_on_signals`` raises there). A signal raised where it landed cut the removal of a fixture
    directory in half and left it behind (found by an attack on the commands). Off the main thread,
    where no handler runs, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, _frame: came.append(signum))
                for signum in INTERRUPTING_SIGNALS if signal.getsignal(signum) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for signum, kept in previous.items():
            signal.signal(signum, kept)
        if came:
            signal.raise_signal(came[0])


@contextlib.contextmanager
def ignored() -> Iterator[None]:
    """The interrupting signals ignored for the duration: for the clean-up of a process that is ending
    (its exit already decided), which a second signal cut with a traceback or ended by the signal's
    default action, exit -15 and not 143, with thousands of files left. Off the main thread, nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in INTERRUPTING_SIGNALS}
    try:
        yield
    finally:
        for signum, kept in previous.items():
            signal.signal(signum, kept)
