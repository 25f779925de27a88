"""Lockstep: every generated event goes to the phases chart and to the reference core.

Both observe the same world (the reference through ``FakeEnvironment``), including worlds in which
the running CLI root or the receipt moves while a measurement runs. Rule names are the spec's
event names, so a shrunk failure reads as a trace.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from hypothesis import note, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, rule

from inboxspec.impl.writer_proofs import Options, WriterProofs
from inboxspec.machines.writer_proofs_driver import INTERFACE, apply_step
from inboxspec.model.writer_proofs import World, WriterProofsChart, WriterProofsModelOptions
from tests import writer_proofs_fakes as fakes
from tests.lockstep import Lockstep, event_rule

NOWHERE = "\0no fixture"  # lockstep has no fixture: no path is rewritten
# The finding options: spec/writer-proofs.interface.json.
OPTIONS = st.fixed_dictionaries(dict.fromkeys(INTERFACE.options, st.booleans()))


class ChartSession:
    """The phases chart in a model session's shape: each step observes the world its rule chose."""

    def __init__(self, chart: WriterProofsChart) -> None:
        self.chart = chart
        self.world: World | None = None

    def apply(self, step: Mapping[str, Any]) -> dict[str, Any]:
        args = INTERFACE.events[step["event"]].with_defaults(step.get("args", {}))
        self.chart.send(step["event"], world=self.world, roots=tuple(args.get("roots", ())),
                        requested=tuple(args.get("requested", ())))
        return dict(self.chart.output)


class WriterProofsLockstep(Lockstep):
    machine = "writer-proofs"
    # The worlds are fakes that a case file cannot carry: a trace is no case to paste.
    notes_counterexample_case = False

    @initialize(options=OPTIONS)
    def create(self, options: dict[str, bool]) -> None:
        self.env = fakes.FakeEnvironment(World(None, None, None, None, "missing", None, (), ()))
        self.proofs = WriterProofs(self.env, fakes.HOME, fakes.OWN_ROOT, Options(**options))
        self.chart = WriterProofsChart(
            own_root=fakes.OWN_ROOT, options=WriterProofsModelOptions(**options)
        )
        self.model = ChartSession(self.chart)
        self.start({"options": options}, self.model, lambda step: apply_step(self.proofs, step, NOWHERE))

    def _step(self, event: str, world: World | None = None, **args: Any) -> None:
        if world is not None:
            self.env.begin(world)
            note(f"world: {world}")
        self.model.world = world
        super()._step(event, **{name: list(value) for name, value in args.items()})

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

    hold_fences = event_rule("hold_fences")

    release_fences = event_rule("release_fences")

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
