"""How the cost of a hostile case file grows with its size: the runner's checks, and the reference.

A case file may be 16 MiB (PROTO-CASES-2), and each of the shapes below once made a step, a check or a
read cost in proportion to what came before it: quadratic, or worse, in the file's size. Each shape is
measured at two sizes, the second four times the first, and printed with its growth exponent (the
log of the time ratio over the log of the size ratio): about 1 is linear, about 2 quadratic. A shape
still above 1 is a cost a hostile file can still make grow faster than its size (the per-case
``--timeout`` of ``conform`` and ``cases expect`` bounds it; the note says which remain).

Four groups:

- the runner, before any adapter starts (no ``--timeout`` applies): the case-file schema's
  ``uniqueItems`` over a list that does not sort, PROTO-FIX-5's scan of one fixture shared by many
  cases, the interface lint of a config with a fault per item, and the runner reading one long
  reply line;
- the reference (``Machine.run_case``, in this process): host reminders, held host sends, a
  ``recipient_suffix`` step, and the shapes not yet linear;
- the model (``Machine.run_model_case``, which ``cases expect`` runs within its ``--timeout``), the
  same shapes;
- the example Node.js port, the same shapes (its ``runCase``, in a ``node`` process started for each
  measure; processor seconds of the call alone), when ``node`` is on the PATH.

Usage: python benchmarks/case_file_growth.py [--scale X] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from calibration import yardstick_line

from inboxspec import machines
from inboxspec.conformance import casefiles, confinement, interface_lint
from inboxspec.conformance.adapter_process import AdapterProcess
from inboxspec.conformance.casefiles import Case, load_cases

Steps = list[dict[str, Any]]
WOKEN: Steps = [{"event": "user_input", "args": {"session": "s1", "text": "hi"}}, {"event": "tick"}]
BIG = 2**53 - 1


def _send(n: int) -> Steps:
    return [{"event": "send_message", "args": {"session": "s1", "to": "s2", "text": ""}}] * n


def _result(items: list[dict[str, Any]], **config: Any) -> dict[str, Any]:
    """An inbox refresh config whose one job's result holds ``items``, taken whole."""
    computation = {"items": items, "more": 0, "expires_at": None, "capacity": None}
    return {"max_items": BIG, "max_bytes": BIG, **config,
            "jobs": [{"outcome": "result", "duration_ms": 100, "computation": computation}]}


SETTLED: Steps = [{"event": "snapshot"}, {"event": "advance", "args": {"now_ms": 100}}]


def reminders(n: int) -> tuple[dict[str, Any], Steps]:
    return {}, WOKEN + [{"event": "schedule", "args": {"session": "s1", "delay_ms": 10**9 + i, "text": ""}}
                        for i in range(n)]


def held_sends(n: int) -> tuple[dict[str, Any], Steps]:
    return {"peer_delivery": {"held_cap": BIG}}, WOKEN + _send(n)


def recipients(n: int) -> tuple[dict[str, Any], Steps]:
    return {}, [{"event": "recipient_suffix", "args": {"recipients": [format(i, "x") for i in range(n)]}}]


def refused_ticks(n: int) -> tuple[dict[str, Any], Steps]:
    config = {"wake_gate": {"max_streak": 0}, "peer_delivery": {"setting": "accept", "box_cap": BIG}}
    return config, WOKEN + _send(n) + [{"event": "tick"}] * n


def settings_over_held(n: int) -> tuple[dict[str, Any], Steps]:
    setting: Steps = [{"event": "set_setting", "args": {"session": "s2", "setting": "hold"}}]
    return {"peer_delivery": {"held_cap": BIG, "setting": "hold"}}, WOKEN + _send(n) + setting * n


def screening(n: int) -> tuple[dict[str, Any], Steps]:
    items = [{"id": f"n{i}", "at": "a", "title": "t"} for i in range(n)]
    return _result(items, deny=[format(i, "x") + "!" for i in range(n)]), SETTLED


def invalidations(n: int) -> tuple[dict[str, Any], Steps]:
    items = [{"id": f"n{i}", "at": "a"} for i in range(n)]
    return _result(items), SETTLED + [{"event": "invalidate", "args": {"added": 1}}] * n


# Per shape on the reference: (machine, a function of n giving the config and the steps, base n).
REFERENCE: dict[str, tuple[str, Callable[[int], tuple[dict[str, Any], Steps]], int]] = {
    "host schedule (reminders)": ("host", reminders, 5_000),
    "host held sends": ("host", held_sends, 5_000),
    "peer recipient_suffix": ("peer-delivery", recipients, 10_000),
    "host ticks on a refused batch": ("host", refused_ticks, 500),
    "host set_setting over held mail": ("host", settings_over_held, 250),
    "inbox-refresh screening": ("inbox-refresh", screening, 250),
    "inbox-refresh invalidate": ("inbox-refresh", invalidations, 500),
}


def _case_file(machine: str, cases: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"machine": machine, **extra, "cases": cases}


def _case(machine: str, config: dict[str, Any], steps: Steps, n: int = 0, **extra: Any) -> dict[str, Any]:
    return {"id": f"{machine}/hostile-{n}", "description": f"A hostile case that grows, number {n}",
            "requirements": ["WRITER-IF-1" if machine == "writer-proofs" else "REFRESH-IF-1"],
            "config": config, "steps": [{**step, "expect": {}} for step in steps], **extra}


def unique_items(n: int, _directory: Path) -> float:
    data = _case_file("inbox-refresh", [_case("inbox-refresh", {}, [{"event": "close"}])])
    data["cases"][0]["requirements"] = ["REFRESH-IF-1", *range(n)]
    began = time.process_time()
    casefiles.schema_errors(data)
    return time.process_time() - began


def shared_fixture(n: int, directory: Path) -> float:
    text = "[" + '"a",' * (1 << 16) + '"a"]'
    fixture = {"entries": [{"path": "cli/data.json", "type": "file", "text": text}]}
    config = {"home": "{fixture}/home", "own_root": "{fixture}/cli", "fixture": {"$fixture": "one"}}
    cases = [_case("writer-proofs", config, [{"event": "attest"}], i) for i in range(n)]
    data = _case_file("writer-proofs", cases, fixtures={"one": fixture})
    return _checked(directory / "shared.json", data, confinement.problems)


def interface_faults(n: int, directory: Path) -> float:
    case = _case("inbox-refresh", {"deny": [0] * n}, [{"event": "close"}])
    return _checked(directory / "faults.json", _case_file("inbox-refresh", [case]), interface_lint.problems)


def _checked(path: Path, data: dict[str, Any], check: Callable[[list[Case]], list[str]]) -> float:
    """The processor seconds ``check`` takes over the cases of ``data``, written to ``path`` and loaded."""
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = load_cases([path])
    began = time.process_time()
    check(loaded)
    return time.process_time() - began


def long_reply(mebibytes: int, directory: Path) -> float:
    script = directory / "reply.py"
    reply = f"'{{\"a\": \"' + 'x' * {mebibytes << 20} + '\"}}\\n'"
    script.write_text(f"import sys\nsys.stdin.readline()\nsys.stdout.write({reply})\nsys.stdout.flush()\n"
                      "sys.stdin.readline()\n", encoding="utf-8")
    adapter = AdapterProcess(f"{sys.executable} {script}", max_line_bytes=(mebibytes << 20) + 100)
    try:
        adapter.send({"cmd": "go"})
        began = time.perf_counter()
        adapter.receive(120)
        return time.perf_counter() - began
    finally:
        adapter.kill()


# Per shape on the runner: (a function of n and a scratch directory giving seconds, base n).
RUNNER: dict[str, tuple[Callable[[int, Path], float], int]] = {
    "case-file uniqueItems, unsortable": (unique_items, 2_000),
    "PROTO-FIX-5 scan, one shared fixture": (shared_fixture, 10),
    "interface lint, a fault per item": (interface_faults, 20_000),
    "runner reading one reply (MiB, wall s)": (long_reply, 4),
}


def reference_seconds(machine: str, make: Callable[[int], tuple[dict[str, Any], Steps]], n: int,
                      model: bool = False) -> float:
    config, steps = make(n)
    entry = machines.get(machine)
    run = entry.run_model_case if model else entry.run_case
    began = time.process_time()
    run(config, steps)
    return time.process_time() - began


NODE_PORT = Path(__file__).resolve().parent.parent / "conformance" / "ports" / "node"
# Reads {"module", "config", "steps"} on stdin; prints the processor seconds of runCase alone.
_NODE_RUN = """
import { readFileSync } from "node:fs";
const { module, config, steps } = JSON.parse(readFileSync(0, "utf8"));
const { runCase } = await import(module);
const began = process.cpuUsage();
runCase(config, steps);
const spent = process.cpuUsage(began);
process.stdout.write(JSON.stringify((spent.user + spent.system) / 1e6));
"""


def node_seconds(machine: str, make: Callable[[int], tuple[dict[str, Any], Steps]], n: int) -> float:
    config, steps = make(n)
    request = {"module": (NODE_PORT / f"{machine}.mjs").as_uri(), "config": config, "steps": steps}
    done = subprocess.run(["node", "--input-type=module", "-e", _NODE_RUN], input=json.dumps(request),
                          capture_output=True, text=True, timeout=3600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the Node port's {machine} failed: {done.stderr[-2000:]}")
    return float(json.loads(done.stdout))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every base size by this")
    parser.add_argument("--only", action="append", default=None, help="a shape to measure (repeatable)")
    args = parser.parse_args()
    print(f"   {'shape':<46}{'n':>9}{'seconds':>10}{'4n':>9}{'seconds':>10}{'growth':>8}")

    def row(name: str, measure: Callable[[int], float], base: int) -> None:
        if args.only and name not in args.only:
            return
        small = max(1, round(base * args.scale))
        measure(small)  # once before, so that the first timing holds no validator's or cache's making
        first, second = measure(small), measure(4 * small)
        growth = math.log(second / first) / math.log(4) if first > 0 and second > 0 else float("nan")
        print(f"   {name:<46}{small:>9,}{first:>10.3f}{4 * small:>9,}{second:>10.3f}{growth:>8.2f}",
              flush=True)

    with tempfile.TemporaryDirectory(prefix="inboxspec-hostile-") as scratch:
        directory = Path(scratch)
        for name, (check, base) in RUNNER.items():
            row(name, lambda n, check=check: check(n, directory), base)  # type: ignore[misc]
    for name, (machine, make, base) in REFERENCE.items():
        row(name, lambda n, machine=machine, make=make: reference_seconds(machine, make, n), base)  # type: ignore[misc]
    for name, (machine, make, base) in REFERENCE.items():
        row(f"{name}, model",
            lambda n, machine=machine, make=make: reference_seconds(machine, make, n, model=True),  # type: ignore[misc]
            base)
    if shutil.which("node") is None:
        print("   (node is not on the PATH: the Node port's rows are left out)")
    else:
        for name, (machine, make, base) in REFERENCE.items():
            row(f"{name}, Node port", lambda n, machine=machine, make=make: node_seconds(machine, make, n),  # type: ignore[misc]
                base)
    print("processor seconds (the reply: wall seconds); growth about 1 is linear, about 2 quadratic")
    print(yardstick_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
