"""`cases lint` checks each case against its machine's interface data (spec/<machine>.interface.json):
an unknown argument, a wrong argument type and an unknown output field are each reported
with their JSON path, for both machines that have interface data; a step that expects an
error may send them on purpose."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.conformance.casefiles import lint

# One well-formed case per machine, with the probe step last (at $.cases[1].steps[-1]).
PROBES: dict[str, dict[str, Any]] = {
    "wake-gate": {
        "requirements": ["WAKE-IF-2"],
        "config": {"max_streak": 3},
        "step": {"event": "decide", "args": {"batch": [], "now_ms": 0, "plugin_pending": True},
                 "expect": {"lane": "chatter", "wake": True, "counts_against_cap": True,
                            "refusal_code": None, "refusal_reason": None, "streak": 1}},
        "misspelt": "pluginPending",
        "typed": ("now_ms", "0"),
        "error": {"error": "invalid_argument", "streak": 0},
    },
    "peer-delivery": {
        "requirements": ["PEER-IF-1"],
        "config": {"setting": "accept"},
        "step": {"event": "send_message", "args": {"sender": "a", "hops": 1},
                 "expect": {"ticket": 1, "send_error": None, "box": 1, "held": [],
                            "receipts": [{"ticket": 1, "sender": "a", "state": "delivered",
                                          "cause": None, "reason": None}]}},
        "misspelt": "rate_limit",
        "typed": ("hops", True),
        "error": {"error": "invalid_argument", "receipts": [], "held": [], "box": 0},
    },
}


def case(machine: str, slug: str, step: dict[str, Any],
         config: dict[str, Any] | None = None) -> dict[str, Any]:
    probe = PROBES[machine]
    return {"id": f"{machine}/{slug}", "description": f"Probe {slug} lints as the interface says",
            "requirements": probe["requirements"], "config": probe["config"] if config is None else config,
            "steps": [step]}


def problems(tmp_path: Path, machine: str, probe_case: dict[str, Any]) -> list[str]:
    good = case(machine, "good", PROBES[machine]["step"])
    (tmp_path / "probe.json").write_text(json.dumps({"machine": machine, "cases": [good, probe_case]}))
    return [p for p in lint([tmp_path]).problems if "interface:" in p]


def with_args(machine: str, change: dict[str, Any]) -> dict[str, Any]:
    step: dict[str, Any] = json.loads(json.dumps(PROBES[machine]["step"]))
    step["args"].update(change)
    return step


MACHINES = sorted(PROBES)


@pytest.mark.parametrize("machine", MACHINES)
def test_a_well_formed_case_is_clean(tmp_path: Path, machine: str) -> None:
    assert problems(tmp_path, machine, case(machine, "also-good", PROBES[machine]["step"])) == []


@pytest.mark.parametrize("machine", MACHINES)
def test_an_unknown_argument_is_reported_with_its_path(tmp_path: Path, machine: str) -> None:
    name = PROBES[machine]["misspelt"]
    found = problems(tmp_path, machine, case(machine, "misspelt", with_args(machine, {name: True})))
    assert len(found) == 1, found
    assert f"{machine}/misspelt: interface: at $.cases[1].steps[0].args:" in found[0]
    assert repr(name) in found[0]


@pytest.mark.parametrize("machine", MACHINES)
def test_a_wrong_argument_type_is_reported_with_its_path(tmp_path: Path, machine: str) -> None:
    name, value = PROBES[machine]["typed"]
    found = problems(tmp_path, machine, case(machine, "typed", with_args(machine, {name: value})))
    assert len(found) == 1, found
    assert f"interface: at $.cases[1].steps[0].args.{name}:" in found[0]


@pytest.mark.parametrize("machine", MACHINES)
def test_an_unknown_output_field_is_reported_with_its_path(tmp_path: Path, machine: str) -> None:
    step = json.loads(json.dumps(PROBES[machine]["step"]))
    step["expect"]["streaks" if machine == "wake-gate" else "tickets"] = 1
    found = problems(tmp_path, machine, case(machine, "output", step))
    assert len(found) == 1, found
    assert "interface: at $.cases[1].steps[0].expect:" in found[0]


@pytest.mark.parametrize("machine", MACHINES)
def test_a_step_that_expects_an_error_may_send_bad_arguments(tmp_path: Path, machine: str) -> None:
    name, value = PROBES[machine]["typed"]
    step = with_args(machine, {PROBES[machine]["misspelt"]: True, name: value})
    step["expect"] = PROBES[machine]["error"]
    assert problems(tmp_path, machine, case(machine, "fault", step)) == []
    # ...but its expected output is still the error shape.
    step["expect"] = {**PROBES[machine]["error"], "lane": "chatter"}
    found = problems(tmp_path, machine, case(machine, "fault-output", step))
    assert len(found) == 1 and "at $.cases[1].steps[0].expect:" in found[0], found


@pytest.mark.parametrize("machine", MACHINES)
def test_a_missing_required_argument_of_a_valid_step_is_reported(tmp_path: Path, machine: str) -> None:
    step = json.loads(json.dumps(PROBES[machine]["step"]))
    del step["args"]["now_ms" if machine == "wake-gate" else "sender"]
    found = problems(tmp_path, machine, case(machine, "missing", step))
    assert len(found) == 1 and "at $.cases[1].steps[0].args:" in found[0], found


@pytest.mark.parametrize("machine", MACHINES)
def test_config_keys_are_checked_unless_the_case_expects_config_error(tmp_path: Path, machine: str) -> None:
    bad_config = {"no_such_key": 1}
    found = problems(tmp_path, machine, case(machine, "config", PROBES[machine]["step"], bad_config))
    assert len(found) == 1 and "at $.cases[1].config:" in found[0], found
    rejected = {**case(machine, "config-error", PROBES[machine]["step"], bad_config),
                "steps": [], "expect_config_error": "invalid_config"}
    assert problems(tmp_path, machine, rejected) == []


@pytest.mark.parametrize("machine", MACHINES)
def test_an_expected_config_error_is_the_machine_s_one_code(tmp_path: Path, machine: str) -> None:
    """A case expecting a config error no port may answer (the attack on host inputs: "not_a_code")
    reached a correct port as a failure; lint names it now."""
    rejected = {**case(machine, "config-error", PROBES[machine]["step"], {"no_such_key": 1}),
                "steps": [], "expect_config_error": "not_a_code"}
    found = problems(tmp_path, machine, rejected)
    assert len(found) == 1 and "at $.cases[1].expect_config_error:" in found[0], found
    assert "'invalid_config' was expected" in found[0], found


@pytest.mark.parametrize("machine", MACHINES)
def test_an_expected_error_is_one_of_the_machine_s_codes(tmp_path: Path, machine: str) -> None:
    """An error no port may answer ("totally_bogus", from the attack on host inputs) reached a
    correct port as a failure; lint names it now, and the machine's own codes still pass."""
    bogus = {**PROBES[machine]["step"], "expect": {**PROBES[machine]["error"], "error": "totally_bogus"}}
    found = problems(tmp_path, machine, case(machine, "bogus-error", bogus))
    assert len(found) == 1 and "at $.cases[1].steps[0].expect.error:" in found[0], found
    own = {**PROBES[machine]["step"], "expect": PROBES[machine]["error"]}
    assert problems(tmp_path, machine, case(machine, "own-error", own)) == []


def test_an_unknown_option_is_reported(tmp_path: Path) -> None:
    bad_option = {"options": {"wake_always": True}}
    probe = case("wake-gate", "option", PROBES["wake-gate"]["step"], bad_option)
    found = problems(tmp_path, "wake-gate", probe)
    assert len(found) == 1 and "at $.cases[1].config.options:" in found[0], found


def _host_case_with_records() -> tuple[dict[str, Any], int, int]:
    """A bundled host case, and the position of a step and of a record in its expected events."""
    bundled = Path(__file__).parent.parent / "conformance" / "cases" / "host" / "watcher.json"
    for found in json.loads(bundled.read_text())["cases"]:
        for step_index, step in enumerate(found["steps"]):
            if step.get("expect", {}).get("events"):
                return found, step_index, 0
    raise AssertionError("no bundled host case expects a record")


@pytest.mark.parametrize(("change", "complaint"), [
    (lambda record: record.update(type="wake_up"), "is not one of"),
    (lambda record: record.pop(sorted(set(record) - {"type"})[0]), "is a required property"),
    (lambda record: record.update(note="extra"), "'note' was unexpected"),
])
def test_an_expected_host_record_has_a_known_type_and_exactly_its_fields(
        tmp_path: Path, change: Any, complaint: str) -> None:
    """HOST-IF-3 through the interface data's ``output_records``: a record no port may give (a
    type outside ``record_types``, a field missing or added) reached a correct port as a failure;
    lint names it now, at the record's path."""
    good, step_index, record_index = _host_case_with_records()
    changed = json.loads(json.dumps(good))
    changed["id"], changed["description"] = good["id"] + "-changed", good["description"] + " (changed)"
    change(changed["steps"][step_index]["expect"]["events"][record_index])
    (tmp_path / "host.json").write_text(json.dumps({"machine": "host", "cases": [good, changed]}))
    found = [p for p in lint([tmp_path]).problems if "interface:" in p]
    assert len(found) == 1, found
    assert f"at $.cases[1].steps[{step_index}].expect.events[{record_index}]" in found[0], found
    assert complaint in found[0], found


def test_a_config_the_reference_refuses_is_named_unless_the_case_expects_it(tmp_path: Path) -> None:
    """The host's two harness-line options at once: the interface data types the config clean,
    but the reference refuses it (HOST-IF-1), so a case that expects ordinary outputs from it
    reached every correct port as a failure; lint names it now, and the same config expecting
    the config error with no steps lints clean."""
    good, _step_index, _record_index = _host_case_with_records()
    both = {"harness_lines_as_agent_mail": True, "harness_lines_at_next_turn": True}
    refused = {**json.loads(json.dumps(good)), "id": good["id"] + "-refused",
               "description": good["description"] + " (refused)"}
    refused["config"] = {**refused["config"], "options": both}
    expected = {**refused, "id": good["id"] + "-expected", "description": good["description"] + " (expected)",
                "steps": [], "expect_config_error": "invalid_config"}
    (tmp_path / "host.json").write_text(json.dumps({"machine": "host", "cases": [good, refused, expected]}))
    found = [p for p in lint([tmp_path]).problems if "refuses" in p]
    assert found == [f"{tmp_path / 'host.json'}: {refused['id']}: the reference refuses this config "
                     f"(invalid_config), so no port may give the outputs its steps expect: expect the "
                     f"config error with no steps, or change the config"], found


def test_lint_builds_no_case_of_a_machine_whose_runner_makes_its_directory(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Building a writer-proofs config writes a directory (the case's fixture, or an empty one of
    its own): lint builds none, so a fixture is never written before the runner checks it, and a
    temporary directory lint cannot use is no traceback. The other machines' cases are built."""
    built: list[str] = []

    def recorded(name: str) -> Any:
        def run_case(config: Any, steps: Any) -> dict[str, Any]:
            built.append(name)
            return {"outputs": []}
        return run_case

    for entry in machines.all_machines():
        replaced = dataclasses.replace(entry, run_case=recorded(entry.name))
        monkeypatch.setitem(machines.REGISTRY, entry.name, replaced)
    bundled = Path(__file__).parent.parent / "conformance" / "cases"
    report = lint([bundled / "writer-proofs", bundled / "wake-gate"])
    assert [p for p in report.problems if "refuses" in p] == []
    assert "writer-proofs" not in built and "wake-gate" in built


def test_a_reference_that_fails_building_a_config_is_named_not_a_traceback(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Lint builds configs from untrusted case files in the reference; a fault of the reference's
    own while building one is a named problem, not a traceback out of ``cases lint``."""
    def failing(config: Any, steps: Any) -> dict[str, Any]:
        raise RecursionError("planted")

    entry = machines.get("wake-gate")
    monkeypatch.setitem(machines.REGISTRY, "wake-gate", dataclasses.replace(entry, run_case=failing))
    report = lint([Path(__file__).parent.parent / "conformance" / "cases" / "wake-gate"])
    failed = [p for p in report.problems if "the reference failed building this config" in p]
    assert failed and all("(RecursionError: planted): a fault of the reference" in p for p in failed)
