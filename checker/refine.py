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

import collections
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inboxspec import machines
from inboxspec.checker.compiled import CompiledChart
from inboxspec.checker.explore import (
    ExplorationTooLarge,
    checked_alphabet,
    parse_options,
    refuse_unbuildable,
)
from inboxspec.checker.forked import WorkerLost, Workers, can_fork
from inboxspec.checker.limits import MAX_REFINE_STEPS as MAX_STEPS
from inboxspec.checker.limits import MAX_STATES
from inboxspec.checker.traces import run_side
from inboxspec.conformance.compare import canonical
from inboxspec.machines.frame import MAX_REFINE_DEPTH, Action, Bounds, Explorer, Machine

MAX_DEPTH = MAX_REFINE_DEPTH
PROGRESS_EVERY_S = 0.25


class RefinementTooLarge(ValueError):
    """A refinement passed its ``max_steps`` steps compared (a reachable one: replayed)."""

    def __init__(self, name: str, depth: int | None, max_steps: int) -> None:
        if depth is None:  # a reachable refinement (``refine_reachable``)
            what, counted, remedy = f"reachable {name} refinement", "replayed", "give smaller bounds"
        else:
            what, counted, remedy = f"{name} refinement to depth {depth}", "compared", "refine less deep"
        super().__init__(f"the {what} passed {max_steps:,} steps {counted} and stopped (allow more with "
                         f"--max-steps, or {remedy})")


@dataclass
class Refinement:
    machine: str
    depth: int  # of a reachable refinement: the longest sequence compared
    options: dict[str, bool]
    sequences: int = 0  # of a reachable refinement: the steps compared (each after its shortest trace)
    steps: int = 0
    mismatch: list[str] = field(default_factory=list)
    # A reachable refinement (``refine_reachable``): the bounds it explored at; None for one by depth.
    reachable_bounds: dict[str, Any] | None = None


@dataclass
class _Compared:
    """What both refinements compare with: the machine, its bounds and options, the compiled chart
    bound to its letters, and the config a case of those bounds and options has."""

    entry: Machine
    explorer: Explorer
    parsed: Bounds
    chosen: dict[str, bool]
    actions: list[Action]
    bound: list[dict[str, Any]]
    data: Any
    config: dict[str, Any]

    def fire(self, snapshot: Any, index: int) -> tuple[Any, Any]:
        """The model's step of letter ``index`` from ``snapshot``: the snapshot reached, and its output."""
        self.explorer.load(self.data, snapshot)
        fired = self.bound[index][snapshot[0]](self.data)
        return self.explorer.store(self.data, fired.target), self.data.output

    def disagreement(self, path: list[tuple[Any, Action, Any]], expected: Any) -> list[str] | None:
        """Whether the reference, replaying ``path`` with concrete values, gives the model's output
        ``expected`` at its last step; when not, the disagreement as ``Refinement.mismatch`` words it."""
        steps = self.explorer.concretize(path, self.parsed, self.chosen)
        # A reference that raises answers {"raised": ...}, which no model output equals.
        replayed = run_side(self.entry.run_case, self.config, steps)
        actual = replayed.get("outputs", [replayed])[-1]
        if canonical(expected) == canonical(actual):
            return None
        modelled = _model_output(self.entry.run_model_case, self.config, steps)
        if modelled is not None and canonical(modelled) == canonical(actual):
            return None
        shown = expected if modelled is None else modelled
        return [*(f"{a.label}" for _, a, _ in path), f"steps {canonical(steps)}",
                f"model {canonical(shown)}", f"reference {canonical(actual)}"]


def _compared(name: str, bounds: Mapping[str, str] | None, options: Mapping[str, bool] | None) -> _Compared:
    entry = machines.get(name)
    explorer = entry.explorer
    parsed = explorer.parse_bounds(bounds or {})
    chosen = parse_options(explorer, name, options)
    refuse_unbuildable(name, parsed, chosen)
    actions = checked_alphabet(explorer, name, parsed)
    chart = CompiledChart(entry.chart)
    data = chart.blank()
    explorer.constants(data, parsed, chosen)
    bound = [chart.bind(a.event, a.kwargs) for a in actions]
    return _Compared(entry, explorer, parsed, chosen, actions, bound, data, explorer.config(parsed, chosen))


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
    compared = _compared(name, bounds, options)
    explorer, actions = compared.explorer, compared.actions
    result = Refinement(name, depth, compared.chosen)
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
            post, expected = compared.fire(snapshot, index)
            path.append((snapshot, action, post))
            if action.event not in explorer.unobservable_events:
                result.steps += 1
                if result.steps > max_steps:
                    raise RefinementTooLarge(name, depth, max_steps)
                mismatch = compared.disagreement(path, expected)
                if mismatch is not None:
                    result.mismatch = mismatch
                    return False
            ok = visit(post, remaining - 1)
            path.pop()
            if not ok:
                return False
        return True

    visit(explorer.initial(compared.parsed), depth)
    return result


def refine_reachable(name: str, bounds: Mapping[str, str] | None = None,
                     options: Mapping[str, bool] | None = None,
                     progress: Callable[[Refinement], None] | None = None, *,
                     max_steps: int = MAX_STEPS, max_states: int = MAX_STATES) -> Refinement:
    """Every step of every state the model reaches within ``bounds``: the state's shortest trace
    and the step are replayed on the reference, and the step's output compared.

    Where ``refine`` compares every short sequence, this compares the whole reachable transition
    relation, as deep as the bounds let the model go: a disagreement seven steps in, under two
    options together, is out of a depth-3 refinement's reach and within this one's
    (``tests/test_refine_reachable.py`` plants one). A step to a state met before is compared too:
    a wrong step may well reach a state that a right one reaches sooner. Each step replays its
    source's shortest trace, so the cost is the steps times the traces' lengths; it is a tool for
    small bounds. Past ``max_states`` distinct states it stops with ``ExplorationTooLarge``, past
    ``max_steps`` steps replayed with ``RefinementTooLarge``."""
    compared = _compared(name, bounds, options)
    explorer, actions = compared.explorer, compared.actions
    result = Refinement(name, 0, compared.chosen, reachable_bounds=dict(compared.parsed))
    start = explorer.initial(compared.parsed)
    # Per state: its tree step (the state it was first reached from, and the letter).
    tree: dict[Any, tuple[Any, int] | None] = {start: None}
    frontier = collections.deque([start])
    last_report = time.monotonic()
    while frontier:  # breadth-first: the shortest traces first, so the first disagreement is a shortest one
        pre = frontier.popleft()
        trace = _tree_path(tree, actions, pre)
        for index, action in enumerate(actions):
            if not action.offered(pre):
                continue
            post, expected = compared.fire(pre, index)
            if post not in tree:
                tree[post] = (pre, index)
                if len(tree) > max_states:
                    raise ExplorationTooLarge(name, max_states)
                frontier.append(post)
            if action.event in explorer.unobservable_events:
                continue  # its effect shows in the next observable step's output
            path = [*trace, (pre, action, post)]
            result.sequences += 1
            result.steps += len(path)
            result.depth = max(result.depth, len(path))
            if result.steps > max_steps:
                raise RefinementTooLarge(name, None, max_steps)
            mismatch = compared.disagreement(path, expected)
            if mismatch is not None:
                result.mismatch = mismatch
                return result
            if progress is not None and time.monotonic() - last_report > PROGRESS_EVERY_S:
                last_report = time.monotonic()
                progress(result)
    return result


def _tree_path(tree: Mapping[Any, tuple[Any, int] | None], actions: Sequence[Action],
               state: Any) -> list[tuple[Any, Action, Any]]:
    """The shortest trace to ``state`` along the tree, as (pre, action, post) steps."""
    path = []
    while (link := tree[state]) is not None:
        pre, index = link
        path.append((pre, actions[index], state))
        state = pre
    path.reverse()
    return path


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
