"""The root of every typed error the reference implementation raises.

Each machine derives its own hierarchy from :class:`InboxSpecError`. Every
error carries a stable machine-readable ``code``: conformance cases expect
errors by code, never by message, so ports in other languages can match them.
"""

from __future__ import annotations

from typing import ClassVar


class InboxSpecError(ValueError):
    """Bad input to a machine. Raised before any state changes."""

    code: ClassVar[str] = "invalid_argument"
