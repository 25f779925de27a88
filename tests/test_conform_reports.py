"""The reports of `inboxspec conform`: readable first differences, the JUnit file, atomic writes.

The JUnit file is read back with junitparser, an independent reader, and
its counts are checked against the JSON report of the same run, per machine.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import tty
import unicodedata
from pathlib import Path
from typing import Any

import junitparser
import pytest
from hypothesis import given
from hypothesis import strategies as st

from inboxspec.conformance import junit, reportfile
from inboxspec.conformance.adapter import handle
from inboxspec.conformance.adapter_process import AdapterFault
from inboxspec.conformance.casefiles import Case, load_cases
from inboxspec.conformance.compare import (
    CONTEXT_BEFORE,
    KEPT_VALUE_CHARS,
    Cut,
    canonical,
    display_width,
    escape_for_display,
    find_difference,
    first_difference,
    indented_block,
    one_line,
    printable_json,
    string_difference,
)
from inboxspec.conformance.interrupts import RunInterrupted
from inboxspec.conformance.process_tree import KILL_GRACE_S
from inboxspec.conformance.reportfile import (
    PRINTED_CHUNK_CHARS,
    ReportCut,
    print_json,
    write_atomically,
    write_whole,
    writing_report,
)
from inboxspec.conformance.runner import QUOTED_CHARS, _judge
from tests.in_process import run_command
from tests.report_schema import checked_report
from tests.spies import signalled_while_writing

ROOT = Path(__file__).resolve().parent.parent
ADAPTERS = Path(__file__).parent / "adapters"
MIXED = f"{sys.executable} {ADAPTERS / 'mixed_adapter.py'}"
NODE_PORT = ROOT / "conformance" / "ports" / "node"


def case_with(*expects: Any, config_error: str | None = None) -> Case:
    steps = tuple({"event": f"event{i}", "args": {"n": i}, "expect": e} for i, e in enumerate(expects))
    return Case("toy", "toy/probe", "A probe", ("TOY-1",), (), {}, steps, config_error, "probe.json")


def conform(*args: str) -> subprocess.CompletedProcess[str]:
    """``inboxspec conform ARGS`` in this process (tests/in_process.py says why)."""
    return run_command("conform", *args)


def caret_target(rendered: str, side: str = "actual") -> str:
    """The character of the ``side`` window line that the caret line points at."""
    lines = rendered.splitlines()
    caret = next(i for i, line in enumerate(lines) if line.strip() == "^")
    window = lines[caret - 1] if side == "actual" else lines[caret - 2]
    assert window.split()[0] == side and window.split()[1].startswith('"'), window
    return window[lines[caret].index("^")]


# -- first differences -------------------------------------------------------------------------

def test_a_differing_text_gets_the_index_and_a_caret_under_the_first_differing_character() -> None:
    expected = "The gate announces the queue of three messages to the agent once."
    actual = expected.replace("three", "thrfe")
    difference = find_difference(case_with({"notice": expected}), {"outputs": [{"notice": actual}]})
    assert difference is not None and difference.string is not None
    assert (difference.step, difference.path) == (0, "outputs[0].notice")
    assert difference.string.index == expected.index("three") + 3
    window = difference.string.expected_window
    assert window.startswith("…") and window[difference.string.caret_column] == "e"
    assert difference.string.actual_window[difference.string.caret_column] == "f"
    assert caret_target(difference.render()) == "f"
    assert caret_target(difference.render(), "expected") == "e"


@pytest.mark.parametrize(
    ("prefix", "columns"),
    [
        ("a\tb\nc", len("a\\tb\\nc")),  # control characters are escaped, two columns each
        ("日本語", 6),  # wide characters take two columns
        ("a\u200bb", len("a\\u200bb")),  # a zero-width space would shift the caret left
        ("e\u0301", len("e\\u0301")),  # a combining mark takes no column of its own
        ("back\\slash", len("back\\\\slash")),
    ],
)
def test_the_caret_column_counts_what_the_escaped_prefix_occupies(prefix: str, columns: int) -> None:
    found = string_difference(prefix + "X tail", prefix + "Y tail")
    assert found.index == len(prefix)
    assert found.caret_column == columns == display_width(escape_for_display(prefix))
    assert found.expected_window[len(escape_for_display(prefix))] == "X"


def test_a_long_prefix_is_cut_to_the_window_and_the_caret_still_lines_up() -> None:
    expected = "x" * 500 + "A" + "y" * 500
    found = string_difference(expected, "x" * 500 + "B" + "y" * 500)
    assert found.index == 500
    assert found.caret_column == 1 + CONTEXT_BEFORE  # the ellipsis, then the context
    assert found.actual_window[found.caret_column] == "B" and len(found.actual_window) < 60


def test_a_shorter_text_differs_where_it_ends() -> None:
    found = string_difference("abcdef", "abc")
    assert (found.index, found.expected_window[found.caret_column]) == (3, "d")


@pytest.mark.parametrize(
    ("expected", "actual", "path"),
    [
        ({"a": {"b": [1, 2, {"c": "x"}]}}, {"a": {"b": [1, 2, {"c": "y"}]}}, "outputs[1].a.b[2].c"),
        ({"a": 1, "z": 2}, {"a": 1}, "outputs[1].z"),  # a key the port leaves out
        ({"a": 1}, {"a": 1, "extra": 0}, "outputs[1].extra"),  # a key the port adds
        ({"odd key": True}, {"odd key": 1}, 'outputs[1]["odd key"]'),  # true is not 1 in JSON
        ({"list": [1, 2]}, {"list": [1, 2, 3]}, "outputs[1].list[2]"),
        # A key an adapter ends with a newline is quoted: the path stays on its report line.
        ({"a": 1}, {"a": 1, "a\n": 0}, 'outputs[1]["a\\n"]'),
    ],
)
def test_an_object_difference_names_its_json_path(expected: Any, actual: Any, path: str) -> None:
    difference = find_difference(case_with({}, expected), {"outputs": [{}, actual]})
    assert difference is not None and (difference.step, difference.path) == (1, path)
    assert f"at {path}:" in difference.render()
    body = difference.as_json()
    assert (body["step"], body["event"], body["path"]) == (1, "event1", path)


def test_a_missing_value_is_marked_missing_in_the_json() -> None:
    difference = find_difference(case_with({"a": 1, "z": 2}), {"outputs": [{"a": 1}]})
    assert difference is not None
    assert difference.as_json() == {"step": 0, "event": "event0", "path": "outputs[0].z",
                                    "expected": 2, "actual_missing": True}


def test_too_few_outputs_name_the_first_missing_step() -> None:
    text = first_difference(case_with({"a": 1}, {"b": 2}), {"outputs": [{"a": 1}]})
    assert text is not None and text.startswith("expected 2 outputs, got 1")
    difference = find_difference(case_with({"a": 1}, {"b": 2}), {"outputs": [{"a": 1}]})
    assert difference is not None and (difference.step, difference.path) == (1, "outputs[1]")


def test_a_wrong_config_error_is_a_string_difference_at_config_error() -> None:
    difference = find_difference(case_with(config_error="invalid_cap"), {"config_error": "invalid_cep"})
    assert difference is not None and difference.path == "config_error"
    assert difference.string is not None and difference.string.index == len("invalid_c")


def test_a_matching_result_has_no_difference() -> None:
    assert find_difference(case_with({"a": [1, "x"]}), {"outputs": [{"a": [1, "x"]}]}) is None


# -- atomic writes -----------------------------------------------------------------------------

def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    destination = tmp_path / "report.xml"
    destination.write_text("old")

    def refuse(source: str, target: str, **_directories: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_atomically(destination, b"new")
    assert destination.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.xml"]


def test_a_symlink_at_the_destination_is_replaced_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not yours")
    link = tmp_path / "report.xml"
    link.symlink_to(elsewhere)
    write_atomically(link, b"<testsuites/>")
    assert elsewhere.read_text() == "not yours"
    assert not link.is_symlink() and link.read_bytes() == b"<testsuites/>"


@pytest.mark.parametrize("kind", ["fifo", "device", "directory", "socket"])
def test_a_destination_that_is_no_file_or_link_is_refused_not_replaced(kind: str, tmp_path: Path) -> None:
    """Run as root, ``--junit /dev/null`` replaced the system's /dev/null with a report."""
    import socket
    import stat

    destination = tmp_path / "report.xml"
    if kind == "fifo":
        os.mkfifo(destination)
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root (CI has it)")
        os.mknod(destination, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a /dev/null of its own
    elif kind == "directory":
        destination.mkdir()
    else:
        with socket.socket(socket.AF_UNIX) as listener:
            listener.bind(str(destination))
    before = os.lstat(destination)
    with pytest.raises(OSError, match=r"not a regular file"):
        write_atomically(destination, b"<testsuites/>")
    after = os.lstat(destination)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.xml"]


@pytest.mark.parametrize("destination", ["/dev/stdout", "/proc/self/fd/1", "/dev/shm/../stdout"])
def test_nothing_in_the_systems_directories_is_replaced(destination: str) -> None:
    """Run as root, ``--junit /dev/stdout`` replaced the system's link to the standard output with a
    file (a link at the destination is replaced, not written through)."""
    link = Path("/dev/stdout")
    before = os.lstat(link) if link.is_symlink() else None
    with pytest.raises(OSError, match=r"a report is not written into /dev, /proc or /sys"):
        write_atomically(Path(destination), b"<testsuites/>")
    if before is not None:
        assert link.is_symlink() and os.lstat(link).st_ino == before.st_ino


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444])
def test_a_replaced_report_keeps_its_permission_bits(mode: int, tmp_path: Path) -> None:
    destination = tmp_path / "report.xml"
    destination.write_text("old")
    destination.chmod(mode)
    write_atomically(destination, b"new")
    assert destination.read_bytes() == b"new" and destination.stat().st_mode & 0o7777 == mode
    fresh = tmp_path / "new.xml"
    write_atomically(fresh, b"x")
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o7777 == 0o666 & ~umask


def test_a_link_put_at_the_temporary_file_gets_no_mode_and_special_bits_are_not_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by an attack on the commands that write files: the mode was set by the temporary file's
    name after it was written, so whoever may write the directory could put a link there meanwhile,
    and a run as root gave the mode to any file (a 0600 file became 04777: the set-user-ID bit of the
    file replaced was kept too). The mode is the descriptor's, and only the permission bits."""
    victim = tmp_path / "victim"
    victim.write_text("secret")
    victim.chmod(0o600)
    destination = tmp_path / "x.json"
    destination.write_text("old")
    destination.chmod(0o4777)  # an attacker's own file may carry any bits
    real_fsync = os.fsync

    def swapped_meanwhile(descriptor: int) -> None:  # the directory's owner, while the data is written
        real_fsync(descriptor)
        (temporary,) = tmp_path.glob(".inboxspec-*.tmp")
        temporary.unlink()
        temporary.symlink_to(victim)

    monkeypatch.setattr(os, "fsync", swapped_meanwhile)
    write_atomically(destination, b"new")
    assert victim.stat().st_mode & 0o7777 == 0o600 and victim.read_text() == "secret"
    monkeypatch.setattr(os, "fsync", real_fsync)
    plain = tmp_path / "plain.json"
    plain.write_text("old")
    plain.chmod(0o4755)
    write_atomically(plain, b"new")
    assert plain.stat().st_mode & 0o7777 == 0o755 and plain.read_bytes() == b"new"


# -- the JUnit file against the JSON report ----------------------------------------------------

def by_machine(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {m: [] for m in report["machines"]}
    for result in report["results"]:
        grouped[result["machine"]].append(result)
    return grouped


@pytest.mark.slow
def test_junit_counts_equal_the_json_reports_per_machine(tmp_path: Path) -> None:
    skip_file = tmp_path / "known.txt"
    # One known failure that still fails (expected-fail), one that passes (unexpected-pass).
    skip_file.write_text("wake-gate/announce-on-fresh-gate\nwake-gate/defaults\n")
    junit_path = tmp_path / "junit.xml"
    process = conform(
        "--adapter", f"{MIXED} fail=wake-gate/announce* fail=peer-delivery/*drop* "
                     "error=idle-subscriptions/held-* skip=inbox-refresh/*close*",
        "--skip-file", str(skip_file), "--without-feature", "option:reject_empty_batch",
        "--json", "--junit", str(junit_path))
    assert process.returncode == 1, process.stderr
    report = checked_report(json.loads(process.stdout))
    document = junitparser.JUnitXml.fromfile(str(junit_path))
    suites = {suite.name: suite for suite in document}
    grouped = by_machine(report)
    assert set(suites) == set(report["machines"])
    for machine, counts in report["machines"].items():
        suite = suites[machine]
        cases = list(suite)
        kinds = [type(result) for case in cases for result in case.result]
        wanted = (counts["executed"] + counts["skipped"], counts["failed"], counts["errored"],
                  counts["skipped"] + counts["expected_failures"])
        assert (suite.tests, suite.failures, suite.errors, suite.skipped) == wanted, machine
        assert (len(cases), kinds.count(junitparser.Failure), kinds.count(junitparser.Error),
                kinds.count(junitparser.Skipped)) == wanted, machine
        assert [(c.classname, c.name) for c in cases] == [(machine, r["id"]) for r in grouped[machine]]
        assert suite.time == pytest.approx(sum(c.time for c in cases), abs=1e-5 * (len(cases) + 1))
    totals = report["totals"]
    assert totals["fail"] and totals["error"] and totals["skip"]
    assert {r["fault"] for r in report["results"] if r["outcome"] == "error"} == {"errored"}  # its own
    assert totals["expected-fail"] == totals["unexpected-pass"] == 1
    assert (document.tests, document.failures, document.errors, document.skipped) == (
        len(report["results"]), totals["fail"] + totals["unexpected-pass"], totals["error"],
        totals["skip"] + totals["expected-fail"])


@pytest.mark.slow
def test_junit_failures_name_the_first_difference_and_cases_carry_their_properties(
        tmp_path: Path) -> None:
    junit_path = tmp_path / "junit.xml"
    process = conform("--adapter", f"{MIXED} fail=wake-gate/announce-on-fresh-gate "
                                   "error=wake-gate/defaults skip=wake-gate/*streak*",
                      "--machine", "wake-gate", "--json", "--junit", str(junit_path))
    assert process.returncode == 1, process.stderr
    results = {r["id"]: r for r in json.loads(process.stdout)["results"]}
    (suite,) = junitparser.JUnitXml.fromfile(str(junit_path))
    cases = {case.name: case for case in suite}

    failed = results["wake-gate/announce-on-fresh-gate"]
    (failure,) = cases[failed["id"]].result
    first = failed["first_difference"]
    assert isinstance(failure, junitparser.Failure)
    assert failure.message.startswith(f"step {first['step']} ({first['event']}) at {first['path']}")
    shown = json.dumps(first["expected"], sort_keys=True) if "expected" in first else "(missing)"
    assert f"expected {shown}" in failure.message
    assert failure.text == failed["detail"]

    (error,) = cases["wake-gate/defaults"].result
    assert isinstance(error, junitparser.Error) and "simulated \\x07 fault" not in error.message
    assert error.message.startswith("adapter errored: simulated") and error.type == "errored"
    skipped = [c for c in suite if c.result and isinstance(c.result[0], junitparser.Skipped)]
    assert skipped and all(c.result[0].message == "adapter skipped: not implemented here" for c in skipped)

    from inboxspec.conformance.casefiles import bundled_cases_dir, load_cases

    for case in load_cases([bundled_cases_dir() / "wake-gate"]):
        found = cases[case.id].child(junitparser.Properties)  # type: ignore[no-untyped-call]  # untyped
        properties = [(p.name, p.value) for p in found]
        assert properties == ([("requirement", r) for r in case.requirements]
                              + [("feature", f) for f in case.features]), case.id
        if results[case.id]["outcome"] != "skip":
            assert cases[case.id].time == pytest.approx(results[case.id]["seconds"], abs=1e-6)
            assert cases[case.id].time > 0


@pytest.mark.slow
def test_an_adapter_that_cannot_start_writes_its_reason_as_an_error(tmp_path: Path) -> None:
    junit_path = tmp_path / "junit.xml"
    junit_path.write_text("a stale report from yesterday")
    process = conform("--adapter", str(tmp_path / "no-such-adapter"), "--junit", str(junit_path))
    assert process.returncode == 2
    document = junitparser.JUnitXml.fromfile(str(junit_path))
    ((suite_name, case),) = [(suite.name, case) for suite in document for case in suite]
    (error,) = case.result
    assert suite_name == junit.RUN_SUITE and isinstance(error, junitparser.Error)
    assert "did not start" in error.message and document.errors == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junit.xml"]


@pytest.mark.slow
def test_a_run_that_executed_nothing_writes_why_it_proves_nothing(tmp_path: Path) -> None:
    junit_path = tmp_path / "junit.xml"
    process = conform("--adapter", MIXED, "--run", "no-such-case-*", "--require", "wake-gate",
                      "--junit", str(junit_path))
    assert process.returncode == 2
    document = junitparser.JUnitXml.fromfile(str(junit_path))
    suites = {suite.name: list(suite) for suite in document}
    assert suites["wake-gate"] == []
    messages = [case.result[0].message for case in suites[junit.RUN_SUITE]]
    assert any("no case was executed" in m for m in messages)
    assert any("--require wake-gate" in m for m in messages)


@pytest.mark.slow
def test_an_unwritable_junit_path_is_exit_2_with_a_reason_and_no_litter(tmp_path: Path) -> None:
    directory = tmp_path / "a-directory"
    directory.mkdir()
    process = conform("--adapter", MIXED, "--machine", "wake-gate", "--run", "wake-gate/defaults",
                      "--junit", str(directory))
    assert process.returncode == 2
    assert f"cannot write --junit {str(directory)!r}" in process.stderr and "Traceback" not in process.stderr
    # The report is still printed, and its verdict is the exit code's: it said "conform: ok", and
    # under --json "ok": true, while the run ended with 2 (docs/ci.md promised "ok": false).
    assert process.stdout.splitlines()[-1].startswith("conform: UNUSABLE (the results so far) in ")
    assert list(directory.iterdir()) == [] and sorted(tmp_path.iterdir()) == [directory]
    process = conform("--adapter", MIXED, "--machine", "wake-gate", "--run", "wake-gate/defaults",
                      "--junit", str(directory), "--json")
    report = json.loads(process.stdout)
    assert process.returncode == 2 and report["ok"] is False and len(report["results"]) == 1
    assert report["unusable"].startswith(f"cannot write --junit {str(directory)!r}: ")


@pytest.mark.slow
def test_a_junit_path_s_control_characters_reach_no_terminal(tmp_path: Path) -> None:
    """The path of a JUnit file that could not be written was printed as it was: an escape sequence
    in it reached the terminal. It is quoted as Python writes a string."""
    path = tmp_path / "missing" / "\x1b]0;owned\x07.xml"
    process = conform("--adapter", MIXED, "--machine", "wake-gate", "--run", "wake-gate/defaults",
                      "--junit", str(path))
    assert process.returncode == 2 and "\x1b" not in process.stderr + process.stdout
    assert "\\x1b]0;owned\\x07.xml" in process.stderr


@pytest.mark.slow
def test_hostile_texts_in_an_adapters_reply_still_make_a_readable_junit_file(tmp_path: Path) -> None:
    junit_path = tmp_path / "junit.xml"
    faulty = f"{sys.executable} {ADAPTERS / 'faulty_adapter.py'} surrogate-detail announce-on-fresh-gate"
    process = conform("--adapter", faulty, "--machine", "wake-gate", "--junit", str(junit_path))
    assert process.returncode == 1
    document = junitparser.JUnitXml.fromfile(str(junit_path))
    (error,) = [result for suite in document for case in suite for result in case.result]
    assert "\\udc80" in error.message


# Any text, lone surrogates, C0 and C1 controls, separators and astral private use included.
ANY_TEXT = st.text(st.characters(blacklist_categories=()), max_size=20)


def _safe_on_a_terminal(text: str) -> bool:
    """No control, format, surrogate, private-use or unassigned character, and no line or
    paragraph separator: nothing that breaks a line or commands a terminal."""
    return not any(unicodedata.category(c)[0] == "C" or unicodedata.category(c) in ("Zl", "Zp") for c in text)


@given(st.recursive(ANY_TEXT | st.integers(), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(ANY_TEXT, inner, max_size=3), max_leaves=8))
def test_printable_json_is_the_same_value_and_prints_as_itself(value: Any) -> None:
    text = printable_json(value)
    assert json.loads(text) == value
    assert _safe_on_a_terminal(text.replace("\n", ""))
    plain = json.dumps(value, indent=2, ensure_ascii=False)
    assert text == plain or not _safe_on_a_terminal(plain.replace("\n", ""))


@given(ANY_TEXT)
def test_an_indented_block_keeps_every_line_below_its_indent(text: str) -> None:
    lines = indented_block(text, "  ").split("\n")
    assert len(lines) == text.count("\n") + 1
    assert all(line.startswith("  ") and _safe_on_a_terminal(line) for line in lines)


@given(ANY_TEXT)
def test_one_line_escapes_what_commands_a_terminal_and_keeps_a_safe_text_as_it_is(text: str) -> None:
    shown = one_line(text)
    assert _safe_on_a_terminal(shown)
    assert (shown == text) == _safe_on_a_terminal(text)


def test_one_line_keeps_a_backslash_as_it_is() -> None:
    # The decision PROTO-VAL-4 states: a backslash is not doubled, so a repr's escapes read as they
    # were written, and a text that spells an escape prints as the escaped character does.
    assert one_line(r"not 'a\nb'") == r"not 'a\nb'"
    assert one_line("\n") == one_line(r"\x0a") == r"\x0a"


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["terminal-escapes", "crash-escapes"])
def test_what_an_adapter_says_reaches_the_text_report_escaped(fault: str) -> None:
    """PROTO-VAL-4: an adapter's name, an error's message and its stderr reach the text report
    through one_line, every line of them indented: no terminal command, no line of the report's own
    forged. The JSON report keeps the texts as they were sent."""
    faulty = f"{sys.executable} {ADAPTERS / 'faulty_adapter.py'} {fault} announce-on-fresh-gate"
    arguments = ("--adapter", faulty, "--machine", "wake-gate", "--run", "wake-gate/a*")
    process = conform(*arguments)
    assert process.returncode == 1 and "Traceback" not in process.stderr
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in process.stdout
    assert "\\x1b]0;owned\\x07" in process.stdout and "\\u202e" in process.stdout
    lines = process.stdout.splitlines()
    assert [line for line in lines if line.startswith("conform:")] == [lines[-1]]
    assert lines[-1].startswith("conform: FAILED")
    assert lines[0].startswith("implementation: ") and "\\x1b" in lines[0]
    (errored,) = [line for line in lines if line.startswith("ERROR ")]
    detail = lines[lines.index(errored) + 2:lines.index(errored) + 6]
    assert all(line.startswith("  ") for line in detail), detail
    report = checked_report(json.loads(conform(*arguments, "--json").stdout))
    assert report["implementation"]["name"].startswith("\x1b]0;owned")
    (result,) = [r for r in report["results"] if r["outcome"] == "error"]
    assert "\x1b[2J" in result["detail"]


# -- a wrong notice in a copy of the Node port -------------------------------------------------

PHRASE = "dropped by the recipient's ingress guard"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_a_wrong_character_in_a_node_notice_template_gets_the_caret(tmp_path: Path) -> None:
    port = tmp_path / "port"
    shutil.copytree(NODE_PORT, port)
    holders = [p for p in port.rglob("*") if p.suffix in (".mjs", ".js") and PHRASE in p.read_text()]
    assert len(holders) == 1, holders
    source = holders[0].read_text()
    assert source.count(PHRASE) == 1
    holders[0].write_text(source.replace(PHRASE, PHRASE.replace("ingress", "ingrass")))
    adapter = f"node {port / 'adapter.mjs'}"

    process = conform("--adapter", adapter, "--machine", "peer-delivery", "--json")
    assert process.returncode == 1, process.stderr
    failures = [r for r in json.loads(process.stdout)["results"] if r["outcome"] == "fail"]
    assert failures
    for result in failures:
        first = result["first_difference"]
        expected, actual = first["expected"], first["actual"]
        assert isinstance(expected, str) and PHRASE in expected, first
        assert first["index"] == expected.index(PHRASE) + PHRASE.index("ingress") + len("ingr")
        assert (expected[first["index"]], actual[first["index"]]) == ("e", "a")
        window = first["window"]
        assert (window["expected"][window["caret_column"]], window["actual"][window["caret_column"]]) == (
            "e", "a")

    text = conform("--adapter", adapter, "--machine", "peer-delivery", "--run", failures[0]["id"])
    assert text.returncode == 1
    block = text.stdout.split(f"FAIL {failures[0]['id']}")[1]
    assert f"at {failures[0]['first_difference']['path']}:" in block
    assert caret_target(block) == "a" and caret_target(block, "expected") == "e"


def test_junit_strips_what_xml_cannot_hold() -> None:
    cleaned = junit._clean("bell \x07 surrogate \udc80 fine \t\n é 日")
    assert cleaned == "bell \\u0007 surrogate \\udc80 fine \t\n é 日"
    # DEL and the C1 controls too, which XML discourages: U+009B, written as itself, is the 8-bit CSI
    # that a terminal showing the file runs (found by an attack helper). Their neighbours are kept.
    cleaned = junit._clean("~\x7f\x80\x85\x9b[31m\x9f\xa0¡")
    assert cleaned == "~\\u007f\\u0080\\u0085\\u009b[31m\\u009f\xa0¡"


def test_a_failing_result_keeps_a_long_value_cut_and_its_string_window_whole() -> None:
    """PROTO-REPORT-1: the adapter writes the actual side, and a result kept it whole: 800 failing
    cases of 4 MiB each held 9.7 GB, and printed it all into --json. The window of a string's first
    difference is worked out before the cut, so it still points past the kept head."""
    expected = "a" * 3_000
    actual = expected + "b" * (1 << 20)
    difference = find_difference(case_with({"notice": expected, "n": 1}),
                                 {"outputs": [{"notice": actual, "n": 1}]})
    assert difference is not None
    body = difference.as_json()
    cut = {"characters": len(actual) + 2, "head": '"' + "a" * (KEPT_VALUE_CHARS - 1)}  # its JSON's quotes
    assert body["actual_cut"] == cut and "actual" not in body
    assert body["expected_cut"] == {**cut, "characters": len(expected) + 2} and "expected" not in body
    assert body["index"] == 3_000 and body["window"]["actual"].endswith("a" * 24 + "b" * 24 + "…")
    # The whole step's outputs, shown beside it in the text report, are kept cut too.
    assert isinstance(difference.step_actual, Cut) and len(difference.step_actual.head) == KEPT_VALUE_CHARS
    rendered = difference.render()
    assert f"({len(canonical({'n': 1, 'notice': actual})) - 400} more characters)" in rendered
    assert f"({len(actual) + 2 - 200} more characters)" in difference.message()
    assert len(rendered) < 4 * KEPT_VALUE_CHARS
    # A short value is kept whole, as it was.
    short = find_difference(case_with({"n": 1}), {"outputs": [{"n": 2}]})
    assert short is not None and short.as_json()["actual"] == 2


def test_the_schemas_cut_value_is_the_one_kept() -> None:
    cut_value = json.loads((ROOT / "conformance" / "schemas" / "conform-report.schema.json")
                           .read_text(encoding="utf-8"))["$defs"]["cut_value"]["properties"]
    assert cut_value["head"]["maxLength"] == cut_value["head"]["minLength"] == KEPT_VALUE_CHARS
    assert cut_value["characters"]["minimum"] == KEPT_VALUE_CHARS + 1


@pytest.mark.parametrize("value", [
    {"results": [{"detail": "x" * 5_000, "n": n} for n in range(400)]},  # many pieces
    ["y" * (2 * PRINTED_CHUNK_CHARS + 5)],  # one piece longer than a chunk
    [],
], ids=["many-pieces", "one-long-piece", "empty"])
def test_a_json_report_is_printed_as_json_dumps_prints_it(value: Any, tmp_path: Path) -> None:
    stream = io.StringIO()
    print_json(value, stream)
    assert stream.getvalue() == json.dumps(value, indent=2) + "\n"
    with (tmp_path / "report").open("w", encoding="utf-8") as file:  # by its descriptor
        print_json(value, file)
    assert (tmp_path / "report").read_text(encoding="utf-8") == json.dumps(value, indent=2) + "\n"


def test_a_report_reaches_its_descriptor_whole_when_writes_take_part_of_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PROTO-REPORT-1: over an unbuffered descriptor (PYTHONUNBUFFERED) the text layer drops what a write
    leaves unwritten, without an error: a write cut short by a signal, a full pipe or 2 GiB in one call
    lost the rest of the report. Here every write takes at most 1,000 bytes."""
    class ShortWrites:  # the os module as reportfile sees it, each write taking at most 1,000 bytes
        def __getattr__(self, name: str) -> Any:
            return getattr(os, name)

        @staticmethod
        def write(fd: int, data: Any) -> int:
            return os.write(fd, bytes(data[:1_000]))

    monkeypatch.setattr(reportfile, "os", ShortWrites())
    value = {"results": ["z" * 30_000, "é" * 10_000]}
    with (tmp_path / "report").open("w", encoding="utf-8") as file:
        print_json(value, file)
    assert (tmp_path / "report").read_text(encoding="utf-8") == json.dumps(value, indent=2) + "\n"


def _pipe() -> tuple[int, int]:
    return os.pipe()


def _terminal() -> tuple[int, int]:
    """A pseudo-terminal: its first descriptor the reader's end (the master), its second the writer's."""
    master, follower = os.openpty()
    tty.setraw(follower)  # no line discipline answering for the reader
    return master, follower


@pytest.mark.timeout(30)
@pytest.mark.parametrize("opened", [_pipe, _terminal], ids=["pipe", "terminal"])
def test_a_reader_that_stops_reading_cuts_the_report_a_grace_after_a_signal(
        opened: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """PROTO-REPORT-2: a signal lets the report finish, but a reader that takes nothing more held the
    runner in its write for good, the signal recorded and never acted on (on a terminal, the kernel
    held the write itself, and Python retried it after each signal). The grace runs across the
    report's writes, from the signal."""
    reading, writing = opened()
    try:
        with open(writing, "w", encoding="ascii", closefd=False) as stream:
            began = time.monotonic()  # the signal comes half a second into the report
            monkeypatch.setattr(reportfile, "received_at", lambda: began + 0.5
                                if time.monotonic() > began + 0.5 else None)
            with pytest.raises(ReportCut) as cut, writing_report():
                for _ in range(4):  # the report's writes, each a part of it
                    write_whole(stream, "r" * (1 << 18))
            waited = time.monotonic() - began
        assert 0.5 + KILL_GRACE_S <= waited < 0.5 + KILL_GRACE_S + 2
        # What the descriptor took, counted a write of the writer at a time: the pipe took one (its 64 KiB),
        # the terminal's buffer part of one.
        assert cut.value.written == (1 << 16 if opened is _pipe else 0)
        assert str(cut.value).endswith(f"the report is cut after {cut.value.written:,} bytes: its reader "
                                       "took no more within 1 s of the signal")
    finally:
        os.close(reading)
        os.close(writing)


@pytest.mark.timeout(30)
def test_a_slow_reader_is_cut_a_grace_after_a_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader that takes the report slowly but steadily was never cut: the signal was looked for only
    when the reader took nothing for a while, and the grace began again with each part."""
    reading, writing = os.pipe()
    stop = threading.Event()

    def slowly() -> None:
        while not stop.is_set():
            os.read(reading, 4096)
            time.sleep(0.02)

    reader = threading.Thread(target=slowly, daemon=True)
    reader.start()
    try:
        with open(writing, "w", encoding="ascii", closefd=False) as stream:
            began = time.monotonic()
            monkeypatch.setattr(reportfile, "received_at", lambda: began)  # a signal as the report began
            with pytest.raises(ReportCut), writing_report():
                for _ in range(16):
                    write_whole(stream, "s" * (1 << 18))  # 4 MiB in all: some 20 s at this pace
            assert time.monotonic() - began < KILL_GRACE_S + 2
    finally:
        stop.set()
        os.close(writing)
        reader.join(5)
        os.close(reading)


def test_a_signal_while_a_commands_json_report_is_printed_leaves_no_second_report(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A command whose signals raise where they land (``cases lint``, ``explore``, ...) is cut short by
    one that comes while it prints its JSON report; it then printed a second JSON document, the
    unusable report, after the part printed, and stdout held no JSON a reader could take."""
    signalled_while_writing(monkeypatch, signal.SIGTERM, 100)
    done = run_command("cases", "lint", "--json")
    assert done.returncode == 128 + signal.SIGTERM
    assert len(done.stdout) == 100 and '"unusable"' not in done.stdout
    assert done.stderr == "inboxspec: ended by SIGTERM while its report was written: the report is cut\n"


def _announce_case() -> Case:
    (case, *_) = load_cases([ROOT / "conformance" / "cases" / "wake-gate" / "announce.json"])
    return case


def _reference_reply(case: Case) -> dict[str, Any]:
    reply = handle({"cmd": "run", "seq": 1, "case": {
        "id": case.id, "machine": case.machine, "config": case.config, "steps": case.inputs}})
    assert reply is not None
    return reply


def test_a_key_the_adapter_wrote_is_kept_cut_in_the_path() -> None:
    """PROTO-REPORT-1: the values were cut, and the path to them, which names the adapter's keys, was
    kept whole: 68 failing cases with a key of 1 MB made 108 MB of JSON and as much text again."""
    case = _announce_case()
    result = _reference_reply(case)["result"]
    key = "!" + "A" * 1_000_000  # sorts before every key the case expects
    result["outputs"][0][key] = 1
    difference = find_difference(case, result)
    assert difference is not None
    body = difference.as_json()
    path = f"outputs[0][{json.dumps(key)}]"
    assert "path" not in body
    assert body["path_cut"] == {"characters": len(path), "head": path[:KEPT_VALUE_CHARS]}
    assert len(json.dumps(body)) < 4 * KEPT_VALUE_CHARS
    assert len(difference.render()) < 4 * KEPT_VALUE_CHARS and len(difference.message()) < KEPT_VALUE_CHARS
    assert f"({len(path) - 400} more characters):" in difference.render()
    fresh = _reference_reply(case)["result"]
    fresh["outputs"][0]["x"] = 1
    short = find_difference(case, fresh)
    assert short is not None and short.as_json()["path"] == "outputs[0].x"  # a short path whole, as ever


@pytest.mark.parametrize("reply_change", [
    {"skipped": {"reason": "R" * 1_000_000}},
    {"errored": {"message": "M" * 1_000_000, "context": {"c": "C" * 1_000_000}}},
], ids=["skip-reason", "errored-message-and-context"])
def test_an_adapters_text_in_a_results_detail_is_quoted_cut(reply_change: dict[str, Any]) -> None:
    """PROTO-REPORT-1: a skip's reason was kept whole (21 skips of 4 MB made an 84 MB report of a run
    that passed)."""
    case = _announce_case()
    reply = {"seq": 1, "id": case.id, **reply_change}
    detail = _judge(case, 1, reply).detail
    assert len(detail) < 3 * QUOTED_CHARS
    assert f"… ({1_000_000 - QUOTED_CHARS} more characters)" in detail


@pytest.mark.parametrize("field", ["id", "seq"])
def test_a_wrong_id_or_seq_is_quoted_cut(field: str) -> None:
    case = _announce_case()
    reply = {**_reference_reply(case), field: "W" * 1_000_000}
    with pytest.raises(AdapterFault) as fault:
        _judge(case, 1, reply)
    assert len(fault.value.detail) < 2 * QUOTED_CHARS
    assert "more characters)" in fault.value.detail


class _ShortWrites(io.RawIOBase):
    """A raw stream that takes at most 64 KiB a call, with no descriptor: the binary layer alone."""

    def __init__(self) -> None:
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        taken = bytes(b[: 1 << 16])
        self.data += taken
        return len(taken)


def test_a_report_reaches_a_binary_layer_whole_when_writes_take_part_of_it() -> None:
    raw = _ShortWrites()
    stream = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)  # type: ignore[type-var]
    value = {"results": ["x" * 1000] * 300}
    print_json(value, stream)
    assert raw.data.decode() == json.dumps(value, indent=2) + "\n"


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_a_report_in_an_encoding_with_a_byte_order_mark_has_one(encoding: str, tmp_path: Path) -> None:
    """Each part of a report was encoded by itself, and an encoding that begins with a mark (as
    PYTHONIOENCODING may choose) put one before every part: a report past a part no longer parsed."""
    value = ["z" * 1000] * 3000  # three parts (PRINTED_CHUNK_CHARS)
    with (tmp_path / "report").open("w", encoding=encoding) as stream:
        print_json(value, stream)
    data = (tmp_path / "report").read_bytes()
    assert json.loads(data.decode(encoding)) == value  # a second mark is a U+FEFF, which JSON refuses


def test_a_signal_before_a_reports_first_part_cuts_nothing() -> None:
    """A signal that raises while the report's first part is still encoded leaves stdout empty: the
    command then writes its report of an interrupted run, which it wrote none of (a pipeline reading
    --json always has one)."""

    class Interrupting(dict[str, int]):
        def items(self) -> Any:
            raise RunInterrupted("SIGTERM")

    stream = io.StringIO()
    with pytest.raises(RunInterrupted) as stop:
        print_json(Interrupting(a=1), stream)
    assert stream.getvalue() == "" and stop.value.report_cut is False


@pytest.mark.timeout(30)
def test_a_report_reaches_a_non_blocking_descriptor_whole() -> None:
    """A reader may make the pipe's shared file description non-blocking: a write with no room then
    fails at once (EAGAIN) instead of waiting, and the report is to wait for room, not end."""
    reading, writing = os.pipe()
    os.set_blocking(writing, False)
    taken: list[bytes] = []

    def slowly() -> None:
        while sum(map(len, taken)) < 1_000_000:
            time.sleep(0.01)
            taken.append(os.read(reading, 200_000))

    reader = threading.Thread(target=slowly)
    reader.start()
    try:
        with open(writing, "w", encoding="ascii", closefd=False) as stream:
            write_whole(stream, "n" * 1_000_000)
        reader.join(10)
        assert b"".join(taken) == b"n" * 1_000_000
    finally:
        os.close(reading)
        os.close(writing)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file another owner needs root")
def test_a_file_replaced_as_root_keeps_its_owner_and_group(tmp_path: Path) -> None:
    """Found by an attack on the commands: `cases expect` run as root (a CI job) gave a user's case file
    to root, and its user could no longer write it."""
    destination = tmp_path / "x.json"
    destination.write_text("old")
    os.chown(destination, 4242, 4343)
    write_atomically(destination, b"new")
    info = destination.stat()
    assert (info.st_uid, info.st_gid) == (4242, 4343) and destination.read_bytes() == b"new"


def test_a_link_put_in_the_path_after_it_was_opened_does_not_move_the_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by the attack on the fixes: the destination's folder was checked by its name and then written
    by its name again, so a link put in the path between the two sent the file where the check refused
    it (/dev/shm) or over a FIFO there. The folder is opened once, and every step is taken in it."""
    folder, elsewhere = tmp_path / "reports", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    real_stat, real_lstat = os.stat, os.lstat

    def swap_once(name: Any) -> None:
        if str(name).endswith("report.xml") and not (tmp_path / "moved").exists():  # the first look at it
            folder.rename(tmp_path / "moved")
            folder.symlink_to(elsewhere)

    def stat_swapping(name: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        swap_once(name)
        return real_stat(name, *args, **kwargs)

    def lstat_swapping(name: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        swap_once(name)
        return real_lstat(name, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat_swapping)
    monkeypatch.setattr(os, "lstat", lstat_swapping)
    write_atomically(folder / "report.xml", b"new")
    monkeypatch.undo()
    assert list(elsewhere.iterdir()) == [] and (tmp_path / "moved" / "report.xml").read_bytes() == b"new"


def test_a_report_s_name_of_any_legal_length_is_written_and_a_directory_is_no_name(tmp_path: Path) -> None:
    """A file name of 250 bytes (the system takes 255) could not be written: the temporary file's name
    was the destination's with 18 more bytes. ``/``, ``.`` and ``..`` name no file: a temporary file
    was made in that directory before the rename failed."""
    long_name = tmp_path / ("n" * 250)
    write_atomically(long_name, b"report")
    assert long_name.read_bytes() == b"report" and sorted(tmp_path.iterdir()) == [long_name]
    for named in (Path("/"), Path("."), tmp_path / ".."):
        with pytest.raises(OSError, match="names a directory, not a file"):
            write_atomically(named, b"report")


@pytest.mark.slow
def test_a_junit_file_that_is_the_json_report_or_a_skip_file_is_refused(tmp_path: Path) -> None:
    """``conform --json > r.json --junit r.json``: the JUnit file replaced the JSON report at the end,
    which was lost, exit 0, without a word; a skip file named as --junit was replaced by XML too. Both
    are an unusable run before any case runs, the files left as they were."""
    report = tmp_path / "r.json"
    with report.open("w") as stdout:
        done = subprocess.run([sys.executable, "-m", "inboxspec", "conform", "--adapter", MIXED, "--json",
                               "--machine", "wake-gate", "--junit", str(report)],
                              stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    unusable = json.loads(report.read_text())["unusable"]
    assert unusable == (f"--junit {str(report)!r} is the file standard output goes to: the JUnit report "
                        "would replace it")
    skip = tmp_path / "skip.txt"
    skip.write_text("wake-gate/defaults\n")
    done = subprocess.run([sys.executable, "-m", "inboxspec", "conform", "--adapter", MIXED, "--machine",
                           "wake-gate", "--skip-file", str(skip), "--junit", str(skip)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and f"is the skip file {str(skip)!r}" in done.stderr
    assert skip.read_text() == "wake-gate/defaults\n"


def test_standard_error_written_whole_is_not_flushed_once_the_stream_under_it_is_closed() -> None:
    """The wrapper ``stderr_written_whole`` puts on standard error is flushed by its finalizer too: on
    Python 3.13 that ran after a test's captured stream was closed, and printed "Exception ignored"
    (ValueError: I/O operation on closed file)."""
    written = io.BytesIO()
    stream = io.TextIOWrapper(written, encoding="utf-8")
    wrapper = reportfile._WrittenWhole(stream)
    wrapper.write("a line\n")
    assert written.getvalue() == b"a line\n"
    stream.close()
    wrapper.flush()  # nothing to flush into, and no error
    wrapper.close()
