"""Every fact in the wake-gate section of upstream-facts.md, pinned on the reference.

Facts about the gate itself each have a test below (the exact decision texts
and lane names are pinned by the conformance cases, which `inboxspec check`
runs). Facts about the surrounding host are outside the machine, as
spec/wake-gate.md ("What this leaves out") says, and are not pinned here:
the scheduler's delay syntax (`90s`, `25m`, ...), the receipts a host writes
and persists, the CLI's one refusal line per episode (the host's use of
`announce_refusal`, whose once-per-episode rule is pinned), the app's
3-second poll, and the variant revision (prior art for WAKE-F1 and WAKE-F4).
"""

from __future__ import annotations

import pytest

from inboxspec.impl.wake_gate import (
    DEFAULT_CADENCE_FLOOR_MS,
    DEFAULT_MAX_STREAK,
    Lane,
    Message,
    RefusalCode,
    WakePolicy,
    is_scheduled_self_mail,
)

SELF = Message("agent", "me", "me", "[scheduled] sweep")
CHAT = Message("agent", "peer", "me", "hello")
USER = Message("user", "person", "me", "hi")


def test_defaults_are_ten_and_thirty_seconds() -> None:
    assert (DEFAULT_MAX_STREAK, DEFAULT_CADENCE_FLOOR_MS) == (10, 30_000)
    policy = WakePolicy()
    assert (policy.max_streak, policy.floor_ms) == (10, 30_000)


@pytest.mark.parametrize(
    ("sender", "recipient", "text", "expected"),
    [
        ("me", "me", "[scheduled] x", True),
        ("me", "me", "[scheduled] ", True),  # eleven characters plus one space
        ("me", "me", "[scheduled]x", False),
        ("me", "me", "[SCHEDULED] x", False),  # case-sensitive
        ("me", "me", " [scheduled] x", False),  # nothing trimmed
        ("peer", "me", "[scheduled] x", False),
        ("me/child-1", "me/child-1", "[scheduled] x", True),  # subagent to itself
    ],
)
def test_scheduled_self_mail_predicate(sender: str, recipient: str, text: str, expected: bool) -> None:
    assert is_scheduled_self_mail(Message("agent", sender, recipient, text)) is expected


def test_user_lane_wakes_uncounted_and_does_not_reset() -> None:
    policy = WakePolicy()
    policy.streak = 7
    decision = policy.decide([CHAT, SELF, USER], now_ms=0)
    assert (decision.lane, decision.wake, decision.counts_against_cap) == (Lane.USER_INPUT, True, False)
    assert policy.streak == 7


def test_any_self_mail_makes_the_batch_scheduled_self_even_with_chatter() -> None:
    assert WakePolicy().decide([CHAT, SELF], now_ms=0).lane is Lane.SCHEDULED_SELF


def test_plugin_only_batch_is_chatter_and_consumes_cap() -> None:
    policy = WakePolicy(max_streak=1)
    first = policy.decide([], now_ms=0, plugin_pending=True)
    assert (first.lane, first.wake, policy.streak) == (Lane.CHATTER, True, 1)
    assert policy.decide([], now_ms=1, plugin_pending=True).wake is False


def test_plugin_pending_ignored_for_non_empty_batch() -> None:
    policy = WakePolicy()
    assert policy.decide([SELF], now_ms=0, plugin_pending=True).lane is Lane.SCHEDULED_SELF


def test_self_wake_time_recorded_always_even_when_rapid_or_refused() -> None:
    policy = WakePolicy(max_streak=0)
    policy.decide([SELF], now_ms=0)
    assert policy.state.last_self_wake_ms == 0
    refused = policy.decide([SELF], now_ms=10)
    assert refused.wake is False and policy.state.last_self_wake_ms == 10


def test_rapid_refusal_names_busy_spin_and_whole_second_floor() -> None:
    policy = WakePolicy(max_streak=0, floor_ms=45_900)
    policy.decide([SELF], now_ms=0)
    decision = policy.decide([SELF], now_ms=1)
    assert decision.refusal_code is RefusalCode.SELF_SPIN_CAP and decision.counts_against_cap
    assert decision.refusal_reason is not None
    assert "busy-spin" in decision.refusal_reason and "45s" in decision.refusal_reason


def test_rapid_under_cap_counts_and_rearms() -> None:
    policy = WakePolicy(max_streak=1)
    policy.decide([SELF], now_ms=0)
    policy.streak = 0
    policy.announce_refusal()
    decision = policy.decide([SELF], now_ms=1)
    assert (decision.wake, decision.counts_against_cap, policy.streak) == (True, True, 1)
    assert policy.announce_refusal() is True  # re-armed by the counted wake


def test_chatter_refusal_names_streak_and_queued_until_user_input() -> None:
    policy = WakePolicy(max_streak=2)
    policy.streak = 2
    decision = policy.decide([CHAT], now_ms=0)
    assert decision.refusal_code is RefusalCode.CHATTER_CAP
    assert decision.refusal_reason is not None
    assert "2 consecutive" in decision.refusal_reason
    assert "until the next user input" in decision.refusal_reason


def test_refusal_leaves_streak_so_next_tick_retries_the_same() -> None:
    policy = WakePolicy(max_streak=1)
    policy.decide([CHAT], now_ms=0)
    first = policy.decide([CHAT], now_ms=1)
    second = policy.decide([CHAT], now_ms=2)
    assert first == second and policy.streak == 1


def test_announce_true_on_fresh_policy_then_false() -> None:
    policy = WakePolicy()
    assert [policy.announce_refusal(), policy.announce_refusal()] == [True, False]


def test_reset_zeroes_streak_and_rearms() -> None:
    policy = WakePolicy()
    policy.streak = 5
    policy.announce_refusal()
    policy.reset_streak()
    assert policy.streak == 0 and policy.announce_refusal() is True


def test_floor_is_mutable_and_zero_makes_self_wakes_exempt() -> None:
    policy = WakePolicy()
    policy.floor_ms = 0
    decisions = [policy.decide([SELF], now_ms=5) for _ in range(20)]
    assert all(d.wake and not d.counts_against_cap for d in decisions) and policy.streak == 0


def test_max_streak_is_fixed_at_construction() -> None:
    policy = WakePolicy(max_streak=3)
    with pytest.raises(AttributeError):
        policy.max_streak = 4  # type: ignore[misc]


def test_zero_delay_self_spin_gets_eleven_turns() -> None:
    policy = WakePolicy()
    wakes = 0
    while policy.decide([SELF], now_ms=1_000).wake:
        wakes += 1
        assert wakes <= 11
    assert wakes == 11 and policy.streak == 10


def test_clock_jump_past_floor_makes_next_self_wake_exempt() -> None:
    policy = WakePolicy()
    policy.decide([SELF], now_ms=0)
    policy.decide([SELF], now_ms=1)
    decision = policy.decide([SELF], now_ms=1 + 30_000)
    assert decision.wake and not decision.counts_against_cap
