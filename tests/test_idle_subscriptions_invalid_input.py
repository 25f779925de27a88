"""Bad input raises a typed error with a stable code and changes no state (IDLE-ERR-*).

Arbitrary Python values go into every public entry point: the constructor and
``from_config``, every event method, and the notice helpers. The only
exceptions allowed are the spec's typed errors, and after one the machine is
exactly as it was.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inboxspec.impl import idle_label
from inboxspec.impl.idle_errors import IdleSubscriptionError
from inboxspec.impl.idle_subscriptions import IdleConfig, IdleOptions, IdleSubscriptions
from inboxspec.machines.idle_subscriptions_driver import apply_step
from tests.typed_errors import raises_only

values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=True)
    | st.text(max_size=6) | st.sampled_from([0, 1, 2, 2**53 - 1, 2**53, -1, "idle", "a", b"x", object()]),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.sampled_from(["kind", "finished_at", "detail", "x"]), children, max_size=3),
    max_leaves=6,
)
CODES = {"invalid_config", "invalid_argument", "invalid_time", "target_closed", "duplicate_subscription",
         "turn_in_progress", "no_turn"}


def busy_machine() -> IdleSubscriptions:
    """A machine with something in every part of its state, so an accidental change would show."""
    machine = IdleSubscriptions(IdleConfig(ttl_ms=1000, debounce_ms=10, subscriber_cap=2))
    machine.advance(5)
    machine.subscribe("s2", 1, "Peer")
    machine.add_subscriber("a", 1, True)
    machine.set_held(1)
    machine.turn_started()
    return machine


def state_of(machine: IdleSubscriptions) -> dict[str, Any]:
    return copy.deepcopy({k: v for k, v in vars(machine).items() if k != "config"})


@given(method=st.sampled_from(["subscribe", "receive_notice", "add_subscriber", "turn_finished", "set_held",
                               "advance"]),
       arguments=st.lists(values, max_size=3))
def test_event_methods_raise_only_typed_errors_and_change_nothing(method: str, arguments: list[Any]) -> None:
    machine = busy_machine()
    before = state_of(machine)
    try:
        getattr(machine, method)(*arguments)
    except IdleSubscriptionError as error:
        assert error.code in CODES and str(error)
        assert state_of(machine) == before
    except TypeError:
        # Too many positional arguments for the method: Python's own check, before any state.
        assert state_of(machine) == before


@given(config=values)
def test_from_config_raises_only_invalid_config(config: Any) -> None:
    raises_only(IdleSubscriptionError, "invalid_config", lambda: IdleSubscriptions.from_config(config))


@given(key=st.sampled_from(["start_ms", "ttl_ms", "outstanding_cap", "priors_kept", "subscriber_cap",
                            "debounce_ms", "held_backoff_ms", "reader_utc_offset_min", "last_turn_text_seat",
                            "options"]), value=values)
def test_each_config_value_is_checked(key: str, value: Any) -> None:
    raises_only(IdleSubscriptionError, "invalid_config", lambda: IdleSubscriptions.from_config({key: value}))


@pytest.mark.parametrize("kwargs", [{"notify_pushed_out": "no"}, {"fire_on_release": 1}])
def test_options_must_be_booleans(kwargs: dict[str, Any]) -> None:
    with pytest.raises(IdleSubscriptionError) as info:
        IdleOptions(**kwargs)
    assert info.value.code == "invalid_config"


@given(helper=st.sampled_from(["label", "clock", "render", "describe"]),
       arguments=st.lists(values, max_size=5))
def test_helpers_raise_only_typed_errors(helper: str, arguments: list[Any]) -> None:
    # Called with arbitrary arguments on purpose, so any signature will do.
    helpers: dict[str, Callable[..., object]] = {
        "label": idle_label.peer_idle_notice_label, "clock": idle_label.format_peer_notice_clock,
        "render": idle_label.render_idle_notice, "describe": idle_label.describe_peer_idle_subscription,
    }
    function = helpers[helper]
    try:
        function(*arguments)
    except IdleSubscriptionError as error:
        assert error.code == "invalid_argument"
    except TypeError as error:
        assert "argument" in str(error)  # a wrong number of arguments, Python's own check


EVENTS = ["subscribe", "receive_notice", "add_subscriber", "turn_started", "turn_finished", "set_held",
          "exit", "shutdown", "advance"]
NAMES = ["target", "subscription", "label", "notice", "from", "requester", "parity", "last_turn_text",
         "count", "now_ms", "extra"]


@given(event=st.sampled_from(EVENTS), args=st.dictionaries(st.sampled_from(NAMES), values, max_size=4))
def test_driver_steps_are_rejected_or_applied_never_half(event: str, args: dict[str, Any]) -> None:
    machine = busy_machine()
    before = state_of(machine)
    output = apply_step(machine, {"event": event, "args": args})
    if "error" in output:
        assert output["error"] in CODES
        assert state_of(machine) == before


# -- the entry points' fault order (IDLE-IF-3), argument by argument in the data's order --------

# A good and a bad value of each argument a helper entry point checks.
GOOD_AND_BAD: dict[str, tuple[Any, Any]] = {
    "raw": ("x", 1), "epoch_ms": (0, -1), "utc_offset_min": (0, 1440), "kind": ("idle", "asleep"),
    "label": ("Peer", ""), "finished_at": (0, 2**53), "detail": ("d", 5), "address": ("a", None),
    "detail_shared": (True, "yes"),
}
ENTRY_POINTS: dict[str, Callable[..., object]] = {
    "sanitise_label": idle_label.peer_idle_notice_label, "format_clock": idle_label.format_peer_notice_clock,
    "render_notice": idle_label.render_idle_notice,
    "describe_subscription": idle_label.describe_peer_idle_subscription,
}


@pytest.mark.parametrize("event", sorted(ENTRY_POINTS))
def test_each_helper_reports_its_first_bad_argument_in_the_documented_order(event: str) -> None:
    """With the arguments from the k-th on bad, the error names the k-th (IDLE-IF-3)."""
    from inboxspec.machines.idle_subscriptions_driver import INTERFACE

    names = INTERFACE.events[event].argument_names
    for first_bad in range(len(names)):
        args = {name: GOOD_AND_BAD[name][index >= first_bad] for index, name in enumerate(names)}
        with pytest.raises(IdleSubscriptionError, match=names[first_bad]) as info:
            ENTRY_POINTS[event](**args)
        assert info.value.code == "invalid_argument"


def test_check_arguments_takes_the_first_two_faults() -> None:
    """args that is not an object, then an unknown name, before any value is read."""
    from inboxspec.impl.idle_subscriptions import check_arguments

    with pytest.raises(IdleSubscriptionError, match="args must be an object"):
        check_arguments("advance", [("now_ms", -1)], ("now_ms",))
    with pytest.raises(IdleSubscriptionError, match=r"no argument.* extra") as info:
        check_arguments("advance", {"now_ms": -1, "extra": 1}, ("now_ms",))
    assert info.value.code == "invalid_argument"
    assert check_arguments("advance", {"now_ms": -1}, ("now_ms",)) == {"now_ms": -1}


def test_a_non_object_args_is_invalid_argument_with_the_state_unchanged() -> None:
    machine = busy_machine()
    before = state_of(machine)
    output = apply_step(machine, {"event": "advance", "args": [1]})
    assert output["error"] == "invalid_argument" and state_of(machine) == before
