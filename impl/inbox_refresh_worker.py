"""One-shot worker process: computes the inbox and exits. Started by the runner only.

Protocol (one JSON object per line; stdout is the channel, stdin the runner's):
the worker first checks its own hash against ``INBOXSPEC_WORKER_HASH`` and
sends ``{"type": "moved"}`` on a mismatch; otherwise it sends ``ready`` with
its pid, its process group and its signature (its start time read from
``/proc``). It then waits for one ``run`` request and answers ``result``,
``changed`` (the sources moved while it read them) or ``failed``. No source
text, path or error message ever crosses the channel on failure.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> int:
    # Keep the leader alive on TERM while owned children settle; the runner's KILL ends it.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    from inboxspec.impl.inbox_refresh_runner import process_signature
    from inboxspec.impl.inbox_refresh_version import worker_hash

    listed = os.environ.get("INBOXSPEC_WORKER_FILES")
    files = [Path(p) for p in listed.split(os.pathsep)] if listed else None
    own = worker_hash(files)
    if own is None or own != os.environ.get("INBOXSPEC_WORKER_HASH"):
        send({"type": "moved"})
        return 0
    send({"type": "ready", "pid": os.getpid(), "group": os.getpgid(0),
          "signature": process_signature(os.getpid()), "workerHash": own})
    line = sys.stdin.readline()
    if not line:
        return 0  # the runner went away
    try:
        from inboxspec.impl.inbox_refresh_source import compute_inbox, read_sources

        request = json.loads(line)
        if request.get("type") != "run" or not isinstance(request.get("base"), str):
            raise ValueError("invalid inbox job")
        base = Path(request["base"])
        before = read_sources(base)
        computation = compute_inbox(base)
        after = read_sources(base)
        send({"type": "result", "computation": computation, "sources": list(after)} if before == after
             else {"type": "changed"})
    except Exception:
        send({"type": "failed"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
