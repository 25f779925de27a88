"""Filesystem fixtures for the runner: laid out inside a private root, shared where nothing changes them.

The tree format, its validation and its lay-out live in ``machines/fixtures.py`` (the in-process
drivers need them too); this module adds the runner's pool (PROTO-FIX-1, PROTO-FIX-4):

- a case that can change its fixture (a ``swap_paths`` step, or any case of a machine that does not
  say which of its events change fixtures) gets a fresh directory for every ``run`` request;
- a case that cannot change it gets the directory laid out for the same content by an earlier case,
  after checking that the tree's fingerprint (every entry's inode, mode, size, link count, change
  and modification times, walked without following links) is the one taken right after lay-out.
  A tree that an adapter changed anyway is discarded and laid out afresh, so a case never sees
  another case's changes through a shared directory that it was handed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inboxspec.machines.fixtures import (
    DIRECTORY_MODE,
    PLACEHOLDER,
    SPECIAL_BITS_REQUIREMENTS,
    Fingerprint,
    FixtureError,
    FixtureRoot,
    FixtureTimeout,
    fingerprint,
    fixture_problems,
    materialise,
    materialised,
    may_change,
    remove,
    swap,
)

__all__ = ["DIRECTORY_MODE", "PLACEHOLDER", "SPECIAL_BITS_REQUIREMENTS", "FixtureError", "FixturePool",
           "FixtureTimeout", "fixture_problems", "materialise", "materialised", "may_change", "remove",
           "swap"]


class FixturePool:
    """The runner's fixture directories, all inside one private root removed by :meth:`close`."""

    def __init__(self) -> None:
        self.root = FixtureRoot()
        self.directories: list[Path] = []  # every directory handed out and not yet removed
        self._shared: dict[str, tuple[str, Fingerprint]] = {}  # content key -> directory, fingerprint
        self._keys: dict[int, tuple[Mapping[str, Any], str]] = {}  # id(fixture) -> (fixture, key)
        self.laid_out = 0  # directories laid out, for the benchmark and the tests
        self.reused = 0

    def _key(self, fixture: Mapping[str, Any]) -> str:
        # Case files share one fixture object among the cases that reference it, so the canonical
        # text is computed once per object (the object is held, so its id is not reused).
        known = self._keys.get(id(fixture))
        if known is not None and known[0] is fixture:
            return known[1]
        key = json.dumps(fixture, sort_keys=True, ensure_ascii=True)
        self._keys[id(fixture)] = (fixture, key)
        return key

    def _lay_out(self, fixture: Mapping[str, Any], deadline: float | None) -> str:
        directory = self.root.lay_out(fixture, deadline=deadline)
        self.directories.append(Path(directory))
        self.laid_out += 1
        return directory

    def directory_for(self, fixture: Mapping[str, Any], *, shared: bool = False,
                      deadline: float | None = None) -> str:
        """A directory holding ``fixture``: fresh, or with ``shared`` one that an earlier case with
        the same content was handed and that is still unchanged. Raises FixtureError, or
        FixtureTimeout when ``deadline`` (``time.monotonic()``) passes during lay-out."""
        if not shared:
            return self._lay_out(fixture, deadline)
        key = self._key(fixture)
        held = self._shared.get(key)
        if held is not None:
            directory, taken = held
            try:
                unchanged = fingerprint(directory) == taken
            except OSError:
                unchanged = False
            if unchanged:
                self.reused += 1
                return directory
            del self._shared[key]
            self.root.discard(directory)
        directory = self._lay_out(fixture, deadline)
        self._shared[key] = (directory, fingerprint(directory))
        return directory

    def close(self) -> None:
        """Remove every directory; the pool can be used again afterwards."""
        self.root.close()
        self.directories.clear()
        self._shared.clear()
        self._keys.clear()
