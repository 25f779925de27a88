"""Breadth-first explicit-state exploration of a model chart.

Every reachable snapshot within the machine's bounds is visited once. A
snapshot is the machine's canonical fingerprint (``Explorer.store``), so states
that differ only in interchangeable identities are one state. Each step fires
the chart's own transitions through :mod:`inboxspec.checker.compiled` (time
included: it moves through the chart's own events), and every named invariant
is checked on every step of the letters it applies to. Because the search is
breadth-first, the first violation found of an invariant is one of the
shortest, and so is the first trace to each chart transition, which is what
generated cases use.

Nothing here names a machine's vocabulary: what the search needs of a machine
is its :class:`~inboxspec.machines.frame.Explorer`.
"""

from __future__ import annotations

import collections
import contextlib
import gc
import os
import time
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inboxspec import machines
from inboxspec.checker.compiled import CompiledChart, CompiledTransition, generated_function, take_step
from inboxspec.checker.cycles import Edge, LassoPath, find_lassos
from inboxspec.checker.forked import WorkerLost, Workers, can_fork
from inboxspec.checker.limits import MAX_STATES
from inboxspec.checker.option_steps import (
    OptionReads,
    RecordedState,
    RecordedStep,
    StepRecord,
    constants_of,
    option_bits,
    options_alone_differ,
    reuses_default_steps,
)
from inboxspec.machines.frame import (
    Action,
    Bounds,
    Explorer,
    ForeverProperty,
    Invariant,
    Snapshot,
    Step,
    StepMemo,
    any_step,
    forever_properties,
    step_memo,
)

Progress = Callable[[int, int, float], None]


@dataclass(frozen=True)
class Lasso:
    """A shortest prefix from the initial state to a cycle, then the cycle (``checker/cycles.py``)."""

    prefix: list[Step]
    loop: list[Step]


@dataclass
class Exploration:
    machine: str
    bounds: Bounds
    options: dict[str, bool]
    states: int = 0
    transitions: int = 0
    max_depth: int = 0
    # Wall time of the whole exploration: the search, its traces and its cycle pass.
    seconds: float = 0.0
    # Its processor time (``seconds`` is wall time): on a shared machine, the rate
    # per core. On several workers, the sum over the workers and the coordinating process.
    cpu_seconds: float = 0.0
    # On several workers: each worker's processor time, and the processor time along the
    # search's longest path (per level the busiest worker's, the busiest worker's last phase,
    # and the coordinator's): its wall time with a core to each process and no other load.
    cpu_by_worker: tuple[float, ...] = ()
    critical_cpu_seconds: float = 0.0
    violations: dict[str, list[Step]] = field(default_factory=dict)
    coverage: dict[tuple[str, str, int], list[Step]] = field(default_factory=dict)
    all_transitions: tuple[CompiledTransition, ...] = ()
    # Per forever-property that fails: its lasso, (prefix, loop) as steps with the chart's outputs.
    lassos: dict[str, Lasso] = field(default_factory=dict)
    forever_checked: tuple[str, ...] = ()
    # The invariants checked, by name, in declaration order: every one of the machine's, unless the
    # exploration was asked for fewer (``explore``'s ``invariants``).
    invariants_checked: tuple[str, ...] = ()
    # The steps taken from another exploration's record instead of fired (``explore``'s ``reuse``):
    # counted in ``transitions`` as every step is.
    steps_reused: int = 0

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds else float("inf")

    def summary(self) -> dict[str, Any]:
        return {
            "machine": self.machine,
            "bounds": {k: list(v) if isinstance(v, tuple) else v for k, v in self.bounds.items()},
            "options": self.options,
            "distinct_states": self.states,
            "transitions": self.transitions,
            "max_depth": self.max_depth,
            "seconds": round(self.seconds, 4),
            "states_per_second": round(self.states_per_second),
            "violated": sorted(self.violations),
            "forever_properties_checked": list(self.forever_checked),
            "forever_violated": sorted(self.lassos),
            "chart_transitions_covered": f"{len(self.coverage)}/{len(self.all_transitions)}",
        }


def parse_options(explorer: Explorer, machine: str, options: Mapping[str, bool] | None) -> dict[str, bool]:
    chosen = dict(options or {})
    unknown = sorted(set(chosen) - set(explorer.options))
    if unknown:
        raise ValueError(f"unknown {machine} option(s): {', '.join(unknown)}; "
                         f"known: {', '.join(explorer.options) or 'none'}")
    return chosen


def compiled_chart(name: str) -> CompiledChart:
    return CompiledChart(machines.get(name).chart)


# An exploration whose machine's manifest records fewer distinct states than this at
# the same bounds runs in one process by default: below it, forking the workers and
# routing the successors eat much of what the second core gains (peer delivery, 12,822
# states in about a second, ran 1.48 times as fast on two workers of an idle machine, and
# slower than one process on a busy one; benchmarks/explorer_workers.py).
PARALLEL_FROM_STATES = 50_000


def default_workers(name: str, bounds: Mapping[str, str] | None = None) -> int:
    """1 for a small exploration (the manifest's count at these bounds is under
    ``PARALLEL_FROM_STATES``), every usable core otherwise, bounds the manifest
    does not record included (a larger bound is the usual reason to change one)."""
    from inboxspec.checker.manifest import ManifestError, load_manifest

    entry = machines.get(name)
    manifest = load_manifest(entry) or {}  # ManifestError, a ValueError naming the file
    try:
        recorded = entry.explorer.parse_bounds(manifest.get("bounds", {}))
    except ValueError as error:  # said of the manifest's bounds, not of bounds the user gave
        raise ManifestError(f"{entry.manifest}: its bounds: {error}") from None
    same_bounds = entry.explorer.parse_bounds(bounds or {}) == recorded
    if same_bounds and "distinct_states" in manifest and manifest["distinct_states"] < PARALLEL_FROM_STATES:
        return 1
    return available_cores()


# The most letters an alphabet may have: the largest here, writer proofs' full alphabet, has 56.
# Each letter is bound to a generated function per control state before the search starts, so a
# bound that multiplies letters (a peer delivery held_cap of a million) otherwise takes gigabytes
# before the first state.
MAX_LETTERS = 1_000


def checked_alphabet(explorer: Explorer, name: str, bounds: Bounds) -> list[Action]:
    """The machine's alphabet at ``bounds``; ValueError past ``MAX_LETTERS`` letters."""
    actions = list(explorer.alphabet(bounds))
    if len(actions) > MAX_LETTERS:
        raise ValueError(f"the {name} alphabet at these bounds has {len(actions):,} letters, more than "
                         f"{MAX_LETTERS:,}: beyond an exhaustive search")
    return actions


def refuse_unbuildable(name: str, bounds: Bounds, options: Mapping[str, bool]) -> None:
    """ValueError when the reference answers ``config_error`` to the configuration that ``bounds``
    and ``options`` make (``Explorer.config``): a search of it would speak of a machine that no
    port may build (the host's two harness-line options at once, or a floor past the largest
    integer a port must hold), and a case emitted from it would have no outputs to expect."""
    entry = machines.get(name)
    answer = entry.run_case(entry.explorer.config(bounds, options), [])
    if "config_error" in answer:
        raise ValueError(f"the reference refuses the {name} configuration these bounds and options make "
                         f"({answer['config_error']}): explore and refine only machines a port may build")


def set_up(name: str, bounds: Mapping[str, str] | None, options: Mapping[str, bool] | None
           ) -> tuple[Explorer, Bounds, dict[str, bool], CompiledChart, Any, list[Action]]:
    """What every search of a machine starts from, serial or on workers: its explorer description,
    the parsed bounds and options, the compiled chart, a blank data object with the constants set,
    and the alphabet."""
    explorer = machines.get(name).explorer
    parsed = explorer.parse_bounds(bounds or {})
    chosen = parse_options(explorer, name, options)
    refuse_unbuildable(name, parsed, chosen)
    chart = CompiledChart(machines.get(name).chart)
    data = chart_data(explorer, chart, parsed, chosen)
    return explorer, parsed, chosen, chart, data, checked_alphabet(explorer, name, parsed)


def chart_data(explorer: Explorer, chart: CompiledChart, bounds: Bounds, options: Mapping[str, bool]) -> Any:
    """A blank data object of ``chart`` with the explorer's constants set: the one a search fires its
    steps on, or a twin of it to read with ``vars`` (``constants_of``).

    WARNING: the search never reads ``vars`` (or ``__dict__``) of the data it fires on. CPython 3.11
    keeps an object's attributes inline until something asks for its ``__dict__``, and from then on
    in a dict of their own, where every attribute the chart's guards and actions read or write costs
    more: reading the constants of the search's own data made peer delivery's recording exploration
    12% slower (``tests/test_option_steps.py`` checks that no search does). A machine's ``load`` may
    still choose to (inbox refresh's data has more attributes than CPython keeps inline, so it
    writes them with one ``vars(data).update``, which measured faster than setting each).
    """
    data = chart.blank()
    explorer.constants(data, bounds, options)
    return data


def checked_invariants(explorer: Explorer, machine: str, names: Collection[str] | None,
                       options: Mapping[str, bool] | None = None) -> tuple[Invariant, ...]:
    """The machine's invariants named in ``names``, in declaration order; for None, all of them but
    those that an option on in ``options`` replaces (``Invariant.replaced_by``)."""
    if names is None:
        on = {option for option, value in (options or {}).items() if value}
        return tuple(inv for inv in explorer.invariants if not on.intersection(inv.replaced_by))
    unknown = sorted(set(names) - {inv.name for inv in explorer.invariants})
    if unknown:
        raise ValueError(f"unknown {machine} invariant(s): {', '.join(unknown)}")
    return tuple(inv for inv in explorer.invariants if inv.name in names)


class ExplorationTooLarge(ValueError):
    """An exploration met more distinct states than its ``max_states``."""

    def __init__(self, name: str, max_states: int) -> None:
        super().__init__(f"the {name} exploration passed {max_states:,} distinct states at these bounds "
                         f"and stopped (allow more with --max-states)")


def explore(name: str, bounds: Mapping[str, str] | None = None, options: Mapping[str, bool] | None = None,
            progress: Progress | None = None, workers: int = 1,
            invariants: Collection[str] | None = None, *,
            record: StepRecord | None = None, reuse: StepRecord | None = None,
            max_states: int = MAX_STATES) -> Exploration:
    """Every reachable state within the bounds, breadth-first; on ``workers`` processes when
    more than one and processes can be forked (``checker/parallel.py``: the same result,
    lassos included). ``invariants``, when given, names the only invariants checked: the states,
    the transitions, the coverage and the lassos are the same whichever are checked (an invariant
    only reads the step it is given).

    ``record``, an empty ``StepRecord``, is filled with every step taken; ``reuse``, one filled so
    at the same bounds, gives the steps that need not be fired again (``checker/option_steps.py``:
    the same result, in less time). Both are for one process: with ``workers`` they are refused.

    Past ``max_states`` distinct states it stops with :class:`ExplorationTooLarge`."""
    if record is not None and reuse is not None:
        raise ValueError("an exploration records its steps or takes them from a record, not both")
    if workers > 1 and can_fork():
        if record is not None or reuse is not None:
            raise ValueError("a step record is kept in one process: explore with one worker")
        from inboxspec.checker.parallel import explore_on_workers

        parallel: Exploration = explore_on_workers(name, bounds, options, workers, progress, invariants,
                                                   max_states=max_states)
        return parallel
    explorer, parsed, chosen, chart, data, actions = set_up(name, bounds, options)
    checked = checked_invariants(explorer, name, invariants, chosen)
    # WARNING: the record's constants are those ``set_up`` left, before ``OptionReads`` wraps the
    # options (``StepRecord.same_constants`` compares them so), read from a twin of the data that
    # the steps fire on (``chart_data`` says why).
    twin = None if record is None and reuse is None else chart_data(explorer, chart, parsed, chosen)
    if reuse is not None and not reuse.same_constants(name, parsed, twin):
        raise ValueError(f"the step record is of another exploration than {name} at {dict(parsed)}")
    reading: OptionReads | None = None
    if record is not None and explorer.options and not hasattr(data, "options"):
        raise ValueError(f"{name} keeps its options elsewhere than on the chart's data.options: "
                         f"its steps cannot be recorded")
    if record is not None:
        record.machine, record.bounds, record.options = name, dict(parsed), dict(chosen)
        record.constants = constants_of(twin)
        reading = data.options = OptionReads(data.options, explorer.options)
    # The recorded steps of the snapshots met, and which options read would make a step differ.
    recorded_steps = {} if reuse is None else reuse.steps
    differing = 0 if reuse is None else option_bits(explorer, chosen, reuse.options)

    result = Exploration(name, parsed, chosen, all_transitions=chart.transitions,
                         invariants_checked=tuple(inv.name for inv in checked))
    start = explorer.initial(parsed)
    # Per letter: the invariants that concern it (a violated one is dropped from every
    # letter), as generated checks (``letter_checks``), rebuilt when one is dropped.
    active_by_letter: list[list[Invariant]] = [
        [inv for inv in checked if inv.applies(a)] for a in actions]
    bound = [chart.bind(a.event, a.kwargs) for a in actions]
    once_per_state = state_level_invariants(active_by_letter, start, parsed)

    # What a record keeps of every invariant of the machine, checked or not, as bits (``all_bits``):
    # per state, which of those checked once per state fail there (``of_state_check``: any
    # exploration's ``once_per_state`` are those of them it checks); per step, which others fail
    # (``record_checks``, per letter).
    all_bits = {inv.name: 1 << position for position, inv in enumerate(explorer.invariants)}
    once_bits = sum(all_bits[name] for name in once_per_state)
    of_state_check = None
    record_checks = []
    if record is not None:
        every_by_letter = [[inv for inv in explorer.invariants if inv.applies(a)] for a in actions]
        of_states = state_level_invariants(every_by_letter, start, parsed)
        of_state_check = invariant_checks([inv for inv in explorer.invariants if inv.name in of_states],
                                          parsed)
        record_checks = [invariant_checks([inv for inv in every if inv.name not in of_states], parsed)
                         for every in every_by_letter]

    generated: dict[tuple[int, ...], Any] = {}  # the checks generated so far, by their invariants

    # The forever-properties need the explored graph: states numbered in discovery
    # order, and per allowed subgraph (``forever_groups``) the steps leaving each state.
    forever = forever_properties(explorer)
    groups = forever_groups(forever)
    marks = letter_marks(forever, groups, actions, parsed)

    # Per letter, the invariants still checked on a step to a state met before, and on one that
    # discovers its state, as bits (``all_bits``): a recorded step on which one fails is fired.
    seen_bits: list[int] = []
    new_bits: list[int] = []

    def letters_by_state() -> dict[str, list[Letter]]:
        seen_bits[:] = [sum(all_bits[inv.name] for inv in active if inv.name not in once_per_state)
                        for active in active_by_letter]
        new_bits[:] = [sum(all_bits[inv.name] for inv in active) for active in active_by_letter]
        return letter_table(chart.states, actions, bound,
                            letter_checks(active_by_letter, once_per_state, parsed, generated), marks)

    letters = letters_by_state()
    load, store = explorer.load, explorer.store
    # The description's step memo, if it has one (a recording search fires every step: a record keeps
    # which options each step read).
    memo = None if record is not None else search_memo(explorer, data, parsed, chosen, actions)
    coverage, violations = result.coverage, result.violations
    covered: set[CompiledTransition] = set()  # by identity: the chart's transitions met so far
    # parent[s] = (previous snapshot, letter index): the BFS tree, which gives shortest traces.
    parent: dict[Snapshot, tuple[Snapshot, int] | None] = {start: None}
    frontier: collections.deque[tuple[Any, int]] = collections.deque([(start, 0)])
    popleft, append = frontier.popleft, frontier.append

    def record_violations(failed: list[Invariant], step: Step) -> None:
        # The first violation met is a shortest one: record it, check it no further (the
        # letters still to fire from this state check it again, and are not recorded).
        nonlocal letters
        for invariant in failed:
            if invariant.name not in violations:
                violations[invariant.name] = [step]
                for letter_invariants in active_by_letter:
                    if invariant in letter_invariants:
                        letter_invariants.remove(invariant)
        letters = letters_by_state()

    def record_failures(index: int, pre: Snapshot, post: Snapshot, output: Any, seen: bool,
                        check_new: Any) -> tuple[int, list[Invariant] | None]:
        """What a record keeps of a step of letter ``index``: the invariants that fail on it, as bits
        (those checked once per state left out: the record keeps them per state); and the step's
        violations, in declaration order, as the search's own check gives them. A step to a state
        met before violates those failing invariants still checked on such a step (none of them
        checked once per state); one that discovers its state is checked by ``check_new``, the
        letter's own check, as ever."""
        failing = record_checks[index]
        all_failed = None if failing is None else failing(pre, post, output)
        failures = 0 if not all_failed else sum(all_bits[inv.name] for inv in all_failed)
        if not seen:
            return failures, None if check_new is None else check_new(pre, post, output)
        return failures, all_failed and ([inv for inv in all_failed if all_bits[inv.name] & seen_bits[index]]
                                         or None)

    def state_failures(snapshot: Snapshot) -> int:
        """The invariants checked once per state that fail in ``snapshot``, as bits."""
        failed = None if of_state_check is None else of_state_check(None, snapshot, None)
        return 0 if not failed else sum(all_bits[inv.name] for inv in failed)

    keeping_graph = bool(forever)
    number: dict[Snapshot, int] = {start: 0}
    successors: list[list[list[Edge]]] = [[[]] for _ in groups]
    deepest = fired_letters = reused = 0
    began = last_report = time.perf_counter()
    began_cpu = time.process_time()
    with young_collections_only():
        while frontier:
            pre, pre_depth = popleft()
            next_depth = pre_depth + 1
            if keeping_graph:
                pre_number = number[pre]
            kept_row: list[RecordedStep | None] | None = None
            if reuse is not None and (kept := recorded_steps.get(pre)) is not None \
                    and tuple.__eq__(kept.snapshot, pre):
                kept_row = kept.steps
            new_row: list[RecordedStep | None] | None = None
            if record is not None:
                new_row = [None] * len(actions)
                record.steps[pre] = RecordedState(pre, new_row, state_failures(pre))
            # WARNING: this loop takes a step as the sharded search's does (checker/parallel.py,
            # _Shard.expand: take_step or the step memo, Action.when, the two generated checks, the
            # generated marks); a change to one is a change to both.
            for index, action, when, fire, check_seen, check_new, step_marks in letters[pre[0]]:
                if when is not None and not when(pre):
                    continue
                fired_letters += 1
                kept_step = None if kept_row is None else kept_row[index]
                if kept_step is not None and not kept_step.options_read & differing \
                        and kept_step.transition in coverage:
                    # The recorded step, unless an invariant still checked fails on it: on a step that
                    # discovers its state, those checked once per state are the recorded state's.
                    post = kept_step.post
                    seen = post in parent
                    failures = kept_step.failures
                    if not seen and once_bits:
                        kept_post = recorded_steps.get(post)
                        if kept_post is not None and tuple.__eq__(kept_post.snapshot, post):
                            failures |= kept_post.failures
                        else:
                            failures = -1  # not recorded so: fire it
                    if failures & (seen_bits if seen else new_bits)[index]:
                        kept_step = None
                else:
                    kept_step = None
                if kept_step is not None:
                    reused += 1
                    step_marked = kept_step.marks
                else:
                    if reading is not None:
                        reading.read = 0
                    fired, post, output = take_step(data, pre, fire, load, store) if memo is None \
                        else memo.step(index, pre, fire)
                    if fired not in covered:
                        # Only the last step is kept here; the BFS tree gives the rest afterwards.
                        covered.add(fired)
                        coverage[fired.key] = [(pre, action, post, output)]
                    seen = post in parent
                    step_marked = None if step_marks is None else step_marks(pre, action, post, output)
                    if new_row is not None:
                        # Every invariant of the letter, once: the record keeps which fail, and
                        # those still checked are this step's violations.
                        failures, failed = record_failures(index, pre, post, output, seen, check_new)
                        options_read = reading.read if reading is not None else 0
                        new_row[index] = tuple.__new__(RecordedStep, (
                            fired.key, post, options_read, failures, step_marked))
                    else:
                        check = check_seen if seen else check_new
                        failed = None if check is None else check(pre, post, output)
                    if failed is not None:
                        record_violations(failed, (pre, action, post, output))
                if not seen:
                    parent[post] = (pre, index)
                    if len(parent) > max_states:
                        raise ExplorationTooLarge(name, max_states)
                    deepest = next_depth
                    append((post, next_depth))
                    if keeping_graph:
                        number[post] = len(number)
                        for graph in successors:
                            graph.append([])
                if step_marked is not None:
                    # The step, in each allowed subgraph it is in, with its marks; an unmarked step
                    # from a state to itself is not recorded (checker/cycles.py, "Self-loops").
                    allowed, marked = step_marked
                    post_number = number[post] if allowed else pre_number
                    if marked or post_number != pre_number:
                        for bit, graph in enumerate(successors):
                            if allowed >> bit & 1:
                                graph[pre_number].append((post_number, index, marked))
            if progress is not None and time.perf_counter() - last_report > 0.25:
                last_report = time.perf_counter()
                progress(len(parent), next_depth, last_report - began)
        # The traces and the cycle pass walk every state too: still no full collection.
        for steps in (*coverage.values(), *violations.values()):
            steps[:0] = trace_to(parent, actions, steps[0][0])
        if keeping_graph:
            snapshots = list(number)
            tree: list[tuple[int, int] | None] = [
                None if (link := parent[s]) is None else (number[link[0]], link[1]) for s in snapshots]
            paths = lasso_paths(forever, groups, successors, tree)
            result.lassos = lassos(paths, snapshots.__getitem__, data, bound, actions, load, store)
    # The whole exploration, its cycle pass included: what the rates it reports are rates of.
    result.seconds = time.perf_counter() - began
    result.cpu_seconds = time.process_time() - began_cpu
    result.states = len(parent)
    result.transitions = fired_letters
    result.steps_reused = reused
    result.max_depth = deepest
    result.forever_checked = tuple(p.name for p in forever)
    return result


def search_memo(explorer: Explorer, data: Any, bounds: Bounds, options: Mapping[str, bool],
                actions: Sequence[Action]) -> StepMemo | None:
    """The explorer description's step memo for a search that takes its steps on ``data``
    (``frame.step_memo``), or None: the serial and the sharded search both ask here."""
    load, store = explorer.load, explorer.store
    return step_memo(explorer, data, bounds, options, actions,
                     lambda pre, fire: take_step(data, pre, fire, load, store))


def forever_groups(forever: Sequence[ForeverProperty]) -> list[tuple[int, ...]]:
    """The forever-properties by allowed subgraph: the positions in ``forever`` of those with one
    ``allowed_letters`` and one ``every_step`` (the host's all forbid the same hand). A group's
    subgraph is recorded once, each step with the marks of all the properties (bit k for
    ``forever[k]``), and split into components once."""
    groups: dict[Any, list[int]] = {}
    for position, prop in enumerate(forever):
        groups.setdefault((prop.allowed_letters, prop.every_step), []).append(position)
    return [tuple(members) for members in groups.values()]


@contextlib.contextmanager
def young_collections_only() -> Iterator[None]:
    """A search's garbage collection: the young generations only, while it runs.

    A breadth-first search keeps nearly all it allocates, and its snapshots are named tuples,
    which the collector never stops tracking (it untracks plain tuples only): each full
    collection walks every state met so far, which cost 7% of the host's search in one process
    and 17% on two workers. So no full collection starts while the search runs (the oldest
    generation's threshold is set out of reach, then put back); the young collections still free
    the cyclic garbage of a step, and a freed object is freed as ever.
    """
    thresholds = gc.get_threshold()
    if thresholds[0]:  # 0: automatic collection is off already
        gc.set_threshold(thresholds[0], thresholds[1], 2**30)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


# What the cycle pass records of one step of a letter (``letter_marks``): (allowed, marked).
StepMarks = Callable[[Any, Action, Any, Any], tuple[int, int]]


def letter_marks(forever: Sequence[ForeverProperty], groups: Sequence[Sequence[int]],
                 actions: Sequence[Action], bounds: Bounds) -> list[StepMarks | None]:
    """Per letter, what the cycle pass records of a step ``(pre, action, post, output)`` of it, in the
    serial and the sharded search: which allowed subgraphs the step is in (bit g for ``groups[g]``,
    whose letter filter keeps the letter and whose ``every_step`` the step satisfies), and for which
    properties of those it is marked (bit k for ``forever[k]``, whose ``marked_letters`` keeps the
    letter and whose ``some_step`` the step satisfies). None for a letter no group's
    ``allowed_letters`` keeps: its steps are in no subgraph.

    Each is one generated function (as ``invariant_checks`` are), which calls only the
    predicates the letter needs: none for ``any_step``, none of a property whose
    ``marked_letters`` leave the letter out.
    """
    found: list[StepMarks | None] = []
    for action in actions:
        namespace: dict[str, Any] = {"bounds": bounds}
        lines = ["def marks(pre, action, post, output):", "    allowed = marked = 0"]
        kept = False
        for bit, members in enumerate(groups):
            group = forever[members[0]]  # the members share the letter filter and every_step
            if not group.allowed_letters(action):
                continue
            kept = True
            indent = "    "
            if group.every_step is not any_step:
                namespace[f"every{bit}"] = group.every_step
                lines.append(f"    if every{bit}(pre, action, post, output, bounds):")
                indent = "        "
            lines.append(f"{indent}allowed |= {1 << bit}")
            for position in members:
                if forever[position].marked_letters(action):
                    namespace[f"some{position}"] = forever[position].some_step
                    lines += [f"{indent}if some{position}(pre, action, post, output, bounds):",
                              f"{indent}    marked |= {1 << position}"]
        lines.append("    return allowed, marked")
        if not kept:
            found.append(None)
            continue
        found.append(generated_function(lines, namespace, "marks"))
    return found


def lasso_paths(forever: Sequence[ForeverProperty], groups: Sequence[Sequence[int]],
                successors: Sequence[Sequence[Sequence[Edge]]],
                tree: Sequence[tuple[int, int] | None]) -> dict[str, LassoPath]:
    """The cycle pass: per forever-property that fails, in declaration order, its lasso path in
    its group's subgraph ``successors[g]`` (``checker/cycles.py``)."""
    found: dict[int, LassoPath] = {}
    for members, graph in zip(groups, successors, strict=True):
        for position, path in zip(members, find_lassos(graph, tree, [1 << p for p in members]), strict=True):
            if path is not None:
                found[position] = path
    return {forever[position].name: found[position] for position in sorted(found)}


def lassos(paths: Mapping[str, LassoPath], snapshot: Callable[[int], Snapshot], data: Any,
           bound: Sequence[Mapping[str, Any]], actions: Sequence[Action], load: Callable[[Any, Any], None],
           store: Callable[[Any, str], Snapshot]) -> dict[str, Lasso]:
    """Each forever-property's lasso path as steps, ``snapshot(n)`` being state number n. The
    chart's output is not kept per edge, so each step is fired again for it."""

    def step(pre_number: int, letter: int, _post_number: int) -> Step:
        pre = snapshot(pre_number)
        load(data, pre)
        fired = bound[letter][pre[0]](data)  # type: ignore[index]
        return (pre, actions[letter], store(data, fired.target), data.output)

    return {name: Lasso([step(*s) for s in path.prefix], [step(*s) for s in path.loop])
            for name, path in paths.items()}


# One letter as the search fires it in a control state: (letter index, the letter, its
# ``when``, its firing function there, its check of a step to a state met before, its check
# of a step that discovers its state (see ``letter_checks``), its marks for the cycle pass
# (``letter_marks``)).
Letter = tuple[int, Action, Any, Any, Any, Any, Any]


def letter_table(states: Sequence[str], actions: Sequence[Action], bound: Sequence[Mapping[str, Any]],
                 checks: Sequence[tuple[Any, Any]],
                 marks: Sequence[StepMarks | None]) -> dict[str, list[Letter]]:
    """Per control state, every letter in alphabet order (``Letter``)."""
    return {state: [(index, action, action.when, fire[state], *checks[index], marks[index])
                    for index, (action, fire) in enumerate(zip(actions, bound, strict=True))]
            for state in states}


class StateInvariantReadsTheStep(TypeError):
    """An invariant declared ``of_state`` read ``pre`` or the step's output."""


class _Unread:
    """Passed to an ``of_state`` invariant in place of ``pre`` and the output: every use raises."""

    def __init__(self, invariant: str) -> None:
        self._invariant = invariant

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise StateInvariantReadsTheStep(
            f"invariant {self._invariant} is declared of_state (it reads the state reached alone) "
            f"but reads the state before the step or the step's output")

    __getattr__ = __getitem__ = __contains__ = __iter__ = __len__ = __bool__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = __index__ = _refuse

    def __repr__(self) -> str:
        return f"<not read by {self._invariant}>"


def state_level_invariants(active_by_letter: Sequence[Sequence[Invariant]], start: Snapshot,
                           bounds: Bounds) -> frozenset[str]:
    """The invariants an exploration checks once per distinct state, by name.

    An ``of_state`` invariant that concerns every letter is a property of the
    state reached, so a step breaks it exactly when the state it reaches does.
    The first such step in breadth-first order is then the first step to reach
    a breaking state, since an earlier step to the same state would break it
    earlier: checking only the step that discovers each state meets the same
    first violation as checking every step. The initial state is discovered by
    no step, so an invariant that the initial state breaks is checked on every
    step instead, as is one that concerns only some letters.
    """
    if not active_by_letter:
        return frozenset()
    every_letter = set.intersection(*({inv.name for inv in active} for active in active_by_letter))

    def holds_initially(invariant: Invariant) -> bool:
        unread: Any = _Unread(invariant.name)
        return bool(invariant.holds(unread, start, unread, bounds))

    return frozenset(inv.name for inv in active_by_letter[0]
                     if inv.of_state and inv.name in every_letter and holds_initially(inv))


def letter_checks(active_by_letter: Sequence[Sequence[Invariant]], once_per_state: frozenset[str],
                  bounds: Bounds, memo: dict[tuple[int, ...], Any] | None = None) -> list[tuple[Any, Any]]:
    """Per letter, two generated checks of a step ``(pre, post, output)``: one for a step to a
    state met before (without the invariants in ``once_per_state``), one for a step that
    discovers its state (every invariant of the letter, in declaration order). ``memo`` keeps
    the checks generated for one exploration (its bounds), by their invariants."""
    memo = {} if memo is None else memo

    def generated(invariants: list[Invariant]) -> Any:
        key = tuple(id(inv) for inv in invariants)
        if key not in memo:
            memo[key] = invariant_checks(invariants, bounds)
        return memo[key]

    return [(generated([inv for inv in active if inv.name not in once_per_state]), generated(list(active)))
            for active in active_by_letter]


def invariant_checks(invariants: Sequence[Invariant],
                     bounds: Bounds) -> Callable[[Any, Any, Any], Any] | None:
    """One function that checks ``invariants`` on a step ``(pre, post, output)``, in order: None
    when all hold, else the list of those violated. None instead of a function when there are none.

    It is generated (as the compiled chart's firing functions are) so that the inner loop
    makes one call per step instead of a loop over the invariants.
    """
    if not invariants:
        return None
    namespace: dict[str, Any] = {"bounds": bounds}
    lines = ["def check(pre, post, output):", "    failed = None"]
    for position, invariant in enumerate(invariants):
        namespace[f"holds{position}"], namespace[f"invariant{position}"] = invariant.holds, invariant
        before, output = "pre", "output"
        if invariant.of_state:
            namespace[f"unread{position}"] = _Unread(invariant.name)
            before = output = f"unread{position}"
        lines += [f"    if not holds{position}({before}, post, {output}, bounds):",
                  f"        failed = [*(failed or ()), invariant{position}]"]
    lines.append("    return failed")
    check: Callable[[Any, Any, Any], Any] = generated_function(lines, namespace, "check")
    return check


def trace_to(parent: Mapping[Snapshot, tuple[Snapshot, int] | None], actions: Sequence[Action],
           end: Snapshot) -> list[Step]:
    """The BFS path to ``end``, as steps (the chart outputs of earlier steps are not kept)."""
    path: list[Step] = []
    node = end
    while (link := parent[node]) is not None:
        previous, index = link
        path.append((previous, actions[index], node, None))
        node = previous
    path.reverse()
    return path


# One exploration to run: (machine, raw bounds, options).
Configuration = tuple[str, Mapping[str, str], Mapping[str, bool]]


def available_cores() -> int:
    """The cores this process may run on (not the machine's count, which a container may cap)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# One exploration a memo asks for: its configuration, and the invariants it checks (None: all).
Job = tuple[Configuration, Collection[str] | None]


def explore_alike(jobs: Sequence[Job]) -> list[Exploration]:
    """The explorations of ``jobs``, which explore one machine at one bounds and differ in their
    options alone: the first records its steps, and the others take from that record each step
    they need not fire again (``checker/option_steps.py``); one job is explored as ever."""
    record = StepRecord() if len(jobs) > 1 else None
    (name, bounds, options), invariants = jobs[0]
    found = [explore(name, bounds, options, invariants=invariants, record=record)]
    for (name, bounds, options), invariants in jobs[1:]:
        found.append(explore(name, bounds, options, invariants=invariants, reuse=record))
    return found


def _explore_in_worker(jobs: Sequence[Job]) -> list[Exploration]:
    found = explore_alike(jobs)
    for result in found:
        # The chart's transitions hold its methods; the parent compiles the chart itself.
        result.all_transitions = ()
    return found


def option_invariants(name: str, options: Mapping[str, bool] | None) -> tuple[str, ...] | None:
    """The invariants an exploration with ``options`` checks for ``inboxspec check``: with an option
    on, those whose ``option`` is on (the properties of the findings it fixes: what
    ``checker/findings.py`` reads of it, beside the coverage and the lassos, which do not depend on
    the invariants checked); with none, all (None)."""
    on = {option for option, value in (options or {}).items() if value}
    if not on:
        return None
    return tuple(inv.name for inv in machines.get(name).explorer.invariants if inv.option in on)


class Explorations:
    """Explorations memoised by (machine, bounds, options), so that one run of
    ``check`` explores each distinct configuration once.

    ``start`` hands configurations that will be asked for to worker processes
    (``checker/forked.py``'s ``Workers``: one family of explorations per worker at a
    time, in the order listed, the largest first; a machine's option explorations
    follow its default one in its family, taking its steps, ``alike_families``), so
    that independent explorations run on all cores while the caller does other
    work; ``get`` then waits for the one it asks for, and raises ``WorkerLost`` if
    the worker exploring it ended first (the OOM killer, say) instead of waiting
    forever. Workers are forked, so
    they see the registry as the caller has it (a temporary registry in a
    test included); where fork is not available, or with one worker, each
    exploration runs in the caller when it is first asked for. ``start`` forks
    workers once per memo: configurations a later ``start`` names run in the
    caller. ``close`` ends the workers; the memo is a context manager that
    closes it.
    """

    def __init__(self, on_explored: Callable[[Hashable], None] | None = None, *,
                 option_invariants_only: bool = False) -> None:
        """``on_explored(key)``, if given, is called as each exploration is made, by a worker (on a
        thread of the workers) or in this process (``inboxspec check``'s progress).

        With ``option_invariants_only`` an exploration with an option on checks only the invariants
        of the findings its options fix (``option_invariants``), which is all ``inboxspec check``
        reads of it; the others would cost a fifth of its time for nothing. Its
        ``invariants_checked`` says which it checked."""
        self._done: dict[tuple[Any, ...], Exploration] = {}
        # The workers' tasks: each a family of explorations (``explore_alike``), keyed by its members' keys.
        self._workers: Workers[Sequence[Job], list[Exploration]] | None = None
        self._family: dict[tuple[Any, ...], tuple[tuple[Any, ...], ...]] = {}  # member key -> its family
        self._on_explored = on_explored
        self._option_invariants_only = option_invariants_only
        self.runs = 0

    def _invariants(self, name: str, options: Mapping[str, bool] | None) -> tuple[str, ...] | None:
        return option_invariants(name, options) if self._option_invariants_only else None

    def __enter__(self) -> Explorations:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _key(name: str, bounds: Mapping[str, str] | None,
             options: Mapping[str, bool] | None) -> tuple[Any, ...]:
        # Keyed on the parsed bounds: bounds written out at their defaults are the defaults.
        parsed = machines.get(name).explorer.parse_bounds(bounds or {})
        return (name, repr(sorted(parsed.items())), tuple(sorted((options or {}).items())))

    def start(self, configurations: Sequence[Configuration], workers: int) -> None:
        """Begin the explorations of ``configurations`` in ``workers`` processes (listed largest first)."""
        if workers <= 1 or not can_fork() or self._workers is not None:
            return
        fresh: dict[tuple[Any, ...], Configuration] = {}
        for configuration in configurations:
            key = self._key(*configuration)
            if key not in self._done:
                fresh.setdefault(key, configuration)
        if len(fresh) < 2:
            return  # one exploration gains nothing from a second process
        self.runs += len(fresh)
        tasks: list[tuple[Hashable, Sequence[Job]]] = []
        for family in alike_families(list(fresh.items())):
            keys = tuple(key for key, _configuration in family)
            self._family.update(dict.fromkeys(keys, keys))
            tasks.append((keys, [((name, bounds, options), self._invariants(name, options))
                                 for _key, (name, bounds, options) in family]))
        self._workers = Workers(_explore_in_worker, tasks, min(workers, len(tasks)),
                                on_answer=None if self._on_explored is None else self._family_explored)

    def _family_explored(self, keys: Hashable) -> None:
        assert self._on_explored is not None and isinstance(keys, tuple)
        for key in keys:
            self._on_explored(key)

    def get(self, name: str, bounds: Mapping[str, str] | None = None,
            options: Mapping[str, bool] | None = None) -> Exploration:
        key = self._key(name, bounds, options)
        family = self._family.get(key)
        if self._workers is not None and family is not None and family in self._workers:
            try:
                found = self._workers.answer(family)
            except WorkerLost as error:
                raise WorkerLost(f"the exploration of {name} (bounds {dict(bounds or {})}, options "
                                 f"{dict(options or {})}): {error}") from error
            for member, result in zip(family, found, strict=True):
                result.all_transitions = compiled_chart(name).transitions
                self._done[member] = result
        if key not in self._done:
            self.runs += 1
            self._done[key] = explore(name, bounds, options, invariants=self._invariants(name, options))
            if self._on_explored is not None:
                self._on_explored(key)
        return self._done[key]

    def key(self, configuration: Configuration) -> tuple[Any, ...]:
        """The memo's key of ``configuration``: two configurations with one key are explored once."""
        return self._key(*configuration)

    def close(self) -> None:
        if self._workers is not None:
            self._workers.close()
            self._workers = None


def alike_families(listed: Sequence[tuple[tuple[Any, ...], Configuration]]
                   ) -> list[list[tuple[tuple[Any, ...], Configuration]]]:
    """The (key, configuration) pairs ``listed`` (keys as ``Explorations`` makes them) as families
    for ``explore_alike``: a machine's explorations at one bounds form one family, led by the one
    with no option on, when there is one and the machine reuses its default's steps
    (``reuses_default_steps``), of those whose chart data differ from the leader's in its options
    alone (``options_alone_differ``); every other exploration is a family of its own. Families stand
    in the order their first members were listed, and members follow their leader as listed."""
    leaders: dict[tuple[Any, ...], tuple[tuple[Any, ...], Configuration]] = {}
    for key, configuration in listed:
        name, parsed_bounds, options = key
        if not any(value for _option, value in options) and reuses_default_steps(machines.get(name).explorer):
            leaders.setdefault((name, parsed_bounds), (key, configuration))
    families: dict[tuple[Any, ...], list[tuple[tuple[Any, ...], Configuration]]] = {}
    for key, configuration in listed:
        name, parsed_bounds, options = key
        leader = leaders.get((name, parsed_bounds))
        if leader is not None and leader[0] != key:
            explorer = machines.get(name).explorer
            parsed = explorer.parse_bounds(configuration[1] or {})
            if not options_alone_differ(explorer, parsed, dict(options), dict(leader[0][2])):
                leader = None
        family = families.setdefault(key if leader is None else (name, parsed_bounds),
                                     [] if leader is None else [leader])
        if leader is None or leader[0] != key:
            family.append((key, configuration))
    return list(families.values())


def check_explorations(on_explored: Callable[[Hashable], None] | None = None) -> Explorations:
    """The exploration memo of ``inboxspec check`` and ``inboxspec findings``: an exploration with an
    option on checks the invariants of the findings its option fixes, and no other
    (``checker/findings.py`` reads no other of it; the coverage of the generated cases and the
    lassos do not depend on them)."""
    return Explorations(on_explored=on_explored, option_invariants_only=True)


def edges(name: str, bounds: Mapping[str, str] | None = None, options: Mapping[str, bool] | None = None,
          via: str = "compiled") -> dict[tuple[Snapshot, int], tuple[Snapshot, Any]]:
    """The whole reachable transition relation, built either through the compiled
    view or through plain python-statemachine ``send()`` on a real chart.

    It exists to compare the two (tests) and to time plain dispatch (benchmarks);
    the explorer itself uses the compiled view.
    """
    entry = machines.get(name)
    explorer = entry.explorer
    parsed = explorer.parse_bounds(bounds or {})
    chosen = parse_options(explorer, name, options)
    actions = list(explorer.alphabet(parsed))
    fire: Callable[[Snapshot, Action], tuple[Snapshot, Any]]
    if via == "compiled":
        chart = CompiledChart(entry.chart)
        data = chart.blank()
        explorer.constants(data, parsed, chosen)
        bound = {a.label: chart.bind(a.event, a.kwargs) for a in actions}

        def fire(pre: Snapshot, action: Action) -> tuple[Snapshot, Any]:
            explorer.load(data, pre)
            fired = bound[action.label][pre[0]](data)  # type: ignore[index]
            return explorer.store(data, fired.target), data.output
    elif via == "dispatch":
        real = entry.chart(**explorer.chart_arguments(parsed, chosen))
        # What `constants` adds beyond the constructor (derived bounds) goes on the real chart too.
        explorer.constants(real, parsed, chosen)

        def fire(pre: Snapshot, action: Action) -> tuple[Snapshot, Any]:
            real.current_state_value = pre[0]
            explorer.load(real, pre)
            real.send(action.event, **action.kwargs)
            (state,) = real.configuration
            return explorer.store(real, state.id), real.output  # type: ignore[attr-defined]
    else:
        raise ValueError(f"via must be 'compiled' or 'dispatch', not {via!r}")
    relation: dict[tuple[Snapshot, int], tuple[Snapshot, Any]] = {}
    start = explorer.initial(parsed)
    seen = {start}
    frontier = collections.deque([start])
    while frontier:
        pre = frontier.popleft()
        for index, action in enumerate(actions):
            if not action.offered(pre):
                continue
            post, output = fire(pre, action)
            relation[(pre, index)] = (post, output)
            if post not in seen:
                seen.add(post)
                frontier.append(post)
    return relation
