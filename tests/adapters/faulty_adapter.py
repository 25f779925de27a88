"""A deliberately misbehaving adapter for the runner's fault tests.

It answers like the reference adapter, except that the case whose id
contains the trigger (argv[2], default "announce-on-fresh-gate") gets the
fault named by argv[1]. A few faults concern every case or the handshake:
``skip-all``, ``no-machines``, ``surrogate-name``, ``stop-reading`` (and the name that
``terminal-escapes`` and ``crash-escapes`` give the implementation), ``no-restart``, which
crashes on the trigger and then never completes ``start`` again, and ``other-listing``, which crashes
on the trigger and then starts again listing no wake-gate feature. Two concern ``--fuzz``'s shrinking:
``flaky`` answers a triggered case with the wrong outputs except when it is the shrunk case sent once
more (its id ends ``-replay``), and ``no-restart-shrinking`` answers a triggered case with the wrong
outputs, crashes on its first shrink candidate (an id holding ``-shrink-``) and never starts again.
``echo-first`` answers the first case it is sent, and every later one with that same reply again,
across restarts (the first reply kept in argv[3]). ``replay-duplicates`` errors the triggered case and
its shrink candidates, keeping each candidate's reply in argv[3], and answers the shrunk case sent once
more (``-replay``) with the first kept reply not yet sent again; each start after the first takes 0.3 s.
``late-after-duplicate`` errors the triggered case and its shrink candidates, each candidate after
3.7 s; to the first candidate it sends instead, after those 3.7 s, the reply of the last case it
answered before (a duplicate), once (the state in argv[3]). Faults
that should happen once write a marker file (argv[3]) so that the restarted
adapter behaves.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from inboxspec.conformance.adapter import handle

fault = sys.argv[1]
trigger = sys.argv[2] if len(sys.argv) > 2 else "announce-on-fresh-gate"
once_marker = sys.argv[3] if len(sys.argv) > 3 else ""


def first_time() -> bool:
    if not once_marker:
        return True
    if os.path.exists(once_marker):
        return False
    open(once_marker, "w").close()
    return True


# A terminal command (set the title, clear the screen), a right-to-left override, and the report's
# own verdict on a line of its own: what an adapter may say to forge or corrupt a text report.
ESCAPES = "\x1b]0;owned\x07\x1b[2J \u202e txet \n\nconform: ok in 0.01s\n"


def out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    if request.get("cmd") == "stop":
        break
    if request.get("cmd") == "start":
        if fault == "replay-duplicates" and os.path.exists(once_marker):
            time.sleep(0.3)
        if fault == "never-start":
            time.sleep(3600)
        if fault == "bad-start" or (fault in ("no-restart", "no-restart-shrinking") and once_marker
                                    and os.path.exists(once_marker)):
            out(json.dumps({"ready": "maybe"}) + "\n")  # no-restart: once it has crashed, never starts again
            continue
        if fault == "stderr-flood":
            for _ in range(2000):
                sys.stderr.write("log " * 256 + "\n")
        start = handle(request)
        assert start is not None
        if fault == "no-machines":
            start["machines"], start["features"] = [], {}
        if fault == "other-listing" and once_marker and os.path.exists(once_marker):
            start["features"]["wake-gate"] = []  # once it has crashed, it drops its option tags
        if fault == "surrogate-name":
            start["implementation"]["name"] = "port \ud800 of the gate"
        if fault in ("terminal-escapes", "crash-escapes"):
            start["implementation"]["name"] = ESCAPES
        out(json.dumps(start) + "\n")
        if fault == "stop-reading":
            time.sleep(3600)  # answers start, then never reads its stdin again
        continue
    reply = handle(request)
    assert reply is not None
    if fault == "skip-all":
        reply = {"seq": reply["seq"], "id": reply["id"], "skipped": {"reason": "not today"}}
    if fault == "echo-first" and request.get("cmd") == "run":
        if not os.path.exists(once_marker):
            with open(once_marker, "w") as first:
                first.write(json.dumps(reply))
        with open(once_marker) as first:
            out(first.read() + "\n")
        continue
    if fault == "late-after-duplicate" and request.get("cmd") == "run":
        case_id = request["case"]["id"]
        late: dict[str, Any] = {"earlier": None, "sent": False}
        if os.path.exists(once_marker):
            with open(once_marker) as state:
                late = json.load(state)
        if trigger not in case_id:
            late["earlier"] = reply
        else:
            if "-shrink-" in case_id:
                time.sleep(3.7)
            reply = {"seq": reply["seq"], "id": case_id, "errored": {"message": "boom"}}
            if "-shrink-" in case_id and not late["sent"] and late["earlier"] is not None:
                reply, late["sent"] = late["earlier"], True
        with open(once_marker, "w") as state:
            state.write(json.dumps(late))
        out(json.dumps(reply) + "\n")
        continue
    if fault == "replay-duplicates" and request.get("cmd") == "run" and trigger in request["case"]["id"]:
        case_id = request["case"]["id"]
        errored = {"seq": reply["seq"], "id": case_id, "errored": {"message": "boom"}}
        kept: dict[str, Any] = {"replies": [], "sent": 0}
        if os.path.exists(once_marker):
            with open(once_marker) as state:
                kept = json.load(state)
        if case_id.endswith("-replay") and kept["sent"] < len(kept["replies"]):
            errored = kept["replies"][kept["sent"]]  # an earlier candidate's reply, sent again
            kept["sent"] += 1
        elif "-shrink-" in case_id:
            kept["replies"].append(errored)
        with open(once_marker, "w") as state:
            state.write(json.dumps(kept))
        out(json.dumps(errored) + "\n")
        continue
    hit = request.get("cmd") == "run" and trigger in request["case"]["id"]
    if hit and fault in ("flaky", "no-restart-shrinking"):
        case_id = request["case"]["id"]
        if fault == "no-restart-shrinking" and "-shrink-" in case_id:
            open(once_marker, "w").close()
            sys.exit(3)
        if not case_id.endswith("-replay"):
            reply["result"]["outputs"] = reply["result"]["outputs"][:-1]
        out(json.dumps(reply) + "\n")
        continue
    if hit and first_time():
        if fault in ("crash", "no-restart", "other-listing"):
            sys.stderr.write("adapter panic: simulated\n")
            sys.exit(3)
        if fault == "crash-escapes":
            sys.stderr.write(f"adapter panic: {ESCAPES}\n")
            sys.exit(3)
        if fault == "terminal-escapes":
            reply = {"seq": reply["seq"], "id": reply["id"], "errored": {"message": f"boom {ESCAPES}"}}
        if fault == "hang":
            time.sleep(3600)
        if fault == "not-json":
            out("this is not json\n")
            continue
        if fault == "partial-line":
            out('{"seq": 1, "id": "wake-ga')
            sys.stdout.close()
            sys.exit(0)
        if fault == "wrong-seq":
            reply["seq"] = -1
        if fault == "missing-seq":
            reply.pop("seq")
        if fault == "other-case":
            reply["id"] = "wake-gate/defaults"
        if fault == "stale-seq":  # seq 1 (answered long ago) with yet another case's id
            reply["seq"], reply["id"] = 1, "wake-gate/defaults"
        if fault == "wrong-outputs":
            reply["result"]["outputs"] = reply["result"]["outputs"][:-1]
        if fault == "enormous-line":
            out('{"seq": 1, "pad": "' + "x" * (4 * 1024 * 1024))
            time.sleep(3600)
        if fault == "lie":
            reply["result"]["outputs"][0]["announce"] = False
        if fault == "stringly-true":
            reply["result"]["outputs"][0]["announce"] = 1
        if fault in ("nan", "infinity"):
            reply["result"]["outputs"][0]["streak"] = float("nan" if fault == "nan" else "inf")
        if fault == "huge-number":
            out(json.dumps(reply).replace('"streak": 0', '"streak": ' + "9" * 5000, 1) + "\n")
            continue
        if fault == "key-twice":  # the true value, then a false one under the same key
            twice = '"announce": true, "announce": false'
            out(json.dumps(reply).replace('"announce": true', twice, 1) + "\n")
            continue
        if fault == "deep":
            depth = 100_000
            out(json.dumps(reply).replace('"streak": 0', '"streak": ' + "[" * depth + "]" * depth, 1)
                + "\n")
            continue
        if fault == "surrogate-detail":
            reply = {"seq": reply["seq"], "id": reply["id"],
                     "errored": {"message": "broke on \udc80 here", "context": {"x": "\ud800"}}}
        if fault == "duplicate":
            out(json.dumps(reply) + "\n")  # the same reply again, below
    out(json.dumps(reply) + "\n")
