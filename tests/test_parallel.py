"""Explorations on several cores give exactly what one process gives.

The sharded search (``checker/parallel.py``) is compared with the serial one on
every machine: counts, depth, the first violation of each invariant and the
first step to each chart transition with their breadth-first prefixes (so the
same shortest traces), in the same order, and for the forever-properties what
their cycle pass is given (the states' discovery numbers, the breadth-first
tree and the allowed steps) and the lassos it finds. The host is explored at a
small bound for it. Planted faults in the sharding must be caught.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

import pytest

from inboxspec import machines
from inboxspec.checker import explore as explore_module
from inboxspec.checker import forked, parallel
from inboxspec.checker.commands import MAX_WORKERS, worker_count
from inboxspec.checker.cycles import Edge, LassoPath, find_lassos
from inboxspec.checker.explore import (
    Configuration,
    Exploration,
    Explorations,
    available_cores,
    default_workers,
    edges,
    explore,
)
from inboxspec.checker.parallel import ShardingError, explore_on_workers
from inboxspec.cli import main
from inboxspec.machines.frame import Machine, Snapshot, forever_properties
from inboxspec.machines.host import HostExplorer
from inboxspec.machines.host import Snapshot as HostSnapshot
from tests.test_check_command import PROBE, with_token
from tests.test_cycles import ping_pong

__all__ = ["ping_pong"]  # a fixture, used below

# The host without forged sends and subscriptions: 1,479 states, and lassos for two of its
# three forever-properties (its default bounds take a minute or more per search).
SMALL_HOST = {"forgeries": "0", "subscriptions": "0"}


def _bounds(name: str) -> dict[str, str]:
    return SMALL_HOST if name == "host" else {}


def _same(left: Exploration, right: Exploration) -> None:
    assert left.summary() | {"seconds": 0, "states_per_second": 0} == \
        right.summary() | {"seconds": 0, "states_per_second": 0}
    assert left.violations == right.violations and left.coverage == right.coverage
    # In the order one process meets them (generated cases follow the coverage's order).
    assert list(left.violations) == list(right.violations) and list(left.coverage) == list(right.coverage)
    assert left.lassos == right.lassos
    assert {t.key for t in left.all_transitions} == {t.key for t in right.all_transitions}


def test_a_pool_of_workers_explores_what_the_caller_would() -> None:
    configurations: list[Configuration] = [
        ("wake-gate", {}, {}), ("wake-gate", {}, {"reject_empty_batch": True}), ("writer-proofs", {}, {})]
    with Explorations() as pooled:
        pooled.start(configurations, workers=2)
        assert pooled._workers is not None  # handed to the workers, not run here
        # The wake gate's two as one family (tests/test_option_steps.py), the writer proofs' alone.
        assert all(pooled._family[pooled._key(*c)] in pooled._workers for c in configurations)
        assert len({pooled._family[pooled._key(*c)] for c in configurations}) == 2
        results = [pooled.get(*c) for c in configurations]
        assert pooled.runs == 3
    sequential = Explorations()
    for configuration, result in zip(configurations, results, strict=True):
        _same(result, sequential.get(*configuration))
    assert machines.get("wake-gate")  # the registry is untouched


@pytest.mark.parametrize("count", ["0", "-1", "65", "300", "99999999999999999999", "x", "١٠", "", " 2",
                                   "1_0"])
@pytest.mark.parametrize("command", [["check"], ["explore", "writer-proofs"]])
def test_a_worker_count_is_a_whole_number_from_1_to_the_most(command: list[str], count: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Past ``MAX_WORKERS``, the search could not fork its workers or start their threads: a
    traceback, after seconds of trying."""
    assert main([*command, "--workers", count, "--json"]) == 2
    out, err = capsys.readouterr()
    assert f"a whole number from 1 to {MAX_WORKERS}, not {count!r}" in err
    assert json.loads(out)["ok"] is False


CycleInputs = list[tuple[list[list[Edge]], list[tuple[int, int] | None], list[int]]]


def _cycle_inputs(monkeypatch: pytest.MonkeyPatch,
                  run: Callable[[], Exploration]) -> tuple[Exploration, CycleInputs]:
    """An exploration, and what its cycle pass was given per allowed subgraph: its steps by
    state number with their marks, the breadth-first tree and the properties' masks. They read
    the discovery numbers, which a lasso can hide (the nearest bad state may be the same under
    two numberings)."""
    given: CycleInputs = []

    def recording(successors: list[list[Edge]], tree: list[tuple[int, int] | None],
                  masks: list[int]) -> list[LassoPath | None]:
        given.append((successors, tree, masks))
        return find_lassos(successors, tree, masks)

    with monkeypatch.context() as patched:
        patched.setattr(explore_module, "find_lassos", recording)
        result = run()
    return result, given


@pytest.mark.parametrize("name", sorted(machines.names()))
def test_two_workers_find_exactly_what_one_process_finds(name: str, explorations: Explorations,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """On every machine, with no option and with its first: the same result on 2 workers as in
    one process, and for a machine with forever-properties the same input to its cycle pass
    (lassos included). Three workers, more than the cores, are compared below on the host and
    on inbox refresh."""
    entry = machines.get(name)
    bounds = _bounds(name)
    configurations: list[dict[str, bool]] = [{}, *({option: True} for option in entry.explorer.options[:1])]
    for options in configurations:
        if forever_properties(entry.explorer):
            alone, graphs = _cycle_inputs(monkeypatch, functools.partial(explore, name, bounds, options))
            sharded, sharded_graphs = _cycle_inputs(
                monkeypatch, functools.partial(explore_on_workers, name, bounds, options, 2))
            _same(sharded, alone)
            assert sharded_graphs == graphs
            continue
        _same(explore_on_workers(name, bounds, options, 2), explorations.get(name, bounds, options))


def test_a_level_sent_in_many_batches_finds_what_one_process_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker sends another its successors in batches of ``parallel.BATCH``, the last of a level
    marked as such. At the default size a level of these bounds goes in one batch, so the batches
    sent while a level is still being expanded are shown here, at seven successors a batch: the
    same result and the same cycle-pass input (whose targets are the handles the batches carry)."""
    monkeypatch.setattr(parallel, "BATCH", 7)
    alone, graphs = _cycle_inputs(monkeypatch, functools.partial(explore, "host", SMALL_HOST))
    sharded, sharded_graphs = _cycle_inputs(monkeypatch, functools.partial(explore_on_workers, "host",
                                                                           SMALL_HOST, None, 2))
    _same(sharded, alone)
    assert sharded_graphs == graphs


def test_more_workers_than_cores_find_what_one_process_finds(explorations: Explorations) -> None:
    """One worker more than there are cores, so that the levels are cut into other chunks too, on
    the machine with the most states per level (inbox-refresh: 17,280 states in 21 levels)."""
    workers = available_cores() + 1
    _same(explore_on_workers("inbox-refresh", None, None, workers), explorations.get("inbox-refresh"))


def test_the_host_on_workers_numbers_its_states_as_one_process_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """``explore --workers`` runs the host on the sharded search (it has forever-properties), on one
    worker as on several: the same numbering, tree and allowed subgraphs, so the same lassos."""
    alone, graphs = _cycle_inputs(monkeypatch, lambda: explore("host", SMALL_HOST))
    assert set(alone.lassos) == {"no_counted_wakes_forever", "no_harness_line_wakes_forever"}
    # One subgraph: the host's three forever-properties forbid the same hand.
    assert [masks for _graph, _tree, masks in graphs] == [[1, 2, 4]] and any(graphs[0][0])
    for run, workers in ((functools.partial(explore, "host", SMALL_HOST, workers=2), 2),
                         (functools.partial(explore_on_workers, "host", SMALL_HOST, None, 1), 1),
                         (functools.partial(explore_on_workers, "host", SMALL_HOST, None, 3), 3)):
        sharded, sharded_graphs = _cycle_inputs(monkeypatch, run)
        _same(sharded, alone)
        assert sharded_graphs == graphs
        # The benchmark's measures: a processor time per worker, and a critical path within the sum.
        assert len(sharded.cpu_by_worker) == workers
        assert 0 < sharded.critical_cpu_seconds <= sharded.cpu_seconds


def test_forever_properties_on_two_subgraphs_find_what_one_subgraph_finds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The host's last forever-property given an ``every_step`` of its own (the same test, another
    function): two allowed subgraphs, recorded and split apart, with the lassos of one."""
    together = explore("host", SMALL_HOST)
    explorer = machines.get("host").explorer
    *first, last = forever_properties(explorer)
    apart = dataclasses.replace(last, every_step=lambda *step: last.every_step(*step))
    monkeypatch.setattr(explorer, "forever", (*first, apart))
    alone, graphs = _cycle_inputs(monkeypatch, functools.partial(explore, "host", SMALL_HOST))
    assert [masks for _graph, _tree, masks in graphs] == [[1, 2], [4]]
    assert alone.lassos == together.lassos
    sharded, sharded_graphs = _cycle_inputs(
        monkeypatch, functools.partial(explore_on_workers, "host", SMALL_HOST, None, 2))
    _same(sharded, alone)
    assert sharded_graphs == graphs


def test_the_planted_ping_pong_shows_the_same_lasso_on_workers(ping_pong: Machine) -> None:
    planted = {"plant_ping_pong": True}
    alone = explore("toy-ping-pong", options=planted)
    assert alone.lassos
    _same(explore_on_workers("toy-ping-pong", None, planted, 2), alone)
    _same(explore_on_workers("toy-ping-pong", None, None, 2), explore("toy-ping-pong"))


def _no_turn_end(pre: Any, action: Any, post: Any, out: Any, bounds: Any) -> bool:
    return bool(action.event != "end_turn")


def test_properties_on_two_subgraphs_give_the_cycle_pass_what_one_process_gives(
        ping_pong: Machine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two forever-properties with different allowed subgraphs: each recorded step goes, on the
    workers as in one process, to the subgraphs its bits name, in its state's order; the toy's
    planted property fails through a turn's end, and the other (no turn ends, user input allowed)
    through user input."""
    (prop,) = forever_properties(ping_pong.explorer)
    other = dataclasses.replace(prop, name="no_wakes_without_turn_ends_forever", every_step=_no_turn_end)
    monkeypatch.setattr(ping_pong.explorer, "forever", (prop, other))
    for options in ({"plant_ping_pong": True}, {}):
        alone, graphs = _cycle_inputs(monkeypatch, functools.partial(explore, "toy-ping-pong", None, options))
        assert len(graphs) == 2 and graphs[0][0] != graphs[1][0]
        assert set(alone.lassos) == {"no_wakes_without_turn_ends_forever", *(
            ["no_ping_pong_forever"] if options else [])}
        for workers in (2, 3):
            sharded, sharded_graphs = _cycle_inputs(
                monkeypatch, functools.partial(explore_on_workers, "toy-ping-pong", None, options, workers))
            _same(sharded, alone)
            assert sharded_graphs == graphs


def _own_shard() -> int:
    name = multiprocessing.current_process().name
    return int(name.rsplit("-", 1)[1]) if name.startswith("inboxspec-shard-") else 0


def test_a_part_sent_before_goes_as_a_reference_and_comes_back_as_the_same_object() -> None:
    """One channel's pickler and unpickler keep their memos from batch to batch (``Packer``): the
    second batch that holds a part already sent is a fraction of the first, and unpacks, in order,
    to equal batches whose shared part is the one object unpacked before."""
    packer, unpacker = parallel.Packer(), parallel.Unpacker()
    view = tuple(f"field {n}" for n in range(50))
    first, second = [(("one", view), 7)], [(("two", view), 8)]
    packed = [packer.packed(first), packer.packed(second)]
    assert len(packed[1]) * 5 < len(packed[0])
    again = [unpacker.unpacked(message) for message in packed]
    assert again == [first, second]
    assert again[1][0][0][1] is again[0][0][0][1]


def test_workers_that_disagree_on_an_owner_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each worker computes every owner one place further than the one before it (as spawned workers
    would, each with its own hash seed): the first state routed is refused by the worker it reaches."""
    monkeypatch.setattr(parallel, "owner_of",
                        lambda snapshot, workers, key_of=None: (hash(snapshot) + _own_shard()) % workers)
    with pytest.raises(ShardingError, match="was sent a state that worker"):
        explore_on_workers("peer-delivery", None, None, 2)
    assert multiprocessing.active_children() == []


def test_a_shard_key_that_equal_snapshots_do_not_share_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shard key must be a function of the snapshot's value (``frame.shard_key``): one that differs
    between equal snapshots (here, on each worker: a key that reads the process it is worked out in)
    names another owner at the other end, which refuses the state."""
    monkeypatch.setattr(HostExplorer, "shard_key", staticmethod(lambda snapshot: (snapshot, os.getpid())))
    with pytest.raises(ShardingError, match="was sent a state that worker"):
        explore_on_workers("host", SMALL_HOST, None, 2)
    assert multiprocessing.active_children() == []


def test_the_host_s_states_are_owned_by_their_shard_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The host names a shard key (``HostExplorer.shard_key`` says why), and the sharded search owns
    each state by it: each worker's count of new states is the count of reachable states whose first
    session's view and second session's held count hash to it. Sharded by the whole snapshot
    instead, it finds the same."""
    owned, rank_level = [0, 0], parallel.rank_level

    def counting(keys_by_worker: Sequence[Sequence[int]], first: int) -> list[list[int]]:
        for worker, keys in enumerate(keys_by_worker):
            owned[worker] += len(keys)
        return rank_level(keys_by_worker, first)

    with monkeypatch.context() as patched:
        patched.setattr(parallel, "rank_level", counting)
        by_view = explore_on_workers("host", SMALL_HOST, None, 2)
    host = HostExplorer()
    start = host.initial(host.parse_bounds(SMALL_HOST))
    reachable = {start, *(cast(HostSnapshot, post) for post, _output in edges("host", SMALL_HOST).values())}
    assert len(reachable) == by_view.states
    expected = [0, 0]
    for snapshot in reachable - {start}:  # the initial state is numbered before the first level
        expected[hash((snapshot.sessions[0], len(snapshot.sessions[1].delivery.held))) % 2] += 1
    assert owned == expected and all(owned)
    monkeypatch.setattr(HostExplorer, "shard_key", None)
    _same(by_view, explore_on_workers("host", SMALL_HOST, None, 2))


def test_ranks_in_arrival_order_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Numbering a level's states worker after worker (the order the owners report them in) instead
    of by their first step gives the same states, numbered otherwise."""

    def by_worker(keys_by_worker: Sequence[Sequence[int]], first: int) -> list[list[int]]:
        numbers, start = [], first
        for keys in keys_by_worker:
            numbers.append(list(range(start, start + len(keys))))
            start += len(keys)
        return numbers

    alone, graphs = _cycle_inputs(monkeypatch, lambda: explore("host", SMALL_HOST))
    monkeypatch.setattr(parallel, "rank_level", by_worker)
    faulty, faulty_graphs = _cycle_inputs(monkeypatch,
                                          functools.partial(explore_on_workers, "host", SMALL_HOST, None, 2))
    assert (faulty.states, faulty.transitions) == (alone.states, alone.transitions)
    assert faulty_graphs != graphs


def test_a_failing_worker_fails_the_search_and_leaves_no_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(data: object, pre: Snapshot, *rest: object) -> object:
        raise RuntimeError("planted failure in a worker")

    monkeypatch.setattr(parallel, "take_step", broken)
    with pytest.raises(ShardingError, match="planted failure in a worker"):
        explore_on_workers("wake-gate", None, None, 2)
    assert multiprocessing.active_children() == []


def test_a_worker_that_cannot_start_leaves_none_running(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second worker's start fails (no more processes, say): the first is ended too."""
    start = multiprocessing.context.ForkProcess.start
    started: list[multiprocessing.context.ForkProcess] = []

    def second_fails(process: multiprocessing.context.ForkProcess) -> None:
        if started:
            raise OSError("planted: no more processes")
        started.append(process)
        start(process)

    monkeypatch.setattr(multiprocessing.context.ForkProcess, "start", second_fails)
    with pytest.raises(ShardingError, match="a worker could not start: planted: no more processes"):
        explore_on_workers("wake-gate", None, None, 2)
    assert len(started) == 1 and multiprocessing.active_children() == []


def test_explore_whose_workers_cannot_start_cannot_run(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Out of processes: exit 2 and the --json report, not a traceback."""
    def no_fork(process: multiprocessing.context.ForkProcess) -> None:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.context.ForkProcess, "start", no_fork)
    assert main(["explore", "wake-gate", "--workers", "2", "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["unusable"].startswith("the exploration could not be made: sharded search: "
                                                  "a worker could not start: [Errno 11]")
    assert "Traceback" not in err and multiprocessing.active_children() == []


def test_a_signal_at_a_shards_birth_ends_it_quietly(monkeypatch: pytest.MonkeyPatch,
                                                    capfd: pytest.CaptureFixture[str]) -> None:
    """As a worker's (tests/test_forked_workers.py): a TERM between a shard's fork and its first line
    would meet a handler its caller installed (here one that raises, printing a traceback); the fork
    holds the TERM off until that line has put the default back (``held_for_fork``). The moment is
    planted: the first line waits."""
    first_line = forked.take_default_termination
    reader, writer = os.pipe()

    def late(also: Any = ()) -> None:
        os.write(writer, os.getpid().to_bytes(4, "big"))
        time.sleep(1.0)
        first_line(also)

    def raises(received: int, _frame: object) -> None:
        raise RuntimeError(f"a handler inherited from the caller ran on signal {received}")

    monkeypatch.setattr(parallel, "take_default_termination", late)
    outcome: list[BaseException | None] = []

    def search() -> None:
        try:
            explore_on_workers("wake-gate", None, None, 2)
            outcome.append(None)
        except BaseException as error:
            outcome.append(error)

    previous = signal.signal(signal.SIGTERM, raises)
    try:
        thread = threading.Thread(target=search, daemon=True)
        thread.start()
        shard = int.from_bytes(os.read(reader, 4), "big")  # a shard in the moment before its first line
        os.kill(shard, signal.SIGTERM)
        thread.join(60)
    finally:
        signal.signal(signal.SIGTERM, previous)
        os.close(reader)
        os.close(writer)
    assert len(outcome) == 1 and isinstance(outcome[0], ShardingError), outcome
    assert f"{-signal.SIGTERM}" in str(outcome[0])  # the shard's exit code: ended by the TERM itself
    assert "Traceback" not in capfd.readouterr().err
    assert multiprocessing.active_children() == []


# A search whose first worker fails as the search ends. Once the coordinator has read the failure,
# and before it acts on it, the other worker sends a megabyte (as a large level's keys or a report
# would be), which the coordinator, raising, never reads. It then TERMs that worker, whose exit
# would wait for the megabyte to be written unless the TERM ends it outright. Two events, made
# before the fork, order the three steps. Each search runs in a process of its own, so that one
# that never ends fails this test by its timeout.
LATE_FAILURE = """
import json, multiprocessing, signal, sys, time
from inboxspec.checker import parallel

scenario = sys.argv[1]
if scenario == "caller-handler":
    def unwinds(signum, frame):  # what benchmarks/mutation_score.py's main installs
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, unwinds)
    parallel.END_GRACE_SECONDS = 3600.0  # no KILL to fall back on: the TERM must end the workers
else:  # "ignores-term": workers no TERM ends, so only the KILL after the grace does
    parallel.take_default_termination = lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN)
    parallel.END_GRACE_SECONDS = 0.2
report, receive = parallel._Shard.finish, parallel._receive
failure_read, megabyte_sent = multiprocessing.Event(), multiprocessing.Event()

def late(shard, began):
    if shard.me == 0:
        raise RuntimeError("planted late failure")
    failure_read.wait(60)
    shard.search.results.put(("done", shard.me, b"x" * 1_000_000))
    megabyte_sent.set()
    report(shard, began)  # waits for worker 0's answers, which never come: only the TERM ends it

def slow(results, processes, kind):
    try:
        return receive(results, processes, kind)
    except parallel.ShardingError:
        failure_read.set()
        megabyte_sent.wait(60)
        time.sleep(0.5)  # the queue's thread has filled the pipe and waits to write the rest
        raise

parallel._Shard.finish, parallel._receive = late, slow
for _ in range(int(sys.argv[2])):
    failure_read.clear()
    megabyte_sent.clear()
    try:
        parallel.explore_on_workers("idle-subscriptions", None, None, 2)
        outcome = "no error"
    except parallel.ShardingError as error:
        outcome = "planted late failure" if "planted late failure" in str(error) else str(error)
    print(json.dumps({"outcome": outcome, "left": len(multiprocessing.active_children())}), flush=True)
"""


@pytest.mark.parametrize(("scenario", "searches"), [("caller-handler", 2), ("ignores-term", 2)])
def test_a_late_failure_ends_the_search_whatever_sigterm_does(scenario: str, searches: int) -> None:
    """``caller-handler``: the caller turned SIGTERM into SystemExit, which its forked workers
    would inherit (checker/forked.py); a worker that did not take SIGTERM's default would hang the
    search (here the KILL's grace is an hour). ``ignores-term``: the coordinator KILLs a worker
    its TERM did not end."""
    process = subprocess.Popen([sys.executable, "-c", LATE_FAILURE, scenario, str(searches)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the search and its workers
        stdout, stderr = process.communicate()
        pytest.fail(f"a search did not end; it had printed: {stdout!r}")
    assert process.returncode == 0, stderr
    lines = [json.loads(line) for line in stdout.splitlines()]
    assert lines == [{"outcome": "planted late failure", "left": 0}] * searches


def test_a_sent_snapshot_is_equal_and_shares_its_equal_parts() -> None:
    """What a worker sends is the successor itself, of the same types, with equal parts made one."""

    class Part(NamedTuple):
        name: str
        items: tuple[int, ...]

    class Top(NamedTuple):
        control: str
        parts: tuple[Part, ...]
        other: frozenset[int]

    pieces: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    first = Top("running", (Part("a", (1, 2)), Part("b", (3,))), frozenset({1}))
    second = Top("running", (Part("a", (1, 2)), Part("c", ())), frozenset({1}))
    one, two = parallel.shared(first, pieces), parallel.shared(second, pieces)
    assert (one, two) == (first, second)
    assert isinstance(one, Top) and isinstance(two, Top)
    assert type(one.parts[0]) is Part and type(one.parts) is tuple
    assert two.parts[0] is one.parts[0]  # one object for the equal part
    assert parallel.shared(("plain", (1, 2)), pieces) == ("plain", (1, 2))


def test_rank_level_numbers_a_level_by_key_across_workers() -> None:
    assert parallel.rank_level([[3, 10], [1, 7, 12], []], 5) == [[6, 8], [5, 7, 9], []]


def test_explore_takes_a_worker_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert worker_count(str(MAX_WORKERS)) == MAX_WORKERS and worker_count("1") == 1
    assert default_workers("peer-delivery") == 1  # 12,822 states at the default bounds: small
    assert default_workers("peer-delivery", {"held_cap": "3"}) == available_cores()


def _three_processes(token: str, what: str) -> None:
    """Wait until ``what`` and the two workers it forks carry ``token`` (with_token)."""
    deadline = time.monotonic() + 60
    while len(with_token(token)) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(with_token(token)) == 3, f"{what} never started its workers"


@pytest.mark.slow
def test_workers_end_soon_after_their_coordinator_is_gone() -> None:
    """A search ended mid-level by a signal that runs none of its clean-up (a KILL here; a TERM to
    a process that takes its default is the same to its workers) leaves no worker behind: each sees
    its coordinator gone within ``POLL_SECONDS`` and ends. Unwinding instead, a worker waited at
    exit for its queues' feeder threads to write into pipes nobody read, for good."""
    token = os.urandom(8).hex()
    program = ("import signal, sys; signal.signal(signal.SIGTERM, signal.SIG_DFL); "
               "from inboxspec.checker.parallel import explore_on_workers; "
               "explore_on_workers('host', None, None, 2)")
    environment = {**os.environ, PROBE: token}
    search = subprocess.Popen([sys.executable, "-c", program], env=environment, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _three_processes(token, "the search")
        # Into the search, its workers sending each other successors: at 1 s the unwinding workers
        # still ended, and the test passed without the fix.
        time.sleep(2)
        search.send_signal(signal.SIGKILL)
        search.wait(timeout=10)
        deadline = time.monotonic() + parallel.POLL_SECONDS + 10
        while with_token(token) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert with_token(token) == []
    finally:
        search.kill()
        search.wait()
        for pid in with_token(token):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_ends_explore_on_workers_with_nothing_left_running(signum: signal.Signals) -> None:
    """``inboxspec explore`` ended by SIGTERM or SIGHUP: 128 plus the signal, the ``--json`` report
    says so, and its workers are gone by the time it exits (its coordinator ends them on the way out;
    it used to die at once, its workers orphaned)."""
    token = os.urandom(8).hex()
    environment = {**os.environ, PROBE: token}
    argv = [sys.executable, "-m", "inboxspec", "explore", "host", "--workers", "2", "--json"]
    command = subprocess.Popen(argv, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        _three_processes(token, "explore")
        command.send_signal(signum)
        stdout, stderr = command.communicate(timeout=30)
        assert command.returncode == 128 + signum
        assert json.loads(stdout) == {"ok": False, "unusable": f"ended by {signum.name} before it finished",
                                      "problems": [f"ended by {signum.name} before it finished"],
                                      "interrupted": signum.name}
        assert "Traceback" not in stderr
        assert with_token(token) == []
    finally:
        command.kill()
        command.communicate()
        for pid in with_token(token):
            os.kill(pid, signal.SIGKILL)


def test_an_owner_that_answers_too_few_numbers_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The answers to the handles a worker was sent, one short: the missing one read as the number
    -1 (the last state), and the search ended with wrong lassos and no error."""
    resolved = parallel._Shard.resolved

    def one_short(self: Any, targets: Sequence[int], answers: Sequence[Sequence[int]]) -> Any:
        numbers = resolved(self, targets, answers)
        return numbers[:-1] if targets is self.received[1 - self.me] else numbers

    monkeypatch.setattr(parallel._Shard, "resolved", one_short)
    with pytest.raises(ShardingError, match=r"answered \d+ numbers for the \d+ states worker"):
        explore_on_workers("host", SMALL_HOST, None, 2)
    assert multiprocessing.active_children() == []


def _refused(pre: Any, action: Any, post: Any, out: Any, bounds: Any) -> bool:
    return out.get("wake") is False


def test_a_marked_step_from_a_state_to_itself_is_a_lasso_in_both_searches(
        ping_pong: Machine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The searches leave out unmarked self-loops only (``checker/cycles.py``, "Self-loops"): a
    refusal leaves the toy's state as it was, so with refusals marked the only bad cycles are
    single steps from a state to itself, and both searches must show one as a one-step loop."""
    (prop,) = forever_properties(ping_pong.explorer)
    refusals = dataclasses.replace(prop, name="no_refusals_forever", some_step=_refused)
    monkeypatch.setattr(ping_pong.explorer, "forever", (refusals,))
    alone = explore("toy-ping-pong")
    (step,) = alone.lassos["no_refusals_forever"].loop
    assert step[0] == step[2] and step[3] is not None and step[3]["wake"] is False
    _same(explore_on_workers("toy-ping-pong", None, None, 2), alone)
