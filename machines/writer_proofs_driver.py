"""The writer-proofs driver: case JSON in, ``WriterProofs`` calls on real files, output JSON out.

A case's ``config.fixture`` is a declarative tree (``conformance/fixtures.py``). Through the
protocol the runner has already materialised it and passes ``fixture_dir``; in process (``check``,
the lockstep tests) this driver materialises it itself. Paths in the case are written with the
``{fixture}`` placeholder: it is replaced by the directory in inputs, and the directory is replaced
by it in outputs, so expected outputs never depend on where the fixture lives (WRITER-IF-6).
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from inboxspec.conformance import fixtures
from inboxspec.impl.writer_fs import FilesystemEnvironment
from inboxspec.impl.writer_proofs import (
    InvalidArgument,
    InvalidConfig,
    Options,
    PlacementWriterContextError,
    SharedWriterRevisionError,
    WriterProofs,
    WriterProofsError,
)

PLACEHOLDER = fixtures.PLACEHOLDER
FEATURES = ("option:attest_requires_fences", "option:compare_writers_by_id")
CONFIG_KEYS = {"home", "own_root", "options", "fixture", "fixture_dir"}
EVENT_ARGS: dict[str, frozenset[str]] = {
    "preview": frozenset({"requested"}),
    "initial": frozenset({"roots"}),
    "active": frozenset(),
    "attest": frozenset(),
    "hold_fences": frozenset(),
    "release_fences": frozenset(),
    "swap_paths": frozenset({"first", "second"}),
}


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


def build(config: Mapping[str, Any], directory: str) -> WriterProofs:
    """WRITER-IF-1: the session from a case's config, fault order as the spec gives it."""
    if not isinstance(config, Mapping):
        raise InvalidConfig("config must be an object")
    unknown = sorted(str(k) for k in config if k not in CONFIG_KEYS)
    if unknown:
        raise InvalidConfig(f"unknown writer-proofs config key(s): {', '.join(unknown)}")
    for key in ("home", "own_root"):
        if type(config.get(key)) is not str or not config[key]:
            raise InvalidConfig(f"{key} must be a non-empty string")
    options = Options.from_mapping(config.get("options", {}))
    return WriterProofs(FilesystemEnvironment(), substitute(config["home"], directory),
                        substitute(config["own_root"], directory), options)


def _body(proofs: WriterProofs, event: str, args: Mapping[str, Any], directory: str) -> dict[str, Any]:
    if event == "preview":
        return {"preview": proofs.preview(substitute(args.get("requested", []), directory)).as_json()}
    if event == "initial":
        return {"measurement": proofs.initial(substitute(args.get("roots", []), directory)).measurement.as_json()}
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
        first, second = args.get("first"), args.get("second")
        if type(first) is not str or type(second) is not str:
            raise InvalidArgument("swap_paths takes two fixture-relative paths")
        try:
            fixtures.swap(directory, first, second)
        except (OSError, ValueError) as error:
            raise InvalidArgument(f"swap_paths failed: {error}") from None
        return {}
    raise InvalidArgument(f"unknown writer-proofs event {event!r}")


def apply_step(proofs: WriterProofs, step: Mapping[str, Any], directory: str) -> dict[str, Any]:
    """One step; every output carries the held context's phase (WRITER-IF-3)."""
    event = step.get("event")
    args = step.get("args", {})
    try:
        if event not in EVENT_ARGS:
            raise InvalidArgument(f"unknown writer-proofs event {event!r}")
        if not isinstance(args, Mapping):
            raise InvalidArgument("args must be an object")
        extra = sorted(str(k) for k in args if k not in EVENT_ARGS[str(event)])
        if extra:
            raise InvalidArgument(f"{event} takes no argument(s) {', '.join(extra)}")
        body = _body(proofs, str(event), args, directory)
    except WriterProofsError as error:
        body = {"error": error.code}
    except PlacementWriterContextError as refusal:
        body = {"refusal": refusal.as_json()}
    except SharedWriterRevisionError as renewal:
        body = {"renewal": {"state": renewal.code, "message": str(renewal)}}
    return {**neutralise(body, directory), "context": proofs.phase}


@contextlib.contextmanager
def fixture_directory(config: Mapping[str, Any]) -> Iterator[str]:
    given = config.get("fixture_dir") if isinstance(config, Mapping) else None
    if isinstance(given, str):
        yield given
        return
    fixture = config.get("fixture", {"entries": []}) if isinstance(config, Mapping) else {"entries": []}
    with fixtures.materialised(fixture) as directory:
        yield directory


def run_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    with fixture_directory(config) as directory:
        try:
            proofs = build(config, directory)
        except WriterProofsError as error:
            return {"config_error": error.code}
        return {"outputs": [apply_step(proofs, step, directory) for step in steps]}


def fuzz(rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A random case over the standard fixture: events in random order, swaps between them."""
    from inboxspec.machines.writer_proofs_fixture import STANDARD_CONFIG, SWAPS

    events = ["preview", "initial", "active", "attest", "hold_fences", "release_fences", "swap"]
    steps: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 8)):
        event = rng.choice(events)
        if event == "swap":
            first, second = rng.choice(SWAPS)
            steps.append({"event": "swap_paths", "args": {"first": first, "second": second}})
        elif event == "initial" and rng.random() < 0.5:
            steps.append({"event": "initial", "args": {"roots": [f"{PLACEHOLDER}/cli"]}})
        else:
            steps.append({"event": event})
    return dict(STANDARD_CONFIG), steps
