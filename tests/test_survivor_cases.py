"""The cases of conformance/cases/wake-gate/survivors.json each kill a mutant of the
reference that every other bundled case lets through (issue 9, attack 10; the
last one was found by `conform --fuzz` against a mutant of the Node port)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.conformance.casefiles import Case, load_cases
from inboxspec.conformance.compare import first_difference
from inboxspec.impl import wake_gate as wg

WAKE_GATE = machines.get("wake-gate")
original_decide = wg.decide
original_parse = wg.parse_message


def counted_wake_sets_refusal_flag(state: Any, summary: Any, now: int, rules: Any) -> Any:
    decision, after = original_decide(state, summary, now, rules)
    if decision.wake and decision.counts_against_cap:
        after = replace(after, refused_since_rearm=True)
    return decision, after


def counted_wake_keeps_refusal_flag(state: Any, summary: Any, now: int, rules: Any) -> Any:
    decision, after = original_decide(state, summary, now, rules)
    if decision.wake and decision.counts_against_cap:
        after = replace(after, refused_since_rearm=state.refused_since_rearm)
    return decision, after


def counted_self_wake_keeps_old_time(state: Any, summary: Any, now: int, rules: Any) -> Any:
    decision, after = original_decide(state, summary, now, rules)
    if decision.wake and decision.counts_against_cap and rules.options.cadence_from_allowed_wakes:
        after = replace(after, last_self_wake_ms=state.last_self_wake_ms)
    return decision, after


def tuple_messages(raw: object) -> Any:
    if isinstance(raw, list) and len(raw) == 4:  # read as (kind, from, to, text), as the model does
        return wg.Message(*raw)
    return original_parse(raw)


def options_or_empty(config: Mapping[str, Any]) -> wg.WakePolicy:
    return original_from_config({**config, "options": config.get("options") or {}})


original_from_config = wg.WakePolicy.from_config

# Each mutant, and the case file whose cases alone kill it.
MUTANTS: dict[str, tuple[Any, str, Callable[..., Any], str]] = {
    "counted-wake-sets-refusal-flag": (wg, "decide", counted_wake_sets_refusal_flag, "survivors.json"),
    "counted-wake-keeps-refusal-flag": (wg, "decide", counted_wake_keeps_refusal_flag, "survivors.json"),
    "counted-self-wake-keeps-old-time": (wg, "decide", counted_self_wake_keeps_old_time,
                                         "survivors.json"),
    "tuple-messages": (wg, "parse_message", tuple_messages, "survivors.json"),
    # Options given as null or as a list: interface.json has these cases.
    "options-or-empty": (wg.WakePolicy, "from_config", options_or_empty, "interface.json"),
}


def failing(cases: list[Case]) -> list[str]:
    return [c.id for c in cases
            if first_difference(c, WAKE_GATE.run_case(c.config, c.inputs)) is not None]


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_only_the_survivor_cases_kill_the_mutant(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    owner, attribute, replacement, killing_file = MUTANTS[name]
    monkeypatch.setattr(owner, attribute, replacement)
    cases = load_cases([WAKE_GATE.cases])
    killers = failing(cases)
    assert killers, f"{name} survives every bundled case"
    assert all(c.source.endswith(killing_file) for c in cases if c.id in killers), killers
