"""Each wake-gate finding: its property fails under the seed default and holds under its option.

The traces are the ones in spec/wake-gate.md; the properties are checked on
both the reference and the model, so the finding is about the machine and not
about one description of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from inboxspec.impl.wake_gate import WakePolicy
from inboxspec.machines.wake_gate_driver import ModelSession, apply_step

SELF = {"kind": "agent", "from": "me", "to": "me", "text": "[scheduled] sweep"}
CHATTER = {"kind": "agent", "from": "peer", "to": "me", "text": "hello"}


def decide(batch: list[dict[str, str]], now_ms: int) -> dict[str, Any]:
    return {"event": "decide", "args": {"batch": batch, "now_ms": now_ms}}


ANNOUNCE = {"event": "announce_refusal"}


def every_refusal_episode_is_announced(outputs: list[dict[str, Any]]) -> bool:
    # F1 trace: announce, refused decide, announce -> the last announce must be true.
    return outputs[-1]["announce"] is True


def self_wake_a_floor_after_last_allowed_is_exempt(outputs: list[dict[str, Any]]) -> bool:
    return outputs[-1]["wake"] is True and outputs[-1]["counts_against_cap"] is False


def zero_floor_makes_every_self_wake_exempt(outputs: list[dict[str, Any]]) -> bool:
    return all(o["counts_against_cap"] is False for o in outputs)


def streak_grows_only_when_something_is_pending(outputs: list[dict[str, Any]]) -> bool:
    # The empty poll must not have spent the cap, so the real chatter still wakes.
    return outputs[-1].get("wake") is True


FINDINGS: dict[str, tuple[str, dict[str, Any], list[dict[str, Any]], Callable[..., bool]]] = {
    "WAKE-F1": (
        "announce_requires_refusal",
        {"max_streak": 0},
        [ANNOUNCE, decide([CHATTER], 0), ANNOUNCE],
        every_refusal_episode_is_announced,
    ),
    "WAKE-F2": (
        "cadence_from_allowed_wakes",
        {"max_streak": 0, "floor_ms": 30_000},
        [decide([SELF], 0), decide([SELF], 1000), decide([SELF], 30_000)],
        self_wake_a_floor_after_last_allowed_is_exempt,
    ),
    "WAKE-F3": (
        "clamp_backwards_clock",
        {"floor_ms": 0},
        [decide([SELF], 5000), decide([SELF], 4000)],
        zero_floor_makes_every_self_wake_exempt,
    ),
    "WAKE-F4": (
        "reject_empty_batch",
        {"max_streak": 1},
        [decide([], 0), decide([CHATTER], 1)],
        streak_grows_only_when_something_is_pending,
    ),
}


def run_reference(config: dict[str, Any], steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    policy = WakePolicy.from_config(config)
    return [apply_step(policy, step) for step in steps]


def run_model(config: dict[str, Any], steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    session = ModelSession(config)
    return [session.apply(step) for step in steps]


@pytest.mark.parametrize("runner", [run_reference, run_model], ids=["reference", "model"])
@pytest.mark.parametrize("finding", sorted(FINDINGS))
def test_finding_fails_by_default_and_holds_with_option(
    finding: str, runner: Callable[..., list[dict[str, Any]]]
) -> None:
    option, config, trace, holds = FINDINGS[finding]
    assert not holds(runner(config, trace)), f"{finding}: property unexpectedly holds by default"
    fixed = {**config, "options": {option: True}}
    assert holds(runner(fixed, trace)), f"{finding}: property still fails with {option}"


def test_every_spec_finding_is_demonstrated() -> None:
    from inboxspec.spec import index as spec_index

    assert {f.id for f in spec_index.findings("wake-gate")} == set(FINDINGS)
