"""Exhaustive refinement: the model and the reference agree on every short sequence.

Every sequence of the machine's alphabet up to ``depth`` letters is applied
to the model chart (through the compiled view) and to the reference
implementation (through its conformance driver), with concrete values, and
every observable output must be identical. This complements the random
lockstep tests: it misses nothing short, where they reach deep.

The reference is forked by replay: each sequence is run from a fresh
implementation built from the case config, so no state is ever shared
between branches (whatever the implementation keeps in mutable buffers).

The compiled view fires on the explorer's canonical snapshots, so its output
names what it names as the canonical form does: the host's sessions are
renamed by their place in the snapshot, while the concrete steps address the
sessions the reference has. A difference there is therefore confirmed on the
model's own case runner (``Machine.run_model_case``) with the same concrete
steps, and the sequence is a disagreement only when that output too differs
from the reference's. The confirmation runs only where the outputs differ,
which for a machine whose canonical form renames nothing that an output
shows happens only at a real disagreement.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inboxspec import machines
from inboxspec.checker.compiled import CompiledChart
from inboxspec.checker.explore import checked_alphabet, parse_options, refuse_unbuildable
from inboxspec.checker.forked import WorkerLost, Workers, can_fork
from inboxspec.checker.traces import run_side
from inboxspec.conformance.compare import canonical
from inboxspec.machines.frame import MAX_REFINE_DEPTH, Action

MAX_DEPTH = MAX_REFINE_DEPTH
PROGRESS_EVERY_S = 0.25
# The most steps a refinement compares unless asked for more (``refine --max-steps``): the sequences
# grow as the alphabet to the depth, and each step replays its sequence on the reference, so a depth
# the limit allows can still run for days (the host's depth 8). Peer delivery's depth 4, the command
# line's default, compares about 420,000; the check's depth 3, at most 17,000 on any machine.
MAX_STEPS = 1_000_000


class RefinementTooLarge(ValueError):
    """A refinement passed its ``max_steps`` steps compared."""

    def __init__(self, name: str, depth: int, max_steps: int) -> None:
        super().__init__(f"the {name} refinement to depth {depth} passed {max_steps:,} steps compared and "
                         f"stopped (allow more with --max-steps, or refine less deep)")


@dataclass
class Refinement:
    machine: str
    depth: int
    options: dict[str, bool]
    sequences: int = 0
    steps: int = 0
    mismatch: list[str] = field(default_factory=list)


def refine(name: str, depth: int, options: Mapping[str, bool] | None = None,
           bounds: Mapping[str, str] | None = None,
           progress: Callable[[Refinement], None] | None = None, *,
           max_steps: int = MAX_STEPS) -> Refinement:
    """Every sequence of up to ``depth`` letters, compared; ``progress``, when given, is called with
    the refinement so far about four times a second (``inboxspec refine`` draws it on a terminal:
    a deep refinement runs for minutes). Past ``max_steps`` steps compared it stops with
    :class:`RefinementTooLarge`."""
    if not 0 < depth <= MAX_DEPTH:
        raise ValueError(f"depth must be between 1 and {MAX_DEPTH}")
    entry = machines.get(name)
    explorer = entry.explorer
    parsed = explorer.parse_bounds(bounds or {})
    chosen = parse_options(explorer, name, options)
    refuse_unbuildable(name, parsed, chosen)
    actions = checked_alphabet(explorer, name, parsed)
    chart = CompiledChart(entry.chart)
    bound = [chart.bind(a.event, a.kwargs) for a in actions]
    data = chart.blank()
    explorer.constants(data, parsed, chosen)
    result = Refinement(name, depth, chosen)
    config = explorer.config(parsed, chosen)
    path: list[tuple[Any, Action, Any]] = []

    last_report = [time.monotonic()]

    def visit(snapshot: Any, remaining: int) -> bool:
        if remaining == 0:
            result.sequences += 1
            if progress is not None and time.monotonic() - last_report[0] > PROGRESS_EVERY_S:
                last_report[0] = time.monotonic()
                progress(result)
            return True
        for index, action in enumerate(actions):
            if not action.offered(snapshot):
                continue
            explorer.load(data, snapshot)
            fired = bound[index][snapshot[0]](data)
            post, expected = explorer.store(data, fired.target), data.output
            path.append((snapshot, action, post))
            if action.event not in explorer.unobservable_events:
                steps = explorer.concretize(path)
                result.steps += 1
                if result.steps > max_steps:
                    raise RefinementTooLarge(name, depth, max_steps)
                # A reference that raises answers {"raised": ...}, which no model output equals.
                replayed = run_side(entry.run_case, config, steps)
                actual = replayed.get("outputs", [replayed])[-1]
                if canonical(expected) != canonical(actual):
                    modelled = _model_output(entry.run_model_case, config, steps)
                    if modelled is None or canonical(modelled) != canonical(actual):
                        shown = expected if modelled is None else modelled
                        result.mismatch = [*(f"{a.label}" for _, a, _ in path), f"steps {canonical(steps)}",
                                           f"model {canonical(shown)}", f"reference {canonical(actual)}"]
                        return False
            ok = visit(post, remaining - 1)
            path.pop()
            if not ok:
                return False
        return True

    visit(explorer.initial(parsed), depth)
    return result


def _model_output(run_model_case: Any, config: Mapping[str, Any], steps: list[dict[str, Any]]) -> Any:
    """The model's own output for the last of ``steps``, or None when its runner fails on them."""
    try:
        outputs = run_model_case(config, steps).get("outputs")
    except Exception:  # the model takes valid input only: a failure is a disagreement, shown as the chart's
        return None
    return outputs[-1] if outputs else None


class RefinementLost(WorkerLost):
    """The worker refining a machine ended before it answered."""


def _refine_in_worker(task: tuple[str, int]) -> Refinement:
    name, depth = task
    return refine(name, depth)


class Refinements:
    """Each machine's refinement at one ``depth``, for ``inboxspec check``: made on a forked worker
    of their own while the caller does other work (``start``), or in the caller when it asks
    (``get``). ``check`` refines every machine while it explores them and replays the cases; the
    refinements read real files (writer proofs) and take about a fifth of the five machines' check,
    all of it in the caller until they had a worker. ``close`` ends the worker; the memo is a
    context manager that closes it."""

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self._workers: Workers[tuple[str, int], Refinement] | None = None

    def __enter__(self) -> Refinements:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, names: Sequence[str], workers: int) -> None:
        """Begin refining ``names``, in order, on one worker, when the caller may use ``workers``
        processes (more than one) and can fork."""
        if workers > 1 and can_fork() and names and self._workers is None:
            self._workers = Workers(_refine_in_worker, [(name, (name, self.depth)) for name in names], 1)

    def get(self, name: str) -> Refinement:
        if self._workers is not None and name in self._workers:
            try:
                return self._workers.answer(name)
            except WorkerLost as error:
                raise RefinementLost(f"the refinement of {name}: {error}") from error
        return refine(name, self.depth)

    def close(self) -> None:
        if self._workers is not None:
            self._workers.close()
            self._workers = None
