"""The explorer's manifest: what each machine's default exploration must find.

Like tlaplus/Examples' manifest.json, each machine's manifest file (its
registry entry's ``manifest``, under ``checker/manifests/``) records the
default bounds, the distinct-state and transition counts, the depth, which
properties are expected to fail (the findings' properties, and the
forever-properties that have a cycle, for machines that declare any) and how many chart
transitions the default bounds leave unreached. A change to a model that
alters any of them fails the check until the manifest is deliberately
updated: ``inboxspec explore MACHINE --write-manifest`` writes the figures.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any

from inboxspec import machines
from inboxspec.checker.explore import Configuration, Exploration, Explorations
from inboxspec.conformance.casefiles import linked_directory
from inboxspec.conformance.reportfile import write_atomically
from inboxspec.machines.frame import Machine

# The most bytes a manifest holds: each is a few hundred.
MAX_MANIFEST_BYTES = 1 << 20


# The counts a manifest records, each an integer of 0 or more.
# WARNING: ``manifest_row`` writes them; tests/test_manifest_files.py checks that it writes each as one.
COUNTS = ("distinct_states", "transitions", "max_depth", "uncovered_transitions_at_default")


class ManifestError(ValueError):
    """A manifest that is no regular file of JSON in the manifest's shape: a checkout may hold anything
    (a FIFO there hung ``explore``, a link to /dev/zero filled its memory, a bound count written as text
    ended it in a TypeError traceback)."""


def load_manifest(entry: Machine) -> dict[str, Any] | None:
    """The machine's manifest, or None where it has none; ManifestError, naming the file, for one that
    cannot be read as a manifest (read as case files are: a regular file, no link followed, bounded)."""
    from inboxspec.conformance.casefiles import CaseFileError, read_regular_file

    if not os.path.lexists(entry.manifest):
        return None
    try:
        manifest = json.loads(read_regular_file(entry.manifest, "a manifest", MAX_MANIFEST_BYTES))
    except CaseFileError as error:  # it names the file
        raise ManifestError(str(error)) from None
    except ValueError as error:  # not UTF-8, or not JSON
        raise ManifestError(f"{entry.manifest}: {error}") from None
    if not isinstance(manifest, dict):
        raise ManifestError(f"{entry.manifest}: not a manifest: an object")
    bounds = manifest.get("bounds", {})
    # Each bound as the command line gives it, text (``manifest_row``): a number there ended explore
    # and check in a TypeError traceback (found by the attack on the fixes).
    if not isinstance(bounds, dict) or not all(isinstance(value, str) for value in bounds.values()) or any(
            key in manifest and (type(manifest[key]) is not int or manifest[key] < 0) for key in COUNTS):
        raise ManifestError(f"{entry.manifest}: not a manifest: an object whose bounds are an object of "
                            f"texts and whose {', '.join(COUNTS)} are integers of 0 or more")
    return manifest


def sized_configurations(bounds_of: Callable[[dict[str, Any]], Mapping[str, str]]
                         ) -> list[tuple[int, Configuration]]:
    """Each registered machine's explorations that the findings read: at ``bounds_of(its manifest)``
    (``{}`` for a machine with none), and at its default bounds with each option on; each with its
    manifest's distinct-state count, by which ``check`` and ``findings`` start the largest first."""
    sized: list[tuple[int, Configuration]] = []
    for entry in machines.all_machines():
        try:
            manifest = load_manifest(entry) or {}
        except ManifestError:  # explored at the default bounds; ``check_manifest`` names the problem
            manifest = {}
        size = int(manifest.get("distinct_states", 0))
        sized.append((size, (entry.name, bounds_of(manifest), {})))
        sized += [(size, (entry.name, {}, {option: True})) for option in entry.explorer.options]
    return sized


def manifest_row(result: Exploration, bounds: dict[str, str]) -> dict[str, Any]:
    return {
        "bounds": bounds,
        "distinct_states": result.states,
        "transitions": result.transitions,
        "max_depth": result.max_depth,
        "expected_failures": sorted(result.violations),
        "uncovered_transitions_at_default": len(result.all_transitions) - len(result.coverage),
        # Only machines with forever-properties carry this key, so the others' manifests stay as they were.
        **({"forever_failures": sorted(result.lassos)} if result.forever_checked else {}),
    }


def write_manifest(name: str) -> dict[str, Any]:
    """Explore at the default bounds and write what was found as the machine's manifest."""
    entry = machines.get(name)
    bounds = dict(entry.explorer.default_bounds)
    row = manifest_row(Explorations().get(name, bounds), bounds)
    linked = linked_directory(entry.manifest.parent, entry.manifest)
    if linked is not None:
        raise ManifestError(f"{linked}: a symbolic link or not a directory; no manifest is written there")
    # Replaced, not written through: a link at the manifest's name took the write to its target.
    write_atomically(entry.manifest, (json.dumps(row, indent=2) + "\n").encode("utf-8"))
    return row


def check_manifest(explorations: Explorations | None = None) -> tuple[list[str], dict[str, Exploration]]:
    """Explore every machine at its manifest's bounds; return (problems, explorations)."""
    explorations = explorations or Explorations()
    problems: list[str] = []
    results: dict[str, Exploration] = {}
    for entry in machines.all_machines():
        name = entry.name
        try:
            manifest = load_manifest(entry)
        except ManifestError as error:
            problems.append(f"{name}: {error}")
            continue
        if manifest is None:
            problems.append(f"{name}: no manifest at {entry.manifest} "
                            f"(write it with `inboxspec explore {name} --write-manifest`)")
            continue
        result = explorations.get(name, manifest.get("bounds", {}))
        results[name] = result
        actual = manifest_row(result, manifest.get("bounds", {}))
        for key, value in actual.items():
            if key != "bounds" and manifest.get(key) != value:
                problems.append(f"{name}: {key} is {value}, the manifest says {manifest.get(key)}")
    return problems, results
