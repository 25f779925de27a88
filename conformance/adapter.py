"""The reference adapter: the Python implementation behind the harness protocol.

Run it as ``python -m inboxspec.conformance.adapter``. It is also the model
for adapters in other languages (see conformance/WRITING-AN-ADAPTER.md): read
one JSON line, answer one JSON line, echo ``seq`` and the case id.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any, TextIO

from inboxspec import __version__, machines


def handle(request: dict[str, Any]) -> dict[str, Any] | None:
    command = request.get("cmd")
    if command == "start":
        return {
            "ready": True,
            "version": 1,
            "implementation": {"name": "inboxspec-reference", "version": __version__,
                               "language": "python"},
            "machines": machines.names(),
            "features": {m.name: list(m.features) for m in machines.all_machines()},
        }
    if command == "run":
        case = request["case"]
        reply: dict[str, Any] = {"seq": request.get("seq"), "id": case.get("id")}
        entry = machines.REGISTRY.get(case.get("machine"))
        if entry is None:
            return {**reply, "skipped": {"reason": f"machine {case.get('machine')!r} not implemented"}}
        try:
            return {**reply, "result": entry.run_case(case["config"], case["steps"])}
        except Exception as error:  # an adapter reports its own bugs, it does not die of them
            return {**reply, "errored": {"message": f"{type(error).__name__}: {error}",
                                         "context": {"traceback": traceback.format_exc()}}}
    raise ValueError(f"unknown command {command!r}")


def serve(stdin: TextIO, stdout: TextIO) -> None:
    for line in stdin:
        request = json.loads(line)
        if request.get("cmd") == "stop":
            return
        reply = handle(request)
        stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        stdout.flush()


if __name__ == "__main__":
    serve(sys.stdin, sys.stdout)
