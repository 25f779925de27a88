"""The reference adapter: the Python implementation behind the harness protocol.

Run it as ``python -m inboxspec.conformance.adapter``. It is also the model
for adapters in other languages (see conformance/WRITING-AN-ADAPTER.md): read
one JSON line, answer one JSON line, echo ``seq`` and the case id.
"""

from __future__ import annotations

import io
import json
import sys
import traceback
from typing import Any, TextIO

from inboxspec import machines
from inboxspec.conformance.plainjson import escaping_lone_surrogates
from inboxspec.conformance.version import VERSION


def _errored(request: object, message: str) -> dict[str, Any]:
    """PROTO-MAL-1/2: a request the adapter cannot run still gets one reply, so
    that replies stay in step with requests; ``seq`` and ``id`` are echoed when
    they can be read."""
    seq = request.get("seq") if isinstance(request, dict) else None
    case = request.get("case") if isinstance(request, dict) else None
    case_id = case.get("id") if isinstance(case, dict) else None
    return {"seq": seq, "id": case_id if isinstance(case_id, str) else "",
            "errored": {"message": message}}


def run_request_problem(request: dict[str, Any]) -> str | None:
    """Where a ``run`` request breaks ``run.schema.json`` (PROTO-MAL-2), or None."""
    if "seq" not in request:
        return "run request has no seq"
    case = request.get("case")
    if not isinstance(case, dict):
        return "run request has no case object"
    for key, kind, words in (("id", str, "a string"), ("machine", str, "a string"),
                             ("config", dict, "an object"), ("steps", list, "a list")):
        if not isinstance(case.get(key), kind):
            return f"case {key} is missing or not {words}"
    for number, step in enumerate(case["steps"]):
        if not isinstance(step, dict) or not isinstance(step.get("event"), str):
            return f"step {number} is not an object with a string event"
        if not isinstance(step.get("args", {}), dict):
            return f"step {number} args is not an object"
    return None


def handle(request: dict[str, Any]) -> dict[str, Any] | None:
    command = request.get("cmd")
    if command == "start":
        return {
            "ready": True,
            "version": 1,
            "implementation": {"name": "inboxspec-reference", "version": VERSION,
                               "language": "python"},
            "machines": machines.names(),
            "features": {name: list(machines.features(name)) for name in machines.names()},
        }
    if command == "run":
        problem = run_request_problem(request)
        if problem is not None:
            return _errored(request, f"malformed run request: {problem}")
        case = request["case"]
        reply: dict[str, Any] = {"seq": request.get("seq"), "id": case.get("id")}
        entry = machines.REGISTRY.get(case.get("machine"))
        if entry is None:
            return {**reply, "skipped": {"reason": f"machine {case.get('machine')!r} not implemented"}}
        try:
            config = case["config"]
            if "fixture_dir" in case:  # PROTO-FIX-2: the runner's materialised fixture
                config = {**config, "fixture_dir": case["fixture_dir"]}
            return {**reply, "result": entry.run_case(config, case["steps"])}
        except Exception as error:  # an adapter reports its own bugs, it does not die of them
            return {**reply, "errored": {"message": f"{type(error).__name__}: {error}",
                                         "context": {"traceback": traceback.format_exc()}}}
    return _errored(request, f"unknown command {command!r}")


def _not_json(constant: str) -> Any:
    # RFC 8259 has no NaN or Infinity; Python's json module would accept them.
    raise ValueError(f"{constant} is not JSON")


def answer(line: str) -> dict[str, Any] | None:
    """The reply to one request line; None for ``stop``. Never raises (PROTO-MAL-1)."""
    try:
        request = json.loads(line, parse_constant=_not_json)
    except ValueError as error:
        return _errored(None, f"request is not JSON: {error}")
    if not isinstance(request, dict):
        return _errored(None, f"request is not a JSON object but {type(request).__name__}")
    if request.get("cmd") == "stop":
        return None
    try:
        return handle(request)
    except Exception as error:
        return _errored(request, f"{type(error).__name__}: {error}")


def encode(reply: dict[str, Any]) -> str:
    """One reply line, the shortest (PROTO-FRAME-3: a case whose reply fits the bound passes): compact
    JSON, each character past ASCII as itself, to be written as UTF-8, but a lone surrogate in an
    echoed string (a case id, say), which UTF-8 cannot carry, escaped as ``\\udXXX`` (PROTO-MAL-3)."""
    return escaping_lone_surrogates(json.dumps(reply, ensure_ascii=False, separators=(",", ":"))) + "\n"


def serve(stdin: TextIO, stdout: TextIO) -> None:
    for line in stdin:  # every line is a request, a blank one too
        reply = answer(line)
        if reply is None:
            return
        stdout.write(encode(reply))
        stdout.flush()


if __name__ == "__main__":
    # Bytes that are not UTF-8 become U+FFFD, as in Node's readline, so such a
    # line is answered like any other request rather than ending the adapter.
    if isinstance(sys.stdin, io.TextIOWrapper):
        sys.stdin.reconfigure(encoding="utf-8", errors="replace")
    if isinstance(sys.stdout, io.TextIOWrapper):  # replies are UTF-8 whatever the locale (PROTO-FRAME-1)
        sys.stdout.reconfigure(encoding="utf-8")
    serve(sys.stdin, sys.stdout)
