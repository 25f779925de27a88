"""Filesystem fixtures for the runner: laid out inside a private root, shared where nothing changes them.

The tree format, its validation and its lay-out live in ``machines/fixtures.py`` (the in-process
drivers need them too); this module adds the runner's pool (PROTO-FIX-1, PROTO-FIX-4):

- a case that can change its fixture (a ``swap_paths`` step, or any case of a machine that does not
  say which of its events change fixtures) gets a fresh directory for every ``run`` request;
- a case that cannot change it gets the directory laid out for the same content by an earlier case,
  after checking that the tree's fingerprint (every entry's inode, mode, size, link count, change
  and modification times, walked without following links) is the one taken right after lay-out.
  A tree that an adapter changed anyway is set aside (removed with the pool: a case still in
  flight may hold it) and laid out afresh, so a case never sees another case's changes through a
  shared directory that it was handed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inboxspec.conformance import warden
from inboxspec.machines.fixtures import (
    DIRECTORY_MODE,
    PLACEHOLDER,
    SPECIAL_BITS_REQUIREMENTS,
    Fingerprint,
    FixtureError,
    FixtureRoot,
    FixtureTimeout,
    Tree,
    fingerprint,
    fingerprints,
    fixture_problems,
    materialise,
    materialised,
    may_change,
    remembered_fixture_problems,
    remove,
    swap,
    undo,
)

__all__ = [
    "DIRECTORY_MODE",
    "PLACEHOLDER",
    "SPECIAL_BITS_REQUIREMENTS",
    "FixtureError",
    "FixturePool",
    "FixtureTimeout",
    "fixture_problems",
    "materialise",
    "materialised",
    "may_change",
    "remembered_fixture_problems",
    "remove",
    "swap",
    "undo",
]


@dataclass
class _Lent:
    """A directory handed to a case that changes it, to be restored when the case is answered."""

    key: str
    directory: str
    restore: Callable[[Tree], None]
    content: Fingerprint  # fingerprint(directory, times=False) as laid out


class FixturePool:
    """The runner's fixture directories, all inside one private root removed by :meth:`close`."""

    def __init__(self) -> None:
        # The root is told to the run's warden, which removes it if the runner is KILLed.
        self.root = FixtureRoot(made=warden.fixture_root_made)
        self.directories: list[Path] = []  # every directory laid out and not yet removed
        self._shared: dict[str, tuple[str, Fingerprint]] = {}  # content key -> directory, fingerprint
        self._spares: dict[str, list[tuple[str, Fingerprint, Fingerprint]]] = {}  # restored trees
        self._lent: dict[int, _Lent] = {}  # by seq: trees that cases may be changing
        # By seq: fresh trees of cases that may change them and have no certain undo, removed when
        # the case is done with (``release``).
        self._fresh: dict[int, str] = {}
        self.laid_out = 0  # directories laid out, for the benchmark and the tests
        self.reused = 0

    @staticmethod
    def _key(fixture: Mapping[str, Any]) -> str:
        # Computed for every request, never cached by object: a fixture changed in place after an
        # earlier request must not be handed that request's directory.
        return json.dumps(fixture, sort_keys=True, ensure_ascii=True)

    def _lay_out(self, fixture: Mapping[str, Any], deadline: float | None) -> str:
        directory = self.root.lay_out(fixture, deadline=deadline)
        self.directories.append(Path(directory))
        self.laid_out += 1
        return directory

    def _unchanged(self, directory: str, taken: Fingerprint, *, in_flight: bool = False) -> bool:
        """Whether ``directory`` is as its fingerprint ``taken`` says; a changed one is removed, or
        only set aside when a case still ``in_flight`` may hold it (a shared directory: the runner
        sends cases ahead of their answers, PROTO-RUN-3): removing it would pull the tree from under
        that case, which an adapter changing its shared tree made error, at random."""
        try:
            unchanged = fingerprint(directory) == taken
        except OSError:
            unchanged = False
        if unchanged:
            self.reused += 1
        elif not in_flight:
            self._discard(directory)
        return unchanged

    @staticmethod
    def _fingerprint(directory: str, *, times: bool = True) -> Fingerprint:
        try:
            return fingerprint(directory, times=times)
        except OSError as error:
            raise FixtureError(f"fixture directory {directory!r} could not be read back: {error}") from None

    def _discard(self, directory: str) -> None:
        self.root.discard(directory)
        self.directories.remove(Path(directory))

    def directory_for(self, fixture: Mapping[str, Any], *, shared: bool = False,
                      deadline: float | None = None, lend_to: int | None = None,
                      restore: Callable[[Tree], None] | None = None) -> str:
        """A directory holding ``fixture``. Raises FixtureError, or FixtureTimeout when ``deadline``
        (``time.monotonic()``) passes during lay-out.

        - ``shared``: for a case that cannot change it; the directory an earlier case with the same
          content was handed, if it is untouched since it was laid out;
        - ``lend_to`` and ``restore``: for the case sent as that seq, which may change it; a tree
          restored after an earlier case, if there is one, untouched since; :meth:`release` then
          restores it with ``restore`` once the case is answered;
        - otherwise: a fresh directory; given ``lend_to``, :meth:`release` removes it once that case
          is done with.

        A ``lend_to`` seq that already holds a tree (a case sent again after a restart, whose
        adapter has ended) gives that tree back first, as :meth:`release` does.
        """
        if lend_to is not None:
            self.release(lend_to)
        if shared:
            key = self._key(fixture)
            held = self._shared.pop(key, None)
            if held is None or not self._unchanged(*held, in_flight=True):
                directory = self._lay_out(fixture, deadline)
                held = (directory, self._fingerprint(directory))
            self._shared[key] = held
            return held[0]
        if lend_to is None or restore is None:
            directory = self._lay_out(fixture, deadline)
            if lend_to is not None:
                self._fresh[lend_to] = directory
            return directory
        key = self._key(fixture)
        spares = self._spares.get(key, [])
        while spares:
            directory, content, taken = spares.pop()
            if self._unchanged(directory, taken):
                break
        else:
            directory = self._lay_out(fixture, deadline)
            content = self._fingerprint(directory, times=False)
        self._lent[lend_to] = _Lent(key, directory, restore, content)
        return directory

    def release(self, seq: int) -> None:
        """The case sent as ``seq`` is done with (answered, or blamed and its adapter ended): a fresh
        tree of its own is removed at once (PROTO-FIX-1: kept to the end of the run, a case file of
        many such cases held cases times fixture bytes on disk, 2 GB for an 8 MB file); a tree it was
        lent has its changes undone, and is kept for the next case with the same content if it is
        then as laid out (PROTO-FIX-4), else removed."""
        fresh = self._fresh.pop(seq, None)
        if fresh is not None:
            self._discard(fresh)
        lent = self._lent.pop(seq, None)
        if lent is None:
            return
        try:
            # Undone and read back through a descriptor of the tree laid out, opened through the checked
            # root: by the path, a root replaced meanwhile sent the undo's renames into whatever stands
            # at its name (found by an attack helper).
            tree = self.root.opened_tree(lent.directory)
        except FixtureError:
            # Replaced, or not the tree laid out: it goes with the root at the end of the run
            # (``FixtureRoot.close``).
            self.directories.remove(Path(lent.directory))
            return
        try:
            lent.restore(tree)
            taken, content = fingerprints(tree)  # one walk: no write slips in between
            restored = content == lent.content
        except OSError:
            restored = False
        finally:
            os.close(tree)
        if restored:
            self._spares.setdefault(lent.key, []).append((lent.directory, lent.content, taken))
        else:
            self._discard(lent.directory)

    def close(self) -> None:
        """Remove every directory; the pool can be used again afterwards."""
        self.root.close()
        self.directories.clear()
        self._shared.clear()
        self._spares.clear()
        self._lent.clear()
        self._fresh.clear()
