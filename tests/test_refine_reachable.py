"""``refine_reachable`` (``inboxspec refine --reachable``): every step of every state the model reaches
within the bounds, compared with the reference after the state's shortest trace.

``check`` refines each machine's options one at a time and to depth 3. A model bug once hid where
neither reaches (peer delivery, with ``release_respects_box_cap`` and ``deadline_for_waiting_holds``
together, seven steps in): here that bug is planted again and found, and every machine but the host
is refined with all its options on together, at bounds small enough for the test suite. The host's
options exclude each other in part, and its smallest bounds take minutes: the README gives the
commands.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.checker.explore import edges, explore
from inboxspec.checker.refine import Refinement, RefinementTooLarge, refine, refine_reachable
from inboxspec.cli import main
from inboxspec.model.peer_delivery import PeerDeliveryChart

BOTH = {"release_respects_box_cap": True, "deadline_for_waiting_holds": True}
SMALL_BUFFER = {"held_cap": "1", "senders": "a"}


def _plant_the_armed_kept_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model as it was before the fix: an entry a drain keeps back for room (PEER-OPT-2) is judged
    held again, so under deadline_for_waiting_holds it gets a deadline, which PEER-OPT-2 forbids."""
    fixed = PeerDeliveryChart._drain_outcomes

    def planted(self: Any) -> list[tuple[Any, str, str | None]]:
        return [(entry, "held" if outcome == "kept" else outcome, cause)
                for entry, outcome, cause in fixed(self)]

    monkeypatch.setattr(PeerDeliveryChart, "_drain_outcomes", planted)


@pytest.mark.slow
def test_a_model_bug_under_two_options_seven_steps_in_is_found_where_depth_three_misses_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _plant_the_armed_kept_entry(monkeypatch)
    assert refine("peer-delivery", 3, BOTH).mismatch == []  # out of the check's reach
    found = refine_reachable("peer-delivery", SMALL_BUFFER, BOTH)
    assert found.mismatch, found
    letters = found.mismatch[:-3]
    assert letters[-1] == "drain" and len(letters) == 7, found.mismatch  # a shortest one: breadth-first
    model, reference = found.mismatch[-2:]
    assert '"deadline_ms": 60000' in model and '"deadline_ms": null' in reference


@pytest.mark.parametrize("name", ["writer-proofs", "wake-gate"])
def test_every_observable_step_of_the_explored_graph_is_compared_once(name: str) -> None:
    """One comparison per step the explorer takes at the same bounds, but for the letters whose effect
    shows only in the next step's output (the wake gate's clock), each after a shortest trace."""
    explorer = machines.get(name).explorer
    bounds = {"max_streak": "2"} if name == "wake-gate" else {}
    refined = refine_reachable(name, bounds)
    letters = list(explorer.alphabet(explorer.parse_bounds(bounds)))
    relation = edges(name, bounds)
    observable = [step for step in relation if letters[step[1]].event not in explorer.unobservable_events]
    assert refined.mismatch == [] and refined.reachable_bounds == explorer.parse_bounds(bounds)
    assert refined.sequences == len(observable) and (len(observable) < len(relation)) == (name == "wake-gate")
    assert refined.depth <= explore(name, bounds).max_depth + 1 and refined.steps > refined.sequences


# Per machine but the host, bounds at which all its options together refine in a few seconds here.
ALL_OPTIONS_BOUNDS: dict[str, dict[str, str]] = {
    "wake-gate": {},
    "writer-proofs": {},
    "peer-delivery": SMALL_BUFFER,
    "idle-subscriptions": {"outstanding_cap": "1", "ttl_ms": "1"},
    "inbox-refresh": {"horizon_ms": "0"},
}


def test_every_machine_but_the_host_has_bounds_here() -> None:
    assert set(ALL_OPTIONS_BOUNDS) == set(machines.names()) - {"host"}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ALL_OPTIONS_BOUNDS))
def test_all_options_together_refine(name: str) -> None:
    options = dict.fromkeys(machines.get(name).explorer.options, True)
    refined = refine_reachable(name, ALL_OPTIONS_BOUNDS[name], options)
    assert refined.mismatch == [] and refined.sequences > 0, refined.mismatch


def test_the_command_line_refines_reachable_states_and_refuses_a_depth_with_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["refine", "wake-gate", "--reachable", "--bound", "max_streak=2",
                 "--option", "reject_empty_batch=true"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("wake-gate: every step of every state reachable within max_streak=2, ") and \
        out.endswith("model and reference agree\n"), out
    assert main(["refine", "wake-gate", "--reachable", "--depth", "2"]) == 2
    assert "--depth and --reachable exclude each other" in capsys.readouterr().err
    # --bound gives a depth's alphabet too: one sender, one letter fewer than the default two.
    assert main(["refine", "peer-delivery", "--bound", "senders=a", "--depth", "1"]) == 0
    narrowed = capsys.readouterr().out
    assert main(["refine", "peer-delivery", "--depth", "1"]) == 0
    assert (narrowed.split()[1], capsys.readouterr().out.split()[1]) == ("24", "25")


def test_a_reachable_refinement_reports_its_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    """``inboxspec refine --reachable`` draws its counts on a terminal as they grow (here at every step)."""
    from inboxspec.checker import refine as refine_module

    monkeypatch.setattr(refine_module, "PROGRESS_EVERY_S", -1.0)
    seen: list[tuple[int, int]] = []

    def note(so_far: Refinement) -> None:
        seen.append((so_far.sequences, so_far.steps))

    done = refine_reachable("writer-proofs", progress=note)
    assert [compared for compared, _replayed in seen] == list(range(1, done.sequences + 1))
    assert seen[-1] == (done.sequences, done.steps)


def test_a_refinement_past_its_step_limit_stops(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(RefinementTooLarge, match=r"passed 10 steps replayed .* or give smaller bounds\)$"):
        refine_reachable("wake-gate", {"max_streak": "2"}, max_steps=10)
    # The host at its default bounds: a message and exit 2 as soon as the limit passes.
    assert main(["refine", "host", "--reachable", "--max-steps", "1000", "--json"]) == 2
    unusable = json.loads(capsys.readouterr().out)["unusable"]
    assert unusable.startswith("the reachable host refinement passed 1,000 steps replayed"), unusable
    # And past its states: the explorer's limit, which --max-states moves (a reachable refinement's alone).
    assert main(["refine", "wake-gate", "--reachable", "--max-states", "20", "--json"]) == 2
    assert "passed 20 distinct states" in json.loads(capsys.readouterr().out)["unusable"]
    assert main(["refine", "wake-gate", "--max-states", "20", "--depth", "1"]) == 2
    assert "give it with --reachable" in capsys.readouterr().err
