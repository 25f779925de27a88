"""Projected cases: every host case seen from each machine it composes.

While the reference host (``impl/host.py``) runs a host case
(``conformance/cases/host/*.json``), each session's wake gate, peer delivery
and idle subscriptions are wrapped in a recorder that writes down every call
the host makes, as a step of that machine's own protocol (event and
arguments, spec/<machine>.interface.json and the machine's Interface section).
The rendering calls the host makes for its receipt lines (PEER-NOTE-1/2) are
written down as peer-delivery steps of the session whose peer delivery gave
the receipt. Each session's steps of each machine are then one ordinary case
of that machine, under ``conformance/cases/<machine>/host/<file>.json``, with
the machine's config taken from the host case's config and the expectations
from that machine's own reference driver. A port that implements one machine
thus replays the exact traces the composition drives it through.

``write_or_check`` regenerates the files (or reports drift), as
``inboxspec cases project`` and ``inboxspec cases generate`` do; the argument
for why the projections and the host wiring together suffice is in
spec/host.md ("Projected cases").
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inboxspec import machines
from inboxspec.conformance.casefiles import (
    Case,
    CaseFileError,
    case_file_text,
    linked_directory,
    read_case_file,
    write_or_compare,
)
from inboxspec.impl import host as host_module
from inboxspec.impl.host import Host
from inboxspec.impl.wake_gate import Message
from inboxspec.machines import host_driver, interface

HOST = "host"


@dataclass(frozen=True)
class Part:
    """One composed machine: its registry name, the host config key of its config, the session
    attribute the host keeps it in, and for each event the host calls, the requirements the
    projected step exercises and how the impl's parameter names read in the protocol."""

    machine: str
    config_key: str
    attribute: str
    events: Mapping[str, tuple[str, ...]]
    renames: Mapping[str, Mapping[str, str]]


# WARNING: these tables follow the calls impl/host.py makes; a new call there needs its row here
# (a call without one fails the projection with a KeyError, so it cannot go unrecorded).
PARTS = (
    Part("wake-gate", "wake_gate", "gate", {
        "decide": ("WAKE-LANE-1", "WAKE-CAP-1", "WAKE-CAD-1", "WAKE-OUT-1"),
        "announce_refusal": ("WAKE-ANN-1",),
        "reset_streak": ("WAKE-RESET-1",),
    }, {}),
    Part("peer-delivery", "peer_delivery", "delivery", {
        "send_message": ("PEER-SEND-1", "PEER-JUDGE-1"),
        "take": ("PEER-HOLD-6",),
        "advance": ("PEER-TIME-1",),
        "drain": ("PEER-DRAIN-1",),
        "approve": ("PEER-HOLD-3",),
        "deny": ("PEER-HOLD-4",),
        "set_recipient": ("PEER-SET-1",),
        "render_delivery_notice": ("PEER-NOTE-1",),
        "render_dropped_notice": ("PEER-NOTE-2",),
    }, {}),
    Part("idle-subscriptions", "idle_subscriptions", "idle", {
        "subscribe": ("IDLE-REQ-1",),
        "receive_notice": ("IDLE-REQ-5",),
        "add_subscriber": ("IDLE-TGT-1",),
        "turn_started": ("IDLE-FIRE-1",),
        "turn_finished": ("IDLE-FIRE-1",),
        "set_held": ("IDLE-HELD-1",),
        "advance": ("IDLE-TIME-1",),
    }, {"receive_notice": {"answer": "notice", "sender": "from"}}),
)
RENDERERS = ("render_delivery_notice", "render_dropped_notice")  # pure, called by impl/host.py by name


def _json(value: Any) -> Any:
    """A call's argument as protocol JSON: a gate message is its four fields (WAKE-MSG-1)."""
    if isinstance(value, Message):
        return {"kind": value.kind, "from": value.sender, "to": value.recipient, "text": value.text}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    return value


def protocol_step(part: Part, event: str, function: Callable[..., Any], args: tuple[Any, ...],
                  kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The call as a step of the part's protocol: the arguments it was given, by name."""
    bound = inspect.signature(function).bind(*args, **kwargs)
    names = part.renames.get(event, {})
    step_args = {names.get(name, name): _json(value) for name, value in bound.arguments.items()}
    return {"event": event, "args": step_args} if step_args else {"event": event}


class Recorder:
    """Stands in for one session's machine: forwards everything, and logs the calls of ``part.events``."""

    def __init__(self, target: Any, part: Part, log: list[dict[str, Any]],
                 on_call: Callable[[], None]) -> None:
        self._target, self._part, self._log, self._on_call = target, part, log, on_call

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if name.startswith("_") or not callable(value):
            return value
        if name not in self._part.events:
            raise KeyError(f"{self._part.machine}: the host calls {name}, which PARTS has no row for")

        def call(*args: Any, **kwargs: Any) -> Any:
            self._log.append(protocol_step(self._part, name, value, args, kwargs))
            self._on_call()
            return value(*args, **kwargs)

        return call


@contextmanager
def recording(host: Host) -> Iterator[dict[tuple[str, str], list[dict[str, Any]]]]:
    """Wrap every session's machines; yield the logs, by (machine, session address)."""
    logs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    last_delivery: list[list[dict[str, Any]]] = []  # the log of the peer delivery called last

    def noting(log: list[dict[str, Any]], is_delivery: bool) -> Callable[[], None]:
        return (lambda: last_delivery.append(log)) if is_delivery else (lambda: None)

    for address, session in host.sessions.items():
        for part in PARTS:
            log = logs.setdefault((part.machine, address), [])
            remember = noting(log, part.attribute == "delivery")
            setattr(session, part.attribute, Recorder(getattr(session, part.attribute), part, log, remember))

    delivery = next(p for p in PARTS if p.attribute == "delivery")

    def renderer(name: str) -> Callable[..., Any]:
        function = getattr(host_module, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            # A receipt's line is rendered right after the call of the recipient's peer delivery
            # that gave the receipt (HOST-RCPT-1), so it belongs to that session's trace.
            last_delivery[-1].append(protocol_step(delivery, name, function, args, kwargs))
            return function(*args, **kwargs)

        return call

    originals = {name: getattr(host_module, name) for name in RENDERERS}
    for name in RENDERERS:
        setattr(host_module, name, renderer(name))
    try:
        yield logs
    finally:
        for name, function in originals.items():
            setattr(host_module, name, function)


# WARNING: one part of a case id as conformance/schemas/case-file.schema.json's id pattern has it;
# tests/test_projected_cases.py checks projected ids against that pattern.
_ID_PART = re.compile(r"[a-z0-9][a-z0-9-]*")


def session_id_parts(addresses: Sequence[str]) -> dict[str, str]:
    """Each session's part of its projected cases' ids: its address, when every address of the case
    can stand in an id as it is (lowercase ASCII letters, digits and dashes: the case-file schema's);
    otherwise ``session-N``, N its place in config order from 1, for every session of the case.
    Either way no two sessions share a part. (Folding an address into an id made ``é``, a lone
    surrogate and ``Session!`` all ``session``, and ``e`` plus a combining accent ``e``.)"""
    if all(_ID_PART.fullmatch(address) for address in addresses):
        return {address: address for address in addresses}
    return {address: f"session-{number}" for number, address in enumerate(addresses, 1)}


def project(case: Case) -> list[dict[str, Any]]:
    """The projected cases of one host case: one per machine and session the host called."""
    if case.expect_config_error is not None:
        return []
    return project_steps(case.id.removeprefix(f"{HOST}/"), case.config, case.inputs)


def project_steps(slug: str, host_config: Mapping[str, Any],
                  inputs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The projected cases of a host config and its steps (which the host must accept as a config)."""
    config = dict(host_config)
    host = Host.from_config(config)
    with recording(host) as logs:
        for step in inputs:
            host_driver.apply_step(host, step)
    projected = []
    id_parts = session_id_parts(list(host.sessions))
    for part in PARTS:
        if not _registered(part.machine):
            continue
        entry = machines.get(part.machine)
        part_config = config.get(part.config_key, {})
        for address in host.sessions:
            steps = logs[(part.machine, address)]
            if not steps:
                continue
            result = entry.run_case(part_config, steps)
            if "config_error" in result:  # the host would have refused the config first
                raise ValueError(f"host/{slug}: {part.machine} refuses a config the host accepted")
            requirements: list[str] = []
            for step in steps:
                requirements += [r for r in part.events[step["event"]] if r not in requirements]
            projected_case: dict[str, Any] = {
                "id": f"{part.machine}/host/{slug}/{id_parts[address]}",
                "description": f"Session {address} of host case {slug} replays the host's calls"
                               " with exact outputs",
                "requirements": requirements,
            }
            options = part_config.get("options", {})
            features = interface.features_for_options(dict(sorted(options.items())))
            if features:
                projected_case["features"] = features
            projected_case["config"] = part_config
            outputs = result["outputs"]
            projected_case["steps"] = [{**s, "expect": out} for s, out in zip(steps, outputs, strict=True)]
            projected.append(projected_case)
    return projected


def host_case_files() -> list[Path]:
    return sorted(machines.get(HOST).cases.glob("*.json"))


def _registered(machine: str) -> bool:
    # `check --machine NAME` narrows the registry: projections are checked where both
    # the host and the projected machine are in it.
    return HOST in machines.REGISTRY and machine in machines.REGISTRY


def generate() -> dict[Path, str]:
    """Every projected case file, by path, as text."""
    files: dict[Path, dict[str, Any]] = {}
    if not any(_registered(part.machine) for part in PARTS):
        return {}
    for path in host_case_files():
        for case in read_case_file(path):
            for projected in project(case):
                machine = projected["id"].split("/", 1)[0]
                target = machines.get(machine).cases / HOST / path.name
                files.setdefault(target, {"machine": machine, "cases": []})["cases"].append(projected)
    return {path: case_file_text(content) for path, content in files.items()}


def write_or_check(write: bool) -> list[str]:
    """Regenerate (or, without ``write``, compare) every projected file; return the drift, and
    the stale files of a host case file that no longer exists."""
    problems: list[str] = []
    wanted = generate()
    for path, text in sorted(wanted.items()):
        try:  # each in its machine's case directory, two levels up (``generate``)
            if write_or_compare(path, text, write, within=path.parent.parent) and not write:
                problems.append(f"{path}: projected cases are stale; run `inboxspec cases project`")
        except CaseFileError as error:
            problems.append(str(error))
    for part in PARTS:
        if not _registered(part.machine):
            continue
        folder = machines.get(part.machine).cases / HOST
        linked = linked_directory(folder.parent, folder / "stale.json")
        if linked is not None:  # its files are not this tree's to delete
            problems.append(f"{linked}: a symbolic link or not a directory; no stale file is removed there")
            continue
        for stale in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            if stale not in wanted:
                if write:
                    stale.unlink()
                else:
                    problems.append(f"{stale}: no host case projects here; run `inboxspec cases project`")
    return problems
