"""Writes the generated sections of each machine's spec document from its model.

Diagrams come from python-statemachine's own formatter (``format(Chart,
"mermaid")``), so the spec cannot show a machine other than the one the
tests run. The transition table is read from the compiled chart, h2-style:
each row names the guards and actions that decide it and the requirements
their docstrings cite, so every row says which rule justifies it. The
Interface tables come from the machine's interface data
(``spec/interface_tables.py``), and the list of a machine's files that ends
its spec from the registry and the tree (``spec/machine_files.py``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inboxspec import machines
from inboxspec.conformance.reportfile import write_atomically
from inboxspec.spec import interface_tables, machine_files

# Every marker, a section's BEGIN (ending its line) or its END: a document is read in one pass over
# them (``marked_sections``), so that a marker without its partner is found, not skipped, and many
# markers cost no more than their text (a pattern pairing each BEGIN with its END rescanned the rest of
# the document for each: 32,000 lone BEGIN markers took minutes).
MARKER = re.compile(r"<!-- (?P<kind>BEGIN|END) GENERATED: (?P<name>[a-z0-9-]+) -->")

# The largest spec document read; the largest here is well under a tenth of it.
MAX_DOCUMENT_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Drift:
    document: Path
    section: str


@dataclass(frozen=True)
class Section:
    """One generated section of a document: its name, and where its body starts and ends."""

    name: str
    start: int  # just past its BEGIN marker's line
    end: int  # where its END marker starts

    def body(self, text: str) -> str:
        return text[self.start:self.end]


class BrokenMarkers(ValueError):
    """A document's generated-section markers do not pair up: a BEGIN without its END, an END
    without its BEGIN, a section inside another, a name twice, or a BEGIN not alone at its line's end."""


class UnreadableDocument(ValueError):
    """A spec document that is not a regular UTF-8 text file of at most MAX_DOCUMENT_BYTES."""


def marked_sections(text: str) -> list[Section]:
    """The generated sections of ``text``, in order; BrokenMarkers when the markers do not pair up."""
    found: list[Section] = []
    names: set[str] = set()
    open_name: str | None = None
    start = 0
    for match in MARKER.finditer(text):
        name = match["name"]
        if match["kind"] == "BEGIN":
            if open_name is not None:
                raise BrokenMarkers(f"BEGIN {name} inside section {open_name}, which has no END before it")
            if not text.startswith("\n", match.end()):
                raise BrokenMarkers(f"BEGIN {name} is not alone at the end of its line")
            if name in names:
                raise BrokenMarkers(f"section {name} appears twice")
            open_name, start = name, match.end() + 1
        else:
            if open_name != name:
                raise BrokenMarkers(f"END {name} without its BEGIN"
                                    + (f" (inside section {open_name})" if open_name else ""))
            found.append(Section(name, start, match.start()))
            names.add(name)
            open_name = None
    if open_name is not None:
        raise BrokenMarkers(f"BEGIN {open_name} has no END")
    return found


def transition_table(name: str) -> str:
    """One row per chart transition, in document order, with the requirements behind it."""
    from inboxspec.checker.explore import compiled_chart
    from inboxspec.checker.generated_cases import requirements_of

    rows = ["| State | Event | Guard | Action | Target | Requirements |",
            "|---|---|---|---|---|---|"]
    for transition in compiled_chart(name).transitions:
        guards = " and ".join(("" if g.expected else "not ") + g.function.__name__ for g in transition.guards)
        actions = ", ".join(a.function.__name__ for a in transition.actions)
        rows.append(f"| {transition.source} | {transition.event} | {guards or '(always)'} | {actions} "
                    f"| {transition.target} | {', '.join(requirements_of(transition)) or '(none)'} |")
    return "\n".join(rows) + "\n"


def sections(findings: list[Any] | None = None, explorations: Any = None) -> dict[str, str]:
    """Every generated section; ``findings`` may be passed in when already computed, and the
    ``Explorations`` they were computed from (which hold the lassos the findings sections show)."""
    from inboxspec.checker.explore import Explorations
    from inboxspec.checker.findings import check_findings, render_markdown

    generated: dict[str, str] = {}
    explorations = Explorations() if explorations is None else explorations
    findings = check_findings(explorations) if findings is None else findings
    for entry in machines.all_machines():
        name = entry.name
        generated[f"{name}-diagram"] = "```mermaid\n" + format(entry.chart, "mermaid") + "```\n"
        generated[f"{name}-table"] = transition_table(name)
        generated[f"{name}-findings"] = render_markdown(findings, name, explorations)
        if entry.interface is not None:
            generated.update(interface_tables.sections(entry.interface))
        # Outside a checkout (an installed package) the list keeps its written text.
        if machine_files.in_checkout(entry):
            generated[f"{name}-files"] = machine_files.section(entry)
    return generated


def port_interface_copies() -> dict[Path, str]:
    """The Node port's copies of the interface data (it ships them in its npm package)."""
    from inboxspec.machines.interface import interface_text

    copies: dict[Path, str] = {}
    for entry in machines.all_machines():
        if entry.interface is not None:
            port = entry.spec.parent.parent / "conformance" / "ports" / "node" / "interface"
            copies[port / f"{entry.name}.interface.json"] = interface_text(entry.name)
    return copies


def render(text: str, generated: dict[str, str]) -> str:
    """``text`` with the body of each generated section it marks replaced (BrokenMarkers, see
    ``marked_sections``); a section ``generated`` does not name keeps its body."""
    pieces, at = [], 0
    for section in marked_sections(text):
        pieces += [text[at:section.start], generated.get(section.name, section.body(text))]
        at = section.end
    return "".join([*pieces, text[at:]])


def read_document(document: Path) -> str:
    """A spec document's text, read as case files are (a regular file, no link followed, at most
    MAX_DOCUMENT_BYTES, UTF-8): a FIFO hung ``spec generate``, /dev/zero filled its memory."""
    from inboxspec.conformance.casefiles import CaseFileError, read_regular_file

    try:
        return read_regular_file(document, "a spec document", MAX_DOCUMENT_BYTES).decode("utf-8")
    except (CaseFileError, UnicodeDecodeError) as error:
        raise UnreadableDocument(f"{document}: {error}") from None


def interface_copy_drifts(copies: dict[Path, str], *, write: bool) -> list[Drift]:
    """Each copy of the interface data (``port_interface_copies``: a path and its text) that differs, and
    with ``write`` rewritten. Read as a document is, and replaced, never written through: a link there
    had the write go to its target, outside the tree (found by an attack on the commands)."""
    from inboxspec.conformance.casefiles import linked_directory

    drifts: list[Drift] = []
    for copy, text in sorted(copies.items()):
        try:
            current: str | None = read_document(copy) if os.path.lexists(copy) else None
        except UnreadableDocument:
            current = None  # a link, a FIFO: not the copy, which the write replaces
        if current == text:
            continue
        drifts.append(Drift(copy, "interface data copy"))
        if write:
            linked = linked_directory(copy.parent.parent, copy)
            if linked is not None:
                raise UnreadableDocument(f"{linked}: a symbolic link or not a directory; no interface data "
                                         "copy is written there")
            copy.parent.mkdir(exist_ok=True)
            write_atomically(copy, text.encode("utf-8"))
    return drifts


def generate(directory: Path | None = None, *, write: bool,
             findings: list[Any] | None = None, explorations: Any = None) -> list[Drift]:
    """Compare (and with ``write``, rewrite) every machine's document; return what drifted.

    ``directory`` replaces the folder of every document (a copy of ``spec/``,
    say); the documents it does not hold are left out.
    """
    drifts: list[Drift] = []
    entries = machines.all_machines()
    if directory is not None:
        entries = [e for e in entries if os.path.lexists(directory / e.spec.name)]
        if not entries:
            raise UnreadableDocument(f"{directory}: holds no machine's spec document (such as "
                                     f"{machines.all_machines()[0].spec.name})")
    with machines.only(e.name for e in entries):
        # Only the machines whose documents are written are explored for their findings.
        generated = sections(findings, explorations)
    documents = [entry.spec if directory is None else directory / entry.spec.name for entry in entries]
    for document in sorted(documents):
        text = read_document(document)
        try:
            marked = marked_sections(text)
        except BrokenMarkers as error:  # not rewritten: which text is the section's is unknown
            drifts.append(Drift(document, f"generated-section markers: {error}"))
            continue
        new = render(text, generated)
        if new != text:
            drifts.extend(Drift(document, m.name) for m in marked
                          if m.body(text) != generated.get(m.name, m.body(text)))
            if write:
                write_atomically(document, new.encode("utf-8"))
    if directory is None:
        drifts += interface_copy_drifts(port_interface_copies(), write=write)
    return drifts
