"""The inbox source over a real directory: what the seed imports but does not show.

spec/inbox-refresh.md (*The inbox source*) defines it minimally; this is that
definition on a filesystem. A memory base holds

- ``policy.json``: ``{"revision": int, "deny": [str, ...]}``, the policy
  revision and the screening deny list;
- ``inbox/*.json``: one candidate record per file, an object with string
  ``id``, ``title``, ``detail`` and ``at``.

The *sources* are ``(version, layout)``: ``version`` fingerprints every
record's name, size and modification time (an edit changes it), ``layout``
fingerprints the set of record names and the policy file (adding or removing a
record, or changing the policy, is a hard change).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

from .inbox_refresh import (
    DEFAULT_MAX_ITEMS,
    OVERFLOW_ID,
    SourceChange,
    SourceUnreadable,
    compare_sources,
    screening_declines,
)

Sources = tuple[str, str]


def _digest(parts: list[str]) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


def read_sources(base: Path) -> Sources:
    """The tracker's version of the inbox's inputs; raises SourceUnreadable."""
    try:
        inbox = base / "inbox"
        names = sorted(p.name for p in inbox.iterdir() if p.suffix == ".json") if inbox.exists() else []
        stats = [os.stat(inbox / n) for n in names]
        policy = os.stat(base / "policy.json") if (base / "policy.json").exists() else None
    except OSError as error:
        raise SourceUnreadable() from error
    version = _digest([f"{n}:{s.st_size}:{s.st_mtime_ns}" for n, s in zip(names, stats, strict=True)])
    layout = _digest([*names, f"policy:{policy.st_size}:{policy.st_mtime_ns}" if policy else "policy:none"])
    return (version, layout)


def read_policy(base: Path) -> tuple[int, tuple[str, ...]]:
    try:
        path = base / "policy.json"
        raw: Any = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"revision": 0}
    except (OSError, ValueError) as error:
        raise SourceUnreadable() from error
    revision, deny = raw.get("revision", 0), raw.get("deny", [])
    if type(revision) is not int or not isinstance(deny, list) or not all(isinstance(d, str) for d in deny):
        raise SourceUnreadable()
    return revision, tuple(d for d in deny if d)


class DirectorySource:
    """The cache's :class:`~inboxspec.impl.inbox_refresh.InboxSource` over a memory base."""

    def __init__(self, base: Path) -> None:
        self.base = Path(base)

    def policy_revision(self) -> Hashable:
        return read_policy(self.base)[0]

    def source_change(self, remembered: Hashable) -> SourceChange:
        return compare_sources(remembered, read_sources(self.base))

    def declines(self, item: Mapping[str, Any]) -> bool:
        return screening_declines(item, read_policy(self.base)[1])


def compute_inbox(base: Path, max_items: int = DEFAULT_MAX_ITEMS) -> dict[str, Any]:
    """The worker's computation: the records in id order, bounded, with an overflow hint."""
    revision, _deny = read_policy(base)
    inbox = base / "inbox"
    records: list[dict[str, Any]] = []
    for path in sorted(inbox.glob("*.json")) if inbox.exists() else []:
        raw = json.loads(path.read_text(encoding="utf-8"))
        fields = ("id", "title", "detail", "at")
        if isinstance(raw, dict) and all(isinstance(raw.get(k), str) for k in fields):
            records.append({k: raw[k] for k in fields})
    records.sort(key=lambda r: r["id"])
    shown = records[: max_items - 1] if len(records) > max_items else records
    more = len(records) - len(shown)
    items = list(shown)
    if more:
        items.append({"id": OVERFLOW_ID, "title": f"{more} more", "detail": "", "at": shown[-1]["at"]})
    return {"items": items, "more": more, "expires_at": None, "capacity": None, "policy": revision}
