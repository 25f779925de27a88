"""The runner against faulty adapters: every fault has a defined outcome and nothing hangs.

Each test names the requirements of spec/conformance-protocol.md it shows.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inboxspec.conformance.casefiles import bundled_cases_dir, load_cases

pytestmark = pytest.mark.slow

FAULTY = str(Path(__file__).parent / "adapters" / "faulty_adapter.py")
REFERENCE = f"{sys.executable} -m inboxspec.conformance.adapter"
TRIGGER_ID = "wake-gate/announce-on-fresh-gate"


def conform(*args: str, timeout: float = 120) -> tuple[int, dict[str, Any] | None, str]:
    process = subprocess.run(
        [sys.executable, "-m", "inboxspec", "conform", "--json", *args],
        capture_output=True, text=True, timeout=timeout,
    )
    try:
        report = json.loads(process.stdout)
    except json.JSONDecodeError:
        report = None
    return process.returncode, report, process.stdout + process.stderr


def faulty(fault: str, marker: Path | None = None) -> str:
    command = f"{sys.executable} {FAULTY} {fault} announce-on-fresh-gate"
    return command + (f" {marker}" if marker else "")


def outcome(report: dict[str, Any], case_id: str) -> dict[str, Any]:
    return next(r for r in report["results"] if r["id"] == case_id)


def test_reference_adapter_passes_everything() -> None:
    """PROTO-FRAME-1, PROTO-START-1, PROTO-RUN-1, PROTO-RUN-2, PROTO-STOP-1."""
    code, report, output = conform("--adapter", REFERENCE)
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
    code, report, output = conform("--adapter", faulty(fault, tmp_path / "once"),
                                   "--max-line-bytes", "1048576")
    assert code == 1, output
    assert report is not None
    bad = outcome(report, TRIGGER_ID)
    assert bad["outcome"] == "error" and bad["detail"].startswith(kind), bad
    assert report["totals"]["error"] == 1
    assert report["totals"]["pass"] == len(report["results"]) - 1
    assert report["restarts"] == 1


def test_crash_reports_adapter_stderr(tmp_path: Path) -> None:
    _, report, _ = conform("--adapter", faulty("crash", tmp_path / "once"))
    assert report is not None
    assert "adapter panic: simulated" in outcome(report, TRIGGER_ID)["detail"]


def test_hang_is_cut_by_the_per_case_timeout(tmp_path: Path) -> None:
    code, report, output = conform("--adapter", faulty("hang", tmp_path / "once"),
                                   "--timeout", "1.5")
    assert code == 1 and report is not None, output
    assert outcome(report, TRIGGER_ID)["detail"].startswith("timeout")
    assert report["totals"]["pass"] == len(report["results"]) - 1


def test_wrong_number_of_outputs_fails_the_case() -> None:
    code, report, _ = conform("--adapter", faulty("wrong-outputs"), "--run", TRIGGER_ID)
    assert code == 1 and report is not None
    result = outcome(report, TRIGGER_ID)
    assert result["outcome"] == "fail" and "expected 2 outputs, got 1" in result["detail"]


def test_lying_adapter_fails_with_a_readable_diff() -> None:
    process = subprocess.run(
        [sys.executable, "-m", "inboxspec", "conform", "--adapter", faulty("lie"),
         "--run", TRIGGER_ID], capture_output=True, text=True, timeout=60,
    )
    assert process.returncode == 1
    assert "FAIL wake-gate/announce-on-fresh-gate" in process.stdout
    assert 'expected {"announce": true, "streak": 0}' in process.stdout
    assert 'actual   {"announce": false, "streak": 0}' in process.stdout


def test_one_is_not_true() -> None:
    """PROTO-VAL-2."""
    code, report, _ = conform("--adapter", faulty("stringly-true"), "--run", TRIGGER_ID)
    assert code == 1 and report is not None
    assert outcome(report, TRIGGER_ID)["outcome"] == "fail"


def test_stderr_flood_does_not_block_the_run() -> None:
    """PROTO-FRAME-2."""
    code, report, output = conform("--adapter", faulty("stderr-flood"),
                                   "--run", "wake-gate/f[0-9]-*")
    assert code == 0, output
    assert report is not None and report["totals"]["pass"] == 8


@pytest.mark.parametrize("fault", ["never-start", "bad-start"])
def test_adapter_that_never_completes_start_is_an_unusable_run(fault: str) -> None:
    code, report, output = conform("--adapter", faulty(fault), "--start-timeout", "1.5")
    assert code == 2
    assert "did not complete start" in output
    assert report is not None and report["ok"] is False


def test_missing_adapter_binary_is_an_unusable_run() -> None:
    code, _, output = conform("--adapter", "/nonexistent/adapter --flag")
    assert code == 2 and "cannot start" in output


def test_skip_file_entries_must_still_fail(tmp_path: Path) -> None:
    skip_file = tmp_path / "known-failures.txt"
    skip_file.write_text(f"# the lie fault breaks this one\n{TRIGGER_ID}\n")
    code, report, _ = conform("--adapter", faulty("lie"), "--skip-file", str(skip_file),
                              "--run", "wake-gate/announce-*")
    assert code == 0 and report is not None
    assert outcome(report, TRIGGER_ID)["outcome"] == "expected-fail"
    code, report, _ = conform("--adapter", REFERENCE, "--skip-file", str(skip_file),
                              "--run", "wake-gate/announce-*")
    assert code == 1 and report is not None
    assert outcome(report, TRIGGER_ID)["outcome"] == "unexpected-pass"


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
    code, report, output = conform("--adapter", faulty(fault, tmp_path / "once"), "--window", "1",
                                   "--timeout", "1.5")
    assert code == 1 and report is not None, output
    assert outcome(report, TRIGGER_ID)["outcome"] == "error"
    assert report["totals"]["pass"] == len(report["results"]) - 1


def test_window_must_be_positive() -> None:
    code, _, output = conform("--adapter", REFERENCE, "--window", "0")
    assert code == 2 and "must be at least 1" in output


def test_broken_reference_fails_with_a_readable_diff() -> None:
    """One changed wake rule (the floor boundary) is caught, and the diff says where."""
    broken = f"{sys.executable} {Path(__file__).parent / 'adapters' / 'broken_reference_adapter.py'}"
    process = subprocess.run([sys.executable, "-m", "inboxspec", "conform", "--adapter", broken],
                             capture_output=True, text=True, timeout=120)
    assert process.returncode == 1
    block = process.stdout.split("FAIL wake-gate/defaults")[1].split("\nFAIL")[0]
    assert "step 13 (decide" in block and '"now_ms": 60099' in block
    assert 'expected {"counts_against_cap": false, "lane": "scheduledSelf"' in block
    assert 'actual   {"counts_against_cap": true, "lane": "scheduledSelf"' in block


FIXTURE_SPY = """
import json, os, sys
log = open(sys.argv[1], "a")
for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "stop":
        break
    if request["cmd"] == "start":
        reply = {"ready": True, "version": 1, "machines": ["writer-proofs"], "features": {},
                 "implementation": {"name": "spy", "version": "0", "language": "python"}}
    else:
        case = request["case"]
        directory = case.get("fixture_dir")
        log.write(json.dumps({"dir": directory, "real": directory == os.path.realpath(directory),
                              "files": sorted(os.listdir(directory))}) + "\\n")
        log.flush()
        reply = {"seq": request["seq"], "id": case["id"], "skipped": {"reason": "spy"}}
    print(json.dumps(reply), flush=True)
"""


def test_fixtures_are_materialised_for_each_request_and_removed(tmp_path: Path) -> None:
    """PROTO-FIX-1, PROTO-FIX-2: a fresh real directory per request, passed on, removed at the end."""
    spy, log = tmp_path / "spy.py", tmp_path / "log.jsonl"
    spy.write_text(FIXTURE_SPY)
    code, _report, output = conform("--adapter", f"{sys.executable} {spy} {log}",
                                    "--run", "writer-proofs/attest-after-*-changed")
    assert code == 0, output
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(seen) == 4 and len({s["dir"] for s in seen}) == 4
    assert all(s["real"] and {"cli", "home"} <= set(s["files"]) for s in seen)
    assert not any(Path(s["dir"]).exists() for s in seen)
