"""Reads requirement IDs and findings out of the prose spec in ``spec/``.

The spec is Markdown written for people; this module is the one place that
knows its conventions (spec/README.md): a requirement is a list item that
starts with a bold ID, a finding is a level-3 heading ``### MACHINE-FN: title``.
Each machine's document is named by its registry entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from inboxspec import machines

REQUIREMENT = re.compile(r"^\s*- \*\*(?P<id>[A-Z]+(?:-[A-Z0-9]+)+)\*\*", re.MULTILINE)
FINDING = re.compile(r"^### (?P<id>[A-Z]+-F\d+): (?P<title>.+)$", re.MULTILINE)
KEYWORD = re.compile(r"\b(MUST|SHOULD|MAY)\b")

@dataclass(frozen=True)
class Finding:
    id: str
    title: str


def spec_text(document: str) -> str:
    """A document of the spec folder by file name (the protocol pages, say)."""
    return resources.files("inboxspec.spec").joinpath(document).read_text(encoding="utf-8")


def machine_spec_text(machine: str) -> str:
    return machines.spec_document(machine).read_text(encoding="utf-8")


def requirements(machine: str) -> list[str]:
    """The requirement IDs of one machine, in document order."""
    return [m["id"] for m in REQUIREMENT.finditer(machine_spec_text(machine))]


def requirement_texts(text: str) -> dict[str, str]:
    """Each requirement's list item in a spec text, joined onto one line."""
    starts = list(REQUIREMENT.finditer(text))
    items: dict[str, str] = {}
    for match in starts:
        stops = [p for p in (text.find("\n- ", match.end()), text.find("\n\n", match.end())) if p != -1]
        items[match["id"]] = " ".join(text[match.start() : min(stops) if stops else len(text)].split())
    return items


def keyword_problems(text: str) -> list[str]:
    """Requirements that state no RFC 2119 keyword (spec/README.md says each one does)."""
    return [f"{rid} has no MUST, SHOULD or MAY" for rid, item in requirement_texts(text).items()
            if not KEYWORD.search(item)]


def findings(machine: str) -> list[Finding]:
    text = machine_spec_text(machine)
    return [Finding(m["id"], m["title"].strip()) for m in FINDING.finditer(text)]
