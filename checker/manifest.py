"""The explorer's manifest: what each machine's default exploration must find.

Like tlaplus/Examples' manifest.json, ``checker/manifest.json`` records per
machine the default bounds, the distinct-state and transition counts, and
which properties are expected to fail (the findings' properties). A change to
a model that alters any of them fails the check until the manifest is
deliberately updated (``inboxspec explore MACHINE --json`` prints the figures).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from inboxspec.checker.explore import MACHINES, Exploration, explore


def load_manifest() -> dict[str, Any]:
    text = resources.files("inboxspec.checker").joinpath("manifest.json").read_text(encoding="utf-8")
    manifest: dict[str, Any] = json.loads(text)
    return manifest


def check_manifest() -> tuple[list[str], dict[str, Exploration]]:
    """Explore every machine at its default bounds; return (problems, explorations)."""
    manifest = load_manifest()
    problems: list[str] = []
    explorations: dict[str, Exploration] = {}
    for name in MACHINES:
        entry = manifest.get(name)
        if entry is None:
            problems.append(f"{name}: no manifest entry")
            continue
        result = explore(name, entry.get("bounds", {}))
        explorations[name] = result
        for key, actual in (("distinct_states", result.states), ("transitions", result.transitions),
                            ("max_depth", result.max_depth)):
            if entry[key] != actual:
                problems.append(f"{name}: {key} is {actual}, the manifest says {entry[key]}")
        expected = sorted(entry["expected_failures"])
        if sorted(result.violations) != expected:
            problems.append(f"{name}: violated {sorted(result.violations)}, "
                            f"the manifest expects {expected}")
        uncovered = len(result.all_transitions) - len(result.coverage)
        if entry.get("uncovered_transitions_at_default", 0) != uncovered:
            problems.append(f"{name}: {uncovered} chart transitions unreachable by default, "
                            f"the manifest says {entry.get('uncovered_transitions_at_default', 0)}")
    for name in sorted(set(manifest) - set(MACHINES)):
        problems.append(f"{name}: in the manifest but not explorable")
    return problems, explorations
