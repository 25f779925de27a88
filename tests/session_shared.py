"""What several tests need, made once per pytest session, whichever xdist worker asks first.

Each xdist worker is a process of its own, and runs a session-scoped fixture for itself. A value
made with :func:`computed_once` is kept, pickled, in a directory every worker of the session
shares: the parent of the workers' base temporary directories, which is the controller's own and
new for every session. The first worker to ask for a value makes it while it holds an exclusive
lock on the value's lock file, then writes it whole; the others wait on the lock and read it.
Without xdist the value is made in the process. (``--dist loadgroup`` would keep such tests in
one worker instead, but it groups nothing under pytest 9.2: pytest-xdist issue 1386.)
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pickle
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import pytest

from inboxspec.checker.explore import Configuration, Exploration, Explorations, compiled_chart, explore
from inboxspec.checker.forked import Workers

T = TypeVar("T")


def _shared_root(factory: pytest.TempPathFactory) -> Path | None:
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return None
    root = factory.getbasetemp().parent / "made-once"
    root.mkdir(exist_ok=True)
    return root


def scratch_directory(factory: pytest.TempPathFactory, name: str) -> Path:
    """A directory for the files of the value ``name``: the same one for every worker."""
    root = _shared_root(factory)
    if root is None:
        return factory.mktemp(name)
    directory = root / name
    directory.mkdir(exist_ok=True)
    return directory


def computed_once(factory: pytest.TempPathFactory, name: str, make: Callable[[], T]) -> T:
    """``make()``, made by the first worker of the session that asks for ``name``."""
    return _computed_once_in(_shared_root(factory), name, make)


def _computed_once_in(root: Path | None, name: str, make: Callable[[], T]) -> T:
    if root is None:
        return make()
    kept = root / f"{name}.pickle"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the lock file is closed
        if kept.exists():
            value: T = pickle.loads(kept.read_bytes())
            return value
        value = make()
        kept.write_bytes(pickle.dumps(value))
        return value


class SharedExplorations(Explorations):
    """Explorations of the registered machines as they are: each configuration explored once in
    the session, and only for tests that change no machine, model or explorer."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        super().__init__()
        self._factory = factory
        self._known: dict[tuple[object, ...], Exploration] = {}

    def get(self, name: str, bounds: Mapping[str, str] | None = None,
            options: Mapping[str, bool] | None = None) -> Exploration:
        key = self._key(name, bounds, options)
        if key not in self._known:
            configuration = (name, bounds or {}, options or {})
            result = _shared_exploration(_shared_root(self._factory), key, configuration)
            self._remember(key, result)
        return self._known[key]

    def _remember(self, key: tuple[object, ...], result: Exploration) -> None:
        result.all_transitions = compiled_chart(result.machine).transitions
        self._known[key] = result

    def prefetch(self, configurations: Sequence[Configuration], workers: int) -> None:
        """Makes those of ``configurations`` this process does not know yet on ``workers`` forked
        processes, the largest first as listed (a test that needs many explorations, such as the
        check's, would otherwise make them one after the other while a core waits). Each is still
        made once in the session: a process waits for one another worker is making."""
        missing: dict[tuple[object, ...], Configuration] = {}
        for configuration in configurations:
            missing.setdefault(self._key(*configuration), configuration)
        for key in list(missing):
            if key in self._known:
                del missing[key]
        if not missing:
            return
        root = _shared_root(self._factory)

        def make(item: tuple[tuple[object, ...], Configuration]) -> Exploration:
            return _shared_exploration(root, *item)

        # Workers, not a Pool: a worker that dies fails this test at once (WorkerLost) instead of
        # leaving it to wait for a task the Pool forgot (checker/forked.py).
        made = Workers(make, [(key, (key, configuration)) for key, configuration in missing.items()],
                       min(workers, len(missing)))
        try:
            for key in missing:
                self._remember(key, made.answer(key))
        finally:
            made.close()


def _shared_exploration(root: Path | None, key: tuple[object, ...],
                        configuration: Configuration) -> Exploration:
    """The exploration of ``configuration`` (whose memo key is ``key``), made once in the session."""
    name, bounds, options = configuration

    def make() -> Exploration:
        result = explore(name, bounds, options)
        result.all_transitions = ()  # the chart's methods: a reader compiles the chart itself
        return result

    digest = hashlib.sha256(repr(key).encode()).hexdigest()[:16]
    explored: Exploration = _computed_once_in(root, f"exploration-{digest}", make)
    return explored
