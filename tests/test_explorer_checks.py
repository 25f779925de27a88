"""The explorer's own short cuts give what checking every invariant on every step gives.

An invariant declared ``of_state`` reads only the state a step reaches, so the
explorer checks it once per distinct state, on the step that discovers the
state (``checker/explore.py``, ``state_level_invariants``). The tests below
compare that with checking it on every step, on the machines that declare such
invariants, on a planted invariant that the initial state breaks (no step
discovers the initial state), and on one that concerns only some letters; and
they show that the comparison has teeth (a variant of the explorer that forgets
the initial state is caught) and that a wrongly declared invariant fails loudly.
"""

from __future__ import annotations

from typing import Any

import pytest

from inboxspec import machines
from inboxspec.checker import explore as explore_module
from inboxspec.checker.explore import Exploration, Explorations, StateInvariantReadsTheStep, explore
from inboxspec.checker.parallel import explore_on_workers
from inboxspec.machines.frame import Invariant


def _every_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """Check every invariant on every step, as the explorer did before ``of_state``."""
    monkeypatch.setattr(explore_module, "state_level_invariants", lambda *args: frozenset())


def _found(result: Exploration) -> tuple[Any, ...]:
    return (result.states, result.transitions, result.max_depth, result.violations, result.coverage,
            list(result.violations), list(result.coverage))


def _with_invariants(monkeypatch: pytest.MonkeyPatch, machine: str, *extra: Invariant) -> None:
    explorer = machines.get(machine).explorer
    monkeypatch.setattr(explorer, "invariants", (*explorer.invariants, *extra))


def _configurations() -> list[tuple[str, dict[str, bool]]]:
    chosen: list[tuple[str, dict[str, bool]]] = []
    for name in machines.names():
        explorer = machines.get(name).explorer
        declared = [inv for inv in explorer.invariants if inv.of_state]
        if not declared:
            continue
        chosen.append((name, {}))
        # The option of each finding whose property is checked once per state: it holds there.
        chosen += [(name, {inv.option: True}) for inv in declared if inv.option is not None]
    return chosen


@pytest.mark.parametrize(("name", "options"), _configurations(),
                         ids=lambda value: value if isinstance(value, str) else next(iter(value), "default"))
def test_checking_once_per_state_finds_what_checking_every_step_finds(
        name: str, options: dict[str, bool], monkeypatch: pytest.MonkeyPatch,
        explorations: Explorations) -> None:
    once = explorations.get(name, options=options)
    with monkeypatch.context() as patched:
        _every_step(patched)
        every = explore(name, options=options)
    assert _found(once) == _found(every)


def _never_back_at_the_start(name: str) -> Invariant:
    explorer = machines.get(name).explorer
    start = explorer.initial(explorer.parse_bounds({}))
    return Invariant("never_back_at_the_start", (), lambda action: True,
                     lambda pre, post, out, bounds: post != start, of_state=True)


def test_an_invariant_the_initial_state_breaks_is_checked_on_every_step(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No step discovers the initial state: a step back to it is the first violation."""
    _with_invariants(monkeypatch, "wake-gate", _never_back_at_the_start("wake-gate"))
    once = explore("wake-gate")
    trace = once.violations["never_back_at_the_start"]
    assert len(trace) == 1 and trace[0][0] == trace[0][2]  # a step from the start that stays there
    with monkeypatch.context() as patched:
        _every_step(patched)
        assert _found(explore("wake-gate")) == _found(once)


def test_an_explorer_that_forgets_the_initial_state_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above has teeth: checked once per discovered state only, the
    planted invariant is never seen to fail."""
    _with_invariants(monkeypatch, "wake-gate", _never_back_at_the_start("wake-gate"))
    correct = explore("wake-gate")

    def forgetting(active_by_letter: Any, start: Any, bounds: Any) -> frozenset[str]:
        return frozenset(inv.name for inv in active_by_letter[0] if inv.of_state)

    monkeypatch.setattr(explore_module, "state_level_invariants", forgetting)
    broken = explore("wake-gate")
    assert "never_back_at_the_start" in correct.violations
    assert "never_back_at_the_start" not in broken.violations


def test_an_invariant_of_some_letters_is_checked_on_each_of_their_steps(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Once per state would miss a state first reached by another letter: it is not done."""
    explorer = machines.get("wake-gate").explorer
    some = Invariant("streak_below_two_after_decide", (), lambda action: action.event == "decide",
                     lambda pre, post, out, bounds: post.streak < 2, of_state=True)
    _with_invariants(monkeypatch, "wake-gate", some)
    parsed = explorer.parse_bounds({})
    assert explore_module.state_level_invariants(
        [[inv for inv in explorer.invariants if inv.applies(a)] for a in explorer.alphabet(parsed)],
        explorer.initial(parsed), parsed) == frozenset()
    once = explore("wake-gate")
    assert "streak_below_two_after_decide" in once.violations
    with monkeypatch.context() as patched:
        _every_step(patched)
        assert _found(explore("wake-gate")) == _found(once)


@pytest.mark.parametrize("reads", [lambda pre, post, out: pre.streak, lambda pre, post, out: out["wake"],
                                   lambda pre, post, out: bool(out), lambda pre, post, out: pre == post])
def test_an_of_state_invariant_that_reads_the_step_fails_loudly(reads: Any,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = Invariant("reads_the_step", (), lambda action: True,
                      lambda pre, post, out, bounds: reads(pre, post, out) is not None, of_state=True)
    _with_invariants(monkeypatch, "wake-gate", wrong)
    with pytest.raises(StateInvariantReadsTheStep, match="reads_the_step"):
        explore("wake-gate")


def test_workers_check_once_per_state_as_one_process_does(explorations: Explorations) -> None:
    """On several workers, a state is checked when it is new to the worker that reaches it."""
    alone = explorations.get("peer-delivery")
    assert "box_never_exceeds_cap" in alone.violations  # an of_state finding's property
    assert _found(explore_on_workers("peer-delivery", None, None, 2)) == _found(alone)
