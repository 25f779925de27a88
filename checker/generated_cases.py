"""Generated conformance cases: one per chart transition.

Every transition of every chart (source state, event, and which of the
event's guarded transitions fired) gets a case: the shortest trace the
explorer found to it, with concrete inputs and the reference's exact outputs.
Transitions that need an option are reached with that option on and tagged
with its feature. Transitions that need a bound the default exploration
keeps small (the host's hand and reminders are off by default) are reached in
the explorer's coverage explorations (``coverage_bounds``,
``machines/frame.py``), which only fill in what the default bounds leave
unreached. The cases cite the requirement IDs named in the docstrings
of the transition's guards and actions. Transitions of events that a case
cannot observe (``Explorer.unobservable_events``: time passing between inputs
that carry their own time) are explored and checked but get no case: their
effect shows in the next observable step, which has its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from inboxspec import machines
from inboxspec.checker.compiled import CompiledTransition
from inboxspec.checker.explore import Explorations, compiled_chart
from inboxspec.checker.traces import NoReferenceOutputs, Replays, concrete_steps, model_disagreements, to_case
from inboxspec.conformance.casefiles import CaseFileError, case_file_text, share_fixtures, write_or_compare
from inboxspec.machines import interface
from inboxspec.machines.frame import Step, coverage_explorations

REQUIREMENT_ID = re.compile(r"\b[A-Z]+-[A-Z]+-\d+\b")


def requirements_of(transition: CompiledTransition) -> list[str]:
    found: list[str] = []
    for callback in (*transition.guards, *transition.actions):
        for requirement in REQUIREMENT_ID.findall(callback.function.__doc__ or ""):
            if requirement not in found:
                found.append(requirement)
    return found


# One exploration that cases are generated from: (raw bounds, options).
Source = tuple[Mapping[str, str], dict[str, bool]]

# Per chart transition: the options and the shortest trace that reaches it, and the parsed bounds.
Chosen = dict[tuple[str, str, int], tuple[dict[str, bool], list[Step], Any]]


def shortest_traces(explorations: Explorations, name: str,
                    configurations: Sequence[Source]) -> Chosen:
    """The shortest trace to each transition over the explorations of ``configurations``
    (bounds, options); of two as short, the one of the earlier configuration."""
    chosen: Chosen = {}
    for bounds, options in configurations:
        result = explorations.get(name, bounds, options)
        for key, trace in result.coverage.items():
            if key not in chosen or len(trace) < len(chosen[key][1]):
                chosen[key] = (options, trace, result.bounds)
    return chosen


def sources(name: str) -> tuple[list[Source], list[Source]]:
    """The explorations ``generate`` reads for a machine: the default bounds with no option and
    with each option on, and the explorer's coverage explorations (at the default options)."""
    explorer = machines.get(name).explorer
    return ([({}, {})] + [({}, {o: True}) for o in explorer.options],
            [(bounds, {}) for bounds in coverage_explorations(explorer)])


def generate(name: str, explorations: Explorations | None = None,
             replays: Replays | None = None) -> tuple[dict[str, Any], list[str]]:
    """The generated case file of one machine, and its problems: the transitions no
    exploration reached, and the cases on which the model and the reference disagree
    (their expectations come from the reference, so such a case pins one side only)."""
    explorations = explorations or Explorations()
    replays = replays or Replays()
    explorer = machines.get(name).explorer
    chart = compiled_chart(name)
    at_defaults, for_coverage = sources(name)
    chosen = shortest_traces(explorations, name, at_defaults)
    # A coverage exploration only fills in the transitions that those leave unreached, so a case
    # stays at the default bounds wherever they reach its transition.
    for key, found in shortest_traces(explorations, name, for_coverage).items():
        chosen.setdefault(key, found)
    cases = []
    problems: list[str] = []
    by_key = {t.key: t for t in chart.transitions}
    for key in sorted(chosen):
        if key[1] in explorer.unobservable_events:
            continue
        options, trace, bounds = chosen[key]
        transition = by_key[key]
        source, event, index = key
        slug = f"{source}-{event}-{index}".replace("_", "-")
        case = to_case(
            name, f"{name}/generated/{slug}",
            f"Transition {transition.describe()} replays with exact outputs",
            requirements_of(transition), explorer.config(bounds, options),
            concrete_steps(explorer, trace, bounds, options),
            features=interface.features_for_options(options) or None, replays=replays,
        )
        disagreements = model_disagreements(name, case, replays)
        if disagreements:
            problems.append(f"{name}: {case['id']}: the model and the reference disagree "
                            f"at steps {disagreements}")
        cases.append(case)
    problems += [f"{name}: no exploration reaches {t}"
                 for t in sorted(t.describe() for t in chart.transitions if t.key not in chosen)]
    return {"machine": name, "cases": cases}, problems


def render(file: dict[str, Any]) -> str:
    # A fixture that several cases repeat is written once and referenced (PROTO-FIX-4).
    return case_file_text(share_fixtures(file))


def write_or_check(write: bool, explorations: Explorations | None = None,
                   only: Sequence[str] | None = None, replays: Replays | None = None) -> list[str]:
    """Regenerate (or, without ``write``, compare); return problems: drift and unreached transitions.

    ``only`` limits the work to the named machines (a test that writes one
    machine's files must not rewrite the others'); ``replays`` remembers the case runs
    (``check`` passes the one its own replay of the case files filled)."""
    explorations = explorations or Explorations()
    problems: list[str] = []
    for entry in machines.all_machines():
        if only is not None and entry.name not in only:
            continue
        name = entry.name
        try:
            file, found = generate(name, explorations, replays)
        except NoReferenceOutputs as error:  # a case it cannot make: its file is neither written nor compared
            problems.append(f"{name}: {error}")
            continue
        problems.extend(found)
        path = entry.generated_cases
        text = render(file)
        try:
            if write_or_compare(path, text, write, within=entry.cases) and not write:
                problems.append(f"{path}: generated cases are stale; run `inboxspec cases generate`")
        except CaseFileError as error:
            problems.append(str(error))
    return problems
