"""Reads requirement IDs and findings out of the prose spec in ``spec/``.

The spec is Markdown written for people; this module is the one place that
knows its conventions (spec/README.md): a requirement is a list item that
starts with a bold ID, a finding is a level-3 heading ``### MACHINE-FN: title``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

REQUIREMENT = re.compile(r"^\s*- \*\*(?P<id>[A-Z]+(?:-[A-Z0-9]+)+)\*\*", re.MULTILINE)
FINDING = re.compile(r"^### (?P<id>[A-Z]+-F\d+): (?P<title>.+)$", re.MULTILINE)
KEYWORD = re.compile(r"\b(MUST|SHOULD|MAY)\b")

# Machine name (as used in case files) -> spec document.
SPEC_DOCUMENTS = {
    "wake-gate": "wake-gate.md",
}


@dataclass(frozen=True)
class Finding:
    id: str
    title: str


def spec_text(document: str) -> str:
    return resources.files("inboxspec.spec").joinpath(document).read_text(encoding="utf-8")


def requirements(machine: str) -> list[str]:
    """The requirement IDs of one machine, in document order."""
    return [m["id"] for m in REQUIREMENT.finditer(spec_text(SPEC_DOCUMENTS[machine]))]


def requirement_texts(machine: str) -> dict[str, str]:
    """Each requirement's list item, joined onto one line (for keyword checks)."""
    text = spec_text(SPEC_DOCUMENTS[machine])
    starts = list(REQUIREMENT.finditer(text))
    items: dict[str, str] = {}
    for match in starts:
        end = text.find("\n- ", match.end())
        blank = text.find("\n\n", match.end())
        stops = [p for p in (end, blank) if p != -1]
        body = text[match.start() : min(stops) if stops else len(text)]
        items[match["id"]] = " ".join(body.split())
    return items


def findings(machine: str) -> list[Finding]:
    text = spec_text(SPEC_DOCUMENTS[machine])
    return [Finding(m["id"], m["title"].strip()) for m in FINDING.finditer(text)]


def all_requirements() -> dict[str, list[str]]:
    return {machine: requirements(machine) for machine in SPEC_DOCUMENTS}
