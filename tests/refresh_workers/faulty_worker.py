"""A worker that misbehaves in one named way (argv[1]); the runner's fault tests start it.

It speaks the worker protocol of spec/inbox-refresh-runner.md, except where
its mode says otherwise.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from typing import Any

from inboxspec.impl.inbox_refresh_runner import process_signature


def send(message: object) -> None:
    sys.stdout.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
    sys.stdout.flush()


def ready(**override: object) -> None:
    message = {"type": "ready", "pid": os.getpid(), "group": os.getpgid(0),
               "signature": process_signature(os.getpid()),
               "workerHash": os.environ.get("INBOXSPEC_WORKER_HASH")}
    send({**message, **override})


RESULT: dict[str, Any] = {"type": "result", "sources": ["v", "l"], "computation": {
    "items": [{"id": "c1", "title": "t", "detail": "d", "at": "2026-01-01T00:00:00.000Z"}],
    "more": 0, "expires_at": None, "capacity": None, "policy": 0}}


def main(mode: str) -> None:
    if mode == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode == "hang_before_ready":
        time.sleep(60)
        return
    if mode == "moved":
        send({"type": "moved"})
        return
    if mode == "forged_pid":
        ready(pid=os.getpid() + 1)
    elif mode == "forged_group":
        ready(group=1)
    elif mode == "forged_signature":
        ready(signature="1:1")
    else:
        ready()
    if mode.startswith("forged"):
        time.sleep(60)  # TERM (default action) ends it
        return
    if not sys.stdin.readline():
        return
    if mode == "ignore_term":
        time.sleep(60)
    elif mode == "grandchild":
        if os.fork() == 0:  # stays in the group after the leader exits
            os.closerange(0, 3)
            time.sleep(60)
            os._exit(0)
        send(RESULT)
    elif mode == "crash":
        os._exit(3)
    elif mode == "garbage":
        send("this is not json {")
        send('{"type": "result"')
        sys.stdout.buffer.write(b"\xff\xfe\x00\n")
        sys.stdout.flush()
    elif mode == "ok":
        send(RESULT)
    elif mode.startswith("result_"):  # a result in a shape REFRESH-IF-3 does not give
        computation = dict(RESULT["computation"])
        changes: dict[str, dict[str, Any]] = {
            "result_missing_keys": {}, "result_items_not_list": {"items": 7},
            "result_item_not_object": {"items": ["x"]}, "result_item_without_at": {"items": [{"id": "c"}]},
            "result_bad_capacity": {"capacity": 5}}
        send({**RESULT, "computation": {**computation, **changes[mode]} if changes[mode] else {}})
    elif mode == "results_twice":  # RUNNER-MSG-4: the later result replaces the earlier, as in the seed
        send(RESULT)
        send({**RESULT, "computation": {**RESULT["computation"], "more": 99}})
    elif mode == "deep_then_result":
        send("[" * 200_000)
        send(RESULT)
    elif mode == "long_line_then_result":
        sys.stdout.write("x" * (int(os.environ["LONG_LINE_BYTES"]) + 1) + "\n")
        send(RESULT)
    elif mode in ("child_holds_output", "escaped_child_holds_output"):
        if os.fork() == 0:  # keeps stdout open, writing on, after the leader has exited
            if mode == "escaped_child_holds_output":
                os.setsid()
                with open(os.environ["CHILD_PID_FILE"], "w") as kept:  # for the test to end it
                    kept.write(str(os.getpid()))
            for _ in range(600):  # on after the runner stopped reading, whatever its writes meet
                with contextlib.suppress(OSError, ValueError):
                    send("still here")
                time.sleep(0.05)
            os._exit(0)
        send(RESULT)


if __name__ == "__main__":
    main(sys.argv[1])
