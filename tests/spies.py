"""A function replaced, for one test, by one that does what the real one does and a little more: records
each argument it is called with (how a test counts the work a change should save), or sends a signal
part way through (how a test brings a signal at one moment of a write)."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import pytest


def calls_of(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[Any]:
    """The arguments ``owner.name`` is called with from now until the test ends, in call order: each
    call's one argument, or the tuple of its arguments when it takes several."""
    real = getattr(owner, name)
    called: list[Any] = []

    def recorded(*arguments: Any) -> Any:
        called.append(arguments[0] if len(arguments) == 1 else arguments)
        return real(*arguments)

    monkeypatch.setattr(owner, name, recorded)
    return called


def signalled_while_writing(monkeypatch: pytest.MonkeyPatch, signum: int, after: int,
                            *owners: object) -> None:
    """``reportfile.write_whole``, in its module and in each of ``owners`` that imported it, replaced by
    one that, on its first call on standard output, writes the first ``after`` characters of its text,
    sends this process ``signum`` (as a signal from outside comes: a handler that raises raises there),
    then writes the rest. Other calls (every line on standard error is one: ``stderr_written_whole``)
    write as ever."""
    from inboxspec.conformance import reportfile

    real = reportfile.write_whole
    sent: list[int] = []

    def signalled(stream: Any, text: str) -> None:
        if sent or stream is not sys.stdout:
            real(stream, text)
            return
        sent.append(signum)
        real(stream, text[:after])
        # Sent with its default action, it would end the test's own process, not fail the test.
        assert signal.getsignal(signum) not in (signal.SIG_DFL, signal.SIG_IGN), \
            f"the report is written with {signal.Signals(signum).name}'s default action"
        os.kill(os.getpid(), signum)
        real(stream, text[after:])

    for owner in (reportfile, *owners):
        monkeypatch.setattr(owner, "write_whole", signalled)
