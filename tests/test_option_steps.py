"""An option's exploration may take the default exploration's steps instead of firing them again
(``checker/option_steps.py``), and finds exactly what it finds when it fires them.

- Recording the default exploration's steps changes nothing it finds.
- For every option of every machine that reuses steps, the exploration that takes steps from
  the default's record has the same states, transitions, depth, coverage (keys, order and the
  steps of each trace, every snapshot field and output included), lassos and violations as the
  one that fires every step: with every invariant checked, and with only the option's own (what
  ``check`` asks for). Each takes some steps from the record, so a record never used fails too.
- A step is taken only when it is the same step: from the very snapshot recorded (peer
  delivery's tickets, which its equality leaves out, included), reading no differing option, and
  with no invariant still checked failing on it. A search that drops one of these finds otherwise.
- The memo's workers explore a machine's options as one family, with the same results.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.checker import explore as explore_module
from inboxspec.checker import option_steps
from inboxspec.checker.explore import (
    Configuration,
    Exploration,
    Explorations,
    alike_families,
    explore,
    option_invariants,
)
from inboxspec.checker.option_steps import OptionReads, RecordedState, StepRecord, reuses_default_steps
from tests import toy_machine
from tests.exploration_found import found


def _reusing() -> list[str]:
    return [name for name in machines.names() if reuses_default_steps(machines.get(name).explorer)]


@functools.lru_cache(maxsize=1)  # one machine's record at a time: peer delivery's is tens of megabytes
def _recorded(name: str) -> tuple[StepRecord, Exploration]:
    record = StepRecord()
    return record, explore(name, record=record)


@pytest.fixture(autouse=True, scope="module")
def records_freed_after_this_module() -> Iterator[None]:
    """A record stays cached for this module's tests only: kept for the rest of a worker's session,
    its hundreds of thousands of objects would be walked again by every later full collection."""
    yield
    _recorded.cache_clear()


def test_every_machine_but_the_host_reuses_steps() -> None:
    # The host opts out (machines/host.py says why); a machine that opted out by mistake would
    # lose the reuse silently.
    assert _reusing() == [name for name in machines.names() if name != "host"]


# One test per machine, not per option: the xdist workers would each record the machine again.
@pytest.mark.parametrize("name", _reusing())
def test_an_option_exploration_from_the_record_finds_what_firing_finds(
        name: str, explorations: Explorations) -> None:
    record, recorded = _recorded(name)
    # Recording changes nothing found, and keeps every step.
    assert found(recorded) == found(explorations.get(name))
    assert len(record.steps) == recorded.states
    assert sum(step is not None for state in record.steps.values() for step in state.steps) \
        == recorded.transitions
    for option in machines.get(name).explorer.options:
        options = {option: True}
        fired = explorations.get(name, options=options)
        taken = explore(name, options=options, reuse=record)
        assert found(taken) == found(fired), option
        assert 0 < taken.steps_reused < taken.transitions and fired.steps_reused == 0
        # What check asks for: the option's own invariants only (tests/test_option_invariants.py shows
        # such a search finds what the full one does, with those invariants' violations).
        kept = option_invariants(name, options)
        narrowed = explore(name, options=options, invariants=kept, reuse=record)
        assert narrowed.invariants_checked == kept and narrowed.steps_reused > 0
        assert found(narrowed)[:7] == found(fired)[:7], option
        assert found(narrowed)[8] == {k: v for k, v in found(fired)[8].items() if k in (kept or ())}


# -- each condition on taking a step is needed -----------------------------------------------------

def test_a_step_that_read_a_differing_option_is_fired(monkeypatch: pytest.MonkeyPatch,
                                                      explorations: Explorations) -> None:
    # A search that took every recorded step, options read or not, would explore the option as the
    # default: fire_when_already_idle reaches 7,201 states, the default 3,667.
    options = {"fire_when_already_idle": True}
    fired = explorations.get("idle-subscriptions", options=options)
    monkeypatch.setattr(explore_module, "option_bits", lambda *args: 0)
    record, _ = _recorded("idle-subscriptions")
    assert explore("idle-subscriptions", options=options, reuse=record).states < fired.states


def _with_other_tickets(snapshot: Any) -> Any:
    return snapshot._replace(tickets=tuple(t + 100 for t in snapshot.tickets),
                             next_ticket=snapshot.next_ticket + 100)


def test_a_step_is_taken_only_from_the_very_snapshot_recorded() -> None:
    # Peer delivery's snapshots are equal whatever their concrete tickets, which its outputs show. A
    # record made along paths that numbered the tickets otherwise gives no step: taking them would
    # put the record's tickets into the states met, and so into the coverage's outputs.
    # (At held_cap 1, where the option still changes what is found: 672 states.)
    bounds, options = {"held_cap": "1"}, {"release_respects_box_cap": True}
    record = StepRecord()
    explore("peer-delivery", bounds, record=record)
    renumbered = StepRecord(record.machine, record.bounds, record.options, record.constants, {
        _with_other_tickets(pre): RecordedState(
            _with_other_tickets(kept.snapshot),
            [None if step is None else step._replace(post=_with_other_tickets(step.post))
             for step in kept.steps],
            kept.failures)
        for pre, kept in record.steps.items()})
    fired = explore("peer-delivery", bounds, options)
    assert explore("peer-delivery", bounds, options, reuse=record).steps_reused > 0
    taken = explore("peer-delivery", bounds, options, reuse=renumbered)
    assert found(taken) == found(fired) and fired.violations
    assert taken.steps_reused == 0


def test_a_recorded_failure_of_an_invariant_still_checked_fires_the_step(explorations: Explorations) -> None:
    # Recorded as failing nowhere, a step is taken where an invariant fails: its first violation (kept
    # with its output) is missed. The record's failures are what stop that.
    record, _ = _recorded("wake-gate")
    blank = StepRecord(record.machine, record.bounds, record.options, record.constants, {
        pre: RecordedState(kept.snapshot, [None if step is None else step._replace(failures=0)
                                           for step in kept.steps], 0)
        for pre, kept in record.steps.items()})
    options = {"announce_requires_refusal": True}
    fired = explorations.get("wake-gate", options=options)
    assert fired.violations  # the default's other failures are failures with this option too
    assert found(explore("wake-gate", options=options, reuse=blank))[8] != found(fired)[8]
    assert found(explore("wake-gate", options=options, reuse=record)) == found(fired)


def test_a_record_is_of_one_machine_and_bounds_and_one_process() -> None:
    record, _ = _recorded("wake-gate")
    with pytest.raises(ValueError, match="another exploration"):
        explore("wake-gate", {"max_streak": "3"}, reuse=record)
    with pytest.raises(ValueError, match="another exploration"):
        explore("writer-proofs", reuse=record)
    with pytest.raises(ValueError, match="one worker"):
        explore("wake-gate", workers=2, reuse=record)
    with pytest.raises(ValueError, match="one worker"):
        explore("wake-gate", workers=2, record=StepRecord())
    with pytest.raises(ValueError, match="not both"):
        explore("wake-gate", record=StepRecord(), reuse=record)


def test_the_options_note_each_option_read() -> None:
    from inboxspec.model.peer_delivery import PeerDeliveryModelOptions

    names = machines.get("peer-delivery").explorer.options
    reads = OptionReads(PeerDeliveryModelOptions(fair_eviction=True), names)
    assert reads.read == 0
    assert reads.fair_eviction is True and reads.read == 1 << names.index("fair_eviction")
    assert reads.release_respects_box_cap is False
    assert reads.read == (1 << names.index("fair_eviction")) | (1 << names.index("release_respects_box_cap"))
    with pytest.raises(AttributeError):
        _ = reads.no_such_option


# -- the memo's families ---------------------------------------------------------------------------

def test_a_machines_explorations_at_one_bounds_are_one_family_led_by_the_default() -> None:
    memo = Explorations()
    listed: list[Configuration] = [
        ("host", {}, {}), ("wake-gate", {}, {"reject_empty_batch": True}),
        ("host", {}, {"stamp_true_sender": True}), ("wake-gate", {"max_streak": "3"}, {}),
        ("wake-gate", {}, {}), ("wake-gate", {}, {"clamp_backwards_clock": True}),
        ("writer-proofs", {}, {"compare_writers_by_id": True})]
    families = alike_families([(memo.key(c), c) for c in listed])
    assert [[configuration for _key, configuration in family] for family in families] == [
        [("host", {}, {})],  # the host opts out
        [("wake-gate", {}, {}), ("wake-gate", {}, {"reject_empty_batch": True}),
         ("wake-gate", {}, {"clamp_backwards_clock": True})],  # where its first member was listed
        [("host", {}, {"stamp_true_sender": True})],
        [("wake-gate", {"max_streak": "3"}, {})],  # other bounds: a family of its own
        [("writer-proofs", {}, {"compare_writers_by_id": True})],  # no default to lead it
    ]


def test_the_memos_workers_explore_a_family_as_its_own_process_explores_each() -> None:
    configurations: list[Configuration] = [
        ("wake-gate", {}, {}), ("wake-gate", {}, {"reject_empty_batch": True}),
        ("wake-gate", {}, {"clamp_backwards_clock": True}), ("writer-proofs", {}, {})]
    with Explorations(option_invariants_only=True) as pooled:
        pooled.start(configurations, workers=2)
        from_workers = [pooled.get(*c) for c in configurations]
    in_process = Explorations(option_invariants_only=True)
    for from_worker, configuration in zip(from_workers, configurations, strict=True):
        alone = in_process.get(*configuration)
        assert found(from_worker) == found(alone) and alone.steps_reused == 0
    assert [result.steps_reused > 0 for result in from_workers] == [False, True, True, False]


def test_a_recording_search_checks_only_the_invariants_asked_for() -> None:
    # It evaluates every invariant for the record, but reports only those it was asked to check.
    for name in ("wake-gate", "idle-subscriptions"):
        asked = [inv.name for inv in machines.get(name).explorer.invariants][1::2]
        plain = explore(name, invariants=asked)
        recorded = explore(name, invariants=asked, record=StepRecord())
        assert plain.violations and set(plain.violations) < set(asked)
        assert found(recorded) == found(plain)


def test_an_explorer_that_keeps_an_option_elsewhere_fires_every_step(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The toy machine keeps its option as data.cap_renewals: no record of its steps may stand for the
    # option's, so its option's exploration is a family of its own, and recording its steps is refused.
    entry = toy_machine.make_machine(tmp_path)
    monkeypatch.setattr(machines, "REGISTRY", {entry.name: entry})
    memo = Explorations()
    listed: list[Configuration] = [("toy-lease", {}, {}), ("toy-lease", {}, {"cap_renewals": True})]
    assert [len(family) for family in alike_families([(memo.key(c), c) for c in listed])] == [1, 1]
    with pytest.raises(ValueError, match="keeps its options elsewhere"):
        explore("toy-lease", record=StepRecord())


# -- the search's own data ----------------------------------------------------------------------------

def _keeps_a_dict(data: Any) -> bool:
    """Whether CPython keeps ``data``'s attributes in a dict of their own (one that ``vars`` has
    made, say), told without asking for it: on 3.11 and 3.12 the collector then sees the dict, not
    the values (3.13 keeps the values inline even then). ``data.options`` is set on every machine's
    data by ``Explorer.constants``."""
    return any(isinstance(referent, dict) and referent.get("options") is data.options
               for referent in gc.get_referents(data))


def test_recording_and_reusing_searches_never_read_the_vars_of_their_chart_data(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``constants_of`` reads a twin of the search's data (``explore.chart_data``'s WARNING): reading
    ``vars`` of the data the steps fire on would keep its attributes in a dict from then on, and
    every guard and action slower (peer delivery's recording exploration took 12% longer)."""
    made: list[Any] = []
    read: list[Any] = []
    set_up, constants_of = explore_module.set_up, option_steps.constants_of

    def keeping(*args: Any) -> Any:
        found = set_up(*args)
        made.append(found[4])
        return found

    def reading(data: Any) -> dict[str, Any]:
        read.append(data)  # kept, not its id: a freed object's id may be given to the next one made
        return constants_of(data)

    monkeypatch.setattr(explore_module, "set_up", keeping)
    monkeypatch.setattr(explore_module, "constants_of", reading)
    monkeypatch.setattr(option_steps, "constants_of", reading)  # StepRecord.same_constants's
    record = StepRecord()
    explore("peer-delivery", record=record)
    explore("peer-delivery", options={"fair_eviction": True}, reuse=record)
    assert len(made) == 2 and len(read) == 2  # the record's constants, and the reuse's
    assert not {id(data) for data in made} & {id(data) for data in read}
    # Where the interpreter shows it, neither search's data keeps a dict.
    explorer = machines.get("peer-delivery").explorer
    twin = explore_module.chart_data(explorer, explore_module.compiled_chart("peer-delivery"),
                                     explorer.parse_bounds({}), {})
    assert not _keeps_a_dict(twin)
    vars(twin)
    if _keeps_a_dict(twin):
        assert not any(_keeps_a_dict(data) for data in made)
