"""An adapter with no implementation at all: it looks the answers up.

It reads the bundled case files and replays each case's expectations by id.
Every bundled case passes through it; a case it has never seen gets an
``errored`` reply. Only random cases (``conform --fuzz``) can tell it from a port.
"""

from __future__ import annotations

import json
import sys

from inboxspec.conformance.adapter import handle
from inboxspec.conformance.casefiles import bundled_cases_dir, load_cases

ANSWERS = {case.id: case.expected for case in load_cases([bundled_cases_dir()])}

for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "stop":
        break
    if request["cmd"] == "start":
        reply = handle(request)
    else:
        case_id = request["case"]["id"]
        reply = {"seq": request["seq"], "id": case_id}
        if case_id in ANSWERS:
            reply["result"] = ANSWERS[case_id]
        else:
            reply["errored"] = {"message": f"no answer on file for {case_id}"}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
