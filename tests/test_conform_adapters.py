"""The reference adapter and the Node port answer malformed requests alike.

Each adapter is fed the same lines (spec/conformance-protocol.md, section
*Malformed requests*: PROTO-MAL-1, PROTO-MAL-2, PROTO-MAL-3) and must keep
running, answer every line but ``stop`` with one valid UTF-8 JSON line, and
give the same ``seq``, ``id`` and kind of reply as the other.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inboxspec.conformance.adapter import answer, encode, serve

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")

START = b'{"cmd": "start", "version": 1}'
STOP = b'{"cmd": "stop"}'


def run_line(seq: Any, case: Any) -> bytes:
    return json.dumps({"cmd": "run", "seq": seq, "case": case}).encode()


def case(case_id: str = "probe", **fields: Any) -> dict[str, Any]:
    return {"id": case_id, "machine": "wake-gate", "config": {},
            "steps": [{"event": "announce_refusal"}], **fields}


GOOD_OUTPUT = {"outputs": [{"announce": True, "streak": 0}]}
# The result of a line of ``MALFORMED`` whose reply is a result other than ``GOOD_OUTPUT``.
OTHER_RESULTS = {"refused config and unknown event": {"config_error": "invalid_config"}}

# (line, the expected (seq, id, reply kind), and the result when the kind is "result")
MALFORMED: list[tuple[str, bytes, tuple[Any, str, str]]] = [
    ("not JSON", b"this is not json", (None, "", "errored")),  # PROTO-MAL-1
    ("blank line", b"", (None, "", "errored")),
    ("a byte order mark before an object", b'\xef\xbb\xbf{"cmd": "run", "seq": 15}', (None, "", "errored")),
    ("NaN is not JSON", b'{"cmd": "run", "seq": 9, "case": {"now": NaN}}', (None, "", "errored")),
    ("a JSON array", b"[1, 2]", (None, "", "errored")),
    ("a JSON string", b'"run"', (None, "", "errored")),
    ("unknown command", b'{"cmd": "dance", "seq": 4}', (4, "", "errored")),  # PROTO-MAL-2
    ("no seq", json.dumps({"cmd": "run", "case": case()}).encode(), (None, "probe", "errored")),
    ("config is a list", run_line(5, case(config=[])), (5, "probe", "errored")),
    ("config is null", run_line(6, case(config=None)), (6, "probe", "errored")),
    ("case is a list", run_line(7, []), (7, "", "errored")),
    ("id is a number", run_line(8, case(case_id=3)), (8, "", "errored")),  # type: ignore[arg-type]
    ("steps is an object", run_line(9, case(steps={})), (9, "probe", "errored")),
    ("a step is a string", run_line(10, case(steps=["decide"])), (10, "probe", "errored")),
    ("args is a number", run_line(11, case(steps=[{"event": "set_streak", "args": 5}])),
     (11, "probe", "errored")),
    ("unknown event", run_line(12, case(steps=[{"event": "explode"}])), (12, "probe", "errored")),
    # The config is checked first: a refused config is the case's result whatever its steps hold.
    # No partial outputs: the steps before an unknown event are not answered either.
    ("a good step then an unknown event",
     run_line(17, case(steps=[{"event": "announce_refusal"}, {"event": "explode"}])),
     (17, "probe", "errored")),
    ("refused config and unknown event",
     run_line(16, case(config={"max_streak": -1}, steps=[{"event": "explode"}])), (16, "probe", "result")),
    ("unknown machine", run_line(13, case(machine="toaster")), (13, "probe", "skipped")),
    ("lone surrogate id", run_line(14, case(case_id="lone \ud800 surrogate")),  # PROTO-MAL-3
     (14, "lone \ud800 surrogate", "result")),
    ("bytes that are not UTF-8", run_line(15, case(case_id="bad-XX")).replace(b"XX", b"\xed\xa0\x80\xff"),
     (15, "bad-\ufffd\ufffd\ufffd\ufffd", "result")),
    ("structured seq", run_line({"a": [1]}, case()), ({"a": [1]}, "probe", "result")),
]
ALIVE = (run_line(99, case("still-alive")), (99, "still-alive", "result"))


def adapters() -> list[Any]:
    python = pytest.param([sys.executable, "-m", "inboxspec.conformance.adapter"], id="python")
    node_adapter = str(ROOT / "conformance" / "ports" / "node" / "adapter.mjs")
    if NODE is None and not os.environ.get("CI"):
        node = pytest.param(None, id="node", marks=pytest.mark.skip(reason="node is not installed"))
    else:
        node = pytest.param([NODE or "node", node_adapter], id="node")
    return [python, node]


def converse(command: list[str], lines: list[bytes]) -> tuple[list[bytes], int]:
    """Feed the lines, then stop; the raw reply lines and the exit code."""
    process = subprocess.run(command, input=b"\n".join([*lines, STOP]) + b"\n",
                             capture_output=True, timeout=60, cwd=ROOT)
    return process.stdout.splitlines(), process.returncode


def summary(reply: dict[str, Any]) -> tuple[Any, str, str]:
    kinds = [k for k in ("result", "skipped", "errored") if k in reply]
    assert len(kinds) == 1, reply
    return reply["seq"], reply["id"], kinds[0]


@pytest.fixture(scope="module")
def replies() -> dict[str, list[dict[str, Any]]]:
    """Each adapter's replies to the whole malformed conversation, parsed."""
    answers: dict[str, list[dict[str, Any]]] = {}
    for param in adapters():
        command = param.values[0]
        if command is None:
            continue
        raw, code = converse(command, [START, *(line for _, line, _ in MALFORMED), ALIVE[0]])
        assert code == 0, f"{param.id} adapter exited with {code}"
        # PROTO-FRAME-1, PROTO-MAL-3: every reply line is UTF-8 JSON.
        answers[param.id] = [json.loads(line.decode("utf-8")) for line in raw]
    return answers


@pytest.mark.slow
@pytest.mark.parametrize("command", adapters())
def test_every_malformed_line_gets_one_reply_and_the_adapter_lives_on(
    command: list[str], replies: dict[str, list[dict[str, Any]]]
) -> None:
    """PROTO-MAL-1 and PROTO-MAL-2: one reply per line, in order, and the run goes on."""
    name = "python" if "-m" in command else "node"
    got = replies[name]
    assert len(got) == 1 + len(MALFORMED) + 1
    assert got[0]["ready"] is True
    for (label, _, expected), reply in zip(MALFORMED, got[1:-1], strict=True):
        assert summary(reply) == expected, label
        if expected[2] == "result":
            assert reply["result"] == OTHER_RESULTS.get(label, GOOD_OUTPUT), label
        if expected[2] == "errored":
            assert isinstance(reply["errored"]["message"], str) and reply["errored"]["message"], label
    assert summary(got[-1]) == ALIVE[1] and got[-1]["result"] == GOOD_OUTPUT


@pytest.mark.slow
def test_the_two_adapters_agree_on_every_malformed_line(
    replies: dict[str, list[dict[str, Any]]]
) -> None:
    if "node" not in replies:
        pytest.skip("node is not installed")
    python, node = replies["python"][1:-1], replies["node"][1:-1]
    for (label, _, _), ours, theirs in zip(MALFORMED, python, node, strict=True):
        assert summary(ours) == summary(theirs), label
        assert ours.get("result") == theirs.get("result"), label


# -- the reference adapter in process (fast, and each escape once) ----------------

def test_a_lone_surrogate_id_is_echoed_as_an_escape() -> None:
    """PROTO-MAL-3: it used to crash the adapter while writing the reply."""
    reply = answer(run_line(1, case(case_id="x\udc80")).decode())
    assert reply is not None and reply["id"] == "x\udc80"
    line = encode(reply)
    assert "\\udc80" in line and json.loads(line.encode("utf-8"))["id"] == "x\udc80"


def test_a_non_json_line_does_not_end_the_adapter() -> None:
    """PROTO-MAL-1: it used to end both adapters."""
    stdin = io.StringIO("garbage\n" + run_line(2, case()).decode() + "\n" + STOP.decode() + "\n")
    stdout = io.StringIO()
    serve(stdin, stdout)
    first, second = (json.loads(line) for line in stdout.getvalue().splitlines())
    assert summary(first) == (None, "", "errored")
    assert summary(second) == (2, "probe", "result")


def test_a_list_config_is_errored_not_defaults() -> None:
    """PROTO-MAL-2: the Node port used to run `config: []` with the defaults."""
    reply = answer(run_line(3, case(config=[])).decode())
    assert reply is not None and summary(reply) == (3, "probe", "errored")
    assert "config" in reply["errored"]["message"]
