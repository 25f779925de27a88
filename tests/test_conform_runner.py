"""The runner against faulty adapters: every fault has a defined outcome and nothing hangs.

Each test names the requirements of spec/conformance-protocol.md it shows.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import junitparser
import pytest
from hypothesis import given
from hypothesis import strategies as st

from inboxspec.cli import main
from inboxspec.conformance import casefiles
from inboxspec.conformance.casefiles import bundled_cases_dir, load_cases, shortest_reply_bytes
from inboxspec.conformance.runner import (
    MAX_GLOB_CHARS,
    MAX_SKIP_FILE_BYTES,
    MAX_SKIP_WILDCARD_ENTRIES,
    QUOTED_CHARS,
    glob_matcher,
    read_skip_file,
)
from inboxspec.conformance.version import VERSION
from inboxspec.machines import sessions
from tests.in_process import run_command
from tests.report_schema import checked_report
from tests.spies import calls_of

pytestmark = pytest.mark.slow

FAULTY = str(Path(__file__).parent / "adapters" / "faulty_adapter.py")
REFERENCE = f"{sys.executable} -m inboxspec.conformance.adapter"
TRIGGER_ID = "wake-gate/announce-on-fresh-gate"
# The faulty adapter's faults hit the trigger case, a wake-gate case: a fault's outcome, and the
# cases after it still running on the restarted adapter, show on the wake gate's cases alone. The
# whole bundled suite runs through each adapter in tests/test_conform_matrix.py (and through the
# packed Node port in tests/test_node_port_package.py). A --run of wake-gate cases takes it too: the
# same cases, without loading and validating every other machine's case files first (0.9 s).
WAKE_GATE = ("--machine", "wake-gate")


def conform(*args: str) -> tuple[int, dict[str, Any] | None, str]:
    """``inboxspec conform --json ARGS`` in this process (tests/in_process.py says why): its exit
    code, its report (checked against the report schema) and everything it printed."""
    run = run_command("conform", "--json", *args)
    return run.returncode, report_in(run.stdout), run.stdout + run.stderr


def report_in(stdout: str) -> dict[str, Any] | None:
    """The report ``conform --json`` printed, checked against the report schema; None if it printed none."""
    try:
        report: dict[str, Any] = checked_report(json.loads(stdout))
    except json.JSONDecodeError:
        return None
    return report


def conform_in_a_process(hash_seed: str, *args: str) -> dict[str, Any] | None:
    """The report of ``inboxspec conform --json ARGS`` run as a process of its own, under
    PYTHONHASHSEED ``hash_seed``."""
    process = subprocess.run([sys.executable, "-m", "inboxspec", "conform", "--json", *args],
                             capture_output=True, text=True, timeout=120,
                             env={**os.environ, "PYTHONHASHSEED": hash_seed})
    return report_in(process.stdout)


def faulty(fault: str, marker: Path | None = None) -> str:
    command = f"{sys.executable} {FAULTY} {fault} announce-on-fresh-gate"
    return command + (f" {marker}" if marker else "")


def outcome(report: dict[str, Any], case_id: str) -> dict[str, Any]:
    return next(r for r in report["results"] if r["id"] == case_id)


def test_reference_adapter_passes_a_machines_cases() -> None:
    """PROTO-FRAME-1, PROTO-START-1, PROTO-RUN-1, PROTO-RUN-2, PROTO-STOP-1. The reference's pass of
    every bundled case is the matrix test's (tests/test_conform_matrix.py), which runs them all."""
    code, report, output = conform("--adapter", REFERENCE, *WAKE_GATE)
    assert code == 0, output
    assert report is not None and report["totals"]["pass"] >= 42
    assert report["totals"]["fail"] == report["totals"]["error"] == 0


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        ("crash", "crashed"),
        ("not-json", "not-json"),
        ("partial-line", "not-json"),
        ("wrong-seq", "wrong-seq"),
        ("missing-seq", "bad-reply"),
        ("other-case", "wrong-case"),
        ("enormous-line", "oversized-line"),
    ],
)
def test_fault_errors_one_case_and_the_rest_still_run(fault: str, kind: str, tmp_path: Path) -> None:
    """PROTO-FRAME-3 (enormous line), PROTO-RUN-1 (seq and id echoed)."""
    code, report, output = conform("--adapter", faulty(fault, tmp_path / "once"), *WAKE_GATE,
                                   "--max-line-bytes", "1048576")
    assert code == 1, output
    assert report is not None
    bad = outcome(report, TRIGGER_ID)
    assert bad["outcome"] == "error" and bad["detail"].startswith(kind) and bad["fault"] == kind, bad
    assert report["totals"]["error"] == 1
    assert report["totals"]["pass"] == len(report["results"]) - 1
    assert report["restarts"] == 1


def test_crash_reports_adapter_stderr(tmp_path: Path) -> None:
    _, report, _ = conform("--adapter", faulty("crash", tmp_path / "once"), *WAKE_GATE)
    assert report is not None
    assert "adapter panic: simulated" in outcome(report, TRIGGER_ID)["detail"]


def test_a_failed_restart_ends_the_run_with_the_results_so_far(tmp_path: Path) -> None:
    """PROTO-RUN-6: an adapter that crashes on one case and then never starts again ends the run,
    exit 2, and both reports still hold every case answered before the crash, then the crashed
    one; the text report says the run is unusable and has its results so far."""
    adapter = faulty("no-restart", tmp_path / "once")
    junit = tmp_path / "junit.xml"
    code, report, output = conform("--adapter", adapter, *WAKE_GATE, "--junit", str(junit))
    assert code == 2 and report is not None, output
    assert report["ok"] is False and report["restarts"] == 1, report  # the one attempted
    assert report["unusable"].startswith(f"after {TRIGGER_ID} (crashed: ")
    assert "restart failed" in report["unusable"]
    assert report["problems"] == [report["unusable"]]
    results = report["results"]
    assert results[-1]["id"] == TRIGGER_ID and results[-1]["outcome"] == "error"
    assert results[-1]["detail"].startswith("crashed") and "adapter panic: simulated" in results[-1]["detail"]
    assert len(results) > 1 and {r["outcome"] for r in results[:-1]} == {"pass"}
    bundled = [c.id for c in load_cases([bundled_cases_dir()]) if c.machine == "wake-gate"]
    assert [r["id"] for r in results] == bundled[:len(results)] and len(results) < len(bundled)
    document = junitparser.JUnitXml.fromfile(str(junit))
    suites = {suite.name: suite for suite in document}
    assert suites["wake-gate"].tests == len(results) and suites["wake-gate"].errors == 1
    crashed = [r for case in suites["wake-gate"] for r in case.result if isinstance(r, junitparser.Error)]
    assert [error.type for error in crashed] == ["crashed"]  # the fault's kind, as the JSON's fault
    assert suites["inboxspec-conform"].errors == 1

    text = subprocess.run([sys.executable, "-m", "inboxspec", "conform", "--adapter",
                           faulty("no-restart", tmp_path / "again"), *WAKE_GATE],
                          capture_output=True, text=True, timeout=120)
    assert text.returncode == 2, text.stderr
    assert text.stdout.splitlines()[-1].startswith("conform: UNUSABLE (the results so far) in ")
    assert "restart failed" in text.stdout and "Traceback" not in text.stdout + text.stderr

    # A fuzz run too: the random case the adapter crashes on is the last reported.
    crashing = f"{sys.executable} {FAULTY} no-restart wake-gate/fuzz-7-5 {tmp_path / 'fuzzed'}"
    code, report, output = conform("--adapter", crashing, *WAKE_GATE, "--fuzz", "20", "--seed", "7")
    assert code == 2 and report is not None, output
    assert [r["id"] for r in report["results"]] == [f"wake-gate/fuzz-7-{n}" for n in range(1, 6)]
    assert report["results"][-1]["outcome"] == "error" and "restart failed" in report["unusable"]


def test_an_adapter_that_starts_again_as_another_ends_the_run(tmp_path: Path) -> None:
    """PROTO-RUN-6: a restarted adapter whose start reply lists other features than its first (it
    drops the option tags it listed, so that the option cases would now be skipped) is a restart
    that failed: the run ends with the results so far, the crashed case the last."""
    code, report, output = conform("--adapter", faulty("other-listing", tmp_path / "once"), *WAKE_GATE)
    assert code == 2 and report is not None, output
    assert "restart failed" in report["unusable"] and "lists another implementation" in report["unusable"]
    assert report["results"][-1]["id"] == TRIGGER_ID and report["results"][-1]["outcome"] == "error"
    assert report["implementation"]["name"] == "inboxspec-reference"  # the first start's


def test_hang_is_cut_by_the_per_case_timeout(tmp_path: Path) -> None:
    code, report, output = conform("--adapter", faulty("hang", tmp_path / "once"), *WAKE_GATE,
                                   "--timeout", "1.5")
    assert code == 1 and report is not None, output
    assert outcome(report, TRIGGER_ID)["detail"].startswith("timeout")
    assert report["totals"]["pass"] == len(report["results"]) - 1


def test_wrong_number_of_outputs_fails_the_case() -> None:
    code, report, _ = conform("--adapter", faulty("wrong-outputs"), *WAKE_GATE, "--run", TRIGGER_ID)
    assert code == 1 and report is not None
    result = outcome(report, TRIGGER_ID)
    assert result["outcome"] == "fail" and "expected 2 outputs, got 1" in result["detail"]


def test_lying_adapter_fails_with_a_readable_diff() -> None:
    process = subprocess.run(
        [sys.executable, "-m", "inboxspec", "conform", "--adapter", faulty("lie"),
         *WAKE_GATE, "--run", TRIGGER_ID], capture_output=True, text=True, timeout=60,
    )
    assert process.returncode == 1
    assert "FAIL wake-gate/announce-on-fresh-gate" in process.stdout
    assert 'expected {"announce": true, "streak": 0}' in process.stdout
    assert 'actual   {"announce": false, "streak": 0}' in process.stdout


def test_one_is_not_true() -> None:
    """PROTO-VAL-2."""
    code, report, _ = conform("--adapter", faulty("stringly-true"), *WAKE_GATE, "--run", TRIGGER_ID)
    assert code == 1 and report is not None
    assert outcome(report, TRIGGER_ID)["outcome"] == "fail"


def test_stderr_flood_does_not_block_the_run() -> None:
    """PROTO-FRAME-2."""
    code, report, output = conform("--adapter", faulty("stderr-flood"), *WAKE_GATE,
                                   "--run", "wake-gate/f[0-9]-*")
    assert code == 0, output
    assert report is not None and report["totals"]["pass"] == 8


@pytest.mark.parametrize("fault", ["never-start", "bad-start"])
def test_adapter_that_never_completes_start_is_an_unusable_run(fault: str) -> None:
    code, report, output = conform("--adapter", faulty(fault), "--start-timeout", "1.5")
    assert code == 2
    assert "did not complete start" in output
    assert report is not None and report["ok"] is False


def test_the_stderr_an_adapter_that_could_not_start_left_is_quoted_under_the_reason() -> None:
    """A newcomer's review: the reason and the adapter's stderr were one line with ``\\x0a`` for
    each newline. Now each of the adapter's lines is its own, indented under the runner's."""
    adapter = (f"{sys.executable} -c \"import sys; sys.stderr.write('no module named port\\n"
               "conform: ok\\n'); sys.exit(1)\"")
    result = subprocess.run([sys.executable, "-m", "inboxspec", "conform", "--adapter", adapter],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    first = lines.index("inboxspec conform: the adapter did not complete start (crashed: adapter exited "
                        "with code 1)")
    assert lines[first + 1:first + 4] == ["  adapter stderr (tail):", "    no module named port",
                                          "    conform: ok"]


def test_an_adapter_that_closed_its_input_and_exited_is_told_by_its_exit_code() -> None:
    """An adapter that exits at once was told "closed its input (Broken pipe)" when the runner wrote
    its start request before it saw the exit (on a busy machine), and "exited with code 1" otherwise:
    the test above failed so now and then. Whichever the runner sees first, an adapter that has
    exited is told by its exit code; one that closed its input and runs on, by the broken pipe."""
    from inboxspec.conformance.adapter_process import AdapterFault, AdapterProcess

    for script, detail in (("exec 0<&-; sleep 0.3; exit 3", "adapter exited with code 3"),
                           ("exec 0<&-; exec sleep 30", "adapter closed its input ([Errno 32] Broken pipe)")):
        adapter = AdapterProcess(f"sh -c '{script}'", max_line_bytes=1 << 20)
        try:
            time.sleep(0.1)  # its input is closed by now: the write below breaks the pipe
            with pytest.raises(AdapterFault) as fault:
                adapter.send({"cmd": "start", "version": 1})
            assert (fault.value.kind, fault.value.detail) == ("crashed", detail)
        finally:
            adapter.kill()


def test_missing_adapter_binary_is_an_unusable_run() -> None:
    code, _, output = conform("--adapter", "/nonexistent/adapter --flag")
    assert code == 2 and "cannot start" in output


def test_skip_file_entries_must_still_fail(tmp_path: Path) -> None:
    skip_file = tmp_path / "known-failures.txt"
    skip_file.write_text(f"# the lie fault breaks this one\n{TRIGGER_ID}\n")
    code, report, _ = conform("--adapter", faulty("lie"), "--skip-file", str(skip_file), *WAKE_GATE,
                              "--run", "wake-gate/announce-*")
    assert code == 0 and report is not None
    assert outcome(report, TRIGGER_ID)["outcome"] == "expected-fail"
    code, report, _ = conform("--adapter", REFERENCE, "--skip-file", str(skip_file), *WAKE_GATE,
                              "--run", "wake-gate/announce-*")
    assert code == 1 and report is not None
    assert outcome(report, TRIGGER_ID)["outcome"] == "unexpected-pass"


def test_a_case_whose_outputs_pass_the_bound_is_stopped_at_that_step() -> None:
    """PROTO-RUN-5: the reference runs no step after the one whose output passes the bound; the
    bound itself is within it."""
    ran: list[int] = []

    def apply_step(step: Any) -> dict[str, Any]:
        ran.append(step["n"])
        return {"text": "x" * 89}  # 100 bytes of compact JSON

    with sessions.bounded_by(sessions.CaseBounds(output_bytes=300)):
        assert len(sessions.bounded_outputs([{"n": n} for n in range(3)], apply_step)) == 3
        ran.clear()
        with pytest.raises(sessions.OutputsTooLarge, match="pass 300 bytes of JSON at step 4 of 9: beyond "
                           r"what the suite compares \(PROTO-RUN-5\)$"):
            sessions.bounded_outputs([{"n": n} for n in range(9)], apply_step)
    assert ran == [0, 1, 2, 3]
    assert sessions.CaseBounds().output_bytes == sessions.MAX_CASE_OUTPUT_BYTES  # the bound outside


NODE_PORT = Path(__file__).resolve().parents[1] / "conformance" / "ports" / "node"
NODE_ADAPTER = f"node {NODE_PORT / 'adapter.mjs'}"


@pytest.mark.timeout(120)  # its runs' bound when they were subprocesses (``conform``)
@pytest.mark.parametrize("adapter", [REFERENCE, NODE_ADAPTER], ids=["reference", "node"])
def test_a_small_case_that_asks_for_gigabytes_of_outputs_is_an_error_not_a_swollen_adapter(
        tmp_path: Path, adapter: str) -> None:
    """Every host output repeats every address: two addresses of a million characters and a few
    hundred ticks, a 2 MB file, asked the reference adapter for a gigabyte (the attack's 10,000
    ticks: 20 GB, until memory ran out), and the Node port for more than V8's longest string, on
    which it crashed. Now the case errors at the step past the bound in both, and ``cases
    expect`` refuses the file."""
    long_names = ["a" * 10**6, "b" * 10**6]
    tick = {"event": "tick", "args": {}, "expect": {"events": [], "sessions": {}}}
    case = {"id": "host/amplified", "description": "Two long addresses repeated by every output",
            "requirements": ["HOST-IF-2"], "config": {"sessions": long_names}, "steps": [tick] * 500}
    file = {"machine": "host", "cases": [case]}
    (tmp_path / "amplified.json").write_text(json.dumps(file, indent=1) + "\n")
    code, report, output = conform("--adapter", adapter, "--cases", str(tmp_path))
    assert code == 1 and report is not None, output
    result = outcome(report, "host/amplified")
    assert result["outcome"] == "error", result
    assert "pass 67,108,864 bytes of JSON at step 34 of 500" in result["detail"], result
    if adapter != REFERENCE:
        return
    expect = subprocess.run([sys.executable, "-m", "inboxspec", "cases", "expect",
                             str(tmp_path / "amplified.json")], capture_output=True, text=True, timeout=120)
    # cases expect stops at what a case file holds, before the bound of one case's outputs.
    assert expect.returncode == 2 and "host/amplified: the outputs of this case pass 16,777,216 bytes" in (
        expect.stderr), expect.stdout + expect.stderr
    assert "Traceback" not in expect.stderr


def test_the_node_port_measures_outputs_as_the_reference_does() -> None:
    """PROTO-RUN-5's measure (compact JSON, every character past ASCII escaped) in the Node port's
    ``jsonLength`` and the reference's ``bounded_outputs``: the same length for text past ASCII,
    past U+FFFF, a lone surrogate, control characters, DEL and U+2028."""
    values: list[Any] = [{"a": "plain"}, {"é": "été"}, {"x": "\U0001f600"}, {"s": "\ud800 lone"},
                         {"c": "\x01\t\n\"\\"}, {"d": "\x7f"}, {"l": "\u2028\u2029"}, [1, None, True, 2.5]]
    script = ("import { jsonLength } from './protocol.mjs';\n"
              "let text = ''; for await (const chunk of process.stdin) text += chunk;\n"
              "console.log(JSON.stringify(JSON.parse(text).map(jsonLength)));\n")
    node = subprocess.run(["node", "--input-type=module", "-e", script], input=json.dumps(values),
                          capture_output=True, text=True, cwd=NODE_PORT, timeout=60)
    assert node.returncode == 0, node.stderr
    expected = [len(json.dumps(value, separators=(",", ":"))) for value in values]
    assert json.loads(node.stdout) == expected


@pytest.mark.timeout(60)  # its runs' bound when they were subprocesses (``conform``)
def test_a_skip_file_entry_that_matches_no_case_refuses_the_run_before_an_adapter_starts(
        tmp_path: Path) -> None:
    """A typo, or a byte-order mark that does not show, left an entry that marked nothing, for
    ever. An entry naming another machine's cases belongs to another run under ``--machine``, but
    not in a run of every machine: an entry whose machine part, as a glob, matches another machine
    (``peer-*``, ``*``) is left for that machine's run."""
    skip_file = tmp_path / "known-failures.txt"
    skip_file.write_bytes(f"\ufeff{TRIGGER_ID}\n# a comment\nwake-gate/defualts\nwake-gate/default*\n"
                          "peer-delivery/no-such-case\npeer-*/host/*\n*/no-such-case\nwake-gate/nope*\n".encode())
    never_starts = "/nonexistent/adapter"
    code, report, output = conform("--adapter", never_starts, "--skip-file", str(skip_file), *WAKE_GATE)
    assert code == 2 and report is not None, output
    assert report["problems"] == [
        f"skip file {skip_file}: line 1: '\\ufeff{TRIGGER_ID}' matches no case of this run",  # shown
        f"skip file {skip_file}: line 3: 'wake-gate/defualts' matches no case of this run",
        f"skip file {skip_file}: line 8: 'wake-gate/nope*' matches no case of this run",
    ]
    assert "cannot start" not in output and "Traceback" not in output
    skip_file.write_text("peer-delivery/no-such-case\n")
    code, report, _ = conform("--adapter", never_starts, "--skip-file", str(skip_file))
    assert code == 2 and report is not None
    assert report["problems"] == [f"skip file {skip_file}: line 1: 'peer-delivery/no-such-case' "
                                  "matches no case of this run"]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1e"])
def test_a_skip_file_line_ends_at_a_newline_alone(separator: str, tmp_path: Path) -> None:
    """PROTO-CLI-2: "# a comment<U+2028>wake-gate/*" is one comment line, as a pager shows it; it
    skipped every wake-gate case (str.splitlines ends a line there too), and the line numbers of the
    problems after it were off. A carriage return before a newline is whitespace."""
    skip_file = tmp_path / "known-failures.txt"
    lines = [f"# flaky, see #12{separator}wake-gate/*\r", f"wake-gate/x{separator}y", "wake-gate/z\r", ""]
    skip_file.write_text("\n".join(lines), encoding="utf-8")
    entries = read_skip_file(skip_file)
    assert [(entry.line, entry.glob) for entry in entries] == [
        (2, f"wake-gate/x{separator}y"), (3, "wake-gate/z")]


@given(st.lists(st.text("ab*?[]!-/"), max_size=4), st.text("ab[]!-/"))
def test_a_skip_file_s_globs_match_as_fnmatch_matches(globs: list[str], case_id: str) -> None:
    """Globs without a wildcard are looked up in a set (a skip file of 40,000 ids took 18 s to
    match against the suite's cases, a glob at a time): the same verdict as fnmatch's."""
    assert glob_matcher(globs)(case_id) == any(fnmatch.fnmatchcase(case_id, glob) for glob in globs)


@pytest.mark.timeout(30)  # its runs' bound when they were subprocesses (``conform``)
@pytest.mark.parametrize("kind", ["fifo", "device", "link", "huge", "not-utf8", "directory"])
def test_a_skip_file_that_is_no_small_regular_text_file_is_refused_at_once(kind: str, tmp_path: Path) -> None:
    """A FIFO hung the runner in ``open``, past every signal; /dev/zero filled memory."""
    skip_file = tmp_path / "skips"
    if kind == "fifo":
        os.mkfifo(skip_file)
    elif kind == "device":
        skip_file.symlink_to("/dev/zero")
    elif kind == "link":
        (tmp_path / "real").write_text("wake-gate/defaults\n")
        skip_file.symlink_to(tmp_path / "real")
    elif kind == "huge":
        skip_file.write_bytes(b"#" * (MAX_SKIP_FILE_BYTES + 1))
    elif kind == "not-utf8":
        skip_file.write_bytes(b"wake-gate/\xff\n")
    else:
        skip_file.mkdir()
    code, report, output = conform("--adapter", REFERENCE, "--skip-file", str(skip_file), *WAKE_GATE)
    assert code == 2 and report is not None and "cannot read skip file" in report["unusable"], output
    assert "Traceback" not in output


@pytest.mark.parametrize("change", ["extra-argument", "unknown-event"])
def test_a_case_the_interface_lint_rejects_is_not_run(change: str, tmp_path: Path) -> None:
    """PROTO-CASES-1: it ran, and failed as the adapter's fault (exit 1); now the run is unusable
    (exit 2) with lint's message, and no adapter starts."""
    data = json.loads((bundled_cases_dir() / "wake-gate" / "cadence.json").read_text(encoding="utf-8"))
    step = data["cases"][0]["steps"][0]
    if change == "extra-argument":
        step["args"]["bogus_arg"] = 1
    else:
        step["event"] = "nosuch"
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "cadence.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    started = tmp_path / "started"
    adapter = f"sh -c 'touch {started}; exec {REFERENCE}'"
    code, report, output = conform("--adapter", adapter, "--cases", str(tmp_path / "cases"))
    assert code == 2 and report is not None and "interface" in report["unusable"], output
    assert not started.exists()


def test_selection_by_glob_and_feature() -> None:
    _, report, _ = conform("--adapter", REFERENCE, "--run", "wake-gate/f[0-9]-*",
                           "--skip", "*/f4-*")
    assert report is not None
    ids = {r["id"] for r in report["results"]}
    assert len(ids) == 6 and not any(i.startswith("wake-gate/f4-") for i in ids)
    _, report, _ = conform("--adapter", REFERENCE, "--feature", "option:reject_empty_batch")
    assert report is not None
    tagged = {c.id for c in load_cases([bundled_cases_dir()]) if "option:reject_empty_batch" in c.features}
    assert {r["id"] for r in report["results"]} == tagged
    assert "wake-gate/f4-option-reject-empty-batch" in tagged and len(tagged) < len(load_cases(
        [bundled_cases_dir()]))
    _, report, _ = conform("--adapter", REFERENCE, "--run", "wake-gate/f4-*",
                           "--without-feature", "option:reject_empty_batch")
    assert report is not None
    skipped = outcome(report, "wake-gate/f4-option-reject-empty-batch")
    assert skipped["outcome"] == "skip" and "unsupported feature" in skipped["detail"]


def test_bad_case_directory_is_an_unusable_run(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"machine": "wake-gate"}')
    code, _, output = conform("--adapter", REFERENCE, "--cases", str(tmp_path))
    assert code == 2 and "schema" in output


def test_integral_floats_in_case_files_make_the_run_unusable(tmp_path: Path) -> None:
    """PROTO-VAL-1: a case that writes 2.0 means 2 to some ports and 2.0 to others."""
    case = {"id": "wake-gate/probe", "description": "A probe case with a float cap",
            "requirements": ["WAKE-DEF-1"], "config": {"max_streak": 2.0},
            "steps": [{"event": "reset_streak", "expect": {"streak": 0}}]}
    (tmp_path / "probe.json").write_text(json.dumps({"machine": "wake-gate", "cases": [case]}))
    code, _, output = conform("--adapter", REFERENCE, "--cases", str(tmp_path))
    assert code == 2 and "integral number written as a float" in output


@pytest.mark.parametrize("fault", ["crash", "hang", "not-json"])
def test_faults_with_one_request_in_flight(fault: str, tmp_path: Path) -> None:
    """PROTO-RUN-3: the window is the runner's choice; with one in flight the outcome is the same."""
    code, report, output = conform("--adapter", faulty(fault, tmp_path / "once"), *WAKE_GATE,
                                   "--window", "1", "--timeout", "1.5")
    assert code == 1 and report is not None, output
    assert outcome(report, TRIGGER_ID)["outcome"] == "error"
    assert report["totals"]["pass"] == len(report["results"]) - 1


def test_window_must_be_positive() -> None:
    code, _, output = conform("--adapter", REFERENCE, "--window", "0")
    assert code == 2 and "must be at least 1" in output


def test_broken_reference_fails_with_a_readable_diff() -> None:
    """One changed wake rule (the floor boundary) is caught, and the diff says where."""
    broken = f"{sys.executable} {Path(__file__).parent / 'adapters' / 'broken_reference_adapter.py'}"
    process = subprocess.run([sys.executable, "-m", "inboxspec", "conform", "--adapter", broken,
                              *WAKE_GATE], capture_output=True, text=True, timeout=120)
    assert process.returncode == 1
    block = process.stdout.split("FAIL wake-gate/defaults")[1].split("\nFAIL")[0]
    assert "step 13 (decide" in block and '"now_ms": 60099' in block
    assert 'expected {"counts_against_cap": false, "lane": "scheduledSelf"' in block
    assert 'actual   {"counts_against_cap": true, "lane": "scheduledSelf"' in block


# Issue 9: attacks on the runner, each reproduced, each with its defined outcome.


@pytest.mark.parametrize("fault", ["skip-all", "no-machines"])
def test_a_run_that_executed_nothing_is_not_a_pass(fault: str) -> None:
    """PROTO-EXEC-1 (attack 1): every case skipped is exit 2, never "ok"."""
    code, report, output = conform("--adapter", faulty(fault), *WAKE_GATE)
    assert code == 2, output
    assert report is not None and report["ok"] is False and report["executed"] == 0
    assert "no case was executed" in report["coverage_problems"][0]
    assert all(counts["executed"] == 0 for counts in report["machines"].values())
    assert sum(counts["skipped"] for counts in report["machines"].values()) == len(report["results"]) > 0


def test_selecting_nothing_is_not_a_pass(tmp_path: Path) -> None:
    """PROTO-EXEC-1: --run matching nothing, or an empty case directory."""
    code, report, output = conform("--adapter", REFERENCE, "--run", "no-such-case")
    assert code == 2 and report is not None and report["executed"] == 0, output
    code, report, output = conform("--adapter", REFERENCE, "--cases", str(tmp_path))
    assert code == 2 and report is not None and "no case was executed" in output, output


def test_report_counts_each_machine() -> None:
    """PROTO-EXEC-1: executed, passed, failed, errored and skipped per machine."""
    code, report, output = conform("--adapter", faulty("lie"), *WAKE_GATE, "--run", "wake-gate/announce-*",
                                   "--run", "wake-gate/f1-*",
                                   "--without-feature", "option:announce_requires_refusal")
    assert code == 1 and report is not None, output
    counts = report["machines"]["wake-gate"]
    assert set(counts) >= {"executed", "passed", "failed", "errored", "skipped"}
    assert counts["failed"] == 1 and counts["skipped"] >= 1
    assert counts["executed"] == counts["passed"] + counts["failed"] + counts["errored"]


def test_min_executed_demands_coverage() -> None:
    """PROTO-EXEC-2."""
    code, report, _ = conform("--adapter", REFERENCE, *WAKE_GATE, "--run", "wake-gate/f1-*",
                              "--min-executed", "3")
    assert code == 2 and report is not None
    assert "fewer than --min-executed 3" in report["coverage_problems"][0]
    code, _, _ = conform("--adapter", REFERENCE, *WAKE_GATE, "--run", "wake-gate/f[12]-*",
                         "--min-executed", "3")
    assert code == 0


def test_max_skipped_demands_the_option_cases() -> None:
    """PROTO-EXEC-2: a port may leave a machine's options out and pass with their cases skipped;
    --max-skipped N fails such a run as unusable when it skipped more than N, whatever skipped them."""
    selection = ("--machine", "peer-delivery", "--run", "peer-delivery/f1-*")
    code, report, _ = conform("--adapter", REFERENCE, *selection, "--max-skipped", "0")
    assert code == 0 and report is not None and report["machines"]["peer-delivery"]["skipped"] == 0
    executed = report["machines"]["peer-delivery"]["executed"]
    code, report, _ = conform("--adapter", REFERENCE, *selection, "--without-feature", "option:fair_eviction")
    assert code == 0 and report is not None  # without --max-skipped, skips are a pass
    skipped = report["machines"]["peer-delivery"]["skipped"]
    assert 0 < skipped < executed
    code, report, _ = conform("--adapter", REFERENCE, *selection, "--without-feature", "option:fair_eviction",
                              "--max-skipped", str(skipped - 1))
    assert code == 2 and report is not None and not report["ok"]
    problem = report["coverage_problems"][0]
    assert problem.startswith(f"{skipped} case(s) skipped, more than --max-skipped {skipped - 1} "
                              "(the first: ")
    assert "option:fair_eviction" in problem
    code, report, _ = conform("--adapter", REFERENCE, *selection, "--without-feature", "option:fair_eviction",
                              "--max-skipped", str(skipped))
    assert code == 0 and report is not None and report["ok"]


def test_duplicate_ids_make_the_run_unusable(tmp_path: Path) -> None:
    """PROTO-CASES-1 (attack 3): conform refuses what `cases lint` refuses, with the same words."""
    case = {"id": "wake-gate/probe", "description": "A probe case announces on a fresh gate",
            "requirements": ["WAKE-ANN-2"], "config": {},
            "steps": [{"event": "announce_refusal", "expect": {"announce": True, "streak": 0}}]}
    other = {**case, "description": "Another probe case announces on a fresh gate"}
    (tmp_path / "probe.json").write_text(json.dumps({"machine": "wake-gate", "cases": [case, other]}))
    code, report, output = conform("--adapter", REFERENCE, "--cases", str(tmp_path))
    assert code == 2 and "duplicate id" in output, output
    assert report is not None and any("duplicate id" in p for p in report["problems"])
    (tmp_path / "probe.json").write_text(json.dumps({"machine": "wake-gate", "cases": [
        {**case, "requirements": ["WAKE-NOPE-1"]}]}))
    code, _, output = conform("--adapter", REFERENCE, "--cases", str(tmp_path))
    assert code == 2 and "cites WAKE-NOPE-1, which is not in spec/" in output, output


def _megabyte_case(tmp_path: Path) -> Path:
    from inboxspec import machines

    steps = [{"event": "decide", "args": {"batch": [{"kind": "agent", "from": "a", "to": "b",
                                                     "text": "x" * (1 << 20)}], "now_ms": 0}}]
    expect = machines.get("wake-gate").run_case({}, steps)["outputs"]
    case = {"id": "wake-gate/megabyte", "description": "A one-megabyte chatter message wakes",
            "requirements": ["WAKE-CAP-2"], "config": {},
            "steps": [{**steps[0], "expect": expect[0]}]}
    (tmp_path / "big.json").write_text(json.dumps({"machine": "wake-gate", "cases": [case]}))
    return tmp_path


@pytest.mark.timeout(120)  # its runs' bound when they were subprocesses (``conform``)
def test_writes_to_an_adapter_that_stopped_reading_are_bounded(tmp_path: Path) -> None:
    """PROTO-FRAME-4 (attack 4): a 1 MB request to an adapter that never reads times out."""
    import time

    cases = _megabyte_case(tmp_path)
    began = time.monotonic()
    code, report, output = conform("--adapter", faulty("stop-reading"), "--cases", str(cases),
                                   "--timeout", "2")
    assert time.monotonic() - began < 30
    assert code == 1 and report is not None, output
    detail = outcome(report, "wake-gate/megabyte")["detail"]
    assert detail.startswith("timeout") and "stopped reading its input" in detail
    code, report, output = conform("--adapter", REFERENCE, "--cases", str(cases))
    assert code == 0, output


@pytest.mark.parametrize("fault", ["nan", "infinity", "huge-number", "deep", "key-twice"])
def test_replies_that_are_not_plain_json_error_their_case(fault: str, tmp_path: Path) -> None:
    """PROTO-VAL-3 (attacks 5 and 6): NaN, Infinity, 5000 digits, 100 000 levels, a key twice in one
    object (Python kept the last value, another reader keeps the first): no traceback."""
    code, report, output = conform("--adapter", faulty(fault, tmp_path / "once"), *WAKE_GATE)
    assert code == 1 and report is not None, output
    assert "Traceback" not in output
    bad = outcome(report, TRIGGER_ID)
    assert bad["outcome"] == "error" and bad["detail"].startswith("not-json: reply is not plain JSON")
    assert report["totals"]["pass"] == len(report["results"]) - 1


@pytest.mark.parametrize("literal", ["NaN", "[" * 100_000 + "]" * 100_000, "1" + "0" * 400])
def test_case_files_that_are_not_plain_json_make_the_run_unusable(literal: str, tmp_path: Path) -> None:
    """PROTO-VAL-3: the case file is named with its path, and --json is still written. An integer
    of 400 digits is exact to Python but an infinity to JavaScript, so it overflows a double too."""
    case = {"id": "wake-gate/probe", "description": "A probe case announces on a fresh gate",
            "requirements": ["WAKE-ANN-2"], "config": {},
            "steps": [{"event": "announce_refusal", "expect": {"announce": True, "streak": 0}}]}
    text = json.dumps({"machine": "wake-gate", "cases": [case]})
    text = text.replace('"streak": 0', f'"streak": {literal}')
    (tmp_path / "probe.json").write_text(text)
    code, report, output = conform("--adapter", REFERENCE, "--cases", str(tmp_path))
    assert code == 2 and "Traceback" not in output, output
    assert report is not None and f"{tmp_path / 'probe.json'}: not plain JSON" in report["unusable"]


@pytest.mark.parametrize("fault", ["surrogate-detail", "surrogate-name"])
@pytest.mark.parametrize("as_json", [True, False])
def test_lone_surrogates_are_printed_escaped(fault: str, as_json: bool, tmp_path: Path) -> None:
    """PROTO-VAL-4 (attack 7): in a detail or in implementation.name; both report forms."""
    args = ["-m", "inboxspec", "conform", "--adapter", faulty(fault, tmp_path / "once"), *WAKE_GATE]
    process = subprocess.run([sys.executable, *args, *(["--json"] if as_json else [])],
                             capture_output=True, timeout=120,
                             env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    stdout = process.stdout.decode("utf-8")  # strict: the output itself is valid UTF-8
    assert b"Traceback" not in process.stderr, process.stderr
    expected_code = 1 if fault == "surrogate-detail" else 0
    assert process.returncode == expected_code, stdout
    if as_json:
        report = checked_report(json.loads(stdout))
        assert report["ok"] is (expected_code == 0)
    else:
        assert "\\ud800" in stdout or "\\udc80" in stdout


def test_a_duplicated_reply_blames_the_case_answered_twice(tmp_path: Path) -> None:
    """PROTO-RUN-4 (attack 8): the twice-answered case errors; the next case still passes."""
    for window in ("16", "1"):
        code, report, output = conform("--adapter", faulty("duplicate", tmp_path / f"once{window}"),
                                       *WAKE_GATE, "--window", window)
        assert code == 1 and report is not None, output
        bad = outcome(report, TRIGGER_ID)
        assert bad["outcome"] == "error" and bad["detail"].startswith("duplicate-reply"), bad
        assert report["totals"]["error"] == 1
        assert report["totals"]["pass"] == len(report["results"]) - 1


# Random differential testing (issue 9, attack 2).

LOOKUP = f"{sys.executable} {Path(__file__).parent / 'adapters' / 'replay_adapter.py'} lookup"
NODE = shutil.which("node")
# One-rule mutants of the Node port, each with the only bundled cases that kill
# it: the fuzz test runs without them.
NODE_MUTANTS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "counted-wake-keeps-refusal-flag": (
        "    this.#refusedSinceRearm = false;\n    return decision(lane, true, true);",
        "    return decision(lane, true, true);",
        ("wake-gate/counted-wake-clears-an-unannounced-refusal",)),
    "reset-keeps-announcement": (
        "    this.#streak = 0;\n    this.#announced = false;\n",
        "    this.#streak = 0;\n",
        ("wake-gate/re-arm-only-at-reset-and-counted-wakes", "wake-gate/one-announcement-per-episode")),
    # Only survivors.json's case kills it among the cases; the generator lands
    # time moves a floor after the last self-mail so that random traces do too.
    "counted-self-wake-keeps-old-time": (
        "    if (self) this.#lastSelfWakeMs = nowMs; // WAKE-CAP-2, WAKE-CAD-6\n",
        "",
        ("wake-gate/option-counted-self-wake-records-time",)),
}


def test_an_adapter_that_looks_the_answers_up_passes_the_cases_but_not_the_fuzz() -> None:
    """PROTO-FUZZ-1: random cases under fresh ids exist in no file."""
    code, report, output = conform("--adapter", LOOKUP)
    assert code == 0 and report is not None and report["totals"]["fail"] == 0, output
    code, report, output = conform("--adapter", LOOKUP, "--fuzz", "20", "--seed", "1")
    assert code == 1 and report is not None, output
    assert report["totals"]["error"] == 20 * len(report["machines"])  # 20 per machine
    assert all("/fuzz-1-" in r["id"] for r in report["results"])


def test_fuzz_passes_the_reference() -> None:
    """PROTO-FUZZ-1: expected outputs come from the reference, so it agrees with itself."""
    code, report, output = conform("--adapter", REFERENCE, "--fuzz", "300", "--seed", "7")
    assert code == 0 and report is not None, output
    assert report["machines"]["wake-gate"]["executed"] == 300
    assert report["fuzz"] == {"seed": 7, "seed_drawn": False, "count": 300, "shrunk": []}


@pytest.mark.skipif(NODE is None and not os.environ.get("CI"), reason="node is not installed")
def test_fuzz_passes_the_node_port() -> None:
    code, report, output = conform("--adapter", f"{NODE} {NODE_PORT / 'adapter.mjs'}",
                                   "--fuzz", "300", "--seed", "7")
    assert code == 0 and report is not None, output


def _node_mutant(tmp_path: Path, name: str = "counted-wake-keeps-refusal-flag") -> str:
    """The Node port with one rule changed."""
    rule, replacement, _ = NODE_MUTANTS[name]
    port = tmp_path / "node-mutant"
    shutil.copytree(NODE_PORT, port)
    source = port / "wake-gate.mjs"
    text = source.read_text()
    assert text.count(rule) == 1
    source.write_text(text.replace(rule, replacement))
    return f"{NODE} {port / 'adapter.mjs'}"


@pytest.mark.skipif(NODE is None and not os.environ.get("CI"), reason="node is not installed")
@pytest.mark.parametrize("name", sorted(NODE_MUTANTS))
def test_fuzz_catches_a_node_mutant_that_the_bundled_cases_miss(name: str, tmp_path: Path) -> None:
    """PROTO-FUZZ-1, PROTO-FUZZ-3: one changed rule, invisible to every other bundled case."""
    mutant = _node_mutant(tmp_path, name)
    killers = NODE_MUTANTS[name][2]
    # The mutants are of the wake gate: its cases and its random traces are the ones that matter.
    code, report, output = conform("--adapter", mutant, "--machine", "wake-gate",
                                   *(f"--skip={k}" for k in killers))
    assert code == 0 and report is not None, output
    code, report, output = conform("--adapter", mutant, *WAKE_GATE, *(f"--run={k}" for k in killers))
    assert code == 1 and report is not None, output
    assert {r["id"] for r in report["results"] if r["outcome"] == "fail"} == set(killers)

    code, report, output = conform("--adapter", mutant, "--machine", "wake-gate", "--fuzz", "2000",
                                   "--seed", "1")
    assert code == 1 and report is not None, output
    (shrunk,) = report["fuzz"]["shrunk"]
    assert shrunk["steps"] < shrunk["original_steps"] and not shrunk["cut_short"]
    case_file = shrunk["case_file"]
    (case,) = case_file["cases"]
    assert len(case["steps"]) <= 6 and "TODO-CITE-1" not in case["requirements"]

    # Ready to commit: conform loads it (lint's rules), the reference passes it, the mutant fails it.
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "found.json").write_text(json.dumps(case_file, indent=2))
    assert conform("--adapter", REFERENCE, "--cases", str(cases))[0] == 0
    assert conform("--adapter", mutant, "--cases", str(cases))[0] == 1


@pytest.mark.skipif(NODE is None and not os.environ.get("CI"), reason="node is not installed")
def test_fuzz_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    """PROTO-FUZZ-2: the same seed sends the same cases and shrinks to the same case file."""
    mutant = _node_mutant(tmp_path)
    wake_gate = ("--machine", "wake-gate")
    # The same seed in two processes under two hash seeds: a generator or a shrinker that followed the
    # order of a set of strings would differ between them (conformance/fuzz.py), not within one process.
    runs = [conform_in_a_process(hash_seed, "--adapter", mutant, *wake_gate, "--fuzz", "300", "--seed", "3")
            for hash_seed in ("1", "2")]
    other = conform("--adapter", mutant, *wake_gate, "--fuzz", "300", "--seed", "4")[1]
    assert runs[0] is not None and runs[1] is not None and other is not None

    def essence(report: dict[str, Any]) -> Any:
        return ([(r["id"], r["outcome"], r["detail"]) for r in report["results"]],
                report["fuzz"]["shrunk"])

    assert essence(runs[0]) == essence(runs[1])
    assert runs[0]["fuzz"]["shrunk"], "seed 3 finds the mutant"
    assert essence(other) != essence(runs[0])


@pytest.mark.parametrize(("timeout", "shrink_seconds", "most_seconds"), [("1", "3", 30), ("10", "1", 17)])
def test_shrinking_a_hang_is_capped_in_time(timeout: str, shrink_seconds: str, most_seconds: float) -> None:
    """PROTO-FUZZ-3: an adapter that hangs on every candidate cannot stretch the run, and a candidate
    runs no longer than what is left of --shrink-seconds. The cap was checked only between
    candidates, so a candidate begun just before it ran a whole --timeout: the second run took 20 s
    and more (the random case's 10 s, a candidate's 10 s), and now about 12."""
    import time

    hang = f"{sys.executable} {FAULTY} hang fuzz-1-3"
    began = time.monotonic()
    code, report, output = conform("--adapter", hang, "--machine", "wake-gate", "--fuzz", "5", "--seed",
                                   "1", "--timeout", timeout, "--shrink-seconds", shrink_seconds)
    assert time.monotonic() - began < most_seconds
    assert code == 1 and report is not None, output
    assert outcome(report, "wake-gate/fuzz-1-3")["detail"].startswith("timeout")
    (shrunk,) = report["fuzz"]["shrunk"]
    assert shrunk["cut_short"] is True and shrunk["detail"].startswith("timeout"), shrunk
    if float(shrink_seconds) < float(timeout):
        # No candidate kept (its timeout was the cap's), and no time left to send the case once more.
        assert shrunk["steps"] == shrunk["original_steps"] and shrunk["confirmed"] is None, shrunk


def test_answers_sent_again_while_shrinking_keep_to_the_cap(tmp_path: Path) -> None:
    """PROTO-FUZZ-3: an adapter that answered the shrunk case sent once more with its earlier candidates'
    answers, one after another, had each blame a candidate (a duplicate), restart the adapter and send
    the case again: 92 s for a 3 s cap, up to a --start-timeout per candidate (found by an attack
    helper). A call ends when the cap passes, the adapter restarted if it is still working on it."""
    adapter = f"{sys.executable} {FAULTY} replay-duplicates wake-gate/fuzz-1-3 {tmp_path / 'kept'}"
    began = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "inboxspec", "conform", "--json", "--adapter", adapter,
                          *WAKE_GATE, "--fuzz", "5", "--seed", "1", "--shrink-seconds", "3"],
                         capture_output=True, text=True, timeout=120)
    assert time.monotonic() - began < 25
    code, report, output = run.returncode, report_in(run.stdout), run.stdout + run.stderr
    assert code == 1 and report is not None, output
    (shrunk,) = report["fuzz"]["shrunk"]
    assert shrunk["cut_short"] is True and shrunk["confirmed"] is None, shrunk


def test_a_candidate_answered_after_the_cap_is_not_kept(tmp_path: Path) -> None:
    """PROTO-FUZZ-3: the wait for a reply, too, ends at the cap. An adapter that sent a duplicate just
    before the cap had the runner restart it and wait a whole --timeout again for the candidate sent
    again, and its answer, 3.7 s past the cap, was kept (found by an attack helper)."""
    adapter = f"{sys.executable} {FAULTY} late-after-duplicate wake-gate/fuzz-1-3 {tmp_path / 'late'}"
    run = subprocess.run([sys.executable, "-m", "inboxspec", "conform", "--json", "--adapter", adapter,
                          *WAKE_GATE, "--fuzz", "5", "--seed", "1", "--shrink-seconds", "4"],
                         capture_output=True, text=True, timeout=120)
    code, report, output = run.returncode, report_in(run.stdout), run.stdout + run.stderr
    assert code == 1 and report is not None, output
    (shrunk,) = report["fuzz"]["shrunk"]
    assert shrunk["cut_short"] is True and shrunk["steps"] == shrunk["original_steps"], shrunk


@pytest.mark.parametrize(("fault", "confirmed", "said"), [
    ("wrong-outputs", True, "failing again when sent once more"),
    ("flaky", False, "NOT failing so when sent once more (the port fails it only sometimes)")])
def test_a_shrunk_case_is_sent_once_more(fault: str, confirmed: bool, said: str) -> None:
    """PROTO-FUZZ-3: the shrunk case is sent once more, and the report says whether it failed the same
    way again: a port that fails a case only sometimes had a candidate kept on one failure, and was
    handed a "still failing" case (found by an attack helper). Here the flaky port fails every
    candidate and passes the case sent once more."""
    adapter = f"{sys.executable} {FAULTY} {fault} wake-gate/fuzz-1-3"
    fuzzing = ("--adapter", adapter, "--machine", "wake-gate", "--fuzz", "5", "--seed", "1")
    code, report, output = conform(*fuzzing)
    assert code == 1 and report is not None, output
    (shrunk,) = report["fuzz"]["shrunk"]
    assert shrunk["confirmed"] is confirmed and shrunk["cut_short"] is False, shrunk
    assert shrunk["steps"] < shrunk["original_steps"], shrunk
    text = subprocess.run([sys.executable, "-m", "inboxspec", "conform", *fuzzing],
                          capture_output=True, text=True, timeout=120)
    assert text.returncode == 1 and said in text.stdout, text.stdout


def test_a_restart_that_fails_while_shrinking_names_the_failure_being_shrunk(tmp_path: Path) -> None:
    """PROTO-FUZZ-3, PROTO-RUN-6: the message named only the shrink candidate the crash blamed, a case
    in no report; it names the random case being shrunk, which the report holds."""
    adapter = f"{sys.executable} {FAULTY} no-restart-shrinking wake-gate/fuzz-1-3 {tmp_path / 'once'}"
    code, report, output = conform("--adapter", adapter, "--machine", "wake-gate", "--fuzz", "5",
                                   "--seed", "1")
    assert code == 2 and report is not None, output
    blamed = "while shrinking wake-gate/fuzz-1-3: after wake-gate/fuzz-1-3-shrink-"
    assert report["unusable"].startswith(blamed), report["unusable"]
    assert "restart failed" in report["unusable"]
    assert outcome(report, "wake-gate/fuzz-1-3")["outcome"] == "fail"


def test_an_answer_sent_again_after_every_restart_ends_the_run(tmp_path: Path) -> None:
    """PROTO-RUN-4: an adapter that answered the first case, and every later one with that answer again,
    had the first case blamed after every restart, and the second case sent again, for ever (336
    restarts a minute). A case blamed for a duplicate is answered no more: the answer sent again is a
    wrong reply to the case waited for, which it uses up, and the run ends."""
    adapter = f"{sys.executable} {FAULTY} echo-first - {tmp_path / 'first'}"
    # In a process of its own, with a time limit: the run that never ends fails the test, not hangs it.
    run = subprocess.run([sys.executable, "-m", "inboxspec", "conform", "--json", "--adapter", adapter,
                          *WAKE_GATE, "--run", "wake-gate/s*"], capture_output=True, text=True, timeout=60)
    code, report, output = run.returncode, report_in(run.stdout), run.stdout + run.stderr
    assert code == 1 and report is not None, output
    results = report["results"]
    assert len(results) >= 3, results
    first, *rest = results
    assert first["outcome"] == "error" and first["detail"].startswith("duplicate-reply"), first
    assert all(r["outcome"] == "error" and r["detail"].startswith("wrong-seq") for r in rest), rest
    assert report["restarts"] == len(results), report["restarts"]


def test_machine_narrows_the_cases_and_the_fuzz() -> None:
    code, report, output = conform("--adapter", REFERENCE, "--machine", "wake-gate")
    assert code == 0 and report is not None, output
    assert report["results"] and {r["id"].split("/")[0] for r in report["results"]} == {"wake-gate"}
    code, report, output = conform("--adapter", REFERENCE, "--machine", "wake-gate", "--fuzz", "3")
    assert code == 0 and report is not None, output
    assert {r["id"].split("/")[0] for r in report["results"]} == {"wake-gate"}
    code, report, output = conform("--adapter", REFERENCE, "--machine", "no-such-machine")
    assert code == 2 and report is not None and "--machine: unknown machine" in report["unusable"], output


def test_fuzz_takes_no_case_selection() -> None:
    code, report, output = conform("--adapter", REFERENCE, "--fuzz", "5", "--run", "wake-gate/*")
    assert code == 2 and report is not None and "does not take --run" in report["unusable"], output


def test_a_broken_generator_is_an_unusable_run(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """PROTO-FUZZ-1: a bug of inboxspec's own is exit 2 with a message, never a traceback."""
    from dataclasses import replace

    from inboxspec import machines
    def broken(rng: Any) -> Any:
        raise KeyError("no such event")

    monkeypatch.setitem(machines.REGISTRY, "wake-gate", replace(machines.get("wake-gate"), fuzz=broken))
    code = main(["conform", "--adapter", REFERENCE, "--fuzz", "3", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 2 and "the generator or the reference failed on random case 1" in report["unusable"]


TOY = Path(__file__).parent / "adapters" / "toy_adapter.py"


def test_fuzz_is_generic_over_the_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """PROTO-FUZZ-1, PROTO-FUZZ-3: a machine only the tests know (tests/toy_machine.py) fuzzes alike."""
    from inboxspec import machines
    from tests import toy_machine

    entry = toy_machine.make_machine(tmp_path / "runner")
    monkeypatch.setitem(machines.REGISTRY, entry.name, entry)
    args = ["conform", "--fuzz", "50", "--seed", "3", "--require", "toy-lease", "--json"]
    code = main([*args, "--adapter", f"{sys.executable} {TOY} {tmp_path / 'good'}"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report
    assert report["machines"]["toy-lease"]["executed"] == report["machines"]["wake-gate"]["executed"] == 50

    code = main([*args, "--adapter", f"{sys.executable} {TOY} {tmp_path / 'mutant'} expire-late"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["machines"]["wake-gate"]["failed"] == 0
    (shrunk,) = report["fuzz"]["shrunk"]
    (case,) = shrunk["case_file"]["cases"]
    assert shrunk["case_file"]["machine"] == "toy-lease"
    assert [s["event"] for s in case["steps"]] == ["acquire", "advance"]
    assert case["steps"][-1] == {"event": "advance", "args": {"ms": 100}, "expect": {"expired": True}}


FIXTURE_SPY = Path(__file__).parent / "adapters" / "fixture_spy_adapter.py"


def test_fixtures_are_materialised_for_each_request_and_removed(tmp_path: Path) -> None:
    """PROTO-FIX-1, PROTO-FIX-2: a fresh real directory per request, passed on, removed at the end."""
    spy, log = FIXTURE_SPY, tmp_path / "log.jsonl"
    code, _report, output = conform("--adapter", f"{sys.executable} {spy} {log}", "--machine",
                                    "writer-proofs", "--run", "writer-proofs/attest-after-*-changed")
    assert code == 0, output
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(seen) == 4 and len({s["dir"] for s in seen}) == 4
    assert all(s["real"] and {"cli", "home"} <= set(s["files"]) for s in seen)
    assert not any(Path(s["dir"]).exists() for s in seen)


def test_a_fresh_fixture_directory_goes_when_its_case_is_answered(tmp_path: Path) -> None:
    """PROTO-FIX-1: cases with an armed swap (no certain undo) each get a fresh tree, which stayed to
    the end of the run: a case file of many of them held cases times fixture bytes on disk (found by an
    attack helper). Each goes once its case is answered: with one case in flight, the run's root holds
    the adapters' temporary directory and the tree of the case at hand, and no more."""
    log = tmp_path / "log.jsonl"
    armed = ("--machine", "writer-proofs", "--run", "writer-proofs/mid-read-change-*", "--window", "1")
    code, _report, output = conform("--adapter", f"{sys.executable} {FIXTURE_SPY} {log}", *armed)
    assert code == 0, output
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(seen) >= 8 and len({s["dir"] for s in seen}) == len(seen)
    assert all(sorted(s["root"]) == sorted(["tmp", os.path.basename(s["dir"])]) for s in seen), seen


@pytest.mark.timeout(60)  # its runs' bound when they were subprocesses (``conform``)
def test_skip_files_with_too_many_wildcard_entries_are_refused_before_an_adapter_starts(
        tmp_path: Path) -> None:
    """PROTO-CLI-2: 56,000 entries with a wildcard took 8 s to refuse, one by one, and entries that
    each match one case about a minute to accept; past MAX_SKIP_WILDCARD_ENTRIES, over all the skip
    files, the run is refused at once. Ids without a wildcard are not counted."""
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("".join(f"wake-gate/z{n}*\n" for n in range(MAX_SKIP_WILDCARD_ENTRIES // 2)))
    second.write_text("".join(f"wake-gate/z{n}?\n" for n in range(MAX_SKIP_WILDCARD_ENTRIES // 2 + 1))
                      + "".join(f"wake-gate/literal-{n}\n" for n in range(5000)))
    never_starts = "/nonexistent/adapter"
    code, report, output = conform("--adapter", never_starts, "--skip-file", str(first), "--skip-file",
                                   str(second), *WAKE_GATE)
    assert code == 2 and report is not None, output
    most = MAX_SKIP_WILDCARD_ENTRIES
    assert report["unusable"] == (f"the skip files hold {most + 1} entries with a wildcard (*, ? or [), "
                                  f"more than {most}: list the case ids themselves"), report
    assert "cannot start" not in output and "Traceback" not in output
    second.write_text("".join(f"wake-gate/z{n}?\n" for n in range(MAX_SKIP_WILDCARD_ENTRIES // 2)))
    code, report, output = conform("--adapter", never_starts, "--skip-file", str(first), "--skip-file",
                                   str(second), *WAKE_GATE)
    assert code == 2 and report is not None and "matches no case of this run" in report["unusable"], output


def test_skip_entries_of_another_machine_without_a_wildcard_are_not_matched_as_globs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PROTO-CLI-2: an entry without a wildcard costs a lookup, its check against another machine's
    name included: a 1 MiB skip file of 160,000 such ids took 23 s, each machine name matched against
    each entry as a glob, a pattern compiled for each (found by an attack helper)."""
    import fnmatch

    skip = tmp_path / "skip.txt"
    skip.write_text("".join(f"peer-delivery/x{n}\n" for n in range(2000)) + "pe?r-delivery/y\n")
    real, matched = fnmatch.fnmatchcase, []

    def counted(name: str, pattern: str) -> bool:
        if pattern.startswith("pe"):  # the skip file's (pytest matches its own)
            matched.append(pattern)
        return real(name, pattern)

    monkeypatch.setattr(fnmatch, "fnmatchcase", counted)
    code, report, output = conform("--adapter", "/nonexistent/adapter", "--skip-file", str(skip), *WAKE_GATE)
    assert code == 2 and report is not None and "cannot start" in report["unusable"], output
    # The one entry with a wildcard in its machine's part is matched so, against each other machine.
    assert set(matched) == {"pe?r-delivery"} and len(matched) < 10, len(matched)


@pytest.mark.timeout(60)
def test_a_glob_past_its_bound_is_refused_at_once_and_one_at_it_matches(tmp_path: Path) -> None:
    """PROTO-CLI-2: one skip-file entry of 60,000 ``[`` took 92 s to match (fnmatch's time grows with
    the square of a glob's length), deaf to SIGTERM meanwhile. A glob past MAX_GLOB_CHARS, in a skip
    file or in --run or --skip, is refused before any adapter starts; one at the bound is matched."""
    skip = tmp_path / "skip.txt"
    skip.write_text("wake-gate/defaults\n" + "wake-gate/" + "[" * 60_000 + "\n")
    never_starts = "/nonexistent/adapter"
    code, report, output = conform("--adapter", never_starts, "--skip-file", str(skip), *WAKE_GATE)
    assert code == 2 and report is not None, output
    assert report["unusable"] == (f"skip file {skip}: line 2: a glob of 60,010 characters, more than "
                                  f"{MAX_GLOB_CHARS:,}")
    for option in ("--run", "--skip"):
        code, report, output = conform("--adapter", never_starts, option, "*" * (MAX_GLOB_CHARS + 1))
        assert code == 2 and report is not None and "cannot start" not in output, output
        assert f"a glob of 1,001 characters, more than {MAX_GLOB_CHARS:,}" in report["unusable"]
    at_bound = "wake-gate/defaults" + "*" * (MAX_GLOB_CHARS - len("wake-gate/defaults"))
    code, report, output = conform("--adapter", REFERENCE, "--run", at_bound, *WAKE_GATE)
    assert code == 0 and report is not None and [r["id"] for r in report["results"]] == ["wake-gate/defaults"]


@pytest.mark.parametrize("case_id", ["wake-gate/defaults", "host/addresses-are-compared-as-written"])
def test_a_case_no_reply_within_the_bound_can_pass_is_refused_and_one_at_the_bound_runs(
        case_id: str) -> None:
    """PROTO-FRAME-3: the run refuses (exit 2, the case named) a case whose shortest passing reply
    is longer than --max-line-bytes, instead of blaming the adapter (oversized-line); at the bound,
    the reference's reply (compact JSON, UTF-8 past ASCII: the host case's addresses are not ASCII)
    is that shortest reply, and passes."""
    machine = case_id.partition("/")[0]
    case = next(c for c in load_cases([bundled_cases_dir() / machine]) if c.id == case_id)
    assert machine == "wake-gate" or not json.dumps(case.expected, ensure_ascii=False).isascii()
    size = shortest_reply_bytes(case, 1)
    code, report, output = conform("--adapter", REFERENCE, "--machine", machine, "--run", case.id,
                                   "--max-line-bytes", str(size - 1))
    assert code == 2 and report is not None, output
    assert f"{case.id}: its shortest passing reply is {size} bytes, longer than the reply bound" in output
    code, report, output = conform("--adapter", REFERENCE, "--machine", machine, "--run", case.id,
                                   "--max-line-bytes", str(size))
    assert code == 0 and report is not None and report["totals"]["pass"] == 1, output


def test_lint_reports_a_case_past_the_default_reply_bound(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """PROTO-FRAME-3: ``cases lint`` checks each case against the default bound (made small here)."""
    shutil.copytree(bundled_cases_dir() / "wake-gate", tmp_path, dirs_exist_ok=True)  # seqs of 3 digits
    cases = load_cases([tmp_path])
    seq = len(cases)  # the largest seq a run of them all sends
    assert seq >= 100
    biggest = max(shortest_reply_bytes(case, seq) for case in cases)
    monkeypatch.setattr(casefiles, "DEFAULT_MAX_LINE_BYTES", biggest - 1)
    past = [p for p in casefiles.lint([tmp_path]).problems if "shortest passing reply" in p]
    assert len(past) == sum(shortest_reply_bytes(case, seq) == biggest for case in cases) >= 1
    monkeypatch.setattr(casefiles, "DEFAULT_MAX_LINE_BYTES", biggest)
    assert not [p for p in casefiles.lint([tmp_path]).problems if "shortest passing reply" in p]


def test_the_shortest_reply_counts_utf_8_and_a_lone_surrogates_escape() -> None:
    case = load_cases([bundled_cases_dir() / "wake-gate"])[0]
    ascii_only = shortest_reply_bytes(case, 7)
    for text, extra in (("é", 2), ("\U0001F600", 4), ("\ud800", 6)):
        changed = dataclasses.replace(case, expect_config_error=text)
        base = dataclasses.replace(case, expect_config_error="")
        assert shortest_reply_bytes(changed, 7) - shortest_reply_bytes(base, 7) == extra
    assert shortest_reply_bytes(case, 10) == ascii_only + 1  # the seq's digits



def _replying(write: str, *, on_start: str = "pass", on_stop: str = "pass") -> str:
    """An adapter that answers as the reference does and writes each reply as ``write`` (a Python
    expression of the reply object ``reply``, giving bytes); ``on_start`` changes the start reply
    ``reply`` before it is written, and ``on_stop`` runs before the adapter exits (one statement each)."""
    return f"""
import json, sys, time
from inboxspec.conformance.adapter import handle
for line in sys.stdin:
    request = json.loads(line)
    if request.get("cmd") == "stop":
        {on_stop}
        break
    reply = handle(request)
    if request.get("cmd") == "start":
        {on_start}
    sys.stdout.buffer.write({write})
    sys.stdout.flush()
"""


@pytest.mark.slow
def test_a_reply_with_a_byte_order_mark_spaces_escapes_and_crlf_is_json(tmp_path: Path) -> None:
    """PROTO-FRAME-1 as written: the runner reads a reply line as RFC 8259 allows (a byte order mark,
    spaces, escapes past ASCII and a CRLF end read as JSON), so such an adapter passes; a blank line
    before each reply is not JSON, and the start it answers so never completes (exit 2)."""
    lenient = tmp_path / "lenient.py"
    bom_spaced_crlf = 'b"\\xef\\xbb\\xbf" + json.dumps(reply, ensure_ascii=True).encode() + b"\\r\\n"'
    lenient.write_text(_replying(bom_spaced_crlf))
    code, report, output = conform("--adapter", f"{sys.executable} {lenient}",
                                   "--machine", "idle-subscriptions")
    assert code == 0 and report is not None and report["ok"], output
    tally = report["machines"]["idle-subscriptions"]
    assert tally["passed"] == tally["executed"] > 300  # its labels and notices hold text past ASCII
    blank = tmp_path / "blank.py"
    blank.write_text(_replying('b"\\n" + json.dumps(reply).encode() + b"\\n"'))
    code, report, output = conform("--adapter", f"{sys.executable} {blank}",
                                   "--machine", "idle-subscriptions", "--run", "idle-subscriptions/label-*")
    assert code == 2 and report is not None and "not-json" in report["unusable"], output


@pytest.mark.slow
def test_a_start_listing_an_unknown_machine_or_a_misspelt_feature_is_warned_of(tmp_path: Path) -> None:
    """PROTO-START-1: what the start lists that nothing knows is reported, not failed; the misspelt
    tag's cases are skipped, as a tag the adapter does not list."""
    adapter = tmp_path / "typo.py"
    misspelt = ("reply['machines'].append('wake_gate'); reply['features']['wake-gate'] = "
                "['option:reject-empty-batch', 'option:announce_requires_refusal']")
    adapter.write_text(_replying('json.dumps(reply).encode() + b"\\n"', on_start=misspelt))
    code, report, output = conform("--adapter", f"{sys.executable} {adapter}", "--machine", "wake-gate")
    assert code == 0 and report is not None and report["ok"], output
    assert [w.split(",")[0] for w in report["warnings"]] == [
        "the adapter lists machine 'wake_gate'",
        "the adapter lists feature 'option:reject-empty-batch' for wake-gate"]
    assert report["machines"]["wake-gate"]["skipped"] > 0
    code, report, output = conform("--adapter", REFERENCE, "--machine", "wake-gate",
                                   "--run", "wake-gate/defaults")
    assert code == 0 and report is not None and report["warnings"] == [], output


@pytest.mark.slow
def test_an_adapter_that_outlives_stop_is_warned_of(tmp_path: Path) -> None:
    """PROTO-STOP-1: an adapter still running 2 s after stop is ended and reported, not failed."""
    adapter = tmp_path / "lingering.py"
    adapter.write_text(_replying('json.dumps(reply).encode() + b"\\n"', on_stop="time.sleep(30)"))
    code, report, output = conform("--adapter", f"{sys.executable} {adapter}", "--machine", "wake-gate",
                                   "--run", "wake-gate/defaults")
    assert code == 0 and report is not None and report["ok"], output
    assert report["warnings"] == [
        "the adapter did not exit within 2 s of stop (PROTO-STOP-1); the runner ended its processes"]


@pytest.mark.parametrize(("on_stop", "warning"), [
    ("sys.exit(3)", "the adapter exited with status 3 after stop (PROTO-STOP-1)"),
    ("os.kill(os.getpid(), 9)", "the adapter was ended by signal 9 after stop (PROTO-STOP-1)"),
], ids=["status", "signal"])
def test_an_adapter_that_fails_as_it_stops_is_warned_of(tmp_path: Path, on_stop: str, warning: str) -> None:
    """PROTO-STOP-1: an adapter that exits on stop, but with a status other than 0 or by a signal, is
    named in the warnings; its results stand. The reference adapter, which exits with 0, gets none."""
    adapter = tmp_path / "failing.py"
    adapter.write_text("import os\n" + _replying('json.dumps(reply).encode() + b"\\n"', on_stop=on_stop))
    code, report, output = conform("--adapter", f"{sys.executable} {adapter}", "--machine", "wake-gate",
                                   "--run", "wake-gate/defaults")
    assert code == 0 and report is not None and report["ok"], output
    assert report["totals"]["pass"] == 1
    assert report["warnings"] == [warning]
    code, report, output = conform("--adapter", REFERENCE, *WAKE_GATE, "--run", "wake-gate/defaults")
    assert code == 0 and report is not None and report["warnings"] == [], output


def test_unknown_listings_are_named_up_to_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A start listing thousands of unknown features gets a bounded report, not one line each: the
    machines first, then each machine's features, in order; and only the lines kept are written out
    (each of 1.2 million was, before 20 were kept: 497 MB, found by an attack helper)."""
    from inboxspec.conformance import runner
    from inboxspec.conformance.runner import MAX_LISTING_WARNINGS, Session, unknown_listings

    session = Session("unused", 1.0, 1024)
    session.machines = {"wake-gate", "zz-port-only", "aa-port-only"}
    session.features = {"wake-gate": {f"option:typo_{n:04}" for n in range(5000)}}
    cases = [c for c in load_cases([bundled_cases_dir() / "wake-gate"]) if c.machine == "wake-gate"]
    written = calls_of(monkeypatch, runner, "_quoted")
    warnings = unknown_listings(session, cases)
    assert len(warnings) == MAX_LISTING_WARNINGS + 1 and len(written) == MAX_LISTING_WARNINGS
    assert "'aa-port-only'" in warnings[0] and "'zz-port-only'" in warnings[1]
    named = [f"option:typo_{n:04}" for n in range(MAX_LISTING_WARNINGS - 2)]
    assert [w.split("'")[1] for w in warnings[2:-1]] == named
    assert warnings[-1] == f"and {5002 - MAX_LISTING_WARNINGS} more unknown machine(s) or feature(s)"


def test_a_run_reply_without_exactly_one_kind_is_told_which_it_carries() -> None:
    """PROTO-RUN-1: a reply carries exactly one of result, skipped and errored; the schema's own words
    for a reply that does not ("valid exactly by one definition") named none of them."""
    from inboxspec.conformance import runner

    def problem(reply: object) -> str:
        found = runner._protocol_problem(runner.RUN_REPLY, reply)
        assert found is not None
        return runner._reply_problem(reply, found)

    assert problem({"seq": 1, "id": "a"}).endswith("this one carries none of them")
    assert problem({"seq": 1, "id": "a", "result": {"outputs": []}, "errored": {"message": "m"}}).endswith(
        "this one carries result, errored")
    # One kind, wrong inside: the schema's words.
    assert "carries" not in problem({"seq": 1, "id": "a", "result": {"outputs": 5}})


def test_a_reply_in_many_chunks_is_read_whole_and_the_next_after_it(tmp_path: Path) -> None:
    """The runner reads a reply line of many pipe chunks into one buffer, looking for its newline only
    in what each chunk adds (searched again from the start at each chunk, a 64 MiB reply took 18 s and
    was reported as a timeout; ``benchmarks/case_file_growth.py`` measures it), and a line that
    follows in the same chunk is the next reply."""
    from inboxspec.conformance.adapter_process import AdapterProcess

    long_text = "x" * (3 << 20)
    writer = ("import sys, time\n"
              f"line = '{{\"a\": \"' + 'x' * {len(long_text)} + '\"}}\\n{{\"b\": 1}}\\n'\n"
              "for start in range(0, len(line), 4099):\n"
              "    sys.stdout.write(line[start:start + 4099]); sys.stdout.flush()\n"
              "time.sleep(30)\n")
    script = tmp_path / "chunks.py"
    script.write_text(writer, encoding="utf-8")
    adapter = AdapterProcess(f"{sys.executable} {script}", max_line_bytes=4 << 20)
    try:
        assert adapter.receive(60) == {"a": long_text}
        assert adapter.receive(5) == {"b": 1}
    finally:
        adapter.kill()


def test_a_start_reply_s_own_members_and_names_are_reported_bounded(tmp_path: Path) -> None:
    """PROTO-REPORT-1: a start reply of megabytes within the line bound made a report of as much. The
    report copied the reply's `implementation` whole, members the protocol does not name included, and
    named each unknown machine and feature whole in its warnings."""
    adapter = tmp_path / "sprawling.py"
    sprawl = ("reply['implementation']['notes'] = 'N' * 1_000_000; "
              "reply['machines'].append('M' * 1_000_000); reply['features']['wake-gate'] = ['F' * 1_000_000]")
    adapter.write_text(_replying('json.dumps(reply).encode() + b"\\n"', on_start=sprawl))
    code, report, output = conform("--adapter", f"{sys.executable} {adapter}", "--machine", "wake-gate",
                                   "--run", "wake-gate/defaults")
    assert code == 0 and report is not None and report["ok"], output
    # The members the start reply's schema names, as sent; no other.
    assert report["implementation"] == {"name": "inboxspec-reference", "version": VERSION,
                                        "language": "python"}
    machine, feature = report["warnings"]
    assert machine.startswith("the adapter lists machine 'MMM") and feature.startswith(
        "the adapter lists feature 'FFF")
    assert all(f"… ({1_000_002 - QUOTED_CHARS} more characters)" in warning for warning in (machine, feature))
    assert len(json.dumps(report)) < 10_000 and len(output) < 10_000


def test_a_fuzz_report_warns_as_a_run_of_cases_does(tmp_path: Path) -> None:
    """PROTO-START-1, PROTO-STOP-1: a fuzz report carried no warnings: a machine the adapter listed
    that nothing registers, and an adapter that exited non-zero after stop, went unsaid."""
    adapter = tmp_path / "listing.py"
    adapter.write_text(_replying('json.dumps(reply).encode() + b"\\n"',
                                 on_start="reply['machines'].append('no-such-machine')",
                                 on_stop="sys.exit(5)"))
    code, report, output = conform("--adapter", f"{sys.executable} {adapter}", "--fuzz", "2", "--seed", "1",
                                   *WAKE_GATE)
    assert code == 0 and report is not None and report["ok"], output
    listed = "the adapter lists machine 'no-such-machine', which is not one of"
    assert report["warnings"][0].startswith(listed)
    assert report["warnings"][1:] == ["the adapter exited with status 5 after stop (PROTO-STOP-1)"]


def test_a_random_case_no_reply_within_the_bound_can_pass_is_refused_not_sent() -> None:
    """PROTO-FRAME-3 under --fuzz: with a lowered --max-line-bytes the random cases that no reply
    within it could pass were sent, the reference itself was blamed (oversized-line), restarted, and
    an unpassable case was shrunk and printed as a counterexample. They are refused as bundled
    ones are: exit 2, naming the case."""
    code, report, output = conform("--adapter", REFERENCE, "--fuzz", "5", "--seed", "1", "--max-line-bytes",
                                   "1200", *WAKE_GATE)
    assert code == 2 and report is not None and report["ok"] is False, output
    assert re.fullmatch(r"fuzz seed 1: wake-gate/fuzz-1-\d+: its shortest passing reply is \d+ bytes, longer "
                        r"than the reply bound \(1200 bytes, --max-line-bytes\): no adapter can pass it",
                        report["unusable"]), report["unusable"]
    assert "oversized-line" not in output


def test_a_reply_sent_twice_for_a_machine_s_last_random_case_blames_that_case(tmp_path: Path) -> None:
    """PROTO-RUN-4 under --fuzz: a reply sent twice for the last random case of one machine was
    blamed on the first case of the next machine (wrong-seq), and the shrinker kept that failure into
    a counterexample that passed on replay. The fuzz runs each machine's cases, and each shrink
    candidate, in a call of their own, and each call forgot the cases answered before it."""
    adapter = tmp_path / "twice.py"
    twice_for_the_third = 'str(request.get("case", {}).get("id", "")).endswith("-3")'
    once = 'json.dumps(reply).encode() + b"\\n"'
    adapter.write_text(_replying(f"({once}) * (2 if {twice_for_the_third} else 1)"))
    code, report, output = conform("--adapter", f"{sys.executable} {adapter}", "--fuzz", "3", "--seed", "1",
                                   "--machine", "idle-subscriptions", "--machine", "wake-gate")
    assert code == 1 and report is not None, output
    failed = {r["id"]: r.get("fault") for r in report["results"] if r["outcome"] != "pass"}
    assert failed == {"idle-subscriptions/fuzz-1-3": "duplicate-reply"}, failed
    machines_run = ("idle-subscriptions", "wake-gate")
    expected_ids = [f"{m}/fuzz-1-{n}" for m in machines_run for n in (1, 2, 3)]
    assert [r["id"] for r in report["results"]] == expected_ids
