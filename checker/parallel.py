"""The breadth-first exploration on several cores, sharded by fingerprint.

Ownership
    Each of the N forked workers owns the states whose snapshot hashes to it
    (``owner_of``: the hash modulo N), or whose shard key does, for a machine
    whose description names one (``frame.shard_key``: the host keys a state by
    its first session's view and the second's held count, so that one worker's
    step memo meets most of that view's steps). A worker keeps its states' seen-set,
    their numbers and their breadth-first tree links, and it expands them. It
    does not keep the other workers' states: a successor it reaches that
    another worker owns is routed to that owner in batches (``BATCH``
    successors to a message), and it sends each such successor to its owner
    once in the whole search (it remembers what it sent), however many of its
    states reach it. What it owns and what it sent are one dict (``known``):
    a successor met before costs one lookup, and its owner is worked out only
    the first time. Before a successor is sent, its equal parts are made one
    object (``shared``); it goes as its class and a plain tuple of its fields
    (which pickle writes in C); and each worker pickles what it sends another
    with one pickler for the whole search (``Packer``), whose memo persists: a part sent
    once goes again as a reference of a few bytes, and the owner's unpickler
    for that sender (``Unpacker``) gives back the object it made the first
    time. The host's default exploration has 1,980 distinct session views
    (``HostExplorer.load``) in 124,508 states, so most of a batch is
    references. A new state an owner is sent is made its own
    (``frame.own_parts``: the host's views become the objects the owner made
    first for equal views), since an unpickled part is a new object: the host's
    step memo, keyed by a view's identity, met each such view as one it never
    saw, and the two workers fired 126,800 steps against 99,300 in one process
    (108,800 since; 2026-12-07, the ratio below 1.46 before, 1.66 after).
    Each memo holds what its pickler wrote or its unpickler made
    until the search ends: the three-session run peaked at 399 MB in its
    largest process (630 MB while the cycle pass still recorded unmarked
    self-loops, 641 MB before the memos). The workers
    are forked from one process, so they agree on every hash (one hash seed);
    spawned workers would not, which is why this search runs only where
    processes can be forked, and an owner checks each state it is sent.

Levels, and the serial order
    The search runs level by level. One process meets a level's new states in
    the order of their first step: that step's source state, by its number
    (states are numbered in discovery order), then its letter (alphabet
    order). Each new state is given the order key ``(source number, letter
    index)`` of the least step that reaches it, as one integer (``source *
    letters + index``). An owner keeps the least key offered for each of its
    new states, from its own steps and from the batches; when every worker has
    sent its last batch of the level, each owner sends the coordinating
    process its new states' keys, sorted. The coordinator merges these
    integers alone (``rank_level``) and hands each owner its states' numbers:
    the numbers one process gives, whatever the number of workers, the hashes
    or the arrival order. The next level expands the new states.

What comes out is exactly what :func:`inboxspec.checker.explore.explore` gives
    * the counts, the depth and the breadth-first tree (each state's link is
      its least key), so every shortest trace;
    * the first violation of each invariant, in breadth-first order: each
      worker keeps the first it meets, and the coordinator the least over the
      workers by the step's key. An invariant checked once per state
      (``of_state``) is checked on each step to a state that is new to the
      worker taking it, which includes the step that discovers each state (the
      serial search's argument, ``state_level_invariants``);
    * the first step of each chart transition, the same way;
    * the lassos. A step in some allowed subgraph of the forever-properties is
      recorded where it is taken (unless it is an unmarked step from a state to
      itself, as in the serial search: ``checker/cycles.py``, "Self-loops"),
      with its marks (``letter_marks``), its target as a number or, until the
      owner has numbered it, as a handle (the owner, and the target's position
      in what was sent to it); a state's recorded steps are one run, kept as
      its number and their count. After the last level each owner answers
      every handle it was sent with a number (an owner that answers a sender
      otherwise than once a state sent is a ShardingError), the
      coordinator gathers the recorded steps and the tree, and runs the cycle
      pass of ``checker/cycles.py`` on the same graph, numbered the same way:
      the same lassos.

The coordinator's share is light: per level, the sorted keys (integers) and
their numbers; at the end, the recorded steps and the tree as integer arrays,
the cycle pass, and the snapshots that the shortest traces and lassos pass
through, which it asks the owners for. Only snapshots, integers and chart
outputs cross between processes; the chart, the letters, the invariants and
the forever-properties are inherited by the fork. A worker that fails, dies
or is sent a state it does not own ends the search with ``ShardingError``.

Cost
    Measured on two cores (``benchmarks/explorer_workers.py``, five samples,
    medians, 2026-12-06, the yardstick at 0.13 s). The host's default
    exploration (124,508 states), with its step memo (``machines/host_steps.py``)
    and its shard key (``HostExplorer.shard_key``): 18.7 s of processor time in
    one process; on two workers 21.0 s in all, 11.2 s by the wall clock and
    11.0 s along the critical path (per level the busiest worker, the busiest
    worker's last phase, and the coordinator's: the wall time without the
    machine's other load). The ratios: 1.69 times one process by the wall
    clock, 1.70 along the critical path, at the 1.7 this search aims at (1.74
    in another run of two samples; single runs range from 1.66 to 1.77, the
    machine being shared; with a level in one batch, ``BATCH``, 1.69 and 1.71
    in five samples on 2026-12-06, against 1.71 and 1.73 in three samples of the
    smaller batches earlier that day: the batches' gain, 1 to 2 % side by side,
    is within what the machine's load moves a run). Sharded by the whole
    snapshot the ratios were 1.61
    and 1.62 (11.9 to 12.1 s by the wall clock): each worker's memo met most session
    views and fired their steps again. Before the memo the same machine gave
    1.75 to 1.78, from 30.5 s in one process: the memo took a step's cost down
    by 1.7 times in each process, and what the pair adds to a step did not
    shrink with it.
    What a worker does beyond half of one process, measured inside the workers
    (py-spy, the share of a worker's time): taking the others' batches (4%),
    packing its own (2%), the owner of each new successor (``owner_of``, 1%:
    5% when every step asked it, before ``known`` was one dict, and the ratio
    1.56), numbering and answering handles (1%); each worker's memo fires the
    steps it has not met (about 54,000 a worker by the shard key, 59,000 by the
    whole snapshot, against 99,000 in one process); and the
    two cores slowing each other (two one-process searches side by side each
    take 3 to 8 % longer than one alone). The coordinator's end
    (the reports, the graph, the cycle pass: about 0.35 s) runs while the
    workers wait, as the cycle pass does in the serial search. The batches
    were most of the overhead (1.42 times) until each channel kept one
    pickler and one unpickler for the whole search (``Packer``): a state's
    views were pickled and unpickled again in every batch, and arrived as
    new objects whose hashes and counts were worked out anew. The levels are
    large and even, so waiting on the busier worker costs little. On a busy
    machine the wall ratio falls towards 1, or below: Linux shares the cores
    between sessions, not processes.

``tests/test_parallel.py`` compares 1, 2 and 3 workers with one process on
every machine, and shows planted faults in the sharding caught.
"""

from __future__ import annotations

import io
import os
import pickle
import queue
import time
import traceback
from array import array
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from inboxspec.checker import forked
from inboxspec.checker.compiled import take_step
from inboxspec.checker.cycles import Edge
from inboxspec.checker.explore import (
    Exploration,
    ExplorationTooLarge,
    Progress,
    checked_invariants,
    forever_groups,
    lasso_paths,
    lassos,
    letter_checks,
    letter_marks,
    letter_table,
    search_memo,
    set_up,
    state_level_invariants,
    young_collections_only,
)
from inboxspec.checker.forked import end_with_parent, fork_context, held_for_fork, take_default_termination
from inboxspec.checker.limits import MAX_STATES
from inboxspec.machines.frame import (
    Action,
    Bounds,
    ForeverProperty,
    Invariant,
    OwnParts,
    ShardKey,
    Snapshot,
    Step,
    StepMemo,
    forever_properties,
    own_parts,
    shard_key,
)

# Successors in one message to one owner. An owner takes its batches only once it has expanded
# its own share of the level (``_Shard.run``), so a batch sent sooner is read no sooner, and every
# message adds its own cost: the size only bounds what a worker holds before sending (a class, a
# tuple of fields and a key per successor: some 10 MB at this size, by a rough count). Measured
# side by side on the host's default exploration, two workers against one process, four rounds
# each (medians, two runs): 1,024 a batch gave 1.645 and 1.653 times one process by the wall
# clock, 16,384 gave 1.665 and 1.683, 65,536 gave 1.676. At the default bounds a level goes in
# one batch; tests/test_parallel.py sends many a level by setting this small.
BATCH = 65536

# How long the coordinator (a worker) waits for a message before it looks whether a worker
# (the coordinator) died.
POLL_SECONDS = 1.0

# How long the coordinator waits for a TERMed worker to end before it KILLs it
# (``checker/forked.py``'s END_GRACE_SECONDS, which ``Workers.close`` waits too). A worker takes
# SIGTERM's default and ends at once; the KILL is for whatever still holds it. A name of this
# module, so that a test can put the KILL off for the sharded search alone.
END_GRACE_SECONDS = forked.END_GRACE_SECONDS


class ShardingError(RuntimeError):
    """A worker of the sharded search failed, died, or was sent a state it does not own."""


def owner_of(snapshot: Snapshot, workers: int, key_of: ShardKey | None = None) -> int:
    """The worker that owns ``snapshot``: the hash of its shard key (``key_of``, the description's
    ``frame.shard_key``; the snapshot itself when it names none) modulo ``workers``.

    WARNING: every worker must compute the same owner for the same snapshot (a worker
    checks each state it is sent); ``hash`` agrees across processes forked from one
    process, not across spawned ones.
    """
    return hash(snapshot if key_of is None else key_of(snapshot)) % workers


def rank_level(keys_by_worker: Sequence[Sequence[int]], first: int) -> list[list[int]]:
    """The numbers of one level's new states, per worker.

    ``keys_by_worker[w]`` lists the order keys of worker w's new states, ascending (a key is
    unique: it names the one step that discovered its state). The level is numbered from
    ``first`` in ascending key order across all workers: the order one process meets them in.
    """
    merged = sorted(chain.from_iterable(keys_by_worker))
    number = {key: n for n, key in enumerate(merged, first)}
    return [[number[key] for key in keys] for keys in keys_by_worker]


def shared(snapshot: Snapshot, pieces: dict[tuple[Any, ...], tuple[Any, ...]]) -> Snapshot:
    """``snapshot`` with each tuple among its fields, and among theirs, replaced by the equal one
    ``pieces`` met first (and kept there when new).

    Snapshots share most of their parts, but equal parts built apart are distinct objects, which
    a batch would pickle each time. (The host's parts are not rebuilt here: its snapshot and views
    are ``HashedOnce`` tuples, not plain or named ones, and its ``store`` already gives a few
    objects per distinct view: its 17,801 states at ``subscriptions=0`` hold 35,602 session views,
    346 of them distinct.) Made one object, a part is pickled once per
    channel (``Packer``'s memo keeps what it has written) and unpickled once, and the owner keeps
    one copy.
    Only plain and named tuples are rebuilt (``tuple.__new__`` with the same class gives an
    equal value of the same type); anything else is left as it is. Equal parts are taken to be
    interchangeable, as equal snapshots are by every seen-set.
    """
    rebuilt: Snapshot = _shared(snapshot, pieces, 0)
    return rebuilt


def _rebuildable(value: object) -> bool:
    kind = type(value)
    return kind is tuple or (isinstance(value, tuple) and kind.__bases__ == (tuple,)
                             and hasattr(kind, "_fields"))


def _shared(node: Any, pieces: dict[tuple[Any, ...], tuple[Any, ...]], depth: int) -> Any:
    if depth < 2 and _rebuildable(node):
        parts = [_shared(part, pieces, depth + 1) if isinstance(part, tuple) else part for part in node]
        if any(new is not old for new, old in zip(parts, node, strict=True)):
            node = tuple.__new__(type(node), parts)
    if depth == 0 or not _rebuildable(node):
        return node
    return pieces.setdefault(node, node)


class Packer:
    """The batches one worker sends another, pickled by one pickler for the whole search: its memo
    is kept from batch to batch, so a part it has pickled before (the same object: ``shared`` makes
    equal parts one) goes as a reference of a few bytes, not again. The memo holds each object it
    has pickled, so an object's identity is never reused for another.

    WARNING: each packed message must be unpacked, in the order packed, by the one ``Unpacker`` of
    this direction (the receiver's for this sender): the references are to what went before."""

    def __init__(self) -> None:
        self._buffer = io.BytesIO()
        self._pickler = pickle.Pickler(self._buffer, protocol=pickle.HIGHEST_PROTOCOL)

    def packed(self, batch: Any) -> bytes:
        self._buffer.seek(0)
        self._buffer.truncate()
        self._pickler.dump(batch)
        return self._buffer.getvalue()


class Unpacker:
    """What one ``Packer`` packed, unpacked in the same order: a part sent before is the very
    object unpacked then (its hash and the views' worked-out counts kept with it)."""

    def __init__(self) -> None:
        self._buffer = io.BytesIO()
        self._unpickler = pickle.Unpickler(self._buffer)

    def unpacked(self, packed: bytes) -> Any:
        self._buffer.seek(0)
        self._buffer.truncate()
        self._buffer.write(packed)
        self._buffer.seek(0)
        return self._unpickler.load()


def handle(position: int, owner: int, workers: int) -> int:
    """A step's target before its owner has numbered it: negative, so it never reads as a number."""
    return -1 - (position * workers + owner)


@dataclass
class _Search:
    """What every worker needs: set up in the coordinator, inherited by the fork."""

    workers: int
    actions: list[Action]
    bound: list[dict[str, Any]]  # per letter, per control state: the compiled firing function
    states: tuple[str, ...]
    data: Any
    load: Callable[[Any, Any], None]
    store: Callable[[Any, str], Snapshot]
    bounds: Bounds
    start: Snapshot
    first_owner: int  # the initial state's owner, as the coordinator computes it
    by_letter: list[list[Invariant]]
    once_per_state: frozenset[str]
    forever: tuple[ForeverProperty, ...]
    groups: list[tuple[int, ...]]  # the forever-properties by allowed subgraph (``forever_groups``)
    inboxes: list[Any]  # per worker: batches and answers from the other workers
    controls: list[Any]  # per worker: from the coordinator
    results: Any  # to the coordinator
    coordinator: int  # its process id
    # The description's step memo (``Explorer.step_memo``), or None: each forked worker fills its own copy.
    memo: StepMemo | None
    # The description's shard key (``frame.shard_key``), or None: the part of a snapshot its owner is of.
    shard_key: ShardKey | None
    # The description's ``own_parts`` (``frame.own_parts``), or None: a received state made this worker's.
    own_parts: OwnParts | None = None


_SEARCH: _Search | None = None


class _Shard:
    """One worker: the states it owns, and what it found expanding them."""

    def __init__(self, search: _Search, me: int) -> None:
        self.search, self.me = search, me
        # Every state this worker has met, with its step target: its number, for an owned state
        # numbered; a handle (``handle``, negative) for an owned candidate of this level and for a
        # successor sent to its owner. One lookup tells a step's target whichever owns it: the owner
        # is worked out only for a state met for the first time.
        self.known: dict[Snapshot, int] = {}
        self.frontier: list[tuple[int, Snapshot]] = []  # this level's owned states, by number
        # The tree links of the owned states: number, source number, letter (-1 for the initial state).
        self.tree = (array("q"), array("q"), array("q"))
        if search.first_owner == me:  # the coordinator's owner of the initial state
            self.check_owner(search.start)
            self.known[search.start] = 0
            self.frontier.append((0, search.start))
            for column, value in zip(self.tree, (0, -1, -1), strict=True):
                column.append(value)
        self.pieces: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # see ``shared``
        self.sent_count = [0] * search.workers
        # Per sender: for each successor it sent here, in order, its number or own-handle.
        self.received: list[list[int]] = [[] for _ in range(search.workers)]
        self.own_numbers = array("q")  # the numbers of this worker's candidates, by own-handle position
        self.violations: dict[str, tuple[int, tuple[Snapshot, int, Snapshot, Any]]] = {}
        self.coverage: dict[tuple[str, str, int], tuple[int, tuple[Snapshot, int, Snapshot, Any]]] = {}
        self.covered: set[Any] = set()  # the chart's transitions met, by identity
        self.fired = 0
        # The steps in some allowed subgraph, in the order taken: target (number or handle), letter,
        # the subgraphs it is in and the properties it is marked for (``letter_marks``); and their
        # sources as runs: per state expanded with at least one such step, its number and how many.
        self.edges = tuple(array("q") for _ in range(4))
        self.runs = (array("q"), array("q"))
        self.active = [list(letter) for letter in search.by_letter]
        self.memo: dict[tuple[int, ...], Any] = {}
        self.marks = letter_marks(search.forever, search.groups, search.actions, search.bounds)
        self.letters = self._letters()
        # Per other worker: what packs the batches sent to it, and what unpacks those it sends.
        self.packers = [Packer() for _ in range(search.workers)]
        self.unpackers = [Unpacker() for _ in range(search.workers)]

    def wait(self, channel: Any) -> Any:
        """The next message on ``channel``; the worker ends when the coordinator is gone (killed,
        say), instead of waiting for it forever.

        It ends with ``os._exit``, not by unwinding: an unwinding worker reports its end on the
        results queue and then, at exit, waits for its queues' feeder threads to write into pipes
        that nobody reads any more (a coordinator ended by SIGTERM left both workers so, for good:
        ``tests/test_parallel.py``)."""
        while True:
            try:
                return channel.get(timeout=POLL_SECONDS)
            except queue.Empty:
                if os.getppid() != self.search.coordinator:
                    os._exit(1)

    def check_owner(self, snapshot: Snapshot) -> None:
        owner = owner_of(snapshot, self.search.workers, self.search.shard_key)
        if owner != self.me:
            raise ShardingError(f"worker {self.me} was sent a state that worker {owner} owns: {snapshot!r}")

    def _letters(self) -> dict[str, list[Any]]:
        search = self.search
        return letter_table(search.states, search.actions, search.bound,
                            letter_checks(self.active, search.once_per_state, search.bounds, self.memo),
                            self.marks)

    def _violated(self, failed: list[Invariant], key: int, step: tuple[Snapshot, int, Snapshot, Any]) -> None:
        # This worker's first violation is its least one (it takes its steps in key order);
        # the invariant is checked here no further, as in the serial search.
        for invariant in failed:
            if invariant.name not in self.violations:
                self.violations[invariant.name] = (key, step)
                for letter in self.active:
                    if invariant in letter:
                        letter.remove(invariant)
        self.letters = self._letters()

    def run(self) -> None:
        search = self.search
        control = search.controls[self.me]
        began = time.process_time()
        with young_collections_only():
            while True:
                candidates, keys, posts = self.expand()
                self.receive(candidates, keys, posts)
                order = sorted(range(len(keys)), key=keys.__getitem__)
                # With the keys, the processor time this level took here (waiting takes none).
                search.results.put(("level", self.me, (array("q", [keys[slot] for slot in order]),
                                                       time.process_time() - began)))
                kind, numbers, more = self.wait(control)
                began = time.process_time()
                assert kind == "numbers", kind
                self.number(order, keys, posts, numbers)
                if not more:
                    break
            self.finish(began)

    def expand(self) -> tuple[dict[Snapshot, int], list[int], list[Snapshot]]:
        """Expand this level's owned states; route the successors others own to them."""
        search, me = self.search, self.me
        workers, width, key_of = search.workers, len(search.actions), search.shard_key
        data, load, store, memo = search.data, search.load, search.store, search.memo
        known, sent_count, inboxes = self.known, self.sent_count, search.inboxes
        packers = self.packers
        pieces = self.pieces
        covered, coverage = self.covered, self.coverage
        edge_target, edge_letter, edge_allowed, edge_marked = self.edges
        run_source, run_length = self.runs
        # This level's candidates: the new states this worker owns, with the least key offered.
        candidates: dict[Snapshot, int] = {}
        keys: list[int] = []
        posts: list[Snapshot] = []
        base = len(self.own_numbers)  # own-handle positions of this level's candidates start here
        # Per owner, the successors it is sent: class, fields and order key (see below).
        batches: list[list[tuple[type[Snapshot], Snapshot, int]]] = [[] for _ in range(workers)]
        fired_letters = 0
        for source, pre in self.frontier:
            first_key = source * width
            recorded = len(edge_target)
            # WARNING: this loop takes a step as ``explore``'s does (take_step or the step memo,
            # Action.when, the two generated checks, the generated marks); a change to one is a
            # change to both.
            for index, action, when, fire, check_seen, check_new, step_marks in self.letters[pre[0]]:  # type: ignore[index]
                if when is not None and not when(pre):
                    continue
                fired_letters += 1
                fired, post, output = take_step(data, pre, fire, load, store) if memo is None \
                    else memo.step(index, pre, fire)
                key = first_key + index
                if fired not in covered:
                    covered.add(fired)
                    coverage[fired.key] = (key, (pre, index, post, output))
                # A state met before, owned or sent, keeps its target; within a level an owned
                # candidate keeps the key of its first step here, the least (steps are taken in key order).
                target = known.get(post)
                fresh = target is None
                if target is None:
                    owner = owner_of(post, workers, key_of)
                    if owner == me:
                        slot = candidates[post] = len(keys)
                        keys.append(key)
                        posts.append(post)
                        target = known[post] = handle(base + slot, me, workers)
                    else:
                        kept = shared(post, pieces)
                        target = known[kept] = handle(sent_count[owner], owner, workers)
                        sent_count[owner] += 1
                        batch = batches[owner]
                        # A snapshot is its fields (machines/frame.py): sent as a plain tuple with its
                        # class, which pickle writes in C, where a NamedTuple subclass (the host's
                        # HashedOnce ones) takes pickle's reduce protocol in Python (0.20 s of packing
                        # a worker, against 0.14 s). ``receive`` builds it again.
                        batch.append((type(kept), tuple(kept), key))
                        if len(batch) >= BATCH:
                            inboxes[owner].put((me, packers[owner].packed(batch), False))
                            batches[owner] = []
                # A state new to this worker is checked with the invariants checked once per
                # state as well: the step that discovers a state is one of those.
                check = check_new if fresh else check_seen
                if check is not None and (failed := check(pre, post, output)) is not None:
                    self._violated(failed, key, (pre, index, post, output))
                if step_marks is not None:
                    allowed, marked = step_marks(pre, action, post, output)
                    # As in ``explore``: an unmarked step from a state to itself is not recorded.
                    if allowed and (marked or target != source):
                        edge_target.append(target)
                        edge_letter.append(index)
                        edge_allowed.append(allowed)
                        edge_marked.append(marked)
            if len(edge_target) > recorded:
                run_source.append(source)
                run_length.append(len(edge_target) - recorded)
        for owner in range(workers):
            if owner != me:
                inboxes[owner].put((me, self.packers[owner].packed(batches[owner]), True))
        self.fired += fired_letters
        return candidates, keys, posts

    def receive(self, candidates: dict[Snapshot, int], keys: list[int], posts: list[Snapshot]) -> None:
        """Take the other workers' successors of this level that this worker owns."""
        search, me = self.search, self.me
        workers, known, key_of = search.workers, self.known, search.shard_key
        own, data = search.own_parts, search.data
        base = len(self.own_numbers)
        inbox = search.inboxes[me]
        waiting = workers - 1
        while waiting:
            sender, packed, last = self.wait(inbox)
            batch = self.unpackers[sender].unpacked(packed)
            answers = self.received[sender]
            for kind, fields, key in batch:
                post = tuple.__new__(kind, fields)  # as ``expand`` sent it: the class and its fields
                if owner_of(post, workers, key_of) != me:
                    self.check_owner(post)
                # Owned, so known as a number (numbered) or as an own handle (this level's candidate).
                target = known.get(post)
                if target is None:
                    if own is not None:  # a new state, which this worker expands: its parts made its own
                        post = own(data, post)
                    slot = candidates[post] = len(keys)
                    keys.append(key)
                    posts.append(post)
                    target = known[post] = handle(base + slot, me, workers)
                elif target < 0:
                    slot = candidates[post]
                    if key < keys[slot]:
                        keys[slot] = key
                answers.append(target)
            if last:
                waiting -= 1

    def number(self, order: list[int], keys: list[int], posts: list[Snapshot],
               numbers: Sequence[int]) -> None:
        """Number this level's new states (``order``: their slots by key) and make them the frontier."""
        width = len(self.search.actions)
        by_slot = array("q", bytes(8 * len(keys)))
        frontier: list[tuple[int, Snapshot]] = []
        numbered, sources, letters = self.tree
        for slot, number in zip(order, numbers, strict=True):
            by_slot[slot] = number
            post = posts[slot]
            self.known[post] = number
            frontier.append((number, post))
            numbered.append(number)
            sources.append(keys[slot] // width)
            letters.append(keys[slot] % width)
        self.own_numbers.extend(by_slot)
        self.frontier = frontier

    def resolved(self, targets: Sequence[int], answers: Sequence[Sequence[int]]) -> array[int]:
        """``targets`` with each handle (``handle``) replaced by its state's number: from this
        worker's own numbers, or from ``answers[owner]`` for a state another worker owns."""
        workers = self.search.workers
        # By handle: -1 - handle(position, owner) is position * workers + owner.
        by_handle: list[int] = [-1] * (workers * max(len(self.own_numbers), *map(len, answers)))
        for owner in range(workers):
            numbers = self.own_numbers if owner == self.me else answers[owner]
            by_handle[owner:workers * len(numbers):workers] = numbers
        return array("q", [t if t >= 0 else by_handle[-1 - t] for t in targets])

    def finish(self, began: float) -> None:
        """Answer every handle sent here, resolve this worker's recorded steps, report, then
        hand out snapshots until told to stop."""
        search, me = self.search, self.me
        no_answers: list[Sequence[int]] = [()] * search.workers
        for sender in range(search.workers):
            if sender != me:
                search.inboxes[sender].put((me, self.resolved(self.received[sender], no_answers), True))
        answers: list[Sequence[int]] = [array("q")] * search.workers
        for _ in range(search.workers - 1):
            sender, numbers, _last = self.wait(search.inboxes[me])
            # A handle left unanswered would read as the number -1 (``resolved``'s table), the last
            # state, and the cycle pass would follow it there.
            if len(numbers) != self.sent_count[sender]:
                raise ShardingError(f"worker {sender} answered {len(numbers)} numbers for the "
                                    f"{self.sent_count[sender]} states worker {me} sent it")
            answers[sender] = numbers
        target, letter, allowed, marked = self.edges
        search.results.put(("done", me, {
            "fired": self.fired, "violations": self.violations, "coverage": self.coverage,
            "tree": self.tree, "edges": (self.resolved(target, answers), letter, allowed, marked),
            "runs": self.runs,
            "cpu_seconds": time.process_time(), "finish_cpu_seconds": time.process_time() - began}))
        control = search.controls[me]
        while True:
            kind, wanted = self.wait(control)
            if kind != "snapshots":
                return
            search.results.put(("snapshots", me, {n: s for s, n in self.known.items() if n in wanted}))


def _run_shard(me: int) -> None:
    take_default_termination()
    end_with_parent()
    search = _SEARCH
    assert search is not None, "a worker forked without its search"
    try:
        _Shard(search, me).run()
    except BaseException:  # reported to the coordinator, which raises it
        search.results.put(("error", me, traceback.format_exc()))


def _receive(results: Any, processes: Sequence[Any], kind: str) -> tuple[int, Any]:
    """The next message from a worker, which must be of ``kind``; ShardingError when a worker
    reported a failure or died."""
    while True:
        try:
            message = results.get(timeout=POLL_SECONDS)
        except queue.Empty:
            dead = [(me, p.exitcode) for me, p in enumerate(processes) if p.exitcode is not None]
            if dead:
                raise ShardingError(f"sharded search: worker(s) ended early (worker, exit code): "
                                    f"{dead}") from None
            continue
        if message[0] == "error":
            raise ShardingError(f"sharded search: worker {message[1]} failed:\n{message[2]}")
        if message[0] != kind:
            raise ShardingError(f"sharded search: expected a {kind!r} message, got {message[0]!r}")
        return message[1], message[2]


def explore_on_workers(name: str, bounds: Mapping[str, str] | None, options: Mapping[str, bool] | None,
                       workers: int, progress: Progress | None = None,
                       invariants: Collection[str] | None = None, *,
                       max_states: int = MAX_STATES) -> Exploration:
    """The same :class:`~inboxspec.checker.explore.Exploration` as ``explore``, on ``workers`` processes."""
    global _SEARCH
    explorer, parsed, chosen, chart, data, actions = set_up(name, bounds, options)
    checked = checked_invariants(explorer, name, invariants, chosen)
    by_letter = [[inv for inv in checked if inv.applies(a)] for a in actions]
    bound = [chart.bind(a.event, a.kwargs) for a in actions]
    start = explorer.initial(parsed)
    forever = forever_properties(explorer)
    context = fork_context()
    key_of = shard_key(explorer)
    search = _Search(workers, actions, bound, chart.states, data, explorer.load, explorer.store, parsed,
                     start, owner_of(start, workers, key_of), by_letter,
                     state_level_invariants(by_letter, start, parsed), forever, forever_groups(forever),
                     [context.Queue() for _ in range(workers)], [context.Queue() for _ in range(workers)],
                     context.Queue(), os.getpid(), search_memo(explorer, data, parsed, chosen, actions),
                     key_of, own_parts(explorer))
    result = Exploration(name, parsed, chosen, all_transitions=chart.transitions,
                         invariants_checked=tuple(inv.name for inv in checked))
    began, began_cpu = time.perf_counter(), time.process_time()
    processes = [context.Process(target=_run_shard, args=(me,), daemon=True, name=f"inboxspec-shard-{me}")
                 for me in range(workers)]
    try:
        _SEARCH = search
        try:
            for process in processes:
                with held_for_fork():  # WARNING: the signals _run_shard's first line takes the defaults of
                    try:
                        process.start()
                    except OSError as error:  # out of processes or memory: the search cannot be made
                        raise ShardingError(f"sharded search: a worker could not start: {error}") from None
        finally:
            _SEARCH = None  # the coordinator keeps no search of its own; the forked workers have theirs
        states, level = 1, 0
        critical = 0.0  # per level, the processor time of the busiest worker
        while True:
            keys: list[Sequence[int]] = [()] * workers
            busiest = 0.0
            for _ in range(workers):
                me, (sorted_keys, cpu) = _receive(search.results, processes, "level")
                keys[me], busiest = sorted_keys, max(busiest, cpu)
            critical += busiest
            numbers = rank_level(keys, states)
            new = sum(map(len, numbers))
            for me, control in enumerate(search.controls):
                control.put(("numbers", array("q", numbers[me]), new > 0))
            states += new
            if states > max_states:
                raise ExplorationTooLarge(name, max_states)  # the finally below ends the workers
            if not new:
                break
            level += 1
            if progress is not None:
                progress(states, level, time.perf_counter() - began)
        reports: list[dict[str, Any]] = [{}] * workers
        for _ in range(workers):
            me, report = _receive(search.results, processes, "done")
            reports[me] = report
        result.states, result.max_depth = states, level
        result.transitions = sum(r["fired"] for r in reports)
        result.forever_checked = tuple(p.name for p in forever)
        width = len(actions)
        violations = _least(r["violations"] for r in reports)
        coverage = _least(r["coverage"] for r in reports)
        tree: list[tuple[int, int] | None] = [None] * states
        for report in reports:
            for number, source, letter in zip(*report["tree"], strict=True):
                if source >= 0:
                    tree[number] = (source, letter)
        paths = {}
        if forever:
            # A state's steps are all taken by its owner, in letter order, and recorded in a run of
            # their own: each state's list is in the order one process records it.
            empty: list[Edge] = []
            graphs: list[list[list[Edge]]] = [[empty] * states for _ in search.groups]
            with young_collections_only():
                for report in reports:
                    targets, letters, allowed, marked = report["edges"]
                    edges = list(zip(targets, letters, marked, strict=True))
                    end = 0
                    if len(graphs) == 1:  # every recorded step is in the one subgraph
                        (graph,) = graphs
                        for source, length in zip(*report["runs"], strict=True):
                            graph[source] = edges[end:end + length]
                            end += length
                        continue
                    for source, length in zip(*report["runs"], strict=True):
                        begin, end = end, end + length
                        steps = list(zip(edges[begin:end], allowed[begin:end], strict=True))
                        for bit, graph in enumerate(graphs):
                            graph[source] = [edge for edge, subgraphs in steps if subgraphs >> bit & 1]
                # The cycle pass walks every state too: as in the serial search, no full collection.
                paths = lasso_paths(forever, search.groups, graphs, tree)
        # The snapshots the traces pass through: each first step's source and its tree path,
        # and every state of each lasso.
        wanted: set[int] = set()
        for key, _step in (*violations.values(), *coverage.values()):
            node: int | None = key // width
            while node is not None and node not in wanted:
                wanted.add(node)
                link = tree[node]
                node = None if link is None else link[0]
        for path in paths.values():
            for pre, _letter, post in (*path.prefix, *path.loop):
                wanted.update((pre, post))
        snapshots: dict[int, Snapshot] = {}
        for control in search.controls:
            control.put(("snapshots", frozenset(wanted)))
        for _ in range(workers):
            _me, found = _receive(search.results, processes, "snapshots")
            snapshots.update(found)
        for control in search.controls:
            control.put(("exit", None))

        def trace(key: int, step: tuple[Snapshot, int, Snapshot, Any]) -> list[Step]:
            path: list[Step] = []
            node = key // width
            while (link := tree[node]) is not None:
                source, letter = link
                path.append((snapshots[source], actions[letter], snapshots[node], None))
                node = source
            path.reverse()
            pre, index, post, output = step
            return [*path, (pre, actions[index], post, output)]

        result.violations = {name: trace(*found) for name, found in violations.items()}
        result.coverage = {name: trace(*found) for name, found in coverage.items()}
        result.lassos = lassos(paths, snapshots.__getitem__, data, bound, actions, explorer.load,
                               explorer.store)
        for process in processes:
            process.join()
        # As in the serial search (explore.py): the whole exploration, its cycle pass and traces included.
        result.seconds = time.perf_counter() - began
        coordinator = time.process_time() - began_cpu
        result.cpu_by_worker = tuple(r["cpu_seconds"] for r in reports)
        result.cpu_seconds = coordinator + sum(result.cpu_by_worker)
        result.critical_cpu_seconds = critical + max(r["finish_cpu_seconds"] for r in reports) + coordinator
    finally:
        for process in processes:
            if process.pid is None:  # never started: a start before it failed
                continue
            if process.is_alive():
                process.terminate()
            process.join(timeout=END_GRACE_SECONDS)
            if process.is_alive():  # a SIGTERM that did not end it (see checker/forked.py)
                process.kill()
                process.join()
        for channel in (*search.inboxes, *search.controls, search.results):
            channel.close()
            channel.cancel_join_thread()
    return result


def _least(found: Any) -> dict[Any, tuple[int, Any]]:
    """Per name, the entry ``(key, step)`` with the least key over the workers' dicts, in the order
    one process inserts them: by key, then (one step that breaks several invariants) in the order
    the worker that took the step inserted them."""
    least: dict[Any, tuple[int, int, Any]] = {}
    for entries in found:
        for rank, (name, entry) in enumerate(entries.items()):
            if name not in least or entry[0] < least[name][0]:
                least[name] = (entry[0], rank, entry)
    return {name: entry for name, (_key, _rank, entry) in sorted(least.items(), key=lambda item: item[1][:2])}
