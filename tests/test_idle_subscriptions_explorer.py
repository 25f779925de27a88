"""The default exploration reaches every situation the spec's rules are about.

Caps on both halves, a push-out, a displacement, a retransmission, a silent
sweep, an answer for a subscription the requester no longer holds, a fire
cancelled by a continuing turn, the held back-off, exit and shutdown: each is
a step of the exhaustively explored relation at the default bounds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.checker.explore import edges


@pytest.fixture(scope="module")
def relation() -> list[tuple[Any, str, Any, dict[str, Any]]]:
    actions = machines.get("idle-subscriptions").explorer.alphabet(
        machines.get("idle-subscriptions").explorer.parse_bounds({}))
    return [(pre, actions[index].label, post, output)
            for (pre, index), (post, output) in edges("idle-subscriptions").items()]


# Each situation is a predicate on one step: pre-state, event label, post-state, output.
SITUATIONS: dict[str, Callable[[Any, str, Any, dict[str, Any]], bool]] = {
    "requester cap": lambda pre, letter, post, out: out.get("verdict") == "cap",
    "target cap": lambda pre, letter, post, out: out.get("accepted") is False and pre[0] not in (
        "exited", "shut_down"),
    "prior pushed out": lambda pre, letter, post, out: out.get("pushed_out") is not None,
    "displacement": lambda pre, letter, post, out: out.get("displaced") is not None,
    "retransmission": lambda pre, letter, post, out: out.get("accepted") is True
    and out.get("announcement") is None,
    "requester expiry": lambda pre, letter, post, out: any(
        n["kind"] == "expired" for n in out.get("notices", ())),
    "silent sweep": lambda pre, letter, post, out: bool(out.get("swept")),
    "answer for a subscription not held": lambda pre, letter, post, out: out.get("resolved") is False,
    "fire cancelled by a continuing turn": lambda pre, letter, post, out: pre[0] == "settling"
    and letter == "turn_started",
    "held back-off": lambda pre, letter, post, out: pre[0] == "settling" and post[0] == "backing_off",
    "idle answer after a back-off": lambda pre, letter, post, out: pre[0] == "backing_off"
    and any(a["kind"] == "idle" for a in out.get("sent", ())),
    "exit answers": lambda pre, letter, post, out: letter == "exit"
    and any(a["kind"] == "exited" for a in out.get("sent", ())),
    "shutdown answers": lambda pre, letter, post, out: letter == "shutdown"
    and any(a["kind"] == "unavailable" for a in out.get("sent", ())),
}


@pytest.mark.parametrize("situation", sorted(SITUATIONS))
def test_default_exploration_reaches(situation: str,
                                     relation: list[tuple[Any, str, Any, dict[str, Any]]]) -> None:
    matches = SITUATIONS[situation]
    assert any(matches(pre, letter, post, out) for pre, letter, post, out in relation), situation


def test_compiled_view_and_send_agree_on_every_transition() -> None:
    """The explorer fires the chart's own guards and actions: at small bounds, every
    transition of the compiled view equals python-statemachine's own ``send()``."""
    for options in ({}, {"fire_when_already_idle": True, "answers_from_target_only": True}):
        bounds = {"outstanding_cap": "1", "ttl_ms": "1"}
        compiled = edges("idle-subscriptions", bounds, options)
        assert compiled == edges("idle-subscriptions", bounds, options, via="dispatch")
        assert len(compiled) > 1000
