"""An adapter with no implementation that replays answers it recorded on an earlier run.

``python replay_adapter.py record TABLE`` answers like the reference and
writes every case it is sent, with the answer, to TABLE (JSON). ``python
replay_adapter.py replay TABLE`` answers a case by its content (machine,
config and steps, not its id) from TABLE, and ``errored`` for a case it has
never seen. Against a fixed fuzz seed it passes; a fresh seed defeats it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from inboxspec.conformance.adapter import handle

mode, table_path = sys.argv[1], Path(sys.argv[2])
table: dict[str, object] = json.loads(table_path.read_text()) if mode == "replay" else {}


def content(case: dict[str, object]) -> str:
    return json.dumps([case["machine"], case["config"], case["steps"]], sort_keys=True)


for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "stop":
        break
    if request["cmd"] == "start":
        reply = handle(request)
    elif mode == "record":
        reply = handle(request)
        assert reply is not None
        table[content(request["case"])] = reply["result"]
        table_path.write_text(json.dumps(table))
    else:
        key = content(request["case"])
        reply = {"seq": request["seq"], "id": request["case"]["id"]}
        if key in table:
            reply["result"] = table[key]
        else:
            reply["errored"] = {"message": "no answer on file for this case"}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
