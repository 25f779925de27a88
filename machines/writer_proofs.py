"""The writer proofs in the machine frame: the registry entry and how to explore the phases.

Snapshot
    ``Snapshot(control, fences, kept)`` where ``kept`` is what an initial context keeps (its
    measured roots, its writers and the reader floor) or None. The active context keeps nothing:
    its attest reads everything anew (WRITER-ACT-7).

Worlds
    Every event carries the world it observes. The explorer's worlds are *arrangements* of one
    standard fixture (:func:`standard_entries`): three installs (the running CLI, a receipt root,
    a declared root) and a home whose locator records them, plus spare variants that one
    ``swap_paths`` moves into place: a changed install of each root, a broken declared install, a
    locator listing its writers in another order, a pending renewal, no locator, a raised floor.
    Each arrangement is brought about once, on one materialisation of the fixture, and observed on
    the real filesystem (through the driver's ``observe``; ``world_of``), so every explored trace
    replays as a conformance case on real files (``concretize`` emits the swaps).

Bounds (``--bound NAME=VALUE``)
    ``alphabet``  ``lean`` (default) or ``full``. ``lean`` (:data:`LEAN`) is the events with the
    few worlds that reach every transition of the chart and both findings: a success and a
    refusal for each phase, an attest after a change and under a pending renewal, a reordered
    locator. ``full`` is every event (and each root choice) under every arrangement.
    The small-scope argument: the chart's decisions depend on the world only through the refusal
    each read yields and whether writers match, and a refusal's category only through which root
    (running CLI, receipt, declared) a fault or change is in. One change per root, one measurement
    fault, and one of each locator and floor condition therefore show every kind of outcome;
    combining two changes only picks the first root in order (WRITER-INIT-4). The chart keeps no
    counters, so three states, the fences and an initial context's kept measurement are the whole
    state space, which depth 2 already exhausts.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from inboxspec.machines import fixtures, frame, writer_proofs_driver
from inboxspec.machines.frame import Action, Bounds, Invariant
from inboxspec.model.writer_proofs import World, WriterProofsChart, WriterProofsModelOptions

F = fixtures.PLACEHOLDER
# The events, their arguments and defaults, and the options: spec/writer-proofs.interface.json.
INTERFACE = writer_proofs_driver.INTERFACE


class Snapshot(NamedTuple):
    control: str
    fences: bool
    kept: Any  # what an initial context keeps (its measured roots, writers, reader floor), or None

# name -> the swap that brings the arrangement about from the base (None: the base itself).
ARRANGEMENTS: dict[str, tuple[str, str] | None] = {
    "base": None,
    "cli-changed": ("cli", "alt/cli-v2"),
    "receipt-changed": ("rcpt", "alt/rcpt-v2"),
    "declared-changed": ("decl", "alt/decl-v2"),
    "declared-broken": ("decl", "alt/decl-old"),
    "locator-reordered": ("home", "alt/home-reordered"),
    "renewal-pending": ("home", "alt/home-renewal"),
    "no-locator": ("home", "alt/home-bare"),
    "floor-raised": ("home", "alt/home-floor"),
}
# The lean alphabet: (event, root choice, arrangement). It reaches every chart transition and both
# findings with few enough letters that refinement replays every sequence of three on real files.
LEAN: tuple[tuple[str, str, str], ...] = (
    ("initial", "required", "base"), ("initial", "decl", "base"),
    ("active", "", "base"), ("active", "", "locator-reordered"),
    ("attest", "", "base"), ("attest", "", "cli-changed"), ("attest", "", "renewal-pending"),
    ("preview", "", "base"),
)
ROOT_CHOICES: dict[str, tuple[str, ...]] = {
    "required": (),
    "cli+decl": (f"{F}/cli", f"{F}/decl"),
    "decl": (f"{F}/decl",),
}


def _install(path: str, version: str, marker: str = "") -> list[dict[str, Any]]:
    return [{"path": path, "type": "dir", "mode": "0755"},
            {"path": f"{path}/package.json", "type": "file",
             "text": json.dumps({"name": "@staix/agent-mem", "version": version})},
            {"path": f"{path}/bin/amem.js", "type": "file", "text": f"#!/usr/bin/env node{marker}\n",
             "mode": "0755"},
            {"path": f"{path}/src/index.ts", "type": "file", "text": f"export {{}};{marker}\n"}]


INSTALLS = {"cli": ("0.22.0", ""), "rcpt": ("0.21.0", ""), "decl": ("0.22.1", ""),
            "alt/cli-v2": ("0.22.1", " // v2"), "alt/rcpt-v2": ("0.21.1", " // v2"),
            "alt/decl-v2": ("0.22.2", " // v2"), "alt/decl-old": ("0.20.0", "")}


@functools.cache
def _pins() -> dict[str, str]:
    from inboxspec.impl.writer_fs import measure_root

    entries = [e for path, (version, marker) in INSTALLS.items() for e in _install(path, version, marker)]
    with fixtures.materialised({"entries": entries}) as directory:
        return {path: measure_root(f"{directory}/{path}").pin for path in ("cli", "rcpt", "decl")}


def _home(path: str, *, floor: str = "0.22.0", order: tuple[str, ...] = ("cli", "decl", "rcpt"),
          renewal: str | None = None, locator: bool = True) -> list[dict[str, Any]]:
    versions = {"cli": "0.22.0", "decl": "0.22.1", "rcpt": "0.21.0"}
    entries: list[dict[str, Any]] = [
        {"path": path, "type": "dir"},
        {"path": f"{path}/formats.json", "type": "file", "text": json.dumps({"readerFloor": floor})},
        {"path": f"{path}/setup-receipt.json", "type": "file",
         "text": json.dumps({"writerRoots": [f"{F}/rcpt"]})}]
    if locator:
        document = {"roots": [f"{F}/cli", f"{F}/decl", f"{F}/rcpt"],
                    "writers": [{"writerId": f"{F}/{r}", "version": versions[r], "pin": _pins()[r]}
                                for r in order],
                    "activation": {"generation": 1, "renewal": renewal}}
        entries.append({"path": f"{path}/sync-placement-writer-roots.json", "type": "file",
                        "text": json.dumps(document)})
    return entries


@functools.cache
def standard_entries() -> tuple[dict[str, Any], ...]:
    entries = [e for path, (version, marker) in INSTALLS.items() for e in _install(path, version, marker)]
    entries += _home("home") + _home("alt/home-reordered", order=("rcpt", "cli", "decl"))
    entries += _home("alt/home-renewal", renewal="pending") + _home("alt/home-bare", locator=False)
    entries += _home("alt/home-floor", floor="0.23.0")
    return tuple(entries)


def standard_config(options: Mapping[str, bool]) -> dict[str, Any]:
    config: dict[str, Any] = {"home": f"{F}/home", "own_root": f"{F}/cli"}
    if options:
        config["options"] = dict(options)
    config["fixture"] = {"entries": list(standard_entries())}
    return config


def world_of(arrangement: str) -> World:
    """The arrangement observed on a real materialisation of the standard fixture."""
    return _worlds()[arrangement]


@functools.cache
def _worlds() -> dict[str, World]:
    """Every arrangement observed on one materialisation of the standard fixture, in turn: its swap
    made, the world observed, the swap undone (a swap is its own inverse). A world holds no
    timestamp, inode or directory name, so the swaps before leave no mark on it;
    ``tests/test_writer_proofs_reads.py`` compares each with one observed on a fixture of its own."""
    config = standard_config({})
    spellings = [root for roots in ROOT_CHOICES.values() for root in roots]
    worlds: dict[str, World] = {}
    with fixtures.materialised(config["fixture"]) as directory:
        for arrangement, swap in ARRANGEMENTS.items():
            if swap is not None:
                fixtures.swap(directory, *swap)
            try:
                worlds[arrangement] = writer_proofs_driver.observe(directory, config, spellings)
            finally:
                if swap is not None:
                    fixtures.swap(directory, *swap)
    return worlds


# -- invariants ---------------------------------------------------------------------------------------

def _event(name: str) -> Any:
    return lambda action: action.event == name


def _unchanged_active(action: Action) -> bool:
    """An active read of a world whose installs are exactly the locator's writers, in any order."""
    if action.event != "active":
        return False
    world: World = action.kwargs["world"]
    locator = world.locator
    if locator is None or isinstance(locator, str) or locator.check != "current":
        return False
    installs = dict(world.installs)
    measured = {(real, *install[1:]) for real, install in installs.items() if install[0] == "ok"}
    return set(locator.writers) <= measured and len(measured) == len(locator.writers)


INVARIANTS: tuple[Invariant, ...] = (
    Invariant("refused_phase_leaves_no_context", ("WRITER-SES-1", "WRITER-ACT-7"),
              lambda a: a.event in ("initial", "active"),
              lambda pre, post, out, bounds: ("measurement" in out) != (post.control == "no_context")),
    Invariant("attest_keeps_the_context", ("WRITER-ATT-1", "WRITER-ERR-3"), _event("attest"),
              lambda pre, post, out, bounds: post.control == pre.control and post.kept == pre.kept),
    Invariant("initial_attest_refusals_are_initial", ("WRITER-ATT-2",), _event("attest"),
              lambda pre, post, out, bounds: pre.control != "initial_context" or "refusal" not in out
              or out["refusal"]["phase"] == "initial"),
    Invariant("attestation_needs_a_context", ("WRITER-ERR-3",), _event("attest"),
              lambda pre, post, out, bounds: pre.control != "no_context" or out.get("error") == "no_context"),
    Invariant("preview_changes_nothing", ("WRITER-PREV-6",), _event("preview"),
              lambda pre, post, out, bounds: post == pre),
    Invariant("fences_touch_no_context", ("WRITER-SES-2",),
              lambda a: a.event in ("hold_fences", "release_fences"),
              lambda pre, post, out, bounds: post.control == pre.control and post.kept == pre.kept),
    Invariant("every_attestation_is_made_under_the_fences", ("WRITER-OPT-1", "WRITER-SES-2"),
              _event("attest"),
              lambda pre, post, out, bounds: "attestation" not in out or pre.fences,
              finding="WRITER-F1", option="attest_requires_fences"),
    Invariant("unchanged_installs_are_not_a_change", ("WRITER-OPT-2", "WRITER-ACT-5"), _unchanged_active,
              lambda pre, post, out, bounds: out.get("refusal", {}).get("cause") != "changed",
              finding="WRITER-F2", option="compare_writers_by_id"),
)

PHASES = {"no_context": None, "initial_context": "initial", "active_context": "active"}


class WriterProofsExplorer:
    variables: tuple[str, ...] = Snapshot._fields
    default_bounds: Mapping[str, str] = {"alphabet": "lean"}
    options = INTERFACE.options
    invariants = INVARIANTS
    unobservable_events: frozenset[str] = frozenset()

    def parse_bounds(self, raw: Mapping[str, str]) -> Bounds:
        alphabet = frame.merged_bounds("writer-proofs", self.default_bounds, raw)["alphabet"]
        if alphabet not in ("lean", "full"):
            raise ValueError(f"the writer-proofs alphabet is lean or full, not {alphabet!r}")
        return {"alphabet": alphabet}

    def alphabet(self, bounds: Bounds) -> Sequence[Action]:
        if bounds["alphabet"] == "lean":
            letters = LEAN
        else:  # every event that reads the world (each root choice of `initial`) under every arrangement
            letters = tuple((event, roots, name) for name in ARRANGEMENTS
                            for event in writer_proofs_driver.WORLD_EVENTS
                            for roots in (ROOT_CHOICES if event == "initial" else ("",)))
        actions: list[Action] = []
        for event, roots, name in letters:
            # Absent arguments at the interface's defaults (as tuples, the chart's own form).
            kwargs: dict[str, Any] = {name: tuple(value) for name, value in
                                      INTERFACE.events[event].defaults().items()}
            kwargs.update(world=world_of(name), arrangement=name)
            label = f"{event} @{name}"
            if event == "initial":
                kwargs["roots"] = ROOT_CHOICES[roots]
                label = f"initial {roots} @{name}"
            actions.append(Action(label, event, kwargs))
        # The events that read no world: each is one letter.
        actions += [Action(event, event) for event, entry in INTERFACE.events.items()
                    if not entry.harness and event not in writer_proofs_driver.WORLD_EVENTS]
        return actions

    def chart_arguments(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return {"own_root": f"{F}/cli", "options": WriterProofsModelOptions(**options)}

    def constants(self, data: Any, bounds: Bounds, options: Mapping[str, bool]) -> None:
        data.own_root = f"{F}/cli"
        data.options = WriterProofsModelOptions(**options)

    def initial(self, bounds: Bounds) -> Snapshot:
        return Snapshot(control="no_context", fences=False, kept=None)

    def load(self, data: Any, snapshot: Snapshot) -> None:
        data.fences, data.kept = snapshot.fences, snapshot.kept
        data.phase = PHASES[snapshot.control]
        data.output = {}

    def store(self, data: Any, state: str) -> Snapshot:
        return Snapshot(state, data.fences, data.kept)

    def config(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return standard_config(options)

    def concretize(self, trace: Sequence[tuple[Any, Action, Any]], bounds: Bounds,
                   options: Mapping[str, bool]) -> list[dict[str, Any]]:
        """Swaps bring each letter's arrangement into place; then the event itself."""
        steps: list[dict[str, Any]] = []
        current = "base"
        for _pre, action, _post in trace:
            wanted = action.kwargs.get("arrangement", current)
            if wanted != current:
                for name in (current, wanted):  # undo the current swap, then make the wanted one
                    swap = ARRANGEMENTS[name]
                    if swap is not None:
                        steps.append({"event": "swap_paths", "args": {"first": swap[0], "second": swap[1]}})
                current = wanted
            # The event's own arguments, those at their defaults left out.
            entry = INTERFACE.events[action.event]
            defaults = entry.defaults()
            args = {name: list(value) for name, value in action.kwargs.items()
                    if name in entry.argument_names and list(value) != defaults.get(name)}
            steps.append(frame.case_step(action.event, args or None))
        return steps


MACHINE = frame.bundled_machine(
    name="writer-proofs", title="writer proofs", seed="002_79f456de189a5c5b.txt",
    chart=WriterProofsChart, driver=writer_proofs_driver, explorer=WriterProofsExplorer(),
)
