"""The session's own leak check (tests/session_hygiene.py) fails a session that leaks, and only then;
its signal check fails a test that leaves a signal handler changed, and puts the handler back.

Each test runs a small pytest session of its own in a subprocess, with the
plugin and nothing else of this suite, under xdist and without it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.session_hygiene import SESSION_VARIABLE

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

LEAKY = """
import subprocess, sys, tempfile
from pathlib import Path

def test_leaks():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                             start_new_session=True)
    open({pid_file!r}, "w").write(str(child.pid))
    print(tempfile.mkdtemp(prefix="inboxspec-fixture-"), file=open({dir_file!r}, "w"))
"""

CLEAN = """
import subprocess, sys, tempfile, shutil

def test_cleans_up():
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    shutil.rmtree(tempfile.mkdtemp(prefix="inboxspec-fixture-"))
"""


KEEPS_A_HANDLER = """
import signal

def test_keeps_a_handler():
    signal.signal(signal.SIGTERM, lambda signum, frame: None)

def test_puts_its_handler_back():
    previous = signal.signal(signal.SIGHUP, lambda signum, frame: None)
    signal.signal(signal.SIGHUP, previous)

def test_sees_the_handler_put_back():
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
"""


def _session(tmp_path: Path, source: str, workers: str) -> subprocess.CompletedProcess[str]:
    test_file = tmp_path / "test_probe.py"
    test_file.write_text(source)
    # A session of its own: not this session's token or worker identity.
    env = {k: v for k, v in os.environ.items()
           if k != SESSION_VARIABLE and not k.startswith("PYTEST_XDIST")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.session_hygiene", "-c", os.devnull,
         "--rootdir", str(tmp_path), "-q", "-n", workers, "-p", "no:cacheprovider", str(test_file)],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state != b"Z"


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_session_that_leaks_fails_and_names_the_leak(workers: str, tmp_path: Path) -> None:
    pid_file, dir_file = tmp_path / "pid", tmp_path / "dir"
    session = _session(tmp_path, LEAKY.format(pid_file=str(pid_file), dir_file=str(dir_file)), workers)
    output = session.stdout + session.stderr
    assert session.returncode == 1, output
    assert "1 passed" in output  # the test itself passed: the check failed the session
    pid = int(pid_file.read_text())
    leaked_dir = Path(dir_file.read_text().strip())
    assert f"process {pid} still runs" in output, output
    assert f"fixture directory left behind: {leaked_dir}" in output, output
    # The check cleans up what it found: the process is ended, the session's TMPDIR removed.
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
    assert not leaked_dir.parent.exists()


def test_a_session_that_cleans_up_passes(tmp_path: Path) -> None:
    session = _session(tmp_path, CLEAN, "2")
    assert session.returncode == 0, session.stdout + session.stderr
    assert "SESSION LEAK" not in session.stdout


def test_a_test_that_keeps_a_signal_handler_fails_and_the_handler_is_put_back(tmp_path: Path) -> None:
    session = _session(tmp_path, KEEPS_A_HANDLER, "0")
    output = session.stdout + session.stderr
    assert session.returncode == 1, output
    assert "3 passed, 1 error" in output, output  # the test passed; its teardown failed
    assert "ERROR at teardown of test_keeps_a_handler" in output, output
    assert "the test left the handler of SIGTERM changed (now put back)" in output, output
