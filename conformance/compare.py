"""Exact comparison of a case's expected result with what an implementation returned.

Values are compared as JSON, not as Python objects: in Python ``True == 1``
and ``1 == 1.0``, but a port that answers ``1`` for ``true`` is wrong.
"""

from __future__ import annotations

import json
from typing import Any

from inboxspec.conformance.casefiles import Case


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)


def first_difference(case: Case, actual: Any) -> str | None:
    """None when ``actual`` matches exactly; otherwise a one-paragraph diff."""
    expected = case.expected
    if not isinstance(actual, dict):
        return f"result is not an object: {canonical(actual)}"
    if "config_error" in expected or "config_error" in actual:
        if canonical(expected.get("config_error")) == canonical(actual.get("config_error")):
            return None
        return (f"config: expected {canonical(expected)}, got "
                f"{canonical({k: actual[k] for k in actual if k != 'seq'})}")
    outputs = actual.get("outputs")
    if not isinstance(outputs, list):
        return f"result has no outputs list: {canonical(actual)[:200]}"
    if len(outputs) != len(expected["outputs"]):
        return f"expected {len(expected['outputs'])} outputs, got {len(outputs)}"
    for index, (want, got) in enumerate(zip(expected["outputs"], outputs, strict=True)):
        if canonical(want) != canonical(got):
            step = case.steps[index]
            return (
                f"step {index} ({step['event']} {canonical(step.get('args', {}))}):\n"
                f"    expected {canonical(want)}\n"
                f"    actual   {canonical(got)}"
            )
    return None
