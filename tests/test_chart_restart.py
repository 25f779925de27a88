"""A restarted model chart (``ModelChart.restarted``) is the chart built afresh.

The model's case runners restart the chart an ended case left (``machines/sessions.py``,
``case_chart``) instead of building one per case. Here:

* every bundled case that the model replays gives the same outputs on a chart restarted from the
  case before it (of another config, left in another state) as on a new chart, on every machine;
* on a toy chart, a restart removes what a run set and what the constructor set on one branch
  only, puts the control state back, keeps the callbacks bound to the chart, and takes new
  arguments; a chart is never handed to two cases at once.
"""

from __future__ import annotations

from typing import Any, cast

import pytest
from statemachine import State

from inboxspec import machines
from inboxspec.check import _has_error_step
from inboxspec.conformance.casefiles import bundled_cases_dir, load_cases
from inboxspec.machines import sessions
from inboxspec.model.chart import ModelChart


@pytest.mark.parametrize("machine", machines.names())
def test_every_case_replays_alike_on_a_restarted_chart(machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [c for c in load_cases([bundled_cases_dir() / machine]) if not _has_error_step(c)]
    run = machines.get(machine).run_model_case
    restarts = 0
    original = ModelChart.restarted

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal restarts
        restarts += 1
        return original(self, *args, **kwargs)

    # Patched first: a chart built before the patch is not restarted after it (``why_not_restartable``).
    monkeypatch.setattr(ModelChart, "restarted", counted)
    monkeypatch.setattr(sessions, "_ENDED", {})
    built_afresh = []
    for case in cases:
        sessions._ENDED.clear()
        built_afresh.append(run(case.config, case.inputs))
    assert restarts == 0
    # In reverse order: each case's chart is the one the case after it in its file left, or the
    # one the last case built afresh left, of another config and in another state.
    restarted = {case.id: run(case.config, case.inputs) for case in reversed(cases)}
    for case, fresh in zip(cases, built_afresh, strict=True):
        assert restarted[case.id] == fresh, case.id
    assert restarts == len(cases)

class Toy(ModelChart["Toy"]):
    low = State(initial=True)
    high = State()

    raise_ = low.to(high, on="book_raise")
    note = low.to.itself(internal=True, on="book_note") | high.to.itself(internal=True, on="book_note")

    def __init__(self, start: int = 0, tagged: bool = False) -> None:
        self.count = start
        if tagged:
            self.tag = "set on one branch of the constructor"
        super().__init__()

    def book_raise(self) -> None:
        self.count += 1
        self.left_by_a_run = True

    def book_note(self) -> None:
        self.count += 10


def _data(chart: Toy) -> dict[str, Any]:
    """The chart's own attributes: all but python-statemachine's."""
    return {k: v for k, v in vars(chart).items() if k not in chart._machinery and k != "_machinery"}


def test_a_restart_is_a_new_chart() -> None:
    chart = Toy(1, tagged=True)
    chart.send("raise_")
    chart.send("note")
    assert (chart.high.is_active, chart.count, chart.tag, chart.left_by_a_run) == (True, 12, chart.tag, True)
    again = chart.restarted(5)
    assert again is chart
    fresh = Toy(5)
    assert chart.low.is_active and not chart.high.is_active
    assert _data(chart) == _data(fresh) == {"count": 5}
    assert chart.current_state_value == fresh.current_state_value == "low"
    assert not hasattr(chart, "tag") and not hasattr(chart, "left_by_a_run")
    chart.send("raise_")  # the callbacks act on this chart, from its initial state
    assert (chart.high.is_active, chart.count, chart.left_by_a_run) == (True, 6, True)


def test_a_chart_is_in_one_case_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessions, "_ENDED", {})
    first = sessions.case_chart(Toy, 1)
    second = sessions.case_chart(Toy, 2)  # the first is still in its case: a new chart
    assert second is not first
    sessions.case_ended(first)
    sessions.case_ended(first)  # ended twice, kept once
    third = sessions.case_chart(Toy, 3)
    fourth = sessions.case_chart(Toy, 4)
    assert third is first and third.count == 3
    assert fourth is not first and fourth is not second and fourth.count == 4


def test_a_chart_whose_class_has_changed_is_built_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    """python-statemachine resolved the callbacks when the chart was built: after a method is
    replaced (as a test's patch does), only a new chart calls the new one."""
    monkeypatch.setattr(sessions, "_ENDED", {})
    built = sessions.case_chart(Toy, 1)
    sessions.case_ended(built)
    monkeypatch.setattr(Toy, "book_note", lambda self: setattr(self, "count", -1))
    assert built.why_not_restartable() == "its classes have changed since it was built"
    with pytest.raises(ValueError, match="cannot be restarted: its classes have changed"):
        built.restarted(1)
    again = sessions.case_chart(Toy, 1)
    assert again is not built
    again.send("note")
    assert again.count == -1


class Mixin:
    def book_mixed(self) -> None:
        self.mixed = "as built"


class Mixed(Mixin, ModelChart["Mixed"]):
    only = State(initial=True)
    mix = only.to.itself(internal=True, on="book_mixed")


def test_a_changed_mixin_is_a_changed_class(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every class of the chart's own counts, not only the ``ModelChart`` ones."""
    built = Mixed()
    assert built.why_not_restartable() is None
    monkeypatch.setattr(Mixin, "book_mixed", lambda self: None)
    assert built.why_not_restartable() == "its classes have changed since it was built"


class Entered(ModelChart["Entered"]):
    low = State(initial=True, enter="book_entry")
    high = State(final=True)
    rise = low.to(high, on="book_rise")

    def __init__(self, marking: bool = False) -> None:
        self.marking = marking
        super().__init__()

    def book_entry(self) -> None:
        if self.marking:
            self.marked = True  # set while python-statemachine builds the chart

    def book_rise(self) -> None:
        pass


class Guarded(ModelChart["Guarded"]):
    low = State(initial=True)
    high = State(final=True)
    rise = low.to(high, cond="allowed", on="book_rise") | low.to.itself(internal=True, on="book_rise")

    def __init__(self, allowed: Any = lambda: True) -> None:
        self.allowed = allowed  # a callable datum that python-statemachine binds as the guard
        super().__init__()

    def book_rise(self) -> None:
        pass


@pytest.mark.parametrize(("chart", "why"), [
    (Entered, "state low has entry or exit callbacks"),
    (Guarded, "its callback 'allowed' names data"),
])
def test_a_chart_a_restart_could_not_reset_is_never_restarted(
        chart: type[ModelChart[Any]], why: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What an entry action sets while the library builds the chart looks like the library's own,
    and a callback bound to a datum stays bound to the first: such charts are built anew."""
    monkeypatch.setattr(sessions, "_ENDED", {})
    built = sessions.case_chart(chart)
    assert (built.why_not_restartable() or "").startswith(why)
    with pytest.raises(ValueError, match="cannot be restarted"):
        built.restarted()
    sessions.case_ended(built)
    assert sessions.case_chart(chart) is not built


@pytest.mark.parametrize("machine", machines.names())
def test_a_model_chart_pickles_and_copies(machine: str) -> None:
    """The definition kept for ``why_not_restartable`` does not travel: a copy is built anew. (The
    host's chart does not pickle, as before: its sessions' parts hold data of classes made at run
    time, ``model/compose.py``.)"""
    import copy
    import pickle

    chart = cast(ModelChart[Any], machines.get(machine).chart())
    copies = [copy.deepcopy(chart)]
    if machine != "host":
        copies.append(pickle.loads(pickle.dumps(chart)))
    for copied in copies:
        assert copied.why_not_restartable() is None
        assert copied.current_state_value == chart.current_state_value
        assert copied.restarted() is copied
