"""Validation faults are remembered per schema and value, and only where that is exact."""

from __future__ import annotations

import enum
from dataclasses import replace
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.checker.traces import Replays
from inboxspec.machines import interface
from inboxspec.machines.itemwise import ItemwiseValidator
from tests.spies import calls_of

INTEGER = {"type": "integer"}


class _Level(enum.IntEnum):
    ONE = 1


LIST = {"type": "array", "items": {"type": "integer"}}
SHORT_NAMES = {"type": "object", "propertyNames": {"maxLength": 1}}
LOWER_NAMES = {"type": "object", "propertyNames": {"pattern": "^[a-z]"}}
UNIQUE_STRINGS = {"type": "array", "uniqueItems": True, "items": {"type": "string"}}
_NAN = float("nan")


@pytest.mark.parametrize(("schema", "first", "second"), [
    (INTEGER, 1, True),  # equal in Python, not to the strict validator
    (INTEGER, 0.0, -0.0),  # equal, but the message shows the value
    (LIST, [1], (1,)),  # a tuple is not a JSON array
    (SHORT_NAMES, {"bb": 1, "cc": 2}, {"cc": 2, "bb": 1}),  # key order orders the errors at one path
    (LOWER_NAMES, {"1": 1}, {1: 1}),  # a key's type is kept
    (INTEGER, 1, _Level.ONE),  # an int subclass is no JSON integer to the strict validator
    (LIST, [[1]], [[True]]),  # nested values are told apart as well
    (INTEGER, b"a", bytearray(b"a")),  # no JSON values, but one buffer to marshal
    (UNIQUE_STRINGS, [_NAN, _NAN], [float("nan"), float("nan")]),  # one NaN object twice is not two
])
def test_a_remembered_fault_is_never_another_values(schema: dict[str, Any], first: Any, second: Any) -> None:
    fresh = []
    for value in (first, second):  # each worked out with nothing remembered
        interface._FAULTS.clear()
        fresh.append(interface._first_fault(schema, value))
    assert fresh[0] != fresh[1]  # the validator tells them apart, so one key for both would show
    interface._FAULTS.clear()
    remembered = [interface._first_fault(schema, value) for value in (first, second, first, second)]
    assert remembered == fresh + fresh


def test_the_same_config_is_validated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    interface._FAULTS.clear()
    validated = calls_of(monkeypatch, interface, "_strict_validator")
    config = {"a": [1, 2, {"b": None}]}
    assert interface._first_fault({"type": "object"}, config) is None
    assert interface._first_fault({"type": "object"}, {"a": [1, 2, {"b": None}]}) is None
    assert len(validated) == 1
    # A value the key cannot tell apart exactly is validated every time.
    interface._first_fault({"type": "object"}, {"a": object()})
    interface._first_fault({"type": "object"}, {"a": object()})
    assert len(validated) == 3


# json_key's WARNING: the other memos keyed by it store only what they worked out for JSON values.

def test_the_itemwise_memo_never_answers_for_another_value() -> None:
    validator = ItemwiseValidator(
        {"properties": {"a": {"type": "array", "items": {"type": "array", "uniqueItems": True}}}}, "a")
    one_nan_twice, two_nans = {"a": [[_NAN, _NAN]]}, {"a": [[float("nan"), float("nan")]]}
    assert validator.errors(one_nan_twice) == [(("a", 0), "[nan, nan] has non-unique elements")]
    assert validator.errors(two_nans) == []


def test_a_replay_is_never_another_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    def run_case(config: Any, steps: Any) -> dict[str, Any]:
        return {"outputs": [type(config["x"]).__name__]}

    monkeypatch.setitem(machines.REGISTRY, "wake-gate", replace(machines.get("wake-gate"), run_case=run_case))
    replays = Replays()
    assert [replays.reference("wake-gate", {"x": value}, [])["outputs"]
            for value in (b"a", bytearray(b"a"), b"a")] == [["bytes"], ["bytearray"], ["bytes"]]
    first = replays.reference("wake-gate", {"x": 1}, [])
    assert replays.reference("wake-gate", {"x": 1}, []) is first  # JSON inputs are still run once
