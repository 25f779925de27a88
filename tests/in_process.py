"""The command line run in the test process: ``cli.main`` with its output captured.

A start of ``inboxspec`` costs about 0.25 processor seconds of imports, and the runner's tests run
the command some eighty times (tests/test_conform_runner.py took 101 processor seconds in
subprocesses, 69 in process, measured one after the other). What only a process of its own shows
(the module's entry point, signals, the exit as the interpreter ends, the environment the run is
given) is shown by the tests that still start one, tests/test_conform_process.py among them. A run
that hangs fails its test at the test's time limit: ``pytest.mark.timeout`` where the runs must end
soon, pytest's own elsewhere (pyproject.toml).
"""

from __future__ import annotations

import contextlib
import io
import subprocess

from inboxspec.cli import main


def run_command(*argv: str) -> subprocess.CompletedProcess[str]:
    """``inboxspec ARGV`` as the command runs it: its exit code and what it wrote to standard
    output and to standard error, shaped as ``subprocess.run`` gives them."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(list(argv))
    return subprocess.CompletedProcess(["inboxspec", *argv], code, stdout.getvalue(), stderr.getvalue())
