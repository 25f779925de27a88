"""Progress of `inboxspec conform`: shown on a terminal for a run past two seconds, never when piped."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from inboxspec.conformance.progress import ERASE_LINE, SHOW_AFTER_S, Progress

SLOW = f"{sys.executable} {Path(__file__).parent / 'adapters' / 'mixed_adapter.py'} delay=0.04"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_nothing_is_drawn_before_two_seconds_then_counts_per_machine_and_the_time() -> None:
    stream, clock = Terminal(), Clock()
    progress = Progress({"wake-gate": 3, "peer-delivery": 2}, stream=stream, clock=clock)
    progress.finished("wake-gate", 1)
    clock.now += SHOW_AFTER_S - 0.1
    progress.finished("wake-gate", 2)
    assert stream.getvalue() == ""
    clock.now += 0.6
    progress.finished("peer-delivery", 3)
    progress.finished("peer-delivery", 3)  # a case answered again counts once
    assert stream.getvalue().split(ERASE_LINE)[-1] == "2.5s  peer-delivery 1/2  wake-gate 2/3"
    progress.close()
    assert stream.getvalue().endswith(ERASE_LINE)  # the report starts on a clean line


def test_a_stream_that_is_not_a_terminal_gets_nothing_at_all() -> None:
    stream, clock = io.StringIO(), Clock()
    with Progress({"wake-gate": 1}, stream=stream, clock=clock) as progress:
        clock.now += 60
        progress.finished("wake-gate", 1)
        progress.set_phase("shrinking wake-gate/fuzz-0-1")
        assert progress._ticker is None
    assert stream.getvalue() == ""


def test_the_line_is_cut_to_the_terminal_width_so_it_never_wraps() -> None:
    stream, clock = Terminal(), Clock()
    progress = Progress({f"machine-number-{i}": 1000 for i in range(20)}, stream=stream, clock=clock)
    clock.now += 10
    progress.finished("machine-number-3", 1)
    drawn = stream.getvalue().split(ERASE_LINE)[-1]
    assert drawn.startswith("10.0s  machine-number-0 0/1000") and len(drawn) == 79  # 80 columns


def test_the_ticker_moves_the_time_on_while_no_case_finishes_and_stops_on_close() -> None:
    stream = Terminal()
    with Progress({"wake-gate": 1}, stream=stream, show_after=0.0, redraw_every=0.01):
        time.sleep(0.3)
    drawn = [line for line in stream.getvalue().split(ERASE_LINE) if line]
    assert len(set(drawn)) >= 2, drawn  # redrawn with a later time, with no case finished
    assert not [t for t in threading.enumerate() if t.name == "conform-progress"]
    assert stream.getvalue().endswith(ERASE_LINE)


def run_on_a_terminal(*args: str, command: str = "conform") -> tuple[int, str, str]:
    """`inboxspec conform` (or another ``command``) with stderr on a pseudo-terminal and stdout on a pipe."""
    leader, follower = os.openpty()
    process = subprocess.Popen([sys.executable, "-m", "inboxspec", command, *args],
                               stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    received: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the terminal's last writer has gone
                return
            if not chunk:
                return
            received.append(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        stdout, _ = process.communicate(timeout=180)
    finally:
        process.kill()
        reader.join(timeout=10)
        os.close(leader)
    return process.returncode, stdout.decode(), b"".join(received).decode(errors="replace")


@pytest.mark.slow
# The wake gate's own 100 cases, not its projected host/ ones: 4 s a run, twice the time it takes to show.
@pytest.mark.parametrize("mode", [("--machine", "wake-gate", "--run", "wake-gate/[!h]*"),
                                  ("--fuzz", "60", "--machine", "wake-gate")])
def test_a_long_run_on_a_terminal_shows_progress_and_a_piped_run_shows_none(mode: tuple[str, ...]) -> None:
    args = ("--adapter", SLOW, "--window", "1", *mode)
    code, stdout, terminal = run_on_a_terminal(*args, "--json")
    assert code == 0, terminal
    total = len(json.loads(stdout)["results"])
    assert total >= 50  # at 0.04 s a case, well past two seconds
    # Every line but the fuzz seed's announcement (PROTO-FUZZ-4) is a progress line.
    drawn = [line for line in terminal.split(ERASE_LINE)
             if line.strip() and not line.startswith("inboxspec conform: fuzz seed ")]
    assert drawn, terminal
    shape = re.compile(r"\d+\.\ds  wake-gate \d+/" + str(total) + r"(  shrinking .*)?")
    assert all(shape.fullmatch(line) for line in drawn), drawn
    assert float(drawn[0].split("s")[0]) >= SHOW_AFTER_S
    assert terminal.endswith(ERASE_LINE)
    assert "\r" not in stdout and "\x1b" not in stdout

    piped = subprocess.run([sys.executable, "-m", "inboxspec", "conform", *args],
                           capture_output=True, text=True, timeout=180)
    assert piped.returncode == 0
    # Piped, stderr holds no progress: at most the fuzz seed's one line.
    assert [line for line in piped.stderr.splitlines()
            if not line.startswith("inboxspec conform: fuzz seed ")] == []
    assert "\r" not in piped.stderr and "\x1b" not in piped.stderr
    assert "\r" not in piped.stdout and "\x1b" not in piped.stdout


@pytest.mark.slow
def test_a_short_run_on_a_terminal_shows_no_progress() -> None:
    code, _, terminal = run_on_a_terminal("--adapter", SLOW, "--machine", "wake-gate",
                                          "--run", "wake-gate/defaults")
    assert code == 0
    assert terminal == ""
