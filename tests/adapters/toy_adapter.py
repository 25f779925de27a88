"""The reference adapter serving the toy lease of tests/toy_machine.py, optionally mutated.

argv[1] is a scratch folder for the toy's spec and cases; argv[2], if given,
is ``expire-late``: the lease expires one millisecond after its deadline
instead of at it. It shows that ``conform --fuzz`` needs nothing of a
machine's vocabulary.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from inboxspec import machines
from inboxspec.conformance.adapter import serve
from tests import toy_machine

entry = toy_machine.make_machine(Path(sys.argv[1]))
machines.REGISTRY[entry.name] = entry
if sys.argv[2:] == ["expire-late"]:
    original = toy_machine.Lease.advance

    def expire_late(self: toy_machine.Lease, ms: int) -> bool:
        deadline = self.expires_at
        if deadline is not None and self.now_ms + ms == deadline:
            self.now_ms += ms
            return False
        return original(self, ms)

    toy_machine.Lease.advance = expire_late  # type: ignore[method-assign]
serve(sys.stdin, sys.stdout)
