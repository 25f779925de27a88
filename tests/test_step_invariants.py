"""Step invariants that every explored step passes can still fail: each refuses a real explored
step whose output is broken the way its property forbids (a receipt told twice or for a ticket never
issued, an answer sent twice, a notice for a subscription that was never outstanding).

An invariant that held on every step because it read nothing would pass every other test here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.checker.explore import edges
from inboxspec.machines.frame import Bounds

Step = tuple[Any, Any, dict[str, Any]]


def _steps(name: str, bounds: Mapping[str, str]) -> tuple[Bounds, list[Step]]:
    parsed = machines.get(name).explorer.parse_bounds(bounds)
    relation = edges(name, bounds)
    return parsed, [(pre, post, out) for (pre, _letter), (post, out) in relation.items()]


def _holds(name: str, invariant: str) -> Callable[..., bool]:
    (found,) = [inv for inv in machines.get(name).explorer.invariants if inv.name == invariant]
    return found.holds


def _refused(name: str, invariant: str, bounds: Bounds, steps: list[Step],
             broken: Callable[[Any, dict[str, Any]], list[dict[str, Any]]]) -> int:
    """How many steps ``broken`` broke: each holds as explored, and each breaking of it fails."""
    holds = _holds(name, invariant)
    count = 0
    for pre, post, out in steps:
        breakings = broken(pre, out)
        if breakings:
            assert holds(pre, post, out, bounds)
            for wrong in breakings:
                assert not holds(pre, post, wrong, bounds), (invariant, out, wrong)
            count += 1
    return count


@pytest.fixture(scope="module")
def peer_steps() -> tuple[Bounds, list[Step]]:
    return _steps("peer-delivery", {"held_cap": "1", "senders": "a"})


def _terminal_receipts_broken(pre: Any, out: dict[str, Any]) -> list[dict[str, Any]]:
    receipts = [r for r in out.get("receipts", ()) if r["state"] != "held"]
    if not receipts:
        return []
    first = receipts[0]
    return [
        {**out, "receipts": [*out["receipts"], first]},  # told twice
        # for a ticket never issued
        {**out, "receipts": [{**r, "ticket": 999} if r is first else r for r in out["receipts"]]},
        {**out, "held": [*out["held"], {"ticket": first["ticket"]}]},  # told, and still held
    ]


def test_peer_delivery_refuses_a_receipt_told_wrongly(peer_steps: tuple[Bounds, list[Step]]) -> None:
    bounds, steps = peer_steps
    broken = _terminal_receipts_broken
    assert _refused("peer-delivery", "one_terminal_receipt_each", bounds, steps, broken) > 20


def test_peer_delivery_counts_a_receipt_told_twice_as_lost(peer_steps: tuple[Bounds, list[Step]]) -> None:
    bounds, steps = peer_steps

    def told_twice(pre: Any, out: dict[str, Any]) -> list[dict[str, Any]]:
        return _terminal_receipts_broken(pre, out)[:1]  # the first breaking: the receipt told twice

    assert _refused("peer-delivery", "no_message_is_lost", bounds, steps, told_twice) > 20


@pytest.fixture(scope="module")
def idle_steps() -> tuple[Bounds, list[Step]]:
    return _steps("idle-subscriptions", {})


def test_idle_subscriptions_refuses_an_answer_sent_twice(idle_steps: tuple[Bounds, list[Step]]) -> None:
    bounds, steps = idle_steps

    def sent_twice(pre: Any, out: dict[str, Any]) -> list[dict[str, Any]]:
        sent = out.get("sent")
        return [{**out, "sent": [*sent, sent[0]]}] if sent else []

    assert _refused("idle-subscriptions", "one_answer_per_subscription", bounds, steps, sent_twice) > 20


def test_idle_subscriptions_refuses_a_notice_not_outstanding(idle_steps: tuple[Bounds, list[Step]]) -> None:
    bounds, steps = idle_steps

    def noticed_wrongly(pre: Any, out: dict[str, Any]) -> list[dict[str, Any]]:
        notices = out.get("notices")
        if not notices:
            return []
        return [{**out, "notices": [*notices, notices[0]]},  # told twice
                {**out, "notices": [{**notices[0], "subscription": 99}, *notices[1:]]}]  # never outstanding

    assert _refused("idle-subscriptions", "notices_only_for_outstanding", bounds, steps, noticed_wrongly) > 20


def test_idle_subscriptions_refuses_more_priors_than_kept(idle_steps: tuple[Bounds, list[Step]]) -> None:
    """``priors_within_bound`` reads the rows of the state reached: one more row for a target that
    has as many as the bound keeps breaks it, whatever the output."""
    bounds, steps = idle_steps
    holds = _holds("idle-subscriptions", "priors_within_bound")
    limit = bounds["priors_kept"] + 1
    broken = 0
    for pre, post, out in steps:
        for target in {row.target for row in post.outstanding}:
            rows = [row for row in post.outstanding if row.target == target]
            if len(rows) == limit:
                crowded = post._replace(outstanding=(*post.outstanding, rows[0]._replace(subscription=99)))
                assert holds(pre, post, out, bounds) and not holds(pre, crowded, out, bounds)
                broken += 1
    assert broken > 20
