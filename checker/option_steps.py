"""An option's exploration that takes the default exploration's steps instead of firing them again.

Why. ``inboxspec check`` explores each machine at its default bounds, then once
per option with that option on, at the same bounds. Most steps of an option's
exploration are steps of the default one: few steps read any option at all
(about 14% of peer delivery's, 3% of inbox refresh's), and a step that reads none
does under the option exactly what it did without it. Firing such a step again
(load, fire, store, check) was most of each option's exploration.

How. The default exploration records each step it takes (``StepRecord``):
the transition it fired, the snapshot it reached, which options it read, which
of the machine's invariants fail on it (all of them, not only those it checks)
and its marks for the cycle pass. The chart reads the options through
``OptionReads``, which notes every option read. An exploration with options
that differ from the record's then takes a step from the record, without
firing it, when all of these hold:

- the snapshot it leaves is the very value the record's step left (``tuple``
  equality of every field: a machine's snapshot equality may leave out fields
  that its ``load`` still reads, such as peer delivery's concrete tickets);
- that step read no option whose value differs;
- its transition is covered already (the first step of each transition is
  kept with the chart's output, which the record does not hold);
- no invariant that this exploration still checks on such a step fails on it
  (a violation is kept with its output too).

Any other step is fired as ever.

Why that is exact. A step's transition, snapshot reached, output, invariant
verdicts and marks are functions of the snapshot it leaves, the letter, the
bounds, the machine's constants and the options it reads: ``load`` writes the
snapshot's every field onto the chart's data, the explorer's constants are the
same (``same_constants`` refuses a record otherwise), and the chart reads the
options only through ``data.options``. So a step that reads no differing
option has the record's outcome, and the exploration meets the same states,
in the same order, with the same coverage, violations and lassos.
``tests/test_option_steps.py`` compares every option's exploration of every
machine that reuses steps, with and without the record, field by field.

Which machines. Those whose explorer does not opt out (``reuses_default_steps``).
The host opts out: its options change most of its steps (its harness-line
options reach states the default never does), so a record of its million steps
would save little, and its family would keep one worker busy for all of its
explorations, which the whole check would then wait for (``machines/host.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, NamedTuple

from inboxspec.machines.frame import Explorer, Snapshot


class RecordedStep(NamedTuple):
    """One recorded step. Built with ``tuple.__new__`` in the recording search's inner loop (a
    NamedTuple's own ``__new__`` is Python code), so the fields' order is this declaration's."""

    transition: tuple[str, str, int]  # the key of the transition fired
    post: Snapshot  # the snapshot reached
    options_read: int  # the options read: bit k for the explorer's k-th option
    # The invariants that fail on it: bit k for the k-th of all the machine's invariants (those
    # checked once per state are kept per state: ``RecordedState.failures``).
    failures: int
    marks: tuple[int, int] | None  # its marks for the cycle pass (None for a letter without)


class RecordedState(NamedTuple):
    """The record of one snapshot left."""

    # The snapshot as recorded. A state met later may find this record as an equal key and still
    # differ in its fields (peer delivery's states are equal whatever their tickets): a step is taken
    # from the record only when ``tuple.__eq__`` finds the two the same.
    snapshot: Snapshot
    steps: list[RecordedStep | None]  # each letter's step, by letter index (None: not offered)
    # The invariants checked once per state that fail in it: bit k for the k-th of the machine's.
    failures: int


class OptionReads:
    """The chart's options, noting each read of one of the explorer's options (``read``)."""

    __slots__ = ("_bits", "_options", "read")

    def __init__(self, options: Any, names: Sequence[str]) -> None:
        self._options = options
        self._bits = {name: 1 << position for position, name in enumerate(names)}
        self.read = 0

    def __getattr__(self, name: str) -> Any:
        # Only names that are not slots come here: the options themselves.
        self.read |= self._bits.get(name, 0)
        return getattr(self._options, name)

    def __repr__(self) -> str:
        return f"OptionReads({self._options!r})"


def reuses_default_steps(explorer: Explorer) -> bool:
    """Whether an option's exploration of this machine takes the default's steps (``StepRecord``).
    An explorer description opts out with ``reuses_default_steps = False``."""
    return bool(getattr(explorer, "reuses_default_steps", True))


def options_alone_differ(explorer: Explorer, bounds: Mapping[str, Any], options: Mapping[str, bool],
                         recorded: Mapping[str, bool]) -> bool:
    """Whether two explorations' chart data differ in ``data.options`` alone, as ``Explorer.constants``
    sets them: only then may one take the other's steps (an explorer that keeps an option elsewhere
    on the data, as a test's toy machine does, explores each option by firing every step)."""
    with_options, without = SimpleNamespace(), SimpleNamespace()
    explorer.constants(with_options, bounds, options)
    explorer.constants(without, bounds, recorded)
    return "options" in vars(without) and constants_of(with_options) == constants_of(without)


def option_bits(explorer: Explorer, options: Mapping[str, bool], recorded: Mapping[str, bool]) -> int:
    """The options (bit k for the explorer's k-th) whose value differs between two explorations."""
    return sum(1 << position for position, name in enumerate(explorer.options)
               if options.get(name, False) != recorded.get(name, False))


def constants_of(data: Any) -> dict[str, Any]:
    """The chart data's constants as ``Explorer.constants`` set them, the options left out."""
    return {name: value for name, value in vars(data).items() if name != "options"}


@dataclass
class StepRecord:
    """The steps of one exploration (``explore``'s ``record``), for explorations that differ from it
    in their options alone (``explore``'s ``reuse``)."""

    machine: str = ""
    bounds: dict[str, Any] = field(default_factory=dict)
    options: dict[str, bool] = field(default_factory=dict)
    constants: dict[str, Any] = field(default_factory=dict)
    steps: dict[Snapshot, RecordedState] = field(default_factory=dict)  # per snapshot left

    def same_constants(self, machine: str, bounds: Mapping[str, Any], data: Any) -> bool:
        """Whether an exploration of ``machine`` at ``bounds`` with this chart data may take these steps:
        the same machine, bounds and constants (only the options may differ)."""
        return (machine == self.machine and dict(bounds) == self.bounds
                and constants_of(data) == self.constants)
