"""The lockstep test must catch a single changed rule in the reference.

Each mutant below is a plausible one-rule bug. It is patched into
``inboxspec.impl.wake_gate`` and the lockstep machine must then fail. A mutant
that survives means the lockstep test has a blind spot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from inboxspec.impl import wake_gate as wg
from tests.test_wake_gate_lockstep import WakeGateLockstep

original_decide = wg.decide
original_announce = wg.announce
original_chatter_reason = wg.chatter_refusal_reason


def rapid_at_the_floor(last: int | None, now: int, rules: wg.GateRules) -> bool:
    return last is not None and now - last <= rules.floor_ms


def user_input_resets_streak(state: Any, summary: Any, now: int, rules: Any) -> Any:
    decision, after = original_decide(state, summary, now, rules)
    if decision.lane is wg.Lane.USER_INPUT:
        after = replace(after, streak=0)
    return decision, after


def refusal_keeps_old_self_wake_time(state: Any, summary: Any, now: int, rules: Any) -> Any:
    decision, after = original_decide(state, summary, now, rules)
    if not decision.wake:
        after = replace(after, last_self_wake_ms=state.last_self_wake_ms)
    return decision, after


def exempt_wake_rearms(state: Any, summary: Any, now: int, rules: Any) -> Any:
    decision, after = original_decide(state, summary, now, rules)
    if decision.wake and not decision.counts_against_cap:
        after = replace(after, announced=False, refused_since_rearm=False)
    return decision, after


def announce_twice_while_refusing(state: Any, rules: Any) -> Any:
    if state.announced and state.refused_since_rearm:
        return True, state
    return original_announce(state, rules)


def refusal_text_off_by_one(streak: int, cap: int) -> str:
    return original_chatter_reason(streak + 1, cap)


MUTANTS: dict[str, tuple[str, Callable[..., Any] | str]] = {
    "rapid-includes-floor": ("is_rapid", rapid_at_the_floor),
    "prefix-without-space": ("SCHEDULED_PREFIX", "[scheduled]"),
    "user-input-resets": ("decide", user_input_resets_streak),
    "refusal-keeps-self-time": ("decide", refusal_keeps_old_self_wake_time),
    "exempt-wake-rearms": ("decide", exempt_wake_rearms),
    "announce-twice": ("announce", announce_twice_while_refusing),
    "reset-keeps-announcement": ("reset", lambda state: replace(state, streak=0)),
    "refusal-text-off-by-one": ("chatter_refusal_reason", refusal_text_off_by_one),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_lockstep_kills_mutant(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    attribute, replacement = MUTANTS[name]
    monkeypatch.setattr(wg, attribute, replacement)
    with pytest.raises(AssertionError):
        run_state_machine_as_test(
            WakeGateLockstep,
            settings=settings(
                max_examples=400,
                stateful_step_count=40,
                derandomize=True,
                deadline=None,
                database=None,
                # Detection is the point; shrinking a found bug only costs time.
                phases=[Phase.explicit, Phase.generate],
                report_multiple_bugs=False,
                suppress_health_check=[HealthCheck.too_slow],
            ),
        )
