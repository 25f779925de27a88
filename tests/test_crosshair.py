"""CrossHair checks the wake gate's contracts symbolically.

The contracts are the PEP 316 docstrings of ``decide`` and ``announce`` in
``impl/wake_gate.py``. CI runs them with a bounded budget per condition
(``INBOXSPEC_CROSSHAIR_BUDGET``, seconds, default 1 as for every machine); the README documents a
deeper run. Each contract is also shown to bite: a copy of the module with one
deliberate bug must yield a counterexample on that contract's line. That copy
keeps no other postcondition, so CrossHair spends its budget on the contract
the bug targets (each kept condition, even ``True``, is explored until its
timeout, so checking them all costs dozens of times as much for the same
counterexample).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import inboxspec.impl.wake_gate as wake_gate
from tests.crosshair_runner import assert_contracts_hold, assert_counterexample_on, broken_copy, contract_line

pytestmark = pytest.mark.slow

SOURCE = Path(wake_gate.__file__)


def test_contracts_hold() -> None:
    assert_contracts_hold("inboxspec.impl.wake_gate")


# contract comment -> (function, exact source fragment, its buggy replacement)
MUTANTS = {
    "a batch holding a user-kind message always wakes": (
        "decide",
        "    if lane is Lane.USER_INPUT:\n",
        "    if lane is Lane.USER_INPUT and not summary.plugin_pending:\n",
    ),
    "a refused decision leaves the streak unchanged": (
        "decide",
        "return refused, replace(after, refused_since_rearm=True)",
        "return refused, replace(after, refused_since_rearm=True, streak=0)",
    ),
    "an allowed counted wake raises the streak by exactly one": (
        "decide",
        "streak=state.streak + 1,",
        "streak=min(state.streak + 2, rules.max_streak),",
    ),
    "an exempt wake leaves the streak unchanged": (
        "decide",
        "return exempt, replace(after, last_self_wake_ms=allowed_time)",
        "return exempt, replace(after, last_self_wake_ms=allowed_time, streak=0)",
    ),
    "decisions never push the streak past the cap": (
        "decide",
        "    if state.streak >= rules.max_streak:\n",
        "    if state.streak > rules.max_streak:\n",
    ),
    "only an allowed counted wake re-arms a spent announcement": (
        "decide",
        "return exempt, replace(after, last_self_wake_ms=allowed_time)",
        "return exempt, replace(after, last_self_wake_ms=allowed_time, announced=False)",
    ),
    "a spent announcement is never granted again before a re-arm": (
        "announce",
        "    if state.announced:\n",
        "    if state.announced and not state.refused_since_rearm:\n",
    ),
}


def only_contract(source: str, keep: str) -> str:
    """``source`` without any postcondition (comment and condition) but ``keep``'s."""
    lines = source.splitlines(keepends=True)
    kept: list[str] = []
    in_post = skip = False
    for line in lines:
        stripped = line.strip()
        if skip:
            skip = False
            continue
        if stripped == "post[]:":
            in_post = True
        elif in_post and stripped.startswith('"""'):
            in_post = False
        elif in_post and stripped.startswith("# ") and stripped[2:] != keep:
            skip = True  # this comment and the condition under it
            continue
        kept.append(line)
    return "".join(kept)


def test_only_contract_keeps_one_condition() -> None:
    source = SOURCE.read_text(encoding="utf-8")
    kept = only_contract(source, "a refused decision leaves the streak unchanged")
    assert "__return__[0].wake or __return__[1].streak == state.streak" in kept
    assert "(not summary.has_user_message) or __return__[0].wake" not in kept
    assert "__return__ == (message.sender" in kept  # outside post[] blocks nothing changes
    assert len(source.splitlines()) - len(kept.splitlines()) == 2 * (len(MUTANTS) + 1 - 1)


@pytest.mark.parametrize("contract", sorted(MUTANTS))
def test_contract_finds_counterexample_in_broken_variant(contract: str, tmp_path: Path) -> None:
    function, fragment, broken = MUTANTS[contract]
    mutant = only_contract(broken_copy(SOURCE.read_text(encoding="utf-8"), fragment, broken), contract)
    assert_counterexample_on(mutant, "wake_gate_mutant", function, contract_line(mutant, contract), tmp_path)
