"""Prints the real worker runner's latencies and the time of its whole process fault suite.

    python benchmarks/inbox_refresh_runner.py [--rounds N]

- launch: from ``launch`` to the verified ``ready`` handshake;
- refresh: from the snapshot that launches to the accepted result;
- reap: from the worker's exit to the proof that its group is gone;
- the fault suite: ``pytest tests/test_inbox_refresh_runner.py``, wall time.

Numbers only: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from inboxspec.impl.inbox_refresh import InboxRefreshCache, JobResult
from inboxspec.impl.inbox_refresh_runner import ProcessJob, ProcessRunner
from inboxspec.impl.inbox_refresh_source import DirectorySource

ROOT = Path(__file__).resolve().parent.parent


def memory_base(folder: Path, records: int) -> Path:
    (folder / "inbox").mkdir()
    (folder / "policy.json").write_text(json.dumps({"revision": 1, "deny": []}))
    for n in range(records):
        record = {"id": f"c{n:03d}", "title": f"candidate {n}", "detail": "d",
                  "at": "2026-01-01T00:00:00.000Z"}
        (folder / "inbox" / f"c{n:03d}.json").write_text(json.dumps(record))
    return folder


def one_refresh(base: Path) -> tuple[float, float, float]:
    runner = ProcessRunner(base)
    cache = InboxRefreshCache(runner, DirectorySource(base))
    began = time.monotonic()
    cache.snapshot(0)
    job = cache.running_job
    assert isinstance(job, ProcessJob)
    outcome = job.outcome(timeout=30)
    assert isinstance(outcome, JobResult), outcome
    assert cache.settle(job, outcome, 1).settled == "accepted"
    refreshed = time.monotonic() - began
    assert job.ready_at is not None and job.exited_at is not None and job.cleaned_at is not None
    return job.ready_at - job.launched_at, refreshed, job.cleaned_at - job.exited_at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--records", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = memory_base(Path(folder), args.records)
        rows = [one_refresh(base) for _ in range(args.rounds)]
    for name, values in zip(("launch (to ready)", "refresh (snapshot to accepted)", "reap proof"),
                            zip(*rows, strict=True), strict=True):
        ms = [v * 1000 for v in values]
        print(f"{name:32s} median {statistics.median(ms):8.1f} ms   min {min(ms):8.1f}   max {max(ms):8.1f}")
    began = time.monotonic()
    suite = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                            str(ROOT / "tests" / "test_inbox_refresh_runner.py")],
                           capture_output=True, text=True, cwd=ROOT)
    summary = suite.stdout.strip().splitlines()[-1] if suite.stdout.strip() else suite.stderr[-200:]
    print(f"{'process fault suite':32s} {time.monotonic() - began:8.2f} s   ({summary})")


if __name__ == "__main__":
    main()
