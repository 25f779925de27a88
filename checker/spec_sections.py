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

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inboxspec import machines
from inboxspec.spec import interface_tables, machine_files

MARKER = re.compile(
    r"(<!-- BEGIN GENERATED: (?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)(<!-- END GENERATED: (?P=name) -->)",
    re.DOTALL,
)


@dataclass(frozen=True)
class Drift:
    document: Path
    section: str


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


def sections(findings: list[Any] | None = None) -> dict[str, str]:
    """Every generated section; ``findings`` may be passed in when already computed."""
    from inboxspec.checker.findings import check_findings, render_markdown

    generated: dict[str, str] = {}
    findings = check_findings() if findings is None else findings
    for entry in machines.all_machines():
        name = entry.name
        generated[f"{name}-diagram"] = "```mermaid\n" + format(entry.chart, "mermaid") + "```\n"
        generated[f"{name}-table"] = transition_table(name)
        generated[f"{name}-findings"] = render_markdown(findings, name)
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
    def replace(match: re.Match[str]) -> str:
        body = generated.get(match["name"], match["body"])
        return match.group(1) + body + match.group(4)

    return MARKER.sub(replace, text)


def generate(directory: Path | None = None, *, write: bool,
             findings: list[Any] | None = None) -> list[Drift]:
    """Compare (and with ``write``, rewrite) every machine's document; return what drifted.

    ``directory`` replaces the folder of every document (a copy of ``spec/``,
    say); the documents it does not hold are left out.
    """
    drifts: list[Drift] = []
    entries = machines.all_machines()
    if directory is not None:
        entries = [e for e in entries if (directory / e.spec.name).exists()]
    with machines.only(e.name for e in entries):
        # Only the machines whose documents are written are explored for their findings.
        generated = sections(findings)
    documents = [entry.spec if directory is None else directory / entry.spec.name for entry in entries]
    for document in sorted(documents):
        text = document.read_text(encoding="utf-8")
        new = render(text, generated)
        if new != text:
            drifts.extend(
                Drift(document, m["name"])
                for m in MARKER.finditer(text)
                if m["body"] != generated.get(m["name"], m["body"])
            )
            if write:
                document.write_text(new, encoding="utf-8")
    if directory is None:
        for copy, text in sorted(port_interface_copies().items()):
            if not copy.is_file() or copy.read_text(encoding="utf-8") != text:
                drifts.append(Drift(copy, "interface data copy"))
                if write:
                    copy.parent.mkdir(exist_ok=True)
                    copy.write_text(text, encoding="utf-8")
    return drifts
