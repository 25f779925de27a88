"""The reference adapter, logging each run request's fixture directory as it receives it.

Usage: fixture_spy_adapter.py LOG. One JSON line per request that has a ``fixture_dir``:
the directory, whether it exists, whether it is already its real path (no link on the
way), the names in it, and the names in the run's root (its parent). The tests read the log
after the run, when every directory must be gone (PROTO-FIX-1).
"""

import json
import os
import sys

from inboxspec.conformance.adapter import handle

with open(sys.argv[1], "a", encoding="utf-8") as log:
    for line in sys.stdin:
        request = json.loads(line)
        if request["cmd"] == "stop":
            break
        directory = request.get("case", {}).get("fixture_dir")
        if directory:
            exists = os.path.isdir(directory)
            log.write(json.dumps({"dir": directory, "exists": exists,
                                  "real": directory == os.path.realpath(directory),
                                  "files": sorted(os.listdir(directory)) if exists else [],
                                  "root": sorted(os.listdir(os.path.dirname(directory)))}) + "\n")
            log.flush()
        print(json.dumps(handle(request)), flush=True)
