"""`cases lint` checks inbox-refresh cases against spec/inbox-refresh.interface.json: a misspelt
argument, a wrong argument type and an unknown output field are each reported with their JSON
path; so are a bad job script field (a record the config carries), a `value` beside record keys
and a computation given for an outcome that takes none. A step that expects an error may send
anything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inboxspec.conformance.casefiles import lint
from inboxspec.conformance.interface_lint import MAX_LISTED_PROBLEMS
from inboxspec.machines import interface

T = "2026-01-01T00:00:00.000Z"
CONFIG: dict[str, Any] = {"jobs": [{"outcome": "result", "computation": {
    "items": [{"id": "c1", "at": T}], "more": 0, "expires_at": None, "capacity": None}}]}
STEP: dict[str, Any] = {"event": "edit_sources", "args": {"hard": True}, "expect": {"log": []}}


def case(slug: str, step: dict[str, Any], config: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": f"inbox-refresh/{slug}", "description": f"Probe {slug} lints as the interface says",
            "requirements": ["REFRESH-IF-1"], "config": CONFIG if config is None else config,
            "steps": [step]}


def problems(tmp_path: Path, probe: dict[str, Any]) -> list[str]:
    good = case("good", STEP)
    (tmp_path / "probe.json").write_text(json.dumps({"machine": "inbox-refresh", "cases": [good, probe]}))
    return [p for p in lint([tmp_path]).problems if "interface:" in p]


def step_with(**change: Any) -> dict[str, Any]:
    step: dict[str, Any] = json.loads(json.dumps(STEP))
    step.update(change)
    return step


def test_a_well_formed_case_is_clean(tmp_path: Path) -> None:
    assert problems(tmp_path, case("also-good", STEP)) == []


def test_a_misspelt_argument_is_reported_with_its_path(tmp_path: Path) -> None:
    found = problems(tmp_path, case("misspelt", step_with(args={"hrad": True})))
    assert len(found) == 1, found
    assert "inbox-refresh/misspelt: interface: at $.cases[1].steps[0].args:" in found[0]
    assert "'hrad'" in found[0]


def test_a_wrong_argument_type_is_reported_with_its_path(tmp_path: Path) -> None:
    found = problems(tmp_path, case("typed", step_with(args={"hard": "yes"})))
    assert len(found) == 1, found
    assert "interface: at $.cases[1].steps[0].args.hard:" in found[0]
    found = problems(tmp_path, case("typed-time", {"event": "advance", "args": {"now_ms": -1},
                                                    "expect": {"settled": None, "reason": None, "log": []}}))
    assert len(found) == 1 and "at $.cases[1].steps[0].args.now_ms:" in found[0], found


def test_an_unknown_output_field_is_reported_with_its_path(tmp_path: Path) -> None:
    found = problems(tmp_path, case("output", step_with(expect={"log": [], "logs": []})))
    assert len(found) == 1, found
    assert "interface: at $.cases[1].steps[0].expect:" in found[0]


def test_value_beside_a_record_key_is_reported(tmp_path: Path) -> None:
    step = {"event": "invalidate", "args": {"value": True, "hard": True}, "expect": {"log": []}}
    found = problems(tmp_path, case("alone", step))
    assert len(found) == 1 and "at $.cases[1].steps[0].args:" in found[0], found


def test_a_bad_job_script_field_is_reported_with_its_path(tmp_path: Path) -> None:
    for job, path in (({"outcome": "unavailable", "duration": 5}, "$.cases[1].config.jobs[0]:"),
                      ({"outcome": "unavailable", "cancel": "maybe"}, "$.cases[1].config.jobs[0].cancel:"),
                      ({"outcome": "unavailable", "computation": CONFIG["jobs"][0]["computation"]},
                       "$.cases[1].config.jobs[0]:"),
                      ({"outcome": "result"}, "$.cases[1].config.jobs[0]:")):
        found = problems(tmp_path, case("script", STEP, {"jobs": [job]}))
        assert len(found) == 1 and f"at {path}" in found[0], (job, found)


def test_a_step_that_expects_an_error_may_send_bad_arguments(tmp_path: Path) -> None:
    step = step_with(args={"hrad": True, "hard": "yes"}, expect={"error": "invalid_argument", "log": []})
    assert problems(tmp_path, case("fault", step)) == []
    step["expect"] = {"error": "invalid_argument", "log": [], "settled": None}
    found = problems(tmp_path, case("fault-output", step))
    assert len(found) == 1 and "at $.cases[1].steps[0].expect:" in found[0], found


def test_a_config_of_many_faults_lists_the_first_thousand(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A config can hold a departure per two bytes (``deny`` of numbers, where strings belong): every
    one listed, 16 MiB of them asked for 19 GB. The lint lists the first MAX_LISTED_PROBLEMS, then a
    line saying more were left out; and the reference names the config's first fault from the first
    FAULTS_READ errors it finds, not from all of them."""
    many = case("many-faults", STEP, {**CONFIG, "deny": [0] * (MAX_LISTED_PROBLEMS + 500)})
    (tmp_path / "probe.json").write_text(json.dumps({"machine": "inbox-refresh", "cases": [many]}))
    found = [p for p in lint([tmp_path]).problems if "many-faults" in p or p.startswith("more problems")]
    assert len(found) == MAX_LISTED_PROBLEMS + 1, found[-3:]
    assert all(": interface: at $.cases[0].config.deny[" in line for line in found[:MAX_LISTED_PROBLEMS])
    assert found[-1] == f"more problems, not listed: the first {MAX_LISTED_PROBLEMS:,} are above"

    read: list[object] = []
    schema = {"type": "array", "items": {"type": "string"}}
    validator = interface._strict_validator(interface._schema_text(schema))

    class Counted:
        def iter_errors(self, value: object) -> Any:
            for error in validator.iter_errors(value):
                read.append(error)
                yield error

    monkeypatch.setattr(interface, "_strict_validator", lambda _text: Counted())
    assert interface._first_fault(schema, [1, *[0] * 10_000]) == "at $[0]: 1 is not of type 'string'"
    assert len(read) == interface.FAULTS_READ
