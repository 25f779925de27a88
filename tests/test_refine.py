"""Refinement where the canonical form renames what an output names: the host's sessions."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.checker.refine import refine

# Fewer letters (no subscriptions, no forgeries), so that depth 3 is quick.
SMALL = {"subscriptions": "0", "forgeries": "0"}


def test_renamed_sessions_are_not_a_disagreement() -> None:
    # `tick, user_input s1, tick`: the second tick wakes the session the user typed at, which
    # the canonical snapshot calls s2 and the reference s1. The model's own runner, given the
    # same concrete steps, names it s1 as the reference does.
    result = refine("host", 3, bounds=SMALL)
    assert result.mismatch == [] and result.sequences > 400


def test_a_wrong_reference_is_still_a_disagreement(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = machines.get("host")

    def one_streak_too_many(config: Any, steps: Any) -> dict[str, Any]:
        result = entry.run_case(config, steps)
        for output in result.get("outputs", []):
            for session in output.get("sessions", {}).values():
                session["streak"] += 1
        return result

    monkeypatch.setitem(machines.REGISTRY, "host", replace(entry, run_case=one_streak_too_many))
    result = refine("host", 3, bounds=SMALL)
    assert result.mismatch[0] == "tick" and result.mismatch[-1].startswith("reference")
    assert '"streak": 1' in result.mismatch[-1] and '"streak": 0' in result.mismatch[-2]
