"""The README's walkthrough of a lasso (``How to read a lasso``) is HOST-F1's lasso as the explorer
finds it today and prints it (its readable form, ``frame.readable_trace``): the README copies the
printed lines, each step's output cut down to its events and each event to the fields the walkthrough
reads (``SHOWN_FIELDS``), and this test makes that copy from the exploration and compares it, so the
walkthrough cannot drift from the machine it explains."""

from __future__ import annotations

import json
import re
from pathlib import Path

from inboxspec import machines
from inboxspec.checker.explore import Explorations
from inboxspec.checker.traces import lasso_lines
from inboxspec.machines.frame import readable_trace

README = Path(__file__).resolve().parent.parent / "README.md"
PROPERTY = "no_forged_cadence_forever"
# WARNING: the README's sentence before the block names these fields; change both together.
SHOWN_FIELDS = ("type", "session", "to", "lane", "counts_against_cap", "claimed_from", "state")


def _walkthrough_block() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("#### How to read a lasso"):]
    block = re.search(r"```\n(.*?)```", section, re.S)
    assert block is not None, "the walkthrough's lasso block"
    return block.group(1).rstrip("\n").split("\n")


def _shown(output: dict[str, object] | None) -> str:
    events = [] if output is None else output.get("events", [])
    assert isinstance(events, list)
    return json.dumps([{key: event[key] for key in SHOWN_FIELDS if key in event} for event in events])


def test_the_readme_walks_through_the_lasso_the_explorer_finds(explorations: Explorations) -> None:
    default = explorations.get("host")
    lasso = default.lassos[PROPERTY]
    steps = readable_trace(machines.get("host").explorer, [*lasso.prefix, *lasso.loop],
                           default.bounds, default.options).steps
    first = len(lasso.prefix) + 1
    lines = [f"expected failure: {PROPERTY}; lasso (shortest prefix, then a loop):"]
    lines += [f"{n:>3}. {action.label:<26}  -> events {_shown(output)}"
              for n, (_pre, action, _post, output) in enumerate(steps, start=1)]
    # The loop's two marker lines as the explorer prints them.
    printed = lasso_lines(machines.get("host").explorer, lasso.prefix, lasso.loop, default.bounds,
                          default.options)
    lines.insert(first, printed[first - 1])
    lines.append(printed[-1])
    assert _walkthrough_block() == lines
    # The sentence before the block says which fields are kept (its line breaks read as spaces).
    sentence = ", ".join(f"`{field}`" for field in SHOWN_FIELDS[:-1]) + f" and `{SHOWN_FIELDS[-1]}`"
    assert sentence in " ".join(README.read_text(encoding="utf-8").split())
