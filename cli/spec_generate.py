"""Writes the generated sections of ``spec/`` from the model charts.

Diagrams and transition tables come from python-statemachine's own
formatters (``format(Chart, "mermaid")`` and ``format(Chart, "md")``), so the
spec cannot show a machine other than the one the tests run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from inboxspec.model.wake_gate import WakeGateChart

CHARTS = {
    "wake-gate": WakeGateChart,
}

MARKER = re.compile(
    r"(<!-- BEGIN GENERATED: (?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)(<!-- END GENERATED: (?P=name) -->)",
    re.DOTALL,
)


@dataclass(frozen=True)
class Drift:
    document: Path
    section: str


def spec_dir() -> Path:
    return Path(str(resources.files("inboxspec.spec")))


def sections(findings: list[Any] | None = None) -> dict[str, str]:
    """Every generated section; ``findings`` may be passed in when already computed."""
    from inboxspec.checker.findings import check_findings, render_markdown

    generated: dict[str, str] = {}
    findings = check_findings() if findings is None else findings
    for machine, chart in CHARTS.items():
        generated[f"{machine}-diagram"] = "```mermaid\n" + format(chart, "mermaid") + "```\n"
        generated[f"{machine}-table"] = format(chart, "md")
        generated[f"{machine}-findings"] = render_markdown(findings, machine)
    return generated


def render(text: str, generated: dict[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        body = generated.get(match["name"], match["body"])
        return match.group(1) + body + match.group(4)

    return MARKER.sub(replace, text)


def generate(directory: Path | None = None, *, write: bool,
             findings: list[Any] | None = None) -> list[Drift]:
    """Compare (and with ``write``, rewrite) every document; return what drifted."""
    drifts: list[Drift] = []
    generated = sections(findings)
    for document in sorted((directory or spec_dir()).glob("*.md")):
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
    return drifts
