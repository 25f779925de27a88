"""The writer-proofs driver: case JSON in, ``WriterProofs`` calls on real files, output JSON out.

A case's ``config.fixture`` is a declarative tree (``conformance/fixtures.py``). Through the
protocol the runner has already materialised it and passes ``fixture_dir``; in process (``check``,
the lockstep tests) this driver materialises it itself. Paths in the case are written with the
``{fixture}`` placeholder: it is replaced by the directory in inputs, and the directory is replaced
by it in outputs, so expected outputs never depend on where the fixture lives (WRITER-IF-6).

The driver only translates: every check is the reference's. ``writer_harness.session_config`` and
``WriterProofs.from_config`` check the config (WRITER-IF-1), ``check_arguments`` a step's first
fault, each event method its own arguments, and ``writer_harness.swap_paths`` the harness step
(WRITER-IF-6).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import random
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from inboxspec.impl import writer_fs, writer_harness
from inboxspec.impl.writer_harness import ScriptedEnvironment, SwapPaths, SwapScript
from inboxspec.impl.writer_proofs import (
    Effective,
    PlacementWriterContextError,
    SharedWriterRevisionError,
    WriterMeasurementError,
    WriterProofs,
    WriterProofsError,
    check_arguments,
)
from inboxspec.machines import fixtures, held_signals, interface, sessions
from inboxspec.model.writer_proofs import (
    Install,
    Locator,
    ModelWriter,
    World,
    WriterProofsChart,
    WriterProofsModelOptions,
)

PLACEHOLDER = fixtures.PLACEHOLDER
# The config keys, the events, their arguments (in fault order) and defaults, the options and the
# vocabularies: spec/writer-proofs.interface.json. WARNING: its one harness event, swap_paths,
# changes the fixture; machines/fixtures.py FIXTURE_CHANGING_EVENTS names it too, and cannot undo
# an armed one (``during``).
INTERFACE = interface.load("writer-proofs")
# One feature per finding option: a port that has not implemented an option declares it unsupported.
# The events that read the world (and so may refuse, WRITER-IF-3); the others only set the fences.
WORLD_EVENTS = tuple(name for name, entry in INTERFACE.events.items() if "refusal" in entry.outputs)


def substitute(value: Any, directory: str) -> Any:
    if isinstance(value, str):
        return value.replace(PLACEHOLDER, directory)
    if isinstance(value, list):
        return [substitute(v, directory) for v in value]
    return value


def neutralise(value: Any, directory: str) -> Any:
    """Every string that names a path inside the fixture names it through the placeholder."""
    if isinstance(value, str):
        if value == directory or value.startswith(directory + "/"):
            return PLACEHOLDER + value[len(directory):]
        return value
    if isinstance(value, list):
        return [neutralise(v, directory) for v in value]
    if isinstance(value, dict):
        return {k: neutralise(v, directory) for k, v in value.items()}
    return value


def _record_swap(first: str, second: str) -> None:
    """Remember a swap, so an in-process fixture is restored when its run ends."""
    if _SWAPS_DONE:
        _SWAPS_DONE[-1].append((first, second))


def exchange_in(directory: str) -> Callable[[str, str], None]:
    """The fixture layer's exchange of two paths in ``directory``, remembered when it is made."""
    def exchange(first: str, second: str) -> None:
        fixtures.swap(directory, first, second)
        _record_swap(first, second)
    return exchange


def build(config: Mapping[str, Any], directory: str) -> WriterProofs:
    """WRITER-IF-1: the session from a case's config, on the fixture in ``directory``."""
    return WriterProofs.from_config(ScriptedEnvironment(exchange_in(directory)),
                                    writer_harness.session_config(config),
                                    lambda path: substitute(path, directory))


def _body(proofs: WriterProofs, event: str, args: Mapping[str, Any], directory: str) -> dict[str, Any]:
    """One event, its absent arguments already at their defaults (WRITER-IF-2)."""
    if event == "preview":
        return {"preview": proofs.preview(substitute(args["requested"], directory)).as_json()}
    if event == "initial":
        context = proofs.initial(substitute(args["roots"], directory))
        return {"measurement": context.measurement.as_json()}
    if event == "active":
        return {"measurement": proofs.active().measurement.as_json()}
    if event == "attest":
        return {"attestation": proofs.attest().as_json()}
    if event == "hold_fences":
        proofs.hold_fences()
        return {"fences": True}
    if event == "release_fences":
        proofs.release_fences()
        return {"fences": False}
    if event == "swap_paths":
        writer_harness.swap_paths(proofs.env, args)
        return {}
    raise ValueError(f"unknown writer-proofs event {event!r}")


def apply_step(proofs: WriterProofs, step: Mapping[str, Any], directory: str) -> dict[str, Any]:
    """One step; every output carries the held context's phase (WRITER-IF-3)."""
    event = step.get("event")
    entry = INTERFACE.events.get(event) if isinstance(event, str) else None
    if entry is None:  # not a step of this machine: the case errors (PROTO-MAL-2)
        raise ValueError(f"unknown writer-proofs event {event!r}")
    try:
        args = check_arguments(entry.name, step.get("args", {}), entry.argument_names)
        body = _body(proofs, entry.name, entry.with_defaults(args), directory)
    except WriterProofsError as error:
        body = {"error": error.code}
    except PlacementWriterContextError as refusal:
        body = {"refusal": refusal.as_json()}
    except SharedWriterRevisionError as renewal:
        body = {"renewal": {"state": renewal.code, "message": str(renewal)}}
    return {**neutralise(body, directory), "context": proofs.phase}


_MATERIALISED: dict[str, str] = {}  # in-process fixtures by their canonical JSON, kept for the process
_ROOT = fixtures.FixtureRoot()  # the private root they live in
_SWAPS_DONE: list[list[tuple[str, str]]] = []  # per run in progress, the swaps it made, to undo


def forget_fixtures() -> None:
    """Remove every in-process fixture directory: the next run lays its fixture out again. At the
    process's exit too, where a second signal cut the removal (``held_signals.ignored``)."""
    with held_signals.ignored():
        _ROOT.close()
    _MATERIALISED.clear()


atexit.register(forget_fixtures)


def _none_in_a_forked_child() -> None:
    """A forked process starts with no in-process fixtures of its own. Those it inherits are its
    parent's directories, which the parent goes on swapping paths in: a child that ran cases in
    them too (``check`` refines on a worker while it replays the cases) would swap the same
    paths at the same time, and each would measure the other's half-made swaps. The child lays
    its fixtures out again, in its own root (under the temporary directory it is given), and
    leaves its parent's alone: it neither uses nor removes them."""
    global _ROOT
    _MATERIALISED.clear()
    _SWAPS_DONE.clear()
    _ROOT = fixtures.FixtureRoot()


os.register_at_fork(after_in_child=_none_in_a_forked_child)


@contextlib.contextmanager
def fixture_directory(config: Mapping[str, Any]) -> Iterator[str]:
    """The runner's directory when it gave one; else an in-process materialisation.

    In process the same fixture serves many runs (``check``, refinement and the lockstep tests
    replay thousands): a run's swaps are undone in reverse order when it ends, which restores every
    path (swaps are their own inverse). A run that fails midway discards its directory.
    """
    given = config.get("fixture_dir") if isinstance(config, Mapping) else None
    if isinstance(given, str):
        yield given
        return
    fixture = config.get("fixture", {"entries": []}) if isinstance(config, Mapping) else {"entries": []}
    key = json.dumps(fixture, sort_keys=True)
    directory = _MATERIALISED.get(key)
    if directory is None:
        directory = _ROOT.lay_out(fixture)
        _MATERIALISED[key] = directory
    done: list[tuple[str, str]] = []
    _SWAPS_DONE.append(done)
    clean = False
    try:
        yield directory
        clean = True
    finally:
        _SWAPS_DONE.pop()
        try:
            for first, second in reversed(done):
                fixtures.swap(directory, first, second)
        except OSError:
            clean = False
        if not clean:
            _MATERIALISED.pop(key, None)
            _ROOT.discard(directory)



def run_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    with fixture_directory(config) as directory:
        if isinstance(config, Mapping) and "fixture" in config and "fixture_dir" not in config:
            # In process, the config the session sees is the one the runner sends (WRITER-IF-6).
            config = {**config, "fixture_dir": directory}
        try:
            proofs = build(config, directory)
        except WriterProofsError as error:
            return {"config_error": error.code}
        return {"outputs": sessions.bounded_outputs(steps, lambda step: apply_step(proofs, step, directory))}


# -- the model on real fixtures: the filesystem observed as a World -------------------------------

def _status(spelling: str, directory: str) -> tuple[str, str, str]:
    path = substitute(spelling, directory)
    if not path or not path.startswith("/") or "\0" in path:
        return (spelling, "invalid", "")
    try:
        return (spelling, "ok", neutralise(writer_fs.real_path(path), directory))
    except OSError:
        return (spelling, "unresolved", "")


def _install(real: str, directory: str, swap: SwapScript | None = None) -> Install:
    path = substitute(real, directory)
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            return ("fault", "invalid-inventory")
        writer = writer_fs.measure_root(path, **(swap.hooks() if swap else {}))
    except WriterMeasurementError as failure:
        return ("fault", failure.detail)
    except OSError:
        return ("fault", "unreadable")
    return ("ok", writer.version, writer.pin)


def observe(directory: str, config: Mapping[str, Any], spellings: Sequence[str],
            swap: SwapScript | None = None, first: str | None = None) -> World:
    """What the filesystem answers now, in the model's terms, paths shown through the placeholder.

    The observation is static: nothing moves while one event runs, so the ``*_after`` reads equal
    the first ones. Every root any read may name is resolved and every install measured once.
    An armed mid-measurement swap can only be performed by the event's first root (a measurement
    ends at its first failing root), so that install, spelled ``first``, is measured first and
    alone with the swap; without ``first`` (an event whose roots no argument names) the first
    install in path order takes it.
    """
    home = substitute(config["home"], directory)
    own_root = str(config["own_root"])
    own = _status(own_root, directory)
    receipt = _receipt(home, directory)
    try:
        floor = writer_fs.require_home_floor(home)
    except PlacementWriterContextError as refusal:
        floor = refusal.cause_class
    effective: Effective | None
    try:
        effective = writer_fs.read_effective(home)
    except PlacementWriterContextError:
        effective = None
    names = {own_root, *spellings, *(receipt or ())}
    if effective is not None and effective.roots is not None:
        names.update(neutralise(list(effective.roots), directory))
    paths = tuple(sorted(_status(name, directory) for name in names))
    reals = sorted({real for _, status, real in paths if status == "ok"})
    first_real = next((real for spelling, status, real in paths if spelling == first and status == "ok"),
                      reals[0] if reals and first is None else None)
    observed: dict[str, Install] = {}
    if swap is not None and first_real is not None:
        observed[first_real] = _install(first_real, directory, swap)
    installs = tuple((real, observed[real] if real in observed else _install(real, directory))
                     for real in reals)
    # The still-current re-read comes after the measurement (WRITER-ACT-6), so it sees a locator
    # that an armed swap moved during the measurement.
    locator: Locator | str | None = "unavailable" if effective is None else _locator(effective, directory)
    own_real = own[2] if own[1] == "ok" else None
    if swap is None or swap.armed is not None:
        return World(own_real, own_real, receipt, receipt, floor, locator, paths, installs)
    # The swap was performed inside a measurement: the reads after it see the moved world.
    own_after = _status(own_root, directory)
    return World(own_real, own_after[2] if own_after[1] == "ok" else None, receipt,
                 _receipt(home, directory), floor, locator, paths, installs)


def _locator(effective: Effective, directory: str) -> Locator | None:
    check = "current"
    try:
        effective.assert_current()
    except PlacementWriterContextError as refusal:
        check = refusal.cause_class
    except SharedWriterRevisionError as renewal:
        check = renewal.code
    # A locator without roots reads like none at all (WRITER-HOME-3).
    return None if effective.roots is None else Locator(
        tuple(neutralise(list(effective.roots), directory)),
        tuple(ModelWriter(neutralise(w.writer_id, directory), w.version, w.pin) for w in effective.writers),
        check)


def _receipt(home: str, directory: str) -> tuple[str, ...] | None:
    try:
        return tuple(neutralise(r, directory) for r in writer_fs.read_setup_writer_roots(home))
    except Exception:
        return None


def run_model_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Valid steps on the model chart, the world observed from the real fixture before each event."""
    with fixture_directory(config) as directory:
        chart = sessions.case_chart(WriterProofsChart, own_root=str(config["own_root"]),
                                    options=WriterProofsModelOptions(**config.get("options", {})))
        outputs: list[dict[str, Any]] = []
        swap = SwapScript(exchange_in(directory))
        for step in steps:
            if outputs:
                sessions.on_time(len(outputs), len(steps))
            event = str(step["event"])
            args = INTERFACE.events[event].with_defaults(step.get("args", {}))
            if INTERFACE.events[event].harness:  # swap_paths: the world moves, the chart does not
                swap.step(SwapPaths.from_arguments(args))
                outputs.append({"context": chart.phase})
                continue
            kept = list(chart.kept[0]) if chart.kept else []
            listed = [*args.get("roots", []), *args.get("requested", []), *kept]
            measures = event in WORLD_EVENTS
            named = {"initial": args.get("roots", []), "preview": args.get("requested", []),
                     "attest": kept}.get(event, [])
            world = observe(directory, config, listed, swap if measures else None,
                            named[0] if named else None)
            chart.send(event, world=world, roots=tuple(args.get("roots", ())),
                       requested=tuple(args.get("requested", ())))
            outputs.append(dict(chart.output))
        sessions.case_ended(chart)
        return {"outputs": outputs}


def fuzz(rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A random case over the standard fixture: events in random order, swaps between them."""
    from inboxspec.machines.writer_proofs import ARRANGEMENTS, standard_config

    events = [name for name, entry in INTERFACE.events.items() if not entry.harness] + ["swap"]
    steps: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 8)):
        event = rng.choice(events)
        if event == "swap":
            first, second = rng.choice([pair for pair in ARRANGEMENTS.values() if pair])
            steps.append({"event": "swap_paths", "args": {"first": first, "second": second}})
        elif event == "initial" and rng.random() < 0.5:
            steps.append({"event": "initial", "args": {"roots": [f"{PLACEHOLDER}/cli"]}})
        else:
            steps.append({"event": event})
    return standard_config({}), steps
