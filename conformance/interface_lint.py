"""``cases lint`` against each machine's interface data (``spec/<machine>.interface.json``).

Each case of a machine that has interface data is validated against the case
schema generated from it (``Interface.case_schema``): a step that expects a
valid output must name only its event's arguments, each of its type, and every
required one, and its expected output only the event's output fields. A step
whose expected output is an error may send anything (invalid-input cases send
unknown names and wrong types on purpose) but its expected output is still the
error shape; a config is checked only when the case does not expect
``config_error``. Each problem names the file, the case and its JSON path in
the file (``$.cases[3].steps[0].args.pluginPending``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import jsonschema

from inboxspec import machines

if TYPE_CHECKING:
    from inboxspec.conformance.casefiles import Case


@functools.cache
def _validator(machine: str) -> jsonschema.Draft202012Validator | None:
    interface = machines.get(machine).interface
    return None if interface is None else jsonschema.Draft202012Validator(interface.case_schema())


def case_instance(case: Case) -> dict[str, Any]:
    """The parts of a case the interface speaks of, as written in its file."""
    instance: dict[str, Any] = {"config": case.config, "steps": list(case.steps)}
    if case.expect_config_error is not None:
        instance["expect_config_error"] = case.expect_config_error
    return instance


def problems(cases: Iterable[Case]) -> list[str]:
    """Every place where a case departs from its machine's interface data, in file order."""
    found: list[str] = []
    position: dict[str, int] = {}
    for case in cases:
        # Cases are read in file order, so a case's index in its file is its count so far.
        index = position.get(case.source, 0)
        position[case.source] = index + 1
        if case.machine not in machines.REGISTRY:
            continue
        validator = _validator(case.machine)
        if validator is None:
            continue
        errors = sorted(validator.iter_errors(case_instance(case)),
                        key=lambda e: [str(p) for p in e.absolute_path])
        for error in errors:
            path = f"$.cases[{index}]" + error.json_path[1:]
            found.append(f"{case.source}: {case.id}: interface: at {path}: {_short(error.message)}")
    return found


def _short(message: str) -> str:
    return message if len(message) <= 200 else message[:200] + "..."
