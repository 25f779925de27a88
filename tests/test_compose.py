"""A chart used as a part (model/compose.py) fires as python-statemachine fires the chart.

A toy chart with every shape the parts use (``cond`` and ``unless`` guards,
transitions tried in document order, parameters with and without defaults,
events with more arguments than a callback takes) is run side by side through
``Part.fire`` and through the real chart's ``send()``, from every state, with
every combination of arguments: the states reached and the data agree. A
missing argument without a default and an event with no enabled transition are
refused.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from statemachine import State
from statemachine.exceptions import TransitionNotAllowed

from inboxspec.model.chart import ModelChart
from inboxspec.model.compose import NoTransition, Part


class Toy(ModelChart["Toy"]):
    low = State(initial=True)
    high = State()

    bump = (
        low.to(high, cond="is_big", on="book_big")
        | low.to.itself(internal=True, unless="is_small", on="book_mid")
        | low.to.itself(internal=True, on="book_small")
        | high.to(low, cond=["is_big", "is_even"], on="book_down")
        | high.to.itself(internal=True, on="book_small")
    )
    poke = low.to.itself(internal=True, on="book_poke") | high.to.itself(
        internal=True, cond="never", on="book_poke"
    )

    def __init__(self, start: int = 0) -> None:
        self.log: list[Any] = [start]
        self.output: dict[str, Any] = {}
        super().__init__()

    def is_big(self, n: int) -> bool:
        return n > 10

    def is_even(self, n: int) -> bool:
        return n % 2 == 0

    def is_small(self, n: int, scale: int = 1) -> bool:
        return n * scale < 3

    def never(self) -> bool:
        return False

    def book_big(self, n: int) -> None:
        self.log = [*self.log, ("big", n)]

    def book_mid(self, n: int, scale: int = 1) -> None:
        self.log = [*self.log, ("mid", n, scale)]

    def book_small(self) -> None:
        self.log = [*self.log, "small"]

    def book_down(self, n: int, tag: str = "down") -> None:
        self.log = [*self.log, (tag, n)]

    def book_poke(self, how: str) -> None:
        self.log = [*self.log, ("poke", how)]


ARGUMENTS: list[dict[str, Any]] = [{"n": n, **extra} for n in (0, 2, 5, 11, 12)
             for extra in ({}, {"scale": 3}, {"scale": 0, "tag": "t"})]


@pytest.mark.parametrize("state", ["low", "high"])
def test_a_part_fires_as_the_chart_sends(state: str) -> None:
    part = Part(Toy, start=7)
    for kwargs in ARGUMENTS:
        real = Toy(start=7)
        real.current_state_value = state
        real.send("bump", **kwargs)
        data = part.data()
        reached = part.fire(data, state, "bump", **kwargs)
        assert (reached, data.log) == (real.current_state_value, real.log), kwargs


def test_argument_orders_and_sequences_agree() -> None:
    # The generated functions are kept by the names of the arguments: orders and repeats share them.
    part = Part(Toy)
    real = Toy()
    data, state = part.data(), part.initial
    for kwargs in itertools.chain(ARGUMENTS, reversed(ARGUMENTS)):
        shuffled = dict(reversed(list(kwargs.items())))
        real.send("bump", **shuffled)
        state = part.fire(data, state, "bump", **shuffled)
        assert (state, data.log) == (real.current_state_value, real.log)


def test_a_missing_argument_and_a_missing_transition_are_refused() -> None:
    part = Part(Toy)
    with pytest.raises(TypeError, match="book_poke needs the argument 'how'"):
        part.fire(part.data(), "low", "poke")
    with pytest.raises(TypeError, match="is_big needs the argument 'n'"):
        part.fire(part.data(), "low", "bump", scale=2)
    with pytest.raises(NoTransition):
        part.fire(part.data(), "high", "poke", how="x")
    real = Toy()
    real.current_state_value = "high"
    with pytest.raises(TransitionNotAllowed):
        real.send("poke", how="x")


def test_parts_hold_their_own_data() -> None:
    part = Part(Toy, start=1)
    first, second = part.data(), part.data()
    part.fire(first, "low", "bump", n=0)
    assert (first.log, second.log) == ([1, "small"], [1])
    copied = part.holding(part.merged({"log": [9]}))
    assert copied.log == [9] and copied.output == {} and type(copied) is part.holder


def test_host_charts_of_one_configuration_share_their_parts_and_start_as_built_afresh() -> None:
    """``Parts.configured`` builds a host's parts once per configuration: every host case, run on
    parts that already ran every host case, gives what it gives on parts built afresh."""
    import json
    from pathlib import Path

    from inboxspec.machines import host_driver
    from inboxspec.model import host as host_model

    folder = Path(__file__).parent.parent / "conformance" / "cases" / "host"
    cases = [case for path in sorted(folder.glob("*.json"))
             if path.name != "invalid.json"
             for case in json.loads(path.read_text())["cases"]
             if not any("error" in step.get("expect", {}) for step in case["steps"])]
    assert len(cases) > 20

    afresh = []
    for case in cases:
        host_model._CONFIGURED.clear()
        afresh.append(host_driver.run_model_case(case["config"], case["steps"]))
    shared = [host_driver.run_model_case(case["config"], case["steps"]) for case in cases]
    assert shared == afresh
    one, two = host_model.HostChart(), host_model.HostChart()
    assert one.parts is two.parts and one.sessions["s1"].gate is not two.sessions["s1"].gate


def test_a_sessions_delivery_part_lists_no_held_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The host reads a delivery step's receipts and ticket, and counts the buffer itself: a part that
    listed its whole held buffer at each step made a case of many held sends quadratic in the model
    (20,000 took 82 s). The host's outputs are the reference's all the same."""
    from inboxspec import machines
    from inboxspec.model import host as host_model
    from inboxspec.model.peer_delivery import PeerDeliveryChart
    from tests.spies import calls_of

    monkeypatch.setattr(host_model, "_CONFIGURED", {})  # parts built afresh, from the spied chart
    listed = calls_of(monkeypatch, PeerDeliveryChart, "_held_output")
    config = {"peer_delivery": {"held_cap": 9}}
    steps: list[dict[str, Any]] = [{"event": "user_input", "args": {"session": "s1", "text": "hi"}},
                                   {"event": "tick"}]
    steps += [{"event": "send_message", "args": {"session": "s1", "to": "s2", "text": ""}}] * 4
    host = machines.get("host")
    assert host.run_model_case(config, steps) == host.run_case(config, steps)
    assert host.run_model_case(config, steps)["outputs"][-1]["sessions"]["s2"]["held"] == 4
    assert listed == []
    # The peer delivery machine's own outputs list it, as PEER-IF-2 says.
    hold = {"event": "set_recipient", "args": {"setting": "hold"}}
    machines.get("peer-delivery").run_model_case({}, [hold])
    assert len(listed) == 1
