"""`cases lint` checks idle-subscriptions cases against spec/idle-subscriptions.interface.json:
a misspelled argument, a wrong argument type and an unknown output field are each reported
with their JSON path, on a requester event, a target event and a helper; a null optional
argument is a valid value (IDLE-IF-1) and a null required one is not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inboxspec.conformance.casefiles import lint

STATE = {"phase": "idle", "outstanding": 0, "subscribers": 0}
EFFECTS: dict[str, list[Any]] = {"notices": [], "sent": [], "swept": []}
# One well-formed step per part of the machine.
STEPS: dict[str, dict[str, Any]] = {
    "requester": {"event": "subscribe", "args": {"target": "s2", "subscription": 1, "label": "Peer"},
                  "expect": {"verdict": "sent", "pushed_out": None, **EFFECTS,
                             **{**STATE, "outstanding": 1}}},
    "target": {"event": "set_held", "args": {"count": 2}, "expect": {**EFFECTS, **STATE}},
    "helpers": {"event": "format_clock", "args": {"epoch_ms": 60_000, "utc_offset_min": 60},
                "expect": {"clock": "01:01"}},
}
# Per part: (a misspelling of an argument, (an argument, a value of the wrong type), a stray output field).
PROBES: dict[str, tuple[str, tuple[str, Any], str]] = {
    "requester": ("subscription_id", ("subscription", "1"), "pushedOut"),
    "target": ("counts", ("count", -1), "held"),
    "helpers": ("utc_offset", ("utc_offset_min", 1440), "text"),
}
PARTS = sorted(STEPS)


def problems(tmp_path: Path, step: dict[str, Any], config: dict[str, Any] | None = None) -> list[str]:
    good = {"id": "idle-subscriptions/good", "description": "A well-formed probe",
            "requirements": ["IDLE-IF-1"], "config": {}, "steps": [STEPS["target"]]}
    probe = {**good, "id": "idle-subscriptions/probe", "steps": [step],
             **({} if config is None else {"config": config})}
    cases = {"machine": "idle-subscriptions", "cases": [good, probe]}
    (tmp_path / "probe.json").write_text(json.dumps(cases))
    return [p for p in lint([tmp_path]).problems if "interface:" in p]


def changed(part: str, args: dict[str, Any] | None = None,
            expect: dict[str, Any] | None = None) -> dict[str, Any]:
    step: dict[str, Any] = json.loads(json.dumps(STEPS[part]))
    step["args"].update(args or {})
    step["expect"].update(expect or {})
    return step


@pytest.mark.parametrize("part", PARTS)
def test_a_well_formed_step_is_clean(tmp_path: Path, part: str) -> None:
    assert problems(tmp_path, STEPS[part]) == []


@pytest.mark.parametrize("part", PARTS)
def test_a_misspelled_argument_is_reported_with_its_path(tmp_path: Path, part: str) -> None:
    name = PROBES[part][0]
    found = problems(tmp_path, changed(part, args={name: 1}))
    assert len(found) == 1, found
    assert "idle-subscriptions/probe: interface: at $.cases[1].steps[0].args:" in found[0]
    assert repr(name) in found[0]


@pytest.mark.parametrize("part", PARTS)
def test_a_wrong_argument_type_is_reported_with_its_path(tmp_path: Path, part: str) -> None:
    name, value = PROBES[part][1]
    found = problems(tmp_path, changed(part, args={name: value}))
    assert len(found) == 1, found
    assert f"interface: at $.cases[1].steps[0].args.{name}:" in found[0]


@pytest.mark.parametrize("part", PARTS)
def test_an_unknown_output_field_is_reported_with_its_path(tmp_path: Path, part: str) -> None:
    field = PROBES[part][2]
    found = problems(tmp_path, changed(part, expect={field: 1}))
    assert len(found) == 1, found
    assert "interface: at $.cases[1].steps[0].expect:" in found[0]
    assert repr(field) in found[0]


def test_a_null_optional_argument_is_a_value_and_a_null_required_one_is_not(tmp_path: Path) -> None:
    """IDLE-IF-1: null takes the default where the argument has one."""
    assert problems(tmp_path, changed("helpers", args={"utc_offset_min": None})) == []
    assert problems(tmp_path, changed("requester", args={"label": None})) == []
    found = problems(tmp_path, changed("requester", args={"subscription": None}))
    assert len(found) == 1 and "at $.cases[1].steps[0].args.subscription:" in found[0], found


def test_a_helper_output_carries_no_state_fields(tmp_path: Path) -> None:
    found = problems(tmp_path, changed("helpers", expect={"phase": "idle"}))
    assert len(found) == 1 and "at $.cases[1].steps[0].expect:" in found[0], found


def test_a_step_that_expects_an_error_may_send_bad_arguments(tmp_path: Path) -> None:
    step = changed("target", args={"counts": 1, "count": "x"})
    step["expect"] = {"error": "invalid_argument", **STATE}
    assert problems(tmp_path, step) == []


def test_a_config_null_is_reported(tmp_path: Path) -> None:
    """IDLE-CONF-1: null is never a config value."""
    found = problems(tmp_path, STEPS["target"], config={"ttl_ms": None})
    assert len(found) == 1 and "at $.cases[1].config.ttl_ms:" in found[0], found
