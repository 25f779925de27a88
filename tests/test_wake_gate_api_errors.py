"""Every public entry point of the Python API raises only the spec's typed errors.

Arbitrary Python values go into the constructor, ``from_config``,
``GateOptions``, ``Message``, ``parse_message``, ``parse_batch``, ``decide``
and the setters; the only exceptions allowed are :class:`WakeGateError`
subclasses, and a policy that raised is exactly as it was. Then one regression
test per escape that issue #8 listed, and the fault order of WAKE-IF-5 at the
API and through the driver.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from dataclasses import fields
from functools import partial
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inboxspec.impl.wake_gate import (
    EmptyBatchRejected,
    GateOptions,
    InvalidArgument,
    InvalidBatch,
    InvalidConfig,
    InvalidFloor,
    InvalidMessage,
    InvalidStreak,
    InvalidTime,
    Message,
    WakeGateError,
    WakePolicy,
    parse_batch,
    parse_message,
)
from inboxspec.machines.wake_gate_driver import apply_step

SELF = Message("agent", "me", "me", "[scheduled] a")
PEER = Message("agent", "peer", "me", "x")
PEER_JSON = {"kind": "agent", "from": "peer", "to": "me", "text": "x"}
BAD_JSON = {"kind": "agent", "from": "peer", "to": "me"}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children,
                                                                       max_size=3),
    max_leaves=6,
)

# Values that have broken entry points before, or plausibly could: mixed-type
# mapping keys (sorting them raised TypeError), ints too long to print,
# strings that look like booleans, message look-alikes, signalling NaNs.
awkward = st.sampled_from([
    None, [], (), {}, set(), b"", "", "no", "false", "true", 0, 1, -1, True, False, 1.0, 2.0,
    float("nan"), float("inf"), 2**53, 2**53 - 1, 10**5000, decimal.Decimal("sNaN"), object(),
    {1: True, "a": True}, {"reject_empty_batch": "no"}, {"announce_requires_refusal": 1},
    {"max_streak": None}, {"options": []}, {"options": {"x": True}}, [PEER], (PEER,), [PEER_JSON],
    [BAD_JSON], [PEER, 5], [[PEER]], "hello", iter([PEER]), GateOptions(),
    {"kind": "user", "from": "a", "to": "b", "text": 5}, PEER_JSON,
])
anything = st.one_of(st.from_type(object), json_values, awkward)


def busy_policy() -> WakePolicy:
    """A policy with non-trivial state, so an accidental change would show."""
    policy = WakePolicy(max_streak=3, options=GateOptions(announce_requires_refusal=True))
    policy.decide([SELF], now_ms=10)
    policy.decide([PEER], now_ms=20)
    return policy


def snapshot(policy: WakePolicy) -> tuple[Any, ...]:
    return policy.state, policy.floor_ms, policy.max_streak, policy.options


def only_typed_errors(call: Callable[[], object]) -> WakeGateError | None:
    """Run ``call``; return the typed error it raised, if any. Anything else fails the test."""
    try:
        call()
    except WakeGateError as error:
        assert error.code and str(error)
        return error
    return None


@given(max_streak=anything, floor_ms=anything, options=anything)
def test_constructor_raises_only_typed_errors(max_streak: Any, floor_ms: Any, options: Any) -> None:
    error = only_typed_errors(lambda: WakePolicy(max_streak, floor_ms, options))
    assert error is None or isinstance(error, InvalidConfig)


@given(config=anything | st.dictionaries(st.sampled_from(["max_streak", "floor_ms", "options", "x"]),
                                          anything, max_size=3))
def test_from_config_raises_only_invalid_config(config: Any) -> None:
    error = only_typed_errors(lambda: WakePolicy.from_config(config))
    assert error is None or isinstance(error, InvalidConfig)


@given(name=st.sampled_from(sorted(f.name for f in fields(GateOptions))), value=anything)
def test_gate_options_take_booleans_only(name: str, value: Any) -> None:
    error = only_typed_errors(lambda: GateOptions(**{name: value}))
    assert (error is None) == (type(value) is bool)
    mapped = only_typed_errors(lambda: GateOptions.from_mapping({name: value}))
    assert (mapped is None) == (type(value) is bool)


@given(raw=anything)
def test_option_mappings_raise_only_invalid_config(raw: Any) -> None:
    error = only_typed_errors(lambda: GateOptions.from_mapping(raw))
    assert error is None or isinstance(error, InvalidConfig)


@given(fields=st.tuples(anything, anything, anything, anything), raw=anything)
def test_messages_and_batches_raise_only_typed_errors(fields: tuple[Any, ...], raw: Any) -> None:
    for call in (lambda: Message(*fields), lambda: parse_message(raw), lambda: parse_batch(raw)):
        error = only_typed_errors(call)
        assert error is None or isinstance(error, (InvalidMessage, InvalidBatch))


@given(batch=anything, now_ms=anything, plugin_pending=anything)
def test_decide_raises_only_typed_errors_and_changes_nothing_when_it_does(
    batch: Any, now_ms: Any, plugin_pending: Any
) -> None:
    policy = busy_policy()
    before = snapshot(policy)
    error = only_typed_errors(lambda: policy.decide(batch, now_ms=now_ms, plugin_pending=plugin_pending))
    if error is not None:
        assert snapshot(policy) == before
        assert isinstance(error, (InvalidBatch, InvalidMessage, InvalidTime))


@given(value=anything)
def test_setters_raise_only_typed_errors_and_change_nothing_when_they_do(value: Any) -> None:
    for attribute, expected in (("streak", InvalidStreak), ("floor_ms", InvalidFloor)):
        policy = busy_policy()
        before = snapshot(policy)
        error = only_typed_errors(partial(setattr, policy, attribute, value))
        if error is not None:
            assert isinstance(error, expected) and snapshot(policy) == before
        # announce_refusal and reset_streak take no value; they still work afterwards.
        assert only_typed_errors(policy.announce_refusal) is None
        assert only_typed_errors(policy.reset_streak) is None


# -- one regression test per escape listed in issue #8 ----------------------------

@pytest.mark.parametrize("batch", [None, 5])
def test_decide_with_a_non_list_batch_is_invalid_batch(batch: Any) -> None:
    policy = busy_policy()
    before = snapshot(policy)
    with pytest.raises(InvalidBatch):  # was a bare TypeError
        policy.decide(batch, now_ms=30)
    assert snapshot(policy) == before


@pytest.mark.parametrize(("name", "value"), [("reject_empty_batch", "no"),
                                             ("announce_requires_refusal", "false")])
def test_a_string_option_is_invalid_config(name: str, value: str) -> None:
    with pytest.raises(InvalidConfig):  # was accepted, and switched the option on
        GateOptions(**{name: value})  # type: ignore[arg-type]


def test_options_as_a_plain_dict_are_parsed_and_applied() -> None:
    policy = WakePolicy(options={"reject_empty_batch": True})  # used to fail on the first decide
    assert policy.options == GateOptions(reject_empty_batch=True)
    with pytest.raises(EmptyBatchRejected):
        policy.decide([], now_ms=0)
    with pytest.raises(InvalidConfig):
        WakePolicy(options={"reject_empty_batch": "yes"})  # type: ignore[dict-item]  # a string on purpose
    with pytest.raises(InvalidConfig):
        WakePolicy(options=5)  # type: ignore[arg-type]


@pytest.mark.parametrize("config", [None, [], "max_streak", 5])
def test_from_config_of_a_non_object_is_invalid_config(config: Any) -> None:
    with pytest.raises(InvalidConfig):  # None was a TypeError, [] an AttributeError
        WakePolicy.from_config(config)


def test_mixed_type_keys_are_reported_not_sorted_into_a_type_error() -> None:
    with pytest.raises(InvalidConfig, match="unknown"):
        WakePolicy.from_config({1: 2, "a": 3})
    with pytest.raises(InvalidConfig, match="unknown"):
        GateOptions.from_mapping({1: True, "a": True})


def test_a_value_too_long_to_print_is_still_a_typed_error() -> None:
    with pytest.raises(InvalidStreak):
        busy_policy().streak = 10**5000


# -- the fault order (WAKE-IF-5): the API, and the driver through it ---------------

MULTI_FAULT: list[tuple[dict[str, Any], type[WakeGateError]]] = [
    ({"batch": 5, "now_ms": -1}, InvalidBatch),
    ({"batch": [BAD_JSON], "now_ms": "x"}, InvalidMessage),
    ({"batch": [PEER_JSON], "now_ms": -1, "plugin_pending": "yes"}, InvalidTime),
    ({"batch": [], "now_ms": 1, "plugin_pending": None}, InvalidBatch),
    ({"batch": [], "now_ms": 1.5}, InvalidTime),
    ({"batch": "x", "now_ms": 1.5, "plugin_pending": 1}, InvalidBatch),
    ({"batch": [PEER_JSON, BAD_JSON, 7], "now_ms": True, "plugin_pending": "no"}, InvalidMessage),
    ({"batch": [], "now_ms": None, "plugin_pending": 0}, InvalidTime),
]


@pytest.mark.parametrize(("args", "first"), MULTI_FAULT)
def test_the_api_reports_the_first_fault_in_the_spec_order(
    args: dict[str, Any], first: type[WakeGateError]
) -> None:
    policy = WakePolicy(options={"reject_empty_batch": True})
    before = snapshot(policy)
    with pytest.raises(WakeGateError) as info:
        policy.decide(args["batch"], now_ms=args["now_ms"], plugin_pending=args.get("plugin_pending", False))
    assert type(info.value) is first and snapshot(policy) == before
    assert apply_step(WakePolicy(options={"reject_empty_batch": True}),
                      {"event": "decide", "args": args})["error"] == first.code


def test_an_unknown_argument_comes_first_in_the_driver() -> None:
    output = apply_step(busy_policy(), {"event": "decide", "args": {"batch": 5, "now": 1}})
    assert output == {"error": InvalidArgument.code, "streak": 1}


@given(args=st.dictionaries(st.sampled_from(["batch", "now_ms", "plugin_pending"]), json_values,
                            max_size=3),
       reject_empty=st.booleans())
def test_the_driver_and_the_api_report_the_same_first_fault(
    args: dict[str, Any], reject_empty: bool
) -> None:
    """The driver only translates: the API alone decides which fault is reported."""
    options = {"reject_empty_batch": reject_empty}
    output = apply_step(WakePolicy(options=options), {"event": "decide", "args": args})
    policy = WakePolicy(options=options)
    # Any JSON value, or None when absent, goes in on purpose.
    error = only_typed_errors(lambda: policy.decide(
        cast(Any, args.get("batch")), now_ms=cast(Any, args.get("now_ms")),
        plugin_pending=args.get("plugin_pending", False)))
    assert output.get("error") == (error.code if error else None)
