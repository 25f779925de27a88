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


# A case file's name that is not UTF-8 and holds a newline and a terminal escape sequence.
HOSTILE_NAME = b"bad\xff\nFAKE \x1b[31m.json"
SHOWN_NAME = "bad\\udcff\\x0aFAKE \\x1b[31m.json"


CASE_READING_COMMANDS = [
    ["cases", "lint"],
    ["conform", "--adapter", f"{sys.executable} -m inboxspec.conformance.adapter", "--cases"],
    ["matrix", "--adapter", f"{sys.executable} -m inboxspec.conformance.adapter", "--cases"],
]


@pytest.mark.parametrize("command", CASE_READING_COMMANDS)
def test_a_case_files_hostile_name_is_one_escaped_line_of_the_report(command: list[str],
                                                                     tmp_path: Path) -> None:
    """The name's newline could forge a line of the report, its escape sequence command the terminal,
    and its undecodable byte (a lone surrogate in Python) made ``cases lint`` end with a traceback
    under a strict output encoding (UTF-8 with errors refused, as an en_US.UTF-8 locale gives)."""
    (tmp_path / HOSTILE_NAME.decode("utf-8", "surrogateescape")).write_text("{")
    result = subprocess.run([sys.executable, "-m", "inboxspec", *command, str(tmp_path)],
                            capture_output=True, timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    output = (result.stdout + result.stderr).decode("utf-8")
    assert result.returncode == (1 if command[0] == "cases" else 2), output
    assert "Traceback" not in output and "\x1b" not in output
    (line,) = [line for line in output.splitlines() if "bad" in line]
    assert f"{tmp_path}/{SHOWN_NAME}: not readable JSON" in line, output
    assert not any(line.startswith("FAKE") for line in output.splitlines())


@pytest.mark.parametrize("command", CASE_READING_COMMANDS)
def test_a_name_past_the_output_encoding_is_escaped_not_a_traceback(command: list[str],
                                                                    tmp_path: Path) -> None:
    """Where output is ASCII (a C locale, PYTHONIOENCODING=ascii), a case file named in another
    script made ``cases lint`` end with a UnicodeEncodeError traceback."""
    (tmp_path / "ケース.json").write_text("{")
    result = subprocess.run([sys.executable, "-m", "inboxspec", *command, str(tmp_path)],
                            capture_output=True, timeout=120, env={**os.environ, "PYTHONIOENCODING": "ascii"})
    output = (result.stdout + result.stderr).decode("ascii")
    assert result.returncode == (1 if command[0] == "cases" else 2), output
    assert "Traceback" not in output
    assert f"{tmp_path}/\\u30b1\\u30fc\\u30b9.json: not readable JSON" in output, output


# Commands whose arguments parse but name something that is not there: the command itself finds
# it cannot run. (A line that argparse rejects is reported by the command line for every command.)
UNUSABLE_AFTER_PARSING = {
    "check, an unknown machine": (["check", "--machine", "wakegate", "--json"], "unknown machine 'wakegate'"),
    "cases lint, a missing directory": (["cases", "lint", "/no/such/cases", "--json"],
                                        "/no/such/cases: no such case directory or file"),
    "explore, an unknown bound": (["explore", "wake-gate", "--bound", "nosuch=1", "--json"],
                                  "unknown wake-gate bound(s): nosuch"),
}


@pytest.mark.parametrize("case", UNUSABLE_AFTER_PARSING)
def test_under_json_a_command_that_cannot_run_still_writes_the_report(
        case: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``inboxspec --help`` promises a pipeline reading ``--json`` a report whatever went wrong:
    ``check`` and ``cases lint`` said theirs on stderr alone (found by a newcomer's review)."""
    from inboxspec.cli import main

    arguments, message = UNUSABLE_AFTER_PARSING[case]
    assert main(arguments) == 2
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["ok"] is False and message in report["unusable"] and report["problems"]
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("command", [["explore", "wake-gate"], ["cases", "lint"], ["check"]])
def test_an_argument_no_parser_takes_is_told_with_its_commands_usage(
        command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """A newcomer's review: argparse told an unknown option of a subcommand as the top-level
    command's (``inboxspec: unrecognized arguments``), with the top-level usage."""
    from inboxspec.cli import main

    assert main([*command, "--nonsense"]) == 2
    _, err = capsys.readouterr()
    name = "inboxspec " + " ".join(word for word in command if not word.startswith("wake"))
    assert err.startswith(f"usage: {name} ") and f"{name}: unrecognized arguments: --nonsense" in err


@pytest.mark.parametrize("closed", [">&-", "2>&-", "2>/dev/full"], ids=["stdout", "stderr", "stderr-full"])
def test_a_command_started_with_stdout_or_stderr_closed_still_exits_as_it_says(closed: str) -> None:
    """Started with stdout or stderr closed (`>&-`, `2>&-`, a cron job's way), Python has no stream there:
    a closed stdout ended a command in an AttributeError traceback, exit 1; the wrapper that writes
    stderr whole wrapped a missing stderr and did the same; and a closed stderr's lines went to stdout
    after the JSON report, which no reader could then parse. A stderr that takes nothing (/dev/full)
    made exit 1 of a 2 (found by the review and the attack on the fixes)."""
    script = f'exec "$@" {closed}'
    done = subprocess.run(["sh", "-c", script, "sh", sys.executable, "-m", "inboxspec", "conform", "--json",
                           "--adapter", "false", "--machine", "wake-gate"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    if closed != ">&-":
        assert json.loads(done.stdout)["ok"] is False  # one JSON document, and nothing after it
