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
from collections.abc import Callable, Mapping
from typing import Any

from inboxspec import machines
from inboxspec.checker.explore import Configuration, Exploration, Explorations
from inboxspec.machines.frame import Machine


def load_manifest(entry: Machine) -> dict[str, Any] | None:
    if not entry.manifest.exists():
        return None
    manifest: dict[str, Any] = json.loads(entry.manifest.read_text(encoding="utf-8"))
    return manifest


def sized_configurations(bounds_of: Callable[[dict[str, Any]], Mapping[str, str]]
                         ) -> list[tuple[int, Configuration]]:
    """Each registered machine's explorations that the findings read: at ``bounds_of(its manifest)``
    (``{}`` for a machine with none), and at its default bounds with each option on; each with its
    manifest's distinct-state count, by which ``check`` and ``findings`` start the largest first."""
    sized: list[tuple[int, Configuration]] = []
    for entry in machines.all_machines():
        manifest = load_manifest(entry) or {}
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
    entry.manifest.write_text(json.dumps(row, indent=2) + "\n", encoding="utf-8")
    return row


def check_manifest(explorations: Explorations | None = None) -> tuple[list[str], dict[str, Exploration]]:
    """Explore every machine at its manifest's bounds; return (problems, explorations)."""
    explorations = explorations or Explorations()
    problems: list[str] = []
    results: dict[str, Exploration] = {}
    for entry in machines.all_machines():
        name = entry.name
        manifest = load_manifest(entry)
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
