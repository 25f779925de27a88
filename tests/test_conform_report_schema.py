"""conformance/schemas/conform-report.schema.json describes the ``--json`` report exactly.

Every report the runner tests read is checked against it as it is read (tests/report_schema.py).
Here: the schema's words are the runner's (one definition: the outcomes and tallies are the
runner's constants), every kind of report keeps to it, and it refuses what a report must not be,
so that it is not a schema every object passes.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from inboxspec.conformance.adapter_process import CASE_FAULTS
from inboxspec.conformance.casefiles import Case, bundled_cases_dir, load_cases
from inboxspec.conformance.compare import find_difference
from inboxspec.conformance.runner import (
    ERROR,
    ERRORED,
    EXPECTED_FAIL,
    FAIL,
    PASS,
    SKIP,
    UNEXPECTED_PASS,
    CaseResult,
    Coverage,
    RunReport,
    _tally,
    unusable_report,
)
from tests.report_schema import checked_report, report_problems, report_validator

OUTCOMES = {PASS, FAIL, ERROR, SKIP, EXPECTED_FAIL, UNEXPECTED_PASS}
ROOT = Path(__file__).resolve().parent.parent


def _with_a_text(case: Case) -> str | None:
    """The first field of ``case``'s last expected output that holds a text, if one does."""
    last = case.steps[-1]["expect"] if case.steps else {}
    return next((key for key, value in last.items() if isinstance(value, str)), None)


def _report(long: bool = False, **marks: Any) -> dict[str, Any]:
    """A report of one machine with a result of every outcome, a failure with its first difference
    (a text's, with its window) among them, as ``--json`` prints it; with ``long``, the failure's
    actual text is too long to keep whole (PROTO-REPORT-1)."""
    cases = load_cases([bundled_cases_dir() / "wake-gate"])
    texted = next(c for c in cases if _with_a_text(c) is not None)
    key = _with_a_text(texted)
    assert key is not None
    wrong = copy.deepcopy({"outputs": [s["expect"] for s in texted.steps]})
    wrong["outputs"][-1][key] += " and more" * (1_000 if long else 1)
    difference = find_difference(texted, wrong)
    assert difference is not None
    results = [CaseResult(cases[0], PASS, seconds=0.01),
               CaseResult(texted, FAIL, difference.render(), difference),
               CaseResult(cases[2], ERROR, "crashed: exit code 3", fault="crashed"),
               CaseResult(cases[3], SKIP, "unsupported"),
               CaseResult(cases[4], EXPECTED_FAIL, "on the skip list"),
               CaseResult(cases[5], UNEXPECTED_PASS)]
    report = RunReport({"name": "port", "version": "1"}, results, 1, 0.5, Coverage(require=("wake-gate",)),
                       ("wake-gate",), **marks)
    printed: dict[str, Any] = json.loads(json.dumps(report.as_json()))
    return printed


def test_the_schema_names_the_runners_outcomes_and_tallies() -> None:
    schema = report_validator().schema
    assert isinstance(schema, dict)
    full = schema["$defs"]["full_report"]["properties"]
    assert set(schema["$defs"]["result"]["properties"]["outcome"]["enum"]) == OUTCOMES
    assert set(full["totals"]["required"]) == OUTCOMES == set(full["totals"]["properties"])
    tally = full["machines"]["additionalProperties"]
    assert set(tally["required"]) == set(_tally([])) == set(tally["properties"])


def test_the_schemas_faults_are_the_runners_and_the_protocols() -> None:
    """One list of the faults that error a case (adapter_process.CASE_FAULTS), which the schema's
    `fault` and the protocol's fault table name alike; `errored` is the adapter's own."""
    schema = report_validator().schema
    assert isinstance(schema, dict)
    assert schema["$defs"]["result"]["properties"]["fault"]["enum"] == [*CASE_FAULTS, ERRORED]
    protocol = (ROOT / "spec" / "conformance-protocol.md").read_text(encoding="utf-8")
    table = protocol.split("## What the runner does with a bad adapter", 1)[1].split("\n\n")[2]
    named = [m[1] for m in re.finditer(r"`error`, `([a-z-]+)`", table)]
    assert sorted(set(named)) == sorted(CASE_FAULTS), named


MARKS: dict[str, dict[str, Any]] = {
    "plain": {},
    "interrupted": {"interrupted": "SIGTERM"},
    "restart-failed": {"unusable": "after x (crashed: 3), restart failed"},
    "warned": {"warnings": ["the adapter lists machine 'x'"]},
    "fuzz": {"extra": {"fuzz": {"seed": 7, "seed_drawn": False, "count": 5, "shrunk": []}}},
}


@pytest.mark.parametrize("kind", MARKS)
def test_every_kind_of_report_keeps_to_the_schema(kind: str) -> None:
    report = checked_report(_report(**MARKS[kind]))
    assert [r["outcome"] for r in report["results"]] == [PASS, FAIL, ERROR, SKIP, EXPECTED_FAIL,
                                                          UNEXPECTED_PASS]
    assert "window" in report["results"][1]["first_difference"]


def test_a_report_with_a_value_kept_cut_keeps_to_the_schema() -> None:
    report = checked_report(_report(long=True))
    failure = report["results"][1]
    difference = failure["first_difference"]
    assert "actual_cut" in difference and "actual" not in difference and "window" in difference
    assert not report_problems({**report, "results": [failure]})
    # The cut value and the value together, or a head longer than the kept characters, are refused.
    cut = difference["actual_cut"]
    for wrong in ({**difference, "actual": "x"},
                  {**difference, "actual_cut": {**cut, "head": cut["head"] + "x"}}):
        assert report_problems({**report, "results": [{**failure, "first_difference": wrong}]})


def test_the_unusable_report_keeps_to_the_schema() -> None:
    checked_report(unusable_report("the adapter did not start (no such file)"))
    checked_report(unusable_report("interrupted by SIGINT", interrupted="SIGINT"))


def _without(report: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != key}


def _difference_without(report: dict[str, Any], key: str) -> dict[str, Any]:
    """``report`` with its failure's first difference missing ``key``."""
    failure = report["results"][1]
    changed = {**failure, "first_difference": _without(failure["first_difference"], key)}
    return {**report, "results": [changed]}


@pytest.mark.parametrize("breaks", [
    lambda r: {**r, "passed": 3},  # a key no reader knows
    lambda r: _without(r, "warnings"),
    lambda r: {**r, "totals": {**r["totals"], "pass": -1}},
    lambda r: {**r, "results": [{**r["results"][0], "outcome": "passed"}]},
    lambda r: {**r, "results": [_without(r["results"][0], "detail")]},
    lambda r: {**r, "interrupted": "SIGKILL"},
    lambda r: {**r, "unusable": "restart failed"},  # without its problems
    lambda r: _difference_without(r, "path"),
    lambda r: _difference_without(r, "window"),
    lambda r: {**r, "machines": {"wake-gate": _without(r["machines"]["wake-gate"], "errored")}},
    lambda r: {"ok": True, "unusable": "x", "problems": ["x"]},  # an unusable report is never ok
    lambda r: {**r, "results": [_without(r["results"][2], "fault")]},  # an error without its fault
    lambda r: {**r, "results": [{**r["results"][0], "fault": "crashed"}]},  # a pass with one
    lambda r: {**r, "results": [{**r["results"][2], "fault": "exploded"}]},
], ids=["unknown-key", "no-warnings", "negative-count", "unknown-outcome", "no-detail", "unknown-signal",
        "unusable-alone", "difference-without-path", "index-without-window", "tally-without-errored",
        "unusable-ok", "error-without-fault", "pass-with-fault", "unknown-fault"])
def test_the_schema_refuses_what_a_report_must_not_be(breaks: Any) -> None:
    assert report_problems(breaks(_report()))
