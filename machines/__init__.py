"""The machine registry: one typed description per machine (see ``frame.py``).

Every tool looks machines up here at call time, so a test can register a
machine of its own for the duration of a test (``monkeypatch.setitem``).
Adding a machine is one line in ``REGISTRY`` (docs/adding-a-machine.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

from inboxspec.machines import (
    host,
    idle_subscriptions,
    inbox_refresh,
    peer_delivery,
    wake_gate,
    writer_proofs,
)
from inboxspec.machines.frame import Machine

REGISTRY: dict[str, Machine] = {
    entry.name: entry
    for entry in (
        wake_gate.MACHINE,
        peer_delivery.MACHINE,
        idle_subscriptions.MACHINE,
        writer_proofs.MACHINE,
        inbox_refresh.MACHINE,
        host.MACHINE,
    )
}


class UnknownMachine(ValueError):
    """A machine name that is not in the registry."""


def get(name: str) -> Machine:
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise UnknownMachine(f"unknown machine {name!r}; known: {known}") from None


def names() -> list[str]:
    return sorted(REGISTRY)


def all_machines() -> list[Machine]:
    return [REGISTRY[name] for name in sorted(REGISTRY)]


@contextlib.contextmanager
def only(chosen: Iterable[str]) -> Iterator[None]:
    """Narrow the registry to ``chosen`` for the duration: every tool then works
    on those machines alone (``inboxspec check --machine NAME``)."""
    global REGISTRY
    names = list(chosen)
    for name in names:
        get(name)  # an unknown name is an error before anything changes
    everything = REGISTRY
    REGISTRY = {name: everything[name] for name in sorted(names)}
    try:
        yield
    finally:
        REGISTRY = everything
