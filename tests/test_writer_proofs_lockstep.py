"""Lockstep: every generated event goes to the phases chart and to the reference core.

Both observe the same world (the reference through ``FakeEnvironment``), including worlds in which
the running CLI root or the receipt moves while a measurement runs. Rule names are the spec's
event names, so a shrunk failure reads as a trace.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import note, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from inboxspec.impl.writer_proofs import Options, WriterProofs
from inboxspec.machines.writer_proofs_driver import apply_step
from inboxspec.model.writer_proofs import World, WriterProofsChart, WriterProofsModelOptions
from tests import writer_proofs_fakes as fakes

NOWHERE = "\0no fixture"  # lockstep has no fixture: no path is rewritten


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


class WriterProofsLockstep(RuleBasedStateMachine):
    @initialize(fences=st.booleans(), by_id=st.booleans())
    def create(self, fences: bool, by_id: bool) -> None:
        note(f"options: attest_requires_fences={fences}, compare_writers_by_id={by_id}")
        self.env = fakes.FakeEnvironment(World(None, None, None, None, "missing", None, (), ()))
        self.proofs = WriterProofs(self.env, fakes.HOME, fakes.OWN_ROOT, Options(fences, by_id))
        self.chart = WriterProofsChart(
            own_root=fakes.OWN_ROOT, options=WriterProofsModelOptions(fences, by_id)
        )
        self.model_output: dict[str, Any] = {}
        self.impl_output: dict[str, Any] = {}

    def _step(self, event: str, world: World | None = None, **args: Any) -> None:
        if world is not None:
            self.env.begin(world)
            note(f"world: {world}")
        step: dict[str, Any] = {"event": event, "args": {k: list(v) for k, v in args.items()}}
        self.impl_output = apply_step(self.proofs, step, NOWHERE)
        self.chart.send(event, world=world, roots=args.get("roots", ()), requested=args.get("requested", ()))
        self.model_output = dict(self.chart.output)
        note(f"{event} {args or ''} -> {_canonical(self.impl_output)}")

    @rule(roots=fakes.root_lists, world=fakes.worlds())
    def initial(self, roots: tuple[str, ...], world: World) -> None:
        self._step("initial", world, roots=roots)

    @rule(world=fakes.worlds())
    def active(self, world: World) -> None:
        self._step("active", world)

    @rule(world=fakes.worlds())
    def attest(self, world: World) -> None:
        self._step("attest", world)

    @rule(requested=fakes.root_lists, world=fakes.worlds())
    def preview(self, requested: tuple[str, ...], world: World) -> None:
        self._step("preview", world, requested=requested)

    @rule()
    def hold_fences(self) -> None:
        self._step("hold_fences")

    @rule()
    def release_fences(self) -> None:
        self._step("release_fences")

    @invariant()
    def outputs_agree(self) -> None:
        assert _canonical(self.model_output) == _canonical(self.impl_output)

    @invariant()
    def phases_agree(self) -> None:
        assert self.chart.phase == self.proofs.phase

    @invariant()
    def control_state_names_the_phase(self) -> None:
        expected = {None: "no_context", "initial": "initial_context", "active": "active_context"}
        assert self.chart.current_state_value == expected[self.proofs.phase]


TestWriterProofsLockstep = WriterProofsLockstep.TestCase
if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci":  # the ci budget: about ten seconds
    TestWriterProofsLockstep.settings = settings(max_examples=60, stateful_step_count=20)
