"""Lockstep: every generated event goes to the model chart and to the reference.

Rule names are the spec's event names, so a shrunk failure reads as a trace;
the failing run also notes the trace as a ready-to-commit conformance case.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, rule

from inboxspec.impl.wake_gate import WakePolicy
from inboxspec.machines.wake_gate_driver import ModelSession, apply_step
from tests import wake_gate_strategies as ws
from tests.lockstep import Lockstep, event_rule

# Model control state <-> (announced, refused_since_rearm) in the reference.
EPISODES = {
    "no_episode": (False, False),
    "refusing_unannounced": (False, True),
    "refusing_announced": (True, True),
    "announced_without_refusal": (True, False),
}


class WakeGateLockstep(Lockstep):
    machine = "wake-gate"

    @initialize(max_streak=st.integers(0, 4), floor_ms=ws.floors, opts=ws.options)
    def create(self, max_streak: int, floor_ms: int, opts: dict[str, bool]) -> None:
        config = ws.config(max_streak, floor_ms, opts)
        self.model = ModelSession(config)
        self.impl = WakePolicy.from_config(config)
        self.start(config, self.model, lambda step: apply_step(self.impl, step))
        self.now_ms = 1_000_000

    @rule(batch=ws.batches, plugin_pending=st.booleans(), jump=ws.clock_jumps)
    def decide(self, batch: list[dict[str, str]], plugin_pending: bool, jump: int | str) -> None:
        self.now_ms = max(0, self.now_ms + ws.resolve_jump(jump, self.impl.floor_ms))
        self._step("decide", batch=batch, plugin_pending=plugin_pending, now_ms=self.now_ms)

    announce_refusal = event_rule("announce_refusal")

    reset_streak = event_rule("reset_streak")

    @rule(value=st.integers(0, 6))
    def set_streak(self, value: int) -> None:
        self._step("set_streak", value=value)

    @rule(value=ws.floors)
    def set_floor(self, value: int) -> None:
        self._step("set_floor", value=value)

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
