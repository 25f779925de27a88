"""Validation faults are remembered per schema and value, and only where that is exact."""

from __future__ import annotations

import enum
from typing import Any

import pytest

from inboxspec.machines import interface

INTEGER = {"type": "integer"}


class _Level(enum.IntEnum):
    ONE = 1


LIST = {"type": "array", "items": {"type": "integer"}}
CLOSED = {"type": "object", "properties": {"a": True}, "additionalProperties": False}


@pytest.mark.parametrize(("schema", "first", "second"), [
    (INTEGER, 1, True),  # equal in Python, not to the strict validator
    (INTEGER, 0.0, -0.0),  # equal, but the message shows the value
    (LIST, [1], (1,)),  # a tuple is not a JSON array
    (CLOSED, {"b": 1, "c": 2}, {"c": 2, "b": 1}),  # key order orders the errors
    ({"type": "object"}, {"1": 1}, {1: 1}),
    (INTEGER, 1, _Level.ONE),  # an int subclass is no JSON integer to the strict validator
    (LIST, [[1]], [[True]]),  # nested values are told apart as well
])
def test_a_remembered_fault_is_never_another_values(schema: dict[str, Any], first: Any, second: Any) -> None:
    interface._FAULTS.clear()
    fresh = [interface._first_fault(schema, value) for value in (first, second)]
    interface._FAULTS.clear()
    remembered = [interface._first_fault(schema, value) for value in (first, second, first, second)]
    assert remembered == fresh + fresh


def test_the_same_config_is_validated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    interface._FAULTS.clear()
    validated: list[Any] = []
    real = interface._strict_validator

    def counting(schema_text: str) -> Any:
        validated.append(schema_text)
        return real(schema_text)

    monkeypatch.setattr(interface, "_strict_validator", counting)
    config = {"a": [1, 2, {"b": None}]}
    assert interface._first_fault({"type": "object"}, config) is None
    assert interface._first_fault({"type": "object"}, {"a": [1, 2, {"b": None}]}) is None
    assert len(validated) == 1
    # A value the key cannot tell apart exactly is validated every time.
    interface._first_fault({"type": "object"}, {"a": object()})
    interface._first_fault({"type": "object"}, {"a": object()})
    assert len(validated) == 3
