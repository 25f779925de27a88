"""``inboxspec check`` explores an option checking only the invariants of the findings it fixes.

That is all ``checker/findings.py`` reads of such an exploration; the generated cases read its
coverage and ``check_forever`` its lassos, and neither depends on the invariants checked. These
tests show it:
- the narrowed exploration has the same states, transitions, coverage and lassos as the full one,
  and the same violations of the invariants it checks, on every option of every machine but the
  host, and on the host's cheapest option (its forever-property HOST-F1's, whose lassos the check
  reads; its other options take 20 to 30 s each, and their search is the same code);
- the memo narrows in its workers as in its own process;
- the check's findings are the same with either memo;
- the findings refuse an option's exploration that did not check the finding's property, so no
  narrowing can pass one unchecked.
"""

from __future__ import annotations

from typing import Any

import pytest

from inboxspec import machines
from inboxspec.checker import explore as explore_module
from inboxspec.checker.explore import (
    Configuration,
    Exploration,
    Explorations,
    check_explorations,
    explore,
    option_invariants,
)
from inboxspec.checker.findings import check_findings


def _search(result: Exploration) -> tuple[Any, ...]:
    """What the search found, whichever invariants it checked."""
    return (result.states, result.transitions, result.max_depth, result.coverage, list(result.coverage),
            result.lassos, result.forever_checked)


def _options() -> list[tuple[str, str]]:
    return [*((name, option) for name in machines.names() if name != "host"
              for option in machines.get(name).explorer.options),
            ("host", "stamp_true_sender")]


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
    # All but those the option replaces (tests/test_replaced_invariants.py).
    assert full.invariants_checked == tuple(inv.name for inv in machines.get(name).explorer.invariants
                                            if option not in inv.replaced_by)
    assert _search(narrowed) == _search(full)
    assert narrowed.violations == {k: v for k, v in full.violations.items() if k in kept}


def test_the_sharded_search_checks_the_same_narrowed_invariants() -> None:
    options = {"fire_when_already_idle": True}
    kept = option_invariants("idle-subscriptions", options)
    serial = explore("idle-subscriptions", options=options, invariants=kept)
    sharded = explore("idle-subscriptions", options=options, invariants=kept, workers=2)
    assert sharded.invariants_checked == serial.invariants_checked == kept
    assert _search(sharded)[:3] == _search(serial)[:3] and sharded.violations == serial.violations


def test_every_findings_property_is_checked_with_its_option() -> None:
    # What the findings need, on every machine, the host's included (whose option explorations are
    # too long to run here): each finding's property is among those checked with its option.
    findings = [(name, inv) for name in machines.names() for inv in machines.get(name).explorer.invariants
                if inv.finding is not None and inv.option is not None]
    assert {name for name, _inv in findings} == set(machines.names())  # the host's HOST-F3 among them
    for name, invariant in findings:
        assert invariant.option is not None
        assert invariant.name in (option_invariants(name, {invariant.option: True}) or ())


def test_no_option_means_every_invariant() -> None:
    assert option_invariants("wake-gate", {}) is None
    assert option_invariants("wake-gate", {"reject_empty_batch": False}) is None
    with pytest.raises(ValueError, match="unknown wake-gate invariant"):
        explore("wake-gate", invariants=["no_such_invariant"])


@pytest.mark.parametrize("name", ["wake-gate", "idle-subscriptions", "writer-proofs"])
def test_the_checks_findings_are_the_same_with_either_memo(name: str, explorations: Explorations) -> None:
    with machines.only([name]):
        findings = [r.as_json() for r in check_findings(check_explorations())]
        assert findings == [r.as_json() for r in check_findings(explorations)]
        assert findings and all(r["ok"] for r in findings)


def test_the_memo_narrows_in_its_workers_as_in_its_own_process() -> None:
    configurations: list[Configuration] = [
        ("wake-gate", {}, {}), ("wake-gate", {}, {"reject_empty_batch": True}),
        ("wake-gate", {}, {"clamp_backwards_clock": True})]
    with Explorations(option_invariants_only=True) as pooled:
        pooled.start(configurations, workers=2)
        from_workers = [pooled.get(*c).invariants_checked for c in configurations]
    in_process = Explorations(option_invariants_only=True)
    assert from_workers == [in_process.get(*c).invariants_checked for c in configurations]
    everything = tuple(inv.name for inv in machines.get("wake-gate").explorer.invariants)
    assert from_workers == [everything, *(option_invariants("wake-gate", c[2]) for c in configurations[1:])]
    assert all(len(checked) == 1 for checked in from_workers[1:])


def test_the_findings_refuse_an_option_exploration_that_did_not_check_their_property(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A narrowing that dropped the finding's own property would let "holds with the option" pass
    # unchecked: the findings refuse it instead.
    monkeypatch.setattr(explore_module, "option_invariants", lambda name, options: () if options else None)
    with machines.only(["wake-gate"]), pytest.raises(RuntimeError, match="did not check"):
        check_findings(Explorations(option_invariants_only=True))
