"""``inboxspec check`` explores an option checking only the invariants of the findings it fixes.

That is all ``checker/findings.py`` reads of such an exploration; the generated cases read its
coverage and ``check_forever`` its lassos, and neither depends on the invariants checked. These
tests show it: the narrowed exploration has the same states, transitions, coverage and lassos as
the full one, and the same violations of the invariants it checks, on every option of every
machine but the host (its option explorations take minutes; its search is the same code); the
findings and cycles of the check are the same with either memo; and the findings refuse an option's
exploration that did not check the finding's property, so no narrowing can pass one unchecked.
"""

from __future__ import annotations

from typing import Any

import pytest

from inboxspec import machines
from inboxspec.check import check_explorations
from inboxspec.checker import explore as explore_module
from inboxspec.checker.explore import Exploration, Explorations, explore, option_invariants
from inboxspec.checker.findings import check_findings, check_forever


def _search(result: Exploration) -> tuple[Any, ...]:
    """What the search found, whichever invariants it checked."""
    return (result.states, result.transitions, result.max_depth, result.coverage, list(result.coverage),
            result.lassos, result.forever_checked)


def _options() -> list[tuple[str, str]]:
    return [(name, option) for name in machines.names() if name != "host"
            for option in machines.get(name).explorer.options]


@pytest.mark.parametrize(("name", "option"), _options())
def test_a_narrowed_option_exploration_finds_what_the_full_one_finds(
        name: str, option: str, explorations: Explorations) -> None:
    options = {option: True}
    kept = option_invariants(name, options)
    assert kept is not None
    expected = tuple(inv.name for inv in machines.get(name).explorer.invariants if inv.option == option)
    assert kept == expected
    full = explorations.get(name, options=options)
    narrowed = explore(name, options=options, invariants=kept)
    assert narrowed.invariants_checked == kept
    assert full.invariants_checked == tuple(inv.name for inv in machines.get(name).explorer.invariants)
    assert _search(narrowed) == _search(full)
    assert narrowed.violations == {k: v for k, v in full.violations.items() if k in kept}


def test_the_sharded_search_checks_the_same_narrowed_invariants() -> None:
    options = {"fire_when_already_idle": True}
    kept = option_invariants("idle-subscriptions", options)
    serial = explore("idle-subscriptions", options=options, invariants=kept)
    sharded = explore("idle-subscriptions", options=options, invariants=kept, workers=2)
    assert sharded.invariants_checked == serial.invariants_checked == kept
    assert _search(sharded)[:3] == _search(serial)[:3] and sharded.violations == serial.violations


def test_no_option_means_every_invariant() -> None:
    assert option_invariants("wake-gate", {}) is None
    assert option_invariants("wake-gate", {"reject_empty_batch": False}) is None
    with pytest.raises(ValueError, match="unknown wake-gate invariant"):
        explore("wake-gate", invariants=["no_such_invariant"])


@pytest.mark.parametrize("name", ["wake-gate", "idle-subscriptions", "writer-proofs"])
def test_the_checks_findings_and_cycles_are_the_same_with_either_memo(
        name: str, explorations: Explorations) -> None:
    with machines.only([name]):
        narrowed = check_explorations()
        findings = [r.as_json() for r in check_findings(narrowed)]
        assert findings == [r.as_json() for r in check_findings(explorations)]
        assert findings and all(r["ok"] for r in findings)
        cycles = [c.as_json() for c in check_forever(narrowed)]
        assert cycles == [c.as_json() for c in check_forever(explorations)]


def test_the_findings_refuse_an_option_exploration_that_did_not_check_their_property(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A narrowing that dropped the finding's own property would let "holds with the option" pass
    # unchecked: the findings refuse it instead.
    monkeypatch.setattr(explore_module, "option_invariants", lambda name, options: () if options else None)
    with machines.only(["wake-gate"]), pytest.raises(RuntimeError, match="did not check"):
        check_findings(Explorations(option_invariants_only=True))
