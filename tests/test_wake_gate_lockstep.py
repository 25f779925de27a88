"""Lockstep: every generated event goes to the model chart and to the reference.

Rule names are the spec's event names, so a shrunk failure reads as a trace;
the failing run also notes the trace as a ready-to-commit conformance case.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from inboxspec.conformance.casefiles import case_from_trace
from inboxspec.conformance.compare import canonical
from inboxspec.impl.wake_gate import WakePolicy
from inboxspec.machines.wake_gate_driver import ModelSession, apply_step
from tests import wake_gate_strategies as ws

# Model control state <-> (announced, refused_since_rearm) in the reference.
EPISODES = {
    "no_episode": (False, False),
    "refusing_unannounced": (False, True),
    "refusing_announced": (True, True),
    "announced_without_refusal": (True, False),
}


class WakeGateLockstep(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.trace: list[dict[str, Any]] = []
        self.model_output: dict[str, Any] | None = None
        self.impl_output: dict[str, Any] | None = None

    @initialize(max_streak=st.integers(0, 4), floor_ms=ws.floors, opts=ws.options)
    def create(self, max_streak: int, floor_ms: int, opts: dict[str, bool]) -> None:
        self.config = ws.config(max_streak, floor_ms, opts)
        note(f"config = {json.dumps(self.config)}")
        self.model = ModelSession(self.config)
        self.impl = WakePolicy.from_config(self.config)
        self.now_ms = 1_000_000

    def _step(self, event: str, **args: Any) -> None:
        step: dict[str, Any] = {"event": event, "args": args} if args else {"event": event}
        self.model_output = self.model.apply(step)
        self.impl_output = apply_step(self.impl, step)
        self.trace.append({**step, "expect": self.model_output})
        note(f"{event} {json.dumps(args)} -> model {self.model_output} / impl {self.impl_output}")
        if canonical(self.model_output) != canonical(self.impl_output):
            case = case_from_trace("wake-gate", "lockstep-counterexample", self.config, self.trace)
            note("as a conformance case:\n" + json.dumps(case, indent=2))

    @rule(batch=ws.batches, plugin_pending=st.booleans(), jump=ws.clock_jumps)
    def decide(self, batch: list[dict[str, str]], plugin_pending: bool, jump: int | str) -> None:
        self.now_ms = max(0, self.now_ms + ws.resolve_jump(jump, self.impl.floor_ms))
        self._step("decide", batch=batch, plugin_pending=plugin_pending, now_ms=self.now_ms)

    @rule()
    def announce_refusal(self) -> None:
        self._step("announce_refusal")

    @rule()
    def reset_streak(self) -> None:
        self._step("reset_streak")

    @rule(value=st.integers(0, 6))
    def set_streak(self, value: int) -> None:
        self._step("set_streak", value=value)

    @rule(value=ws.floors)
    def set_floor(self, value: int) -> None:
        self._step("set_floor", value=value)

    @precondition(lambda self: self.model_output is not None)
    @invariant()
    def outputs_agree(self) -> None:
        # As JSON, the way `conform` compares: in Python `True == 1` and `1 == 1.0`.
        assert canonical(self.model_output) == canonical(self.impl_output)

    @invariant()
    def streaks_agree(self) -> None:
        assert self.model.chart.streak == self.impl.streak

    @invariant()
    def self_wake_times_agree(self) -> None:
        assert self.model.chart.last_self_wake_ms == self.impl.state.last_self_wake_ms

    @invariant()
    def floors_agree(self) -> None:
        assert self.model.chart.floor_ms == self.impl.floor_ms

    @invariant()
    def episodes_agree(self) -> None:
        (state,) = self.model.chart.configuration
        expected = EPISODES[state.id]
        assert (self.impl.state.announced, self.impl.state.refused_since_rearm) == expected


TestWakeGateLockstep = WakeGateLockstep.TestCase
