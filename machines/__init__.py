"""The machine registry: one typed description per machine (see ``frame.py``).

Every tool looks machines up here at call time, so a test can register a
machine of its own for the duration of a test (``monkeypatch.setitem``).
Adding a machine is one line in ``MODULES`` (docs/adding-a-machine.md); a
machine's module is imported when a tool first reads its entry (``Registry``).
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from pathlib import Path
from typing import TypeVar

from inboxspec.machines.frame import Machine, bundled_cases, bundled_features, bundled_spec

# Each machine's module, by the machine's name: the module's ``MACHINE``.
# WARNING: a name here is its module's MACHINE.name; tests/test_registry.py checks that they agree.
MODULES: dict[str, str] = {
    "wake-gate": "inboxspec.machines.wake_gate",
    "peer-delivery": "inboxspec.machines.peer_delivery",
    "idle-subscriptions": "inboxspec.machines.idle_subscriptions",
    "writer-proofs": "inboxspec.machines.writer_proofs",
    "inbox-refresh": "inboxspec.machines.inbox_refresh",
    "host": "inboxspec.machines.host",
}


class Registry(MutableMapping[str, Machine]):
    """The machines by name, each module imported when its machine is first read.

    ``inboxspec conform --machine NAME``, the reference adapter and the test suite's adapters start
    a process per run; importing every machine (its model, its reference, the host's composition)
    cost a one-case run about a fifth of its processor time, for machines it never reads. Names,
    membership and iteration import nothing; reading a machine imports its module. Otherwise it is
    a dict: a test may set or delete an entry (``monkeypatch.setitem``), or put a plain dict in its
    place."""

    def __init__(self, modules: dict[str, str]) -> None:
        self._modules = dict(modules)  # names not read yet, and their modules
        self._machines: dict[str, Machine] = {}
        self._order = list(modules)  # the names, in registration order

    def __getitem__(self, name: str) -> Machine:
        machine = self._machines.get(name)
        if machine is None:
            module = self._modules[name]  # KeyError: not registered
            machine = importlib.import_module(module).MACHINE
            if machine.name != name:
                raise RuntimeError(f"{module} registers {machine.name!r} under the name {name!r}")
            self._machines[name] = machine
            del self._modules[name]
        return machine

    def __setitem__(self, name: str, machine: Machine) -> None:
        self._modules.pop(name, None)
        self._machines[name] = machine
        if name not in self._order:
            self._order.append(name)

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._modules.pop(name, None)
        self._machines.pop(name, None)
        self._order.remove(name)

    def unread(self, name: str) -> bool:
        """Whether ``name`` is registered by its module and that module is not imported yet."""
        return name in self._modules

    def __contains__(self, name: object) -> bool:
        return name in self._machines or name in self._modules

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)


T = TypeVar("T")

REGISTRY: MutableMapping[str, Machine] = Registry(MODULES)


class UnknownMachine(ValueError):
    """A machine name that is not in the registry."""


def get(name: str) -> Machine:
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise UnknownMachine(f"unknown machine {name!r}; known: {known}") from None


def features(name: str) -> tuple[str, ...]:
    """The features of the machine ``name`` (``Machine.features``), without importing its module
    (``_unread_or_entry``). The reference adapter's ``start`` lists every machine's features this way;
    reading every machine for them cost each start of the adapter about 0.25 processor seconds, for
    machines most runs never read."""
    return _unread_or_entry(name, bundled_features, lambda machine: machine.features)


def cases_dir(name: str) -> Path:
    """The case directory of the machine ``name`` (``Machine.cases``), without importing its module
    (``_unread_or_entry``): a run of case files reads the files alone, and the runner then imports
    no machine's model or reference (about a tenth of a second of each run's start)."""
    return _unread_or_entry(name, bundled_cases, lambda machine: machine.cases)


def spec_document(name: str) -> Path:
    """The spec document of the machine ``name`` (``Machine.spec``), without importing its module
    (``_unread_or_entry``): the linter of a run's cases reads the requirements it cites."""
    return _unread_or_entry(name, bundled_spec, lambda machine: machine.spec)


def _unread_or_entry(name: str, bundled: Callable[[str], T], read: Callable[[Machine], T]) -> T:
    """What ``read`` reads of the machine ``name``'s entry, taken from ``bundled`` (a ``frame.bundled_*``
    function of the name) when its module is not imported yet: a machine registered by its module is
    bundled, and its entry holds what ``frame.bundled_machine`` gives it.

    WARNING: this holds while every module in ``MODULES`` builds its entry with
    ``frame.bundled_machine``; tests/test_registry.py compares what each reader gives with each entry's."""
    if isinstance(REGISTRY, Registry) and REGISTRY.unread(name):
        return bundled(name)
    return read(get(name))


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
