"""Bad input raises a typed error with a stable code and changes no state."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inboxspec.impl.wake_gate import (
    GateOptions,
    InvalidConfig,
    InvalidMessage,
    Message,
    WakeGateError,
    WakePolicy,
)
from inboxspec.machines.wake_gate_driver import apply_step

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children,
                                                                       max_size=3),
    max_leaves=6,
)


def busy_policy() -> WakePolicy:
    """A policy with non-trivial state, so an accidental change would show."""
    policy = WakePolicy(max_streak=3, options=GateOptions(announce_requires_refusal=True))
    policy.decide([Message("agent", "me", "me", "[scheduled] a")], now_ms=10)
    policy.decide([Message("agent", "peer", "me", "x")], now_ms=20)
    return policy


@given(event=st.sampled_from(["decide", "set_streak", "set_floor"]), args=st.dictionaries(
    st.sampled_from(["batch", "now_ms", "plugin_pending", "value"]), json_values, max_size=4))
def test_garbage_is_rejected_or_valid_and_never_half_applied(event: str, args: dict[str, Any]) -> None:
    policy = busy_policy()
    before = (policy.state, policy.floor_ms)
    output = apply_step(policy, {"event": event, "args": args})
    if "error" in output:
        assert (policy.state, policy.floor_ms) == before
        assert output["error"] in {"invalid_time", "invalid_batch", "invalid_message",
                                   "invalid_streak", "invalid_floor"}


@pytest.mark.parametrize(
    "kwargs",
    [{"max_streak": -1}, {"max_streak": 2.0}, {"max_streak": True}, {"floor_ms": -5},
     {"floor_ms": "30s"}, {"max_streak": 2**53}],
)
def test_bad_construction_is_invalid_config(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidConfig) as info:
        WakePolicy(**kwargs)
    assert info.value.code == "invalid_config" and str(info.value)


@pytest.mark.parametrize(
    "fields",
    [("", "a", "b", "t"), ("agent", "", "b", "t"), ("agent", "a", None, "t"), ("agent", "a", "b", 3)],
)
def test_malformed_message_is_typed(fields: tuple[Any, ...]) -> None:
    with pytest.raises(InvalidMessage):
        Message(*fields)


def test_a_non_message_in_the_batch_changes_nothing() -> None:
    policy = busy_policy()
    before = policy.state
    with pytest.raises(InvalidMessage):
        policy.decide([Message("user", "p", "me", "hi"), "hi"], now_ms=30)  # type: ignore[list-item]
    assert policy.state == before


def test_every_error_class_has_a_distinct_code() -> None:
    def subclasses(cls: type) -> list[type]:
        return [cls, *(c for sub in cls.__subclasses__() for c in subclasses(sub))]

    codes = [c.code for c in subclasses(WakeGateError)[1:]]
    assert len(codes) == len(set(codes)) and all(codes)
