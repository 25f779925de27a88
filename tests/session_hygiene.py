"""The suite checks itself: no fixture directory and no adapter process outlives a pytest session.

A pytest plugin (``tests/conftest.py`` loads it). At the start of a session,
in the controller (or the only process, with ``-n 0``):

- ``TMPDIR`` is set to a fresh directory of its own, so every temporary
  directory of this session, and above all every fixture directory a runner
  it starts creates, lands there (pytest's own ``tmp_path`` directories stay
  where they were: ``PYTEST_DEBUG_TEMPROOT``);
- ``INBOXSPEC_TEST_SESSION`` is set to a fresh random token, inherited by
  every process the session starts: runners, adapters and their children.

xdist workers inherit both. At the end, in the controller and after the
workers are gone (``trylast``, after xdist's own ``pytest_sessionfinish``
has torn the workers down), any process still carrying the token and any
``inboxspec-*`` entry left in the session's ``TMPDIR`` fails the session:
the process is killed, the entry named, and the directory removed. Other
pytest sessions on the same machine have another token and another
directory, so they can neither trip this check nor be tripped by it.

Each test, too, leaves the process's signal handlers as it found them
(``signal_handlers_left_alone``, an autouse fixture): a handler a test
installs and keeps would be inherited by every process its worker forks
later, and a forked worker that unwinds through a SIGTERM handler instead of
ending can hang the search that TERMs it (``checker/forked.py``). A test that
changes one fails at its teardown, naming the signal, and the handler is put
back.

The token reaches what does not clear its environment; a leftover that
started with an empty one (``tests/adapters/leftover.py daemon``) is beyond
this check, and the tests that start one find it by its pid instead
(``tests/test_conform_process.py``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SESSION_VARIABLE = "INBOXSPEC_TEST_SESSION"
LEAK_PREFIX = "inboxspec-"
_session: dict[str, str] = {}


# The signals whose handlers a test may not leave changed: those the suite's code installs
# handlers for (SIGINT, SIGTERM, SIGHUP: conformance/interrupts.py; SIGALRM: a mutant's timeout)
# and those that change how child processes are reaped or written to.
WATCHED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM, signal.SIGCHLD,
                   signal.SIGPIPE)


@pytest.fixture(autouse=True)
def signal_handlers_left_alone() -> Iterator[None]:
    """Fail a test that leaves a signal handler of the process changed, and put the handler back."""
    before = {signum: signal.getsignal(signum) for signum in WATCHED_SIGNALS}
    yield
    changed = [signum for signum, handler in before.items() if signal.getsignal(signum) != handler]
    for signum in changed:
        handler = before[signum]
        if handler is not None:  # None: installed from C, which Python cannot put back
            signal.signal(signum, handler)
    names = ", ".join(signal.Signals(signum).name for signum in changed)
    assert not changed, f"the test left the handler of {names} changed (now put back)"


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    if _is_worker(config):
        return
    original = tempfile.gettempdir()
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", original)
    directory = tempfile.mkdtemp(prefix="pytest-session-", dir=original)
    token = secrets.token_hex(16)
    _session.update(tmpdir=directory, token=token)
    os.environ["TMPDIR"] = directory
    os.environ[SESSION_VARIABLE] = token
    tempfile.tempdir = None  # read TMPDIR again


def leftover_processes(token: str) -> list[int]:
    """Processes carrying this session's token, other than this one."""
    marker = f"{SESSION_VARIABLE}={token}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            environment = Path(f"/proc/{name}/environ").read_bytes()
            state = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in environment.split(b"\0") and state != b"Z":
            found.append(int(name))
    return found


def _kill(pids: list[int]) -> None:
    for signum in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signum)
        time.sleep(0.2)
    for pid in pids:  # a leaked child of this very process would stay a zombie otherwise
        with contextlib.suppress(OSError):
            os.waitpid(pid, os.WNOHANG)


def _release_in_process_fixtures() -> None:
    """Remove the fixtures this process keeps for its in-process runs, as it would at exit.

    The writer-proofs driver materialises a fixture once per process and removes
    it at exit (``atexit``). xdist workers have exited by the time of the check;
    with ``-n 0`` the process that holds them is this one.
    """
    driver = sys.modules.get("inboxspec.machines.writer_proofs_driver")
    if driver is not None:  # only a process that ran writer-proofs cases holds any
        driver.forget_fixtures()


def session_leaks(token: str, directory: str) -> list[str]:
    """What this session left behind, each as a line to print; cleaned up as it is found."""
    _release_in_process_fixtures()
    problems = []
    pids = leftover_processes(token)
    for pid in pids:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
                "utf-8", "replace").strip()
        except OSError:
            command = "?"
        problems.append(f"process {pid} still runs: {command[:200]}")
    _kill(pids)
    with contextlib.suppress(OSError):
        for entry in sorted(os.listdir(directory)):
            if entry.startswith(LEAK_PREFIX):
                problems.append(f"fixture directory left behind: {Path(directory) / entry}")
    shutil.rmtree(directory, ignore_errors=True)
    return problems


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _is_worker(session.config) or not _session:
        return
    problems = session_leaks(_session["token"], _session["tmpdir"])
    if not problems:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = ["", "SESSION LEAK: this session left these behind (now cleaned up):",
             *(f"  {problem}" for problem in problems)]
    for line in lines:
        if reporter is not None:
            reporter.write_line(line)
        else:
            print(line)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
