"""Arbitrary Python values into every public entry point of the cache: typed errors only, no change.

Design principle 4 (illegal input changes nothing): each call either succeeds
or raises an ``InboxRefreshError`` with a stable code, and after an error the
cache's whole state is as before.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inboxspec.impl.inbox_refresh import (
    InboxRefreshCache,
    InboxRefreshError,
    Invalidation,
    RefreshOptions,
    RefreshState,
)
from inboxspec.machines.inbox_refresh_driver import (
    FakeJob,
    FakeRunner,
    FakeSource,
    JobScript,
    Session,
    run_case,
)
from tests.typed_errors import raises_only

anything = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    | st.tuples(inner, inner),
    max_leaves=6,
)


def fresh() -> tuple[InboxRefreshCache, FakeRunner]:
    session = Session({"jobs": [{"outcome": "result", "duration_ms": 5, "computation": {
        "items": [{"id": "a", "at": "x"}], "more": 1, "expires_at": None, "capacity": None}}]})
    session.cache.snapshot(0)  # a job is running
    return session.cache, session.runner


def frozen(state: RefreshState) -> RefreshState:
    keep = {id(job): job for job in (state.running.job if state.running else None, state.blocked) if job}
    return copy.deepcopy(state, memo=dict(keep))


def unchanged_after(call: Callable[[], Any], cache: InboxRefreshCache) -> None:
    before = frozen(cache.state)
    try:
        call()
    except InboxRefreshError as error:
        assert error.code and str(error)
        assert cache.state == before, "an error changed the state"


# A call -> how it takes one arbitrary value.
ONE_VALUE: dict[str, Callable[[InboxRefreshCache, Any], object]] = {
    "snapshot_time": lambda cache, value: cache.snapshot(value),
    "snapshot_callers": lambda cache, value: cache.snapshot(1, callers=value),
    "advance": lambda cache, value: cache.advance(value),
    "set_wall": lambda cache, value: cache.set_wall(value),
}


@pytest.mark.parametrize("call", sorted(ONE_VALUE))
@given(value=anything)
def test_one_value(call: str, value: Any) -> None:
    cache, _ = fresh()
    unchanged_after(lambda: ONE_VALUE[call](cache, value), cache)


def test_advance_that_would_move_the_wall_out_of_range() -> None:
    cache, _ = fresh()
    cache.set_wall(253_402_300_799_999)
    unchanged_after(lambda: cache.advance(1), cache)
    assert cache.wall_ms() == 253_402_300_799_999


@given(value=anything)
def test_invalidate(value: Any) -> None:
    cache, _ = fresh()
    unchanged_after(lambda: cache.invalidate(value), cache)


@given(hard=anything, capacity=anything, remove=anything, added=anything)
def test_invalidation_record(hard: Any, capacity: Any, remove: Any, added: Any) -> None:
    cache, _ = fresh()
    unchanged_after(lambda: cache.invalidate(Invalidation(hard, capacity, remove, added)), cache)


@given(job=anything, outcome=anything, now=anything)
def test_settle(job: Any, outcome: Any, now: Any) -> None:
    cache, _ = fresh()
    unchanged_after(lambda: cache.settle(job, outcome, now), cache)


@given(outcome=anything, now=st.integers(0, 10))
def test_settle_running_job_with_bad_outcome(outcome: Any, now: int) -> None:
    cache, _ = fresh()
    job = cache.running_job
    assert isinstance(job, FakeJob)
    unchanged_after(lambda: cache.settle(job, outcome, now), cache)


@given(now=anything, items=anything, size=anything, options=anything, log=anything)
def test_constructor(now: Any, items: Any, size: Any, options: Any, log: Any) -> None:
    source = FakeSource([])
    runner = FakeRunner([JobScript.from_json({"outcome": "changed"})], None, source)  # type: ignore[arg-type]
    raises_only(InboxRefreshError, "invalid_config", lambda: InboxRefreshCache(
        runner, source, now_ms=now, max_items=items, max_bytes=size, options=options, log=log))


@given(raw=anything)
def test_options(raw: Any) -> None:
    raises_only(InboxRefreshError, "invalid_config", lambda: RefreshOptions.from_mapping(raw))


@given(config=anything)
def test_case_config(config: Any) -> None:
    raises_only(InboxRefreshError, "invalid_config", lambda: Session(config))


@given(event=st.sampled_from(["snapshot", "advance", "set_wall", "invalidate", "edit_sources",
                              "change_policy", "set_readable", "close"]), args=anything)
def test_case_steps(event: str, args: Any) -> None:
    session = Session({})
    session.apply({"event": "snapshot"})
    before = frozen(session.cache.state)
    output = session.apply({"event": event, "args": args})
    if "error" in output:
        assert session.cache.state == before and output["log"] == []


NODE = shutil.which("node")
NODE_PORT = Path(__file__).resolve().parents[1] / "conformance" / "ports" / "node" / "inbox-refresh.mjs"
BAD_CONFIG_AND_EVENT = ({"max_items": 0}, [{"event": "no_such_event"}])


def test_config_error_is_reported_before_an_unknown_event() -> None:
    """REFRESH-IF-1: the config is checked before any step is read (the case format cannot say so)."""
    config, steps = BAD_CONFIG_AND_EVENT
    assert run_case(config, steps) == {"config_error": "invalid_config"}
    with pytest.raises(ValueError, match="unknown inbox-refresh event"):
        run_case({}, steps)  # the same step under a good config is the case's own error


@pytest.mark.skipif(NODE is None, reason="needs Node.js")
def test_node_port_reports_the_config_error_before_an_unknown_event() -> None:
    config, steps = BAD_CONFIG_AND_EVENT
    script = (f"import {{ runCase }} from {json.dumps(NODE_PORT.as_uri())};"
              f"process.stdout.write(JSON.stringify(runCase({json.dumps(config)}, {json.dumps(steps)})));")
    assert NODE is not None
    done = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True, text=True,
                          timeout=30, check=True)
    assert json.loads(done.stdout) == {"config_error": "invalid_config"}


def test_each_caller_gets_its_own_copy_made_when_it_takes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """REFRESH-SNAP-6: each of the callers' copies is its own and shows the snapshot as it was; and a
    copy is made only when its caller takes it, so 64 callers of a large snapshot no longer cost 64
    deep copies at once (a case file of 4 MB asked the reference for 1.5 GB that way)."""
    cache, _runner = fresh()
    cache.advance(5)  # the job settles: the next snapshot shows the cached rows
    made = 0
    real_deepcopy = copy.deepcopy

    def counted(value: Any, memo: Any = None) -> Any:
        nonlocal made
        made += 1
        return real_deepcopy(value, memo)

    monkeypatch.setattr("inboxspec.impl.inbox_refresh.copy.deepcopy", counted)
    copies = cache.snapshot(6, callers=64)
    assert len(copies) == 64
    computed = made  # the computation's own copies and the private copy, none of the 64 yet
    first = copies[0]
    assert made == computed + 1 and copies[0] is first  # taken once, kept
    shown = real_deepcopy(first)
    assert [item["id"] for item in first["items"]] == ["a"]
    first["items"].clear()  # a caller changes its own copy ...
    cache.invalidate(True)  # ... and the cache moves on
    cache.snapshot(7)
    before = made
    assert copies[63] == shown and copies[63] is not first  # ... the last caller's is as it was
    assert copies[1:3] == [shown, shown] and made == before + 3
