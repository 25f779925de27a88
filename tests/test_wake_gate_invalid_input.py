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


# Each argument is valid or garbage independently, so that a step with exactly
# one bad argument (the case a lax check lets through) comes up often.
_message = st.fixed_dictionaries({"kind": st.sampled_from(["agent", "user"]), "from": st.just("me"),
                                  "to": st.just("me"), "text": st.just("[scheduled] x")})
_argument = {
    "batch": st.lists(_message, max_size=2) | json_values,
    "now_ms": st.integers(0, 2**53 - 1) | json_values,
    "plugin_pending": st.booleans() | json_values,
    "value": st.integers(0, 2**53 - 1) | json_values,
}
_arguments = st.fixed_dictionaries({}, optional=_argument)


@given(event=st.sampled_from(["decide", "set_streak", "set_floor"]), args=_arguments)
def test_garbage_is_rejected_or_valid_and_never_half_applied(event: str, args: dict[str, Any]) -> None:
    policy = busy_policy()
    before = (policy.state, policy.floor_ms)
    output = apply_step(policy, {"event": event, "args": args})
    # Whether the step is valid is decided here, independently of the reference,
    # so that a reference that accepts bad input fails as surely as one that
    # half-applies it.
    # The expected code follows the fault order, so a step with several faults
    # checks which one is reported.
    assert output.get("error") == _expected_error(event, args), output
    if "error" in output:
        assert (policy.state, policy.floor_ms) == before


def _safe_natural(value: Any, top: int = 2**53 - 1) -> bool:
    return type(value) is int and 0 <= value <= top


def _valid_message(raw: Any) -> bool:
    return (isinstance(raw, dict) and set(raw) == {"kind", "from", "to", "text"}
            and all(isinstance(raw[k], str) and raw[k] for k in ("kind", "from", "to"))
            and isinstance(raw["text"], str))


_ARGUMENTS = {"decide": {"batch", "now_ms", "plugin_pending"}, "set_streak": {"value"},
              "set_floor": {"value"}}


def _expected_error(event: str, args: dict[str, Any]) -> str | None:
    """The first fault in the order of WAKE-IF-5, as the spec words it (the busy
    policy has no empty-batch option), or None for a valid step."""
    if set(args) - _ARGUMENTS[event]:
        return "invalid_argument"
    if event == "decide":
        batch = args.get("batch")
        if not isinstance(batch, list):
            return "invalid_batch"
        if not all(_valid_message(m) for m in batch):
            return "invalid_message"
        if not _safe_natural(args.get("now_ms")):
            return "invalid_time"
        return None if type(args.get("plugin_pending", False)) is bool else "invalid_batch"
    if event == "set_streak":
        return None if _safe_natural(args.get("value"), 2**53 - 2) else "invalid_streak"
    return None if _safe_natural(args.get("value")) else "invalid_floor"


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
    def subclasses(cls: type[WakeGateError]) -> list[type[WakeGateError]]:
        return [cls, *(c for sub in cls.__subclasses__() for c in subclasses(sub))]

    codes = [c.code for c in subclasses(WakeGateError)[1:]]
    assert len(codes) == len(set(codes)) and all(codes)
