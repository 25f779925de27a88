"""`cases lint` checks writer-proofs cases against spec/writer-proofs.interface.json: a misspelt
argument, a wrong argument type and an unknown output field are each reported with their JSON
path; a config is checked for its keys, but its fixture only by the fixture schema (PROTO-FIX-3),
so a shared fixture's reference and the runner's own key fixture_dir do not fight that check."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from inboxspec.conformance.casefiles import lint

MACHINE = "writer-proofs"
FIXTURE = {"entries": [{"path": "home", "type": "dir"}]}
CONFIG: dict[str, Any] = {"home": "{fixture}/home", "own_root": "{fixture}/cli", "fixture": FIXTURE}
# A valid step of each kind the probes change: an event with a paths argument, and the harness step.
INITIAL: dict[str, Any] = {"event": "initial", "args": {"roots": ["{fixture}/cli"]},
           "expect": {"refusal": {"category": "running CLI", "cause": "unavailable", "phase": "initial",
                                  "detail": "unreadable", "renewal_state": None, "message": "m"},
                      "context": None}}
SWAP: dict[str, Any] = {"event": "swap_paths", "args": {"first": "a", "second": "b", "during": "before_read"},
        "expect": {"context": None}}


def case(slug: str, *steps: dict[str, Any], config: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": f"{MACHINE}/{slug}", "description": f"Probe {slug} lints as the interface says",
            "requirements": ["WRITER-IF-2"], "config": copy.deepcopy(CONFIG if config is None else config),
            "steps": [copy.deepcopy(step) for step in steps]}


def problems(tmp_path: Path, probe: dict[str, Any], **extra: Any) -> list[str]:
    """The interface problems of a file whose second case ($.cases[1]) is the probe."""
    document = {"machine": MACHINE, **extra, "cases": [case("good", INITIAL, SWAP), probe]}
    (tmp_path / "probe.json").write_text(json.dumps(document))
    return [p for p in lint([tmp_path]).problems if "interface:" in p]


def changed(step: dict[str, Any], **args: Any) -> dict[str, Any]:
    step = copy.deepcopy(step)
    step["args"].update(args)
    return step


def test_well_formed_steps_are_clean(tmp_path: Path) -> None:
    assert problems(tmp_path, case("also-good", INITIAL, SWAP, {"event": "attest", "expect": {
        "error": "no_context", "context": None}})) == []


def test_a_misspelt_argument_is_reported_with_its_path(tmp_path: Path) -> None:
    found = problems(tmp_path, case("misspelt", INITIAL, changed(SWAP, durring="before_read")))
    assert len(found) == 1, found
    assert f"{MACHINE}/misspelt: interface: at $.cases[1].steps[1].args:" in found[0]
    assert "'durring'" in found[0]


def test_a_wrong_argument_type_is_reported_with_its_path(tmp_path: Path) -> None:
    found = problems(tmp_path, case("typed", changed(INITIAL, roots="{fixture}/cli")))
    assert len(found) == 1, found
    assert "interface: at $.cases[1].steps[0].args.roots:" in found[0]
    # A swap moment outside the vocabulary is a wrong value of its type too.
    found = problems(tmp_path, case("moment", changed(SWAP, during="before_walk")))
    assert len(found) == 1 and "at $.cases[1].steps[0].args.during:" in found[0], found


def test_an_unknown_output_field_is_reported_with_its_path(tmp_path: Path) -> None:
    step = copy.deepcopy(INITIAL)
    step["expect"]["measurements"] = {"roots": [], "writers": []}
    found = problems(tmp_path, case("output", step))
    assert len(found) == 1, found
    assert "interface: at $.cases[1].steps[0].expect:" in found[0]
    # The harness step's output holds the state field alone.
    found = problems(tmp_path, case("swap-output", {**SWAP, "expect": {"context": None, "fences": False}}))
    assert len(found) == 1 and "at $.cases[1].steps[0].expect:" in found[0], found


def test_an_output_field_of_another_event_is_reported(tmp_path: Path) -> None:
    """A renewal escapes only from active (WRITER-ACT-7): an attest never outputs one."""
    step = {"event": "attest", "expect": {"renewal": {"state": "pending", "message": "m"}, "context": None}}
    found = problems(tmp_path, case("renewal", step))
    assert len(found) == 1 and "at $.cases[1].steps[0].expect:" in found[0], found


def test_a_step_that_expects_an_error_may_send_bad_arguments(tmp_path: Path) -> None:
    step: dict[str, Any] = {"event": "swap_paths", "args": {"first": 1, "durring": "now"},
            "expect": {"error": "invalid_argument", "context": None}}
    assert problems(tmp_path, case("fault", step)) == []
    step["expect"]["measurement"] = {}
    found = problems(tmp_path, case("fault-output", step))
    assert len(found) == 1 and "at $.cases[1].steps[0].expect:" in found[0], found


def test_a_missing_required_swap_path_of_a_valid_step_is_reported(tmp_path: Path) -> None:
    step = copy.deepcopy(SWAP)
    del step["args"]["second"]
    found = problems(tmp_path, case("missing", step))
    assert len(found) == 1 and "at $.cases[1].steps[0].args:" in found[0], found


def test_config_keys_are_checked_unless_the_case_expects_config_error(tmp_path: Path) -> None:
    found = problems(tmp_path, case("no-home", INITIAL, config={"own_root": "/x", "fixture": FIXTURE}))
    assert len(found) == 1 and "at $.cases[1].config:" in found[0] and "'home'" in found[0], found
    found = problems(tmp_path, case("option", INITIAL, config={**CONFIG, "options": {"fences": True}}))
    assert len(found) == 1 and "at $.cases[1].config.options:" in found[0], found
    rejected = {**case("config-error", config={"own_root": 1}), "steps": [],
                "expect_config_error": "invalid_config"}
    assert problems(tmp_path, rejected) == []


def test_the_runners_fixture_dir_is_not_a_cases_key(tmp_path: Path) -> None:
    found = problems(tmp_path, case("own-dir", INITIAL, config={**CONFIG, "fixture_dir": "/"}))
    assert len(found) == 1 and "at $.cases[1].config:" in found[0] and "'fixture_dir'" in found[0], found


def test_a_fixture_is_left_to_the_fixture_schema(tmp_path: Path) -> None:
    """A shared fixture's reference lints clean; a bad fixture is a fixture problem, not an
    interface one."""
    shared = case("shared", INITIAL, config={**CONFIG, "fixture": {"$fixture": "good"}})
    good = case("good", INITIAL, SWAP, config={**CONFIG, "fixture": {"$fixture": "good"}})
    document = {"machine": MACHINE, "fixtures": {"good": FIXTURE}, "cases": [good, shared]}
    (tmp_path / "probe.json").write_text(json.dumps(document))
    assert [p for p in lint([tmp_path]).problems if "probe.json" in p] == []
    bad = case("bad-fixture", INITIAL, config={**CONFIG, "fixture": {"entries": [{"path": "/abs"}]}})
    (tmp_path / "probe.json").write_text(json.dumps({"machine": MACHINE, "cases": [bad]}))
    found = [p for p in lint([tmp_path]).problems if "probe.json" in p]
    assert found and all("interface:" not in p for p in found), found
