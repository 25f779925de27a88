"""SIGINT, SIGTERM and SIGHUP end a conformance run cleanly (PROTO-SIG-1).

A handler that raised wherever the signal landed could cut a fixture's
layout or an adapter's kill in half. These handlers only record the signal;
the runner raises :class:`RunInterrupted` at the points where it waits (each
turn of a wait for a reply, each case sent), at most ``EXIT_POLL_S`` after the
signal. The run then ends its adapter's tree, removes its fixture
directories and reports what it has, marked interrupted. A second signal
while that happens is ignored: the cleanup is bounded (the kill grace).

``inboxspec check`` has no such wait points (its work is in-process), and its
cleanup is ``finally`` blocks alone (the explorations' workers, fixture
directories), as for SIGINT's KeyboardInterrupt: under :func:`raising_on_signals`
the first of the same signals raises :class:`RunInterrupted` where it lands.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

# The signals that end a run (PROTO-SIG-1): defined where the reference's clean-ups hold them off too.
from inboxspec.machines.held_signals import INTERRUPTING_SIGNALS


class RunInterrupted(BaseException):
    """A signal asked the run to end. A BaseException, so that no ``except Exception`` eats it."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name
        # When the signal came: a handler that raises makes the exception as the signal lands.
        self.arrived_at = time.monotonic()
        # Raised while a report was printed on stdout (``reportfile.print_json``): a part of it is
        # there already, and no other report may follow it.
        self.report_cut = False

    @property
    def exit_code(self) -> int:
        return exit_code(self.signal_name)


def exit_code(signal_name: str) -> int:
    """128 plus the signal's number, as a shell reports a process the signal ended."""
    return 128 + int(signal.Signals[signal_name])


_received: list[str] = []
_received_at: list[float] = []  # when the first signal came (``time.monotonic()``)


def _record(signum: int, _frame: FrameType | None) -> None:
    if not _received:
        _received_at[:] = [time.monotonic()]
        _received.append(signal.Signals(signum).name)


def raise_if_interrupted() -> None:
    """Raise :class:`RunInterrupted` once a signal has arrived (once: cleanup is not interrupted)."""
    if len(_received) == 1:
        _received.append("raised")
        raise RunInterrupted(_received[0])


def received() -> str | None:
    """The name of the signal that interrupted the run, if one did."""
    return _received[0] if _received else None


def received_at() -> float | None:
    """When the signal that interrupted the run came (``time.monotonic()``), if one did; first asked,
    when it was recorded without its time."""
    if not _received:
        return None
    if not _received_at:
        _received_at.append(time.monotonic())
    return _received_at[0]


@contextlib.contextmanager
def ending_after(stop: RunInterrupted) -> Iterator[None]:
    """The writes inside are a command's last words after ``stop``'s signal (its unusable report, a
    line on stderr), which the handler that raised it did not record: recorded for the duration, as of
    when it came (``received_at``), so that a reader that takes none of it cuts it after the grace
    (``reportfile.write_whole``) instead of holding the command for good. As it was after."""
    kept = list(_received), list(_received_at)
    _received[:], _received_at[:] = [stop.signal_name], [stop.arrived_at]
    try:
        yield
    finally:
        _received[:], _received_at[:] = kept


def _clear() -> None:
    _received.clear()
    _received_at.clear()


@contextlib.contextmanager
def _handled_by(handler: Callable[[int, FrameType | None], None],
                clear: Callable[[], None] = lambda: None) -> Iterator[None]:
    """``handler`` for the interrupting signals for the duration, ``clear()`` run before and after;
    the previous handlers restored after. Signals go to the main thread only: in another thread
    nothing is installed, and the defaults stay.

    A signal that is ignored stays ignored (PROTO-SIG-1): the process was started so (``nohup`` ignores
    SIGHUP so that a command outlives its terminal; a shell starts a background job ignoring SIGINT),
    and a handler here ended the run that the one who started it asked to go on."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    clear()
    previous = {signum: signal.signal(signum, handler) for signum in INTERRUPTING_SIGNALS
                if signal.getsignal(signum) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for signum, kept in previous.items():
            signal.signal(signum, kept)
        clear()


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Record the interrupting signals for the duration; restore the previous handlers after."""
    with _handled_by(_record, _clear):
        yield


# How long after Python drops an interrupt it is raised again (``raising_on_signals``).
RESEND_AFTER_S = 0.01


@contextlib.contextmanager
def raising_on_signals() -> Iterator[None]:
    """The first interrupting signal raises :class:`RunInterrupted` where it lands; later ones are
    ignored while that unwinds, so that they cannot cut its ``finally`` blocks short. The previous
    handlers are restored after.

    Where it lands, Python may drop it: in a finalizer that the collector runs (python-statemachine's
    engines have one), an exception is printed as "Exception ignored" and lost, and the run went on
    to the end, said ``ok`` with exit 0 and ignored every later signal. So an interrupt that Python
    drops (``sys.unraisablehook`` sees it) is raised again ``RESEND_AFTER_S`` later, from SIGALRM (a
    timer, not a thread: a hook run by the collector may not take a lock), and a later signal raises
    at once meanwhile; one still lost when the block ends, or caught on its way, raises there.
    ``tests/test_check_command.py`` plants one in a finalizer."""
    arrived: list[int] = []  # the signal raised, while its RunInterrupted unwinds
    lost: list[int] = []  # a signal whose RunInterrupted Python dropped
    previous_hook = sys.unraisablehook

    def interrupt(signum: int, _frame: FrameType | None) -> None:
        if not arrived:
            arrived.append(signum)
            raise RunInterrupted(signal.Signals(signum).name)

    def resend(_signum: int, frame: FrameType | None) -> None:
        if lost:
            interrupt(lost[0], frame)

    def dropped(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, RunInterrupted) and arrived:
            lost.append(arrived.pop())
            signal.setitimer(signal.ITIMER_REAL, RESEND_AFTER_S)
            return
        previous_hook(unraisable)

    if threading.current_thread() is not threading.main_thread():
        yield  # no handler is installed off the main thread (``_handled_by``)
        return
    with _handled_by(interrupt):
        previous_alarm = signal.signal(signal.SIGALRM, resend)
        sys.unraisablehook = dropped
        try:
            yield
        finally:
            sys.unraisablehook = previous_hook
            signal.setitimer(signal.ITIMER_REAL, 0)
            if previous_alarm is not None:  # None: installed from C, which Python cannot put back
                signal.signal(signal.SIGALRM, previous_alarm)
        # Raised and caught on its way (an over-broad handler), or dropped and not raised again yet.
        if arrived or lost:
            raise RunInterrupted(signal.Signals((arrived or lost)[0]).name)

