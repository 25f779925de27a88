"""An adapter with no implementation: it answers from a table instead of running anything.

- ``python replay_adapter.py lookup`` answers each case by its id with the
  bundled case's expectations, so every bundled case passes through it; only
  random cases (``conform --fuzz``) can tell it from a port.
- ``python replay_adapter.py record TABLE`` answers like the reference and
  writes every case it is sent, with the answer, to TABLE (JSON).
- ``python replay_adapter.py replay TABLE`` answers a case by its content
  (machine, config and steps, not its id) from TABLE. Against a fixed fuzz
  seed it passes; a fresh seed defeats it.

A case it has no answer for gets an ``errored`` reply.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from inboxspec.conformance.adapter import handle
from inboxspec.conformance.casefiles import bundled_cases_dir, load_cases

mode = sys.argv[1]
table_path = Path(sys.argv[2]) if mode in ("record", "replay") else None
table: dict[str, object] = {}
if mode == "replay" and table_path is not None:
    table = json.loads(table_path.read_text())
elif mode == "lookup":
    table = {case.id: case.expected for case in load_cases([bundled_cases_dir()])}


def key(case: dict[str, object]) -> str:
    """What a case is answered by: its id (lookup), or its content (record and replay)."""
    if mode == "lookup":
        return str(case["id"])
    return json.dumps([case["machine"], case["config"], case["steps"]], sort_keys=True)


for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "stop":
        break
    if request["cmd"] == "start":
        reply = handle(request)
    elif mode == "record" and table_path is not None:
        reply = handle(request)
        assert reply is not None
        table[key(request["case"])] = reply["result"]
        table_path.write_text(json.dumps(table))
    else:
        reply = {"seq": request["seq"], "id": request["case"]["id"]}
        if key(request["case"]) in table:
            reply["result"] = table[key(request["case"])]
        else:
            reply["errored"] = {"message": "no answer on file for this case"}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
