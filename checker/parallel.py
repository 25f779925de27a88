"""The breadth-first exploration on several cores, level by level.

Each level's frontier is cut into contiguous chunks, in frontier order, and
forked worker processes expand the chunks: they fire every letter on every
state of a chunk (the chart's own transitions, as ``explore`` does), check the
invariants, and send back, per chunk and in (state, letter) order, the first
step to each successor they have not sent before, the first violation of each
invariant and the first step of each chart transition. The parent merges the
chunks in frontier order, so the first occurrence it keeps of each new state,
violation and transition is the one a single process meets first: the state
and transition counts, the breadth-first tree and therefore every shortest
trace are exactly those of :func:`inboxspec.checker.explore.explore`
(``tests/test_parallel.py`` compares them on every machine).

A worker filters the successors it sends against what it sent at *earlier*
levels only (within a level, chunks may reach one worker out of order), which
keeps the transfer near one snapshot per new state per worker. Only
snapshots cross between processes; the chart, the letters and the invariants
are inherited by the fork.

Forever-properties need every allowed step of the graph, which this search
does not send back; an exploration with any runs in one process.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inboxspec.checker.compiled import take_step
from inboxspec.machines.frame import Invariant, Snapshot

# Per chunk, from a worker: the new successors (post, position in the chunk, letter index),
# the first violation of each invariant and the first step of each chart transition,
# as (position, letter index, post, output).
ChunkResult = tuple[list[tuple[Snapshot, int, int]],
                    dict[str, tuple[int, int, Snapshot, Any]],
                    dict[tuple[str, str, int], tuple[int, int, Snapshot, Any]]]

# Chunks per worker and level: enough to even out chunks of unequal cost.
CHUNKS_PER_WORKER = 4


@dataclass
class _Expander:
    """What a worker needs to expand states: set up in the parent, inherited by the fork."""

    states: tuple[str, ...]
    bound: list[dict[str, Any]]  # per letter, per control state: the compiled firing function
    active_by_letter: list[list[Invariant]]
    once_per_state: frozenset[str]
    data: Any
    load: Any
    store: Any
    bounds: Any
    sent_before: set[Snapshot]
    sent_this_level: set[Snapshot]
    level: int = -1
    violated: frozenset[str] | None = None
    letters: dict[str, list[tuple[int, Any, Any, Any]]] | None = None
    when: tuple[Any, ...] = ()  # per letter: its ``Action.when`` (None: offered everywhere)

    def _letters(self, violated: frozenset[str]) -> dict[str, list[tuple[int, Any, Any, Any]]]:
        """Per control state, each letter's firing function and generated checks (``letter_checks``),
        without the invariants violated at earlier levels."""
        from inboxspec.checker.explore import letter_checks

        if self.letters is None or violated != self.violated:
            active = [[inv for inv in letter if inv.name not in violated] for letter in self.active_by_letter]
            checks = letter_checks(active, self.once_per_state, self.bounds)
            self.letters = {state: [(index, fire[state], *checks[index])
                                    for index, fire in enumerate(self.bound)]
                            for state in self.states}
            self.violated = violated
        return self.letters

    def expand(self, level: int, chunk: Sequence[Snapshot], violated: frozenset[str]) -> ChunkResult:
        if level != self.level:
            self.sent_before |= self.sent_this_level
            self.sent_this_level = set()
            self.level = level
        letters = self._letters(violated)
        new: list[tuple[Snapshot, int, int]] = []
        violations: dict[str, tuple[int, int, Snapshot, Any]] = {}
        coverage: dict[tuple[str, str, int], tuple[int, int, Snapshot, Any]] = {}
        covered: set[Any] = set()  # the chart's transitions met in this chunk, by identity
        load, store, data = self.load, self.store, self.data
        sent_before, sent_now = self.sent_before, self.sent_this_level
        local: set[Snapshot] = set()
        for position, pre in enumerate(chunk):
            for index, fire, check_seen, check_new in letters[pre[0]]:  # type: ignore[index]
                when = self.when[index]
                if when is not None and not when(pre):
                    continue
                fired, post, output = take_step(data, pre, fire, load, store)
                if fired not in covered:
                    covered.add(fired)
                    coverage[fired.key] = (position, index, post, output)
                # A state new to this worker is checked with the invariants checked once per
                # state as well: the first step to reach a state is one of them (checker/explore.py).
                fresh = post not in local and post not in sent_before
                check = check_new if fresh else check_seen
                if check is not None and (failed := check(pre, post, output)) is not None:
                    for invariant in failed:
                        if invariant.name not in violations:
                            violations[invariant.name] = (position, index, post, output)
                if fresh:
                    local.add(post)
                    new.append((post, position, index))
        sent_now |= local
        return new, violations, coverage


_EXPANDER: _Expander | None = None


def _expand_in_worker(task: tuple[int, Sequence[Snapshot], frozenset[str]]) -> ChunkResult:
    assert _EXPANDER is not None, "a worker forked without its expander"
    return _EXPANDER.expand(*task)


def explore_on_workers(name: str, bounds: Mapping[str, str] | None, options: Mapping[str, bool] | None,
                       workers: int) -> Any:
    """The same :class:`~inboxspec.checker.explore.Exploration` as ``explore``, on ``workers`` processes."""
    from inboxspec.checker.explore import Exploration, set_up, state_level_invariants, trace_to

    global _EXPANDER
    explorer, parsed, chosen, chart, data, actions = set_up(name, bounds, options)
    by_letter = [[inv for inv in explorer.invariants if inv.applies(a)] for a in actions]
    bound = [chart.bind(a.event, a.kwargs) for a in actions]
    result = Exploration(name, parsed, chosen, all_transitions=chart.transitions)
    start = explorer.initial(parsed)
    parent: dict[Snapshot, tuple[Snapshot, int] | None] = {start: None}
    violations: dict[str, list[Any]] = {}
    coverage: dict[tuple[str, str, int], list[Any]] = {}
    began = time.perf_counter()
    _EXPANDER = _Expander(chart.states, bound, by_letter, state_level_invariants(by_letter, start, parsed),
                          data, explorer.load, explorer.store, parsed, set(), set(),
                          when=tuple(a.when for a in actions))
    try:
        pool = multiprocessing.get_context("fork").Pool(workers)
    finally:
        _EXPANDER = None  # the parent keeps no expander; the forked workers have theirs
    frontier: list[Snapshot] = [start]
    level = deepest = 0
    try:
        while frontier:
            size = max(1, -(-len(frontier) // (workers * CHUNKS_PER_WORKER)))
            chunks = [frontier[i:i + size] for i in range(0, len(frontier), size)]
            violated = frozenset(violations)
            tasks = [(level, chunk, violated) for chunk in chunks]
            following: list[Snapshot] = []
            for chunk, (new, found, reached) in zip(chunks, pool.imap(_expand_in_worker, tasks), strict=True):
                for key, (position, index, post, output) in reached.items():
                    if key not in coverage:
                        coverage[key] = [(chunk[position], actions[index], post, output)]
                for invariant, (position, index, post, output) in found.items():
                    if invariant not in violations:
                        violations[invariant] = [(chunk[position], actions[index], post, output)]
                for post, position, index in new:
                    if post not in parent:
                        parent[post] = (chunk[position], index)
                        following.append(post)
            level += 1
            if following:
                deepest = level
            frontier = following
    finally:
        pool.terminate()
        pool.join()
    result.seconds = time.perf_counter() - began
    for steps in (*coverage.values(), *violations.values()):
        steps[:0] = trace_to(parent, actions, steps[0][0])
    result.coverage, result.violations = coverage, violations
    result.states = len(parent)
    result.transitions = sum(1 for snapshot in parent for action in actions if action.offered(snapshot))
    result.max_depth = deepest
    return result
