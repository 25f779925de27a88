"""A report that cannot be written (a full disk, a reader that went away) is exit 2 with one line on
stderr: it was a traceback and exit 1, which a pipeline reads as a failed check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

COMMANDS = {
    "explore": ["explore", "wake-gate", "--json"],
    "conform": ["conform", "--adapter", f"{sys.executable} -m inboxspec.conformance.adapter",
                "--machine", "wake-gate", "--run", "wake-gate/defaults", "--json"],
}
# What each says: conform writes its report by the descriptor itself (PROTO-REPORT-1), the others through
# the text layer, whose failure the command line reports at its end.
SAYS = {"explore": "inboxspec: ", "conform": "inboxspec conform: the report could not be written: "}
# The report written through a buffered stdout, and an unbuffered one (PYTHONUNBUFFERED): the text layer
# over an unbuffered descriptor drops what a write leaves unwritten, and a failed write went unsaid.
BUFFERING = {"buffered": "", "unbuffered": "1"}


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full, where every write fails")
@pytest.mark.parametrize("buffering", BUFFERING)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_report_to_a_full_disk_is_a_message_and_exit_2(command: str, buffering: str) -> None:
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "inboxspec", *COMMANDS[command]], stdout=full,
                                stderr=subprocess.PIPE, text=True, timeout=120,
                                env={**os.environ, "PYTHONUNBUFFERED": BUFFERING[buffering]})
    assert result.returncode == 2, result.stderr
    assert result.stderr.endswith(f"{SAYS[command]}[Errno 28] No space left on device\n")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("buffering", BUFFERING)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_report_to_a_reader_that_went_away_is_a_message_and_exit_2(command: str, buffering: str) -> None:
    process = subprocess.Popen([sys.executable, "-m", "inboxspec", *COMMANDS[command]],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": BUFFERING[buffering]})
    assert process.stdout is not None
    process.stdout.close()  # before it writes a byte: its first write meets a pipe with no reader
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 2, stderr
    assert f"{SAYS[command]}[Errno 32] Broken pipe" in stderr and "Traceback" not in stderr
