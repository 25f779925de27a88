r"""An adapter with every outcome at once, for the report tests.

It answers like the reference adapter, except for cases whose id matches a
glob given on the command line: ``fail=GLOB`` changes the last character of
the first text in the case's outputs (or adds a key when there is none),
``error=GLOB`` answers ``errored``, ``skip=GLOB`` answers ``skipped``,
``delay=SECONDS`` waits that long before each reply, and ``name=TEXT`` reports
TEXT, its backslash escapes decoded (``\ud800``, a lone surrogate), as the
implementation's name.
"""

from __future__ import annotations

import fnmatch
import json
import sys
import time
from typing import Any

from inboxspec.conformance.adapter import handle

rules: dict[str, list[str]] = {"fail": [], "error": [], "skip": []}
delay = 0.0
name: str | None = None
for argument in sys.argv[1:]:
    kind, _, value = argument.partition("=")
    if kind == "delay":
        delay = float(value)
    elif kind == "name":
        name = value.encode("ascii").decode("unicode_escape")
    else:
        rules[kind].append(value)


def matches(kind: str, case_id: str) -> bool:
    return any(fnmatch.fnmatchcase(case_id, glob) for glob in rules[kind])


def spoil(value: Any) -> bool:
    """Change one character of the first text inside ``value``; False when it has none."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, item in items:
        if isinstance(item, str) and item:
            value[key] = item[:-1] + ("#" if item[-1] != "#" else "%")
            return True
        if spoil(item):
            return True
    return False


for line in sys.stdin:
    request = json.loads(line)
    if request.get("cmd") == "stop":
        break
    reply = handle(request)
    if reply is None:
        continue
    if request.get("cmd") == "start" and name is not None:
        reply["implementation"]["name"] = name
    if request.get("cmd") == "run":
        case_id = request["case"]["id"]
        if matches("error", case_id):
            reply = {"seq": reply["seq"], "id": case_id,
                     "errored": {"message": "simulated \x07 fault", "context": {"at": "step 0"}}}
        elif matches("skip", case_id):
            reply = {"seq": reply["seq"], "id": case_id, "skipped": {"reason": "not implemented here"}}
        elif matches("fail", case_id) and "result" in reply and not spoil(reply["result"]):
            reply["result"]["outputs"].append({"spoiled": True})  # nothing to spoil: one output too many
        time.sleep(delay)
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
