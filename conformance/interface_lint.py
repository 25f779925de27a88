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
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from inboxspec import machines
from inboxspec.conformance.interrupts import raise_if_interrupted
from inboxspec.machines.itemwise import ItemwiseValidator, json_path

if TYPE_CHECKING:
    from inboxspec.conformance.casefiles import Case


@functools.cache
def _validator(machine: str) -> ItemwiseValidator | None:
    interface = machines.get(machine).interface
    return None if interface is None else ItemwiseValidator(interface.case_schema(), "steps", _own_event_rule)


def _event_of_rule(rule: Mapping[str, Any]) -> str | None:
    """The event a rule of the steps' ``allOf`` is about, when its ``if`` is the case schema's test of
    one event (``Interface.case_schema``), else None."""
    test = rule.get("if")
    if (isinstance(test, Mapping) and set(test) == {"properties", "required"}
            and test["required"] == ["event"]):
        event = test["properties"].get("event")
        if set(test["properties"]) == {"event"} and isinstance(event, Mapping) and set(event) == {"const"}:
            return event["const"] if isinstance(event["const"], str) else None
    return None


def _own_event_rule(step: Any, items: Mapping[str, Any]) -> tuple[tuple[str, ...] | None, Mapping[str, Any]]:
    """The steps' item schema narrowed to the rules that can give ``step`` an error, with a key that
    names the narrowed schema. For a step naming its event as a string, a rule whose ``if`` tests for
    another event is false on the step and gives it no error, so it is dropped unless it has an
    ``else``; every other rule is kept. Any other step keeps the whole item schema (key None)."""
    event = step.get("event") if isinstance(step, dict) else None
    if not isinstance(event, str):
        return None, items
    rules = items.get("allOf", [])
    events = {_event_of_rule(rule) for rule in rules}
    kept = [rule for rule in rules if _event_of_rule(rule) in (None, event) or "else" in rule]
    # One schema per event the rules name, and one for every other string (which no rule names,
    # so all of them keep the same rules).
    return (("event", event) if event in events else ("another event",)), {**items, "allOf": kept}


def case_instance(case: Case) -> dict[str, Any]:
    """The parts of a case the interface speaks of, as written in its file."""
    instance: dict[str, Any] = {"config": case.config, "steps": list(case.steps)}
    if case.expect_config_error is not None:
        instance["expect_config_error"] = case.expect_config_error
    return instance


def numbered_in_their_files(cases: Iterable[Case]) -> Iterator[tuple[int, Case]]:
    """Each case with its index in its own file (``$.cases[INDEX]``), for cases given in file order
    as the loader reads them: a case's index is the count of its file's cases before it."""
    position: dict[str, int] = {}
    for case in cases:
        index = position.get(case.source, 0)
        position[case.source] = index + 1
        yield index, case


def problems(cases: Iterable[Case], *, outputs_to_come: bool = False) -> list[str]:
    """Every place where a case departs from its machine's interface data, case by case in file order; at
    most the first MAX_LISTED_PROBLEMS found, then a line saying more were left out (``first_listed``).

    With ``outputs_to_come`` (``cases expect``, which is about to write every expected output from the
    reference) a step's arguments and expected output are not checked: whether a step's arguments
    must be valid depends on whether its output is an error, which is what the reference is about to
    answer (a step written with ``"expect": {}`` to be filled in is not yet an error step). Its event
    and the config still are."""
    found: list[str] = []
    keep = _not_about_a_steps_arguments_or_output if outputs_to_come else None
    for index, case in numbered_in_their_files(cases):
        raise_if_interrupted()  # PROTO-SIG-1: a run checking a large file ends within a case's check
        if case.machine not in machines.REGISTRY:
            continue
        validator = _validator(case.machine)
        if validator is None:
            continue
        for error_path, message in validator.errors(case_instance(case), MAX_LISTED_PROBLEMS + 1 - len(found),
                                                    keep):
            path = f"$.cases[{index}]" + json_path(error_path)[1:]
            found.append(f"{case.source}: {case.id}: interface: at {path}: {_short(message)}")
        if len(found) > MAX_LISTED_PROBLEMS:
            return first_listed(found)
    return found


# WARNING: spec/conformance-protocol.md (PROTO-CASES-1) states this bound; change both together.
# The most problems one check lists: a case file can hold a problem per two bytes, and listing every
# one of 16 MiB of them (each a line, a --json entry and a JUnit testcase) asked for 19 GB. The
# first ones say what is wrong as well.
MAX_LISTED_PROBLEMS = 1000


def first_listed(found: list[str]) -> list[str]:
    """The first MAX_LISTED_PROBLEMS of ``found``, and a line saying that more were left unlisted."""
    if len(found) <= MAX_LISTED_PROBLEMS:
        return found
    return [*found[:MAX_LISTED_PROBLEMS],
            f"more problems, not listed: the first {MAX_LISTED_PROBLEMS:,} are above"]


def _not_about_a_steps_arguments_or_output(path: tuple[str | int, ...]) -> bool:
    return not (len(path) >= 3 and path[0] == "steps" and path[2] in ("args", "expect"))


def _short(message: str) -> str:
    return message if len(message) <= 200 else message[:200] + "..."
