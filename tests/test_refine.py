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


class ReferenceFault(RuntimeError):
    """What the planted reference raises."""


def raising_on_the_third_step(run_case: Any) -> Any:
    def run(config: Any, steps: Any) -> dict[str, Any]:
        if len(steps) >= 3:
            raise ReferenceFault("planted\nover two lines " + "x" * 1000)
        return run_case(config, steps)  # type: ignore[no-any-return]
    return run


def test_a_reference_that_raises_is_a_disagreement_shown_in_one_bounded_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    entry = machines.get("wake-gate")
    raising = replace(entry, run_case=raising_on_the_third_step(entry.run_case))
    monkeypatch.setitem(machines.REGISTRY, "wake-gate", raising)
    result = refine("wake-gate", 3)
    assert len(result.mismatch) == 3 + 2 + 1  # three letters, the steps, the model's output, the raise
    assert result.mismatch[-2].startswith("model {")
    shown = result.mismatch[-1]
    assert shown.startswith('reference {"raised": "ReferenceFault: planted over two lines xxx')
    assert "\n" not in shown
    assert shown.endswith('..."}') and len(shown) < 400


def test_a_fixture_that_cannot_be_laid_out_is_not_a_disagreement(monkeypatch: pytest.MonkeyPatch) -> None:
    from inboxspec.machines.fixtures import FixtureError

    entry = machines.get("wake-gate")

    def no_space(config: Any, steps: Any) -> dict[str, Any]:
        raise FixtureError("fixture could not be laid out: [Errno 28] No space left on device")

    monkeypatch.setitem(machines.REGISTRY, "wake-gate", replace(entry, run_case=no_space))
    with pytest.raises(FixtureError):
        refine("wake-gate", 1)
