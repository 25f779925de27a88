"""The Node port's seed-named API gives the same outputs as its protocol path, on random inputs.

For each machine, hypothesis draws a batch of inputs; ``node_port_seed_calls.mjs`` runs each one
through the port twice, by calling the seed-named functions directly (as the mapping table in
conformance/ports/node/README.md says) and through the machine module's ``runCase`` (what the
adapter calls). The two must agree, and the protocol path must agree with the Python reference's
driver. A wrong mapping in the adapter (arguments swapped, a null not turned into undefined, the
boolean form of ``invalidate`` read as a record) shows as the first disagreement; a wrong
seed-named function as the second.
"""

from __future__ import annotations

import copy
import json
import os
import random
import shutil
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inboxspec import machines
from inboxspec.impl import peer_delivery, writer_proofs

ROOT = Path(__file__).resolve().parent.parent
PORT = ROOT / "conformance" / "ports" / "node"
SCRIPT = Path(__file__).with_name("node_port_seed_calls.mjs")
NODE = shutil.which("node")
# Each example is one node process over a whole batch of inputs.
BATCHES = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _node() -> None:
    if NODE is None:
        if os.environ.get("CI"):
            pytest.fail("node is required in CI: the example port must run")
        pytest.skip("node is not installed")


def node_calls(machine: str, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    assert NODE is not None
    process = subprocess.run([NODE, str(SCRIPT)], input=json.dumps({"port": str(PORT), "machine": machine,
                                                                     "cases": cases}),
                             capture_output=True, text=True, timeout=120)
    assert process.returncode == 0, process.stderr
    results: list[dict[str, Any]] = json.loads(process.stdout)
    assert len(results) == len(cases)
    return results


def reference(machine: str, case: dict[str, Any]) -> dict[str, Any]:
    return machines.get(machine).run_case(copy.deepcopy(case["config"]), copy.deepcopy(case["steps"]))


def assert_agree(machine: str, cases: list[dict[str, Any]]) -> None:
    for case, result in zip(cases, node_calls(machine, cases), strict=True):
        direct, protocol = result["direct"], result["protocol"]
        assert "outputs" in protocol, (case, protocol)
        assert len(direct["outputs"]) == len(protocol["outputs"]) == len(case["steps"])
        for step, seed_call, through_protocol in zip(case["steps"], direct["outputs"], protocol["outputs"],
                                                     strict=True):
            # A seed call answers only what the seed's API returns; the protocol adds state fields.
            assert seed_call == {key: through_protocol.get(key) for key in seed_call}, step
        assert protocol == reference(machine, case), case


# -- wake gate: the registry's own random traces -----------------------------------------------

WAKE_ARGUMENTS = {"decide": {"batch", "now_ms", "plugin_pending"}, "set_streak": {"value"},
                  "set_floor": {"value"}, "announce_refusal": set(), "reset_streak": set()}


def seed_shaped(steps: list[dict[str, Any]], arguments: dict[str, set[str]]) -> list[dict[str, Any]]:
    """The steps a seed call can express: an unknown argument name exists only in the protocol."""
    return [s for s in steps if s["event"] in arguments and set(s.get("args", {})) <= arguments[s["event"]]]


def registry_cases(machine: str, rng: random.Random, count: int,
                   arguments: dict[str, set[str]] | None = None) -> list[dict[str, Any]]:
    cases = []
    for _ in range(count):
        config, steps = machines.get(machine).fuzz(rng)
        cases.append({"config": config, "steps": seed_shaped(steps, arguments) if arguments else steps})
    return cases


# The registry's generators take a random.Random; hypothesis draws its seed.
SEEDS = st.integers(0, 2**64 - 1)


@BATCHES
@given(SEEDS)
def test_wake_gate_seed_calls_match_the_protocol(seed: int) -> None:
    cases = registry_cases("wake-gate", random.Random(seed), 25, WAKE_ARGUMENTS)
    assert any(s["event"] == "decide" for c in cases for s in c["steps"])
    assert_agree("wake-gate", cases)


# -- peer delivery: the rendering functions and dialogExpiry -------------------------------------

# Labels from characters whose Unicode category is the same in every runtime (PEER-LABEL-1).
LABEL_CHARACTERS = [*"abcXYZ 019-_.,[]<>«»\"\t\n", "\u00a0", "\u200b", "\u2028", "é", "漢", "\U0001f600"]
LABEL_TEXT = st.text(alphabet=st.sampled_from(LABEL_CHARACTERS), max_size=60)
RECIPIENTS = st.lists(LABEL_TEXT, max_size=6)
REASONS = st.lists(st.sampled_from([*peer_delivery.DROP_REASONS, None]), max_size=6)
COUNT = st.one_of(st.integers(1, 5), st.integers(1, 2**53 - 1), st.sampled_from([0, -1, 1.5, "2"]))
WORDS = st.sampled_from([*peer_delivery.RECEIPT_STATES, "Held", "idle", "60s", "5m", "10m", "never",
                         "default", "5M", "1h"])
JSON_VALUE = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8), WORDS,
                       st.lists(st.integers(), max_size=2),
                       st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
ABSENT = st.just(...)  # an argument the step leaves out


def step(event: str, **args: Any) -> dict[str, Any]:
    return {"event": event, "args": {key: value for key, value in args.items() if value is not ...}}


PEER_STEPS = st.one_of(
    st.builds(partial(step, "render_delivery_notice"),
              state=st.sampled_from([*peer_delivery.RECEIPT_STATES, "bogus"]), count=COUNT,
              recipients=st.one_of(ABSENT, RECIPIENTS)),
    st.builds(partial(step, "render_dropped_notice"), count=COUNT, recipients=st.one_of(ABSENT, RECIPIENTS),
              reasons=st.one_of(ABSENT, REASONS, st.just(["denied"]))),
    st.builds(partial(step, "describe_drop_reasons"), reasons=st.one_of(REASONS, st.none())),
    st.builds(partial(step, "recipient_suffix"), recipients=st.one_of(RECIPIENTS, st.just([1]))),
    st.builds(partial(step, "is_receipt_state"), value=st.one_of(ABSENT, JSON_VALUE)),
    st.builds(partial(step, "set_dialog_expiry"), value=st.one_of(ABSENT, JSON_VALUE)),
)


@BATCHES
@given(st.lists(st.lists(PEER_STEPS, min_size=1, max_size=8), min_size=10, max_size=25))
def test_peer_delivery_seed_calls_match_the_protocol(batches: list[list[dict[str, Any]]]) -> None:
    assert_agree("peer-delivery", [{"config": {}, "steps": steps} for steps in batches])


# -- idle subscriptions: the sanitiser, the clock and the notices ---------------------------------

NULLABLE_TIME = st.one_of(st.none(), st.integers(0, 2**53 - 1))
OFFSET = st.one_of(st.none(), st.integers(-1439, 1439))
IDLE_STEPS = st.one_of(
    st.builds(partial(step, "sanitise_label"), raw=st.one_of(st.text(max_size=150), LABEL_TEXT)),
    st.builds(partial(step, "format_clock"), epoch_ms=NULLABLE_TIME, utc_offset_min=OFFSET),
    st.builds(partial(step, "render_notice"),
              kind=st.sampled_from(["idle", "exited", "unavailable", "expired"]),
              label=st.text(min_size=1, max_size=30), finished_at=NULLABLE_TIME,
              detail=st.one_of(st.none(), st.text(max_size=30)), utc_offset_min=OFFSET),
    st.builds(partial(step, "describe_subscription"), address=st.text(max_size=40),
              detail_shared=st.one_of(st.none(), st.booleans())),
    st.builds(partial(step, "is_notice_kind"), value=JSON_VALUE),
)


@BATCHES
@given(st.lists(st.lists(IDLE_STEPS, min_size=1, max_size=8), min_size=10, max_size=25))
def test_idle_subscriptions_seed_calls_match_the_protocol(batches: list[list[dict[str, Any]]]) -> None:
    assert_agree("idle-subscriptions", [{"config": {}, "steps": steps} for steps in batches])


# -- writer proofs: PlacementWriterContextError -----------------------------------------------------

REFUSALS = st.tuples(st.sampled_from(writer_proofs.CATEGORIES), st.sampled_from(writer_proofs.CAUSES),
                     st.sampled_from(writer_proofs.PHASES),
                     st.one_of(st.none(), st.sampled_from(sorted(writer_proofs.FAILURE_DETAILS))),
                     st.one_of(st.none(), st.sampled_from(writer_proofs.RENEWAL_STATES)))


def assert_refusals_match(fields: list[tuple[Any, ...]], expected: list[dict[str, Any]]) -> None:
    results = node_calls("writer-proofs", [{"refusal": list(f)} for f in fields])
    for field, result, want in zip(fields, results, expected, strict=True):
        direct = result["direct"]
        assert direct.pop("name") == "PlacementWriterContextError" and direct.pop("is_error") is True
        assert direct == want, field


@BATCHES
@given(st.lists(REFUSALS, min_size=20, max_size=60))
def test_writer_refusals_match_the_reference(fields: list[tuple[Any, ...]]) -> None:
    assert_refusals_match(fields, [writer_proofs.PlacementWriterContextError(*f).as_json() for f in fields])


def test_writer_refusals_match_every_bundled_case() -> None:
    """The seed-named constructor gives each refusal the protocol path gives in a bundled case."""
    expected = []
    for path in sorted((ROOT / "conformance" / "cases" / "writer-proofs").glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            steps = case.get("steps", [])
            expected += [s["expect"]["refusal"] for s in steps if "refusal" in s.get("expect", {})]
    assert len(expected) > 20
    fields = [(r["category"], r["cause"], r["phase"], r["detail"], r["renewal_state"]) for r in expected]
    assert_refusals_match(fields, expected)


# -- inbox refresh: InboxCache.invalidate(boolean | InboxInvalidation) ---------------------------------

def valid_invalidation(step: dict[str, Any], config: dict[str, Any]) -> bool:
    """The seed's invalidate takes the argument as given; rejecting a bad one is the protocol's part,
    and so is a negative ``added`` under ``reject_negative_added`` (REFRESH-F3), which the cache refuses."""
    args = step.get("args", {})
    negative_refused = config.get("options", {}).get("reject_negative_added", False)
    return step["event"] != "invalidate" or (
        all(isinstance(args.get(k, False), bool) for k in ("value", "hard", "capacity"))
        and ("value" not in args or len(args) == 1)
        and not (negative_refused and isinstance(args.get("added"), int) and args["added"] < 0))


INVALIDATIONS = st.one_of(
    st.builds(lambda v: {"value": v}, st.booleans()),
    st.fixed_dictionaries({}, optional={
        "hard": st.booleans(), "capacity": st.booleans(), "added": st.integers(0, 3),
        "remove_ids": st.lists(st.sampled_from(["c0", "c1", "c2", "inbox:more"]), max_size=3)}))


@st.composite
def invalidation_cases(draw: st.DrawFn) -> dict[str, Any]:
    """Jobs that each return a result, and invalidations of the result they leave in the cache."""
    def job() -> dict[str, Any]:
        items = [{"id": f"c{i}", "at": "2026-01-01T00:00:00.000Z"} for i in range(draw(st.integers(0, 3)))]
        more = draw(st.integers(0, 2))
        if more:
            items.append({"id": "inbox:more", "at": "2026-01-01T00:00:00.000Z"})
        return {"outcome": "result", "duration_ms": 10,
                "computation": {"items": items, "more": more, "expires_at": None,
                                "capacity": draw(st.sampled_from([None, {"until": 10**9}]))}}
    invalidations = draw(st.lists(INVALIDATIONS, min_size=1, max_size=4))
    steps: list[dict[str, Any]] = []
    for number, args in enumerate(invalidations, start=1):
        steps += [{"event": "snapshot"}, {"event": "advance", "args": {"now_ms": 60_000 * number}},
                  {"event": "snapshot"}, {"event": "invalidate", "args": args}, {"event": "snapshot"}]
    return {"config": {"jobs": [job() for _ in invalidations], "max_items": 5}, "steps": steps}


@st.composite
def registry_inbox_cases(draw: st.DrawFn) -> dict[str, Any]:
    config, steps = machines.get("inbox-refresh").fuzz(random.Random(draw(SEEDS)))
    return {"config": config, "steps": [s for s in steps if valid_invalidation(s, config)]}


@BATCHES
@given(invalidation_cases(),
       st.lists(st.one_of(registry_inbox_cases(), invalidation_cases()), min_size=9, max_size=19))
def test_inbox_cache_seed_calls_match_the_protocol(first: dict[str, Any],
                                                   cases: list[dict[str, Any]]) -> None:
    # At least one case invalidates what a job left in the cache: the seed call under test.
    assert_agree("inbox-refresh", [first, *cases])
