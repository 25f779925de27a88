"""benchmarks/mutation_score.py kills what it should, and its list of equivalents does not rot.

The whole score takes a minute or two (a documented command, see the README);
these tests run a handful of mutants.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.conformance import process_tree

ROOT = Path(__file__).resolve().parents[1]


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_score", ROOT / "benchmarks" / "mutation_score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_score"] = module
    spec.loader.exec_module(module)
    return module


mutation_score = _benchmark()
WAKE = "inboxspec.impl.wake_gate"


def test_finds_the_reference_modules_through_the_registry() -> None:
    assert mutation_score.implementation_modules(machines.get("wake-gate")) == [WAKE]


def test_shared_reference_code_is_mutated_where_a_machine_reaches_it() -> None:
    # The wake gate imports describe, is_safe_natural and check_argument_names (which names
    # refuse_unknown_arguments) from impl/values.py, not the other checks.
    shared = mutation_score.shared_modules([WAKE])
    assert set(shared) == {"inboxspec.impl.errors", "inboxspec.impl.options", "inboxspec.impl.values"}
    assert shared["inboxspec.impl.values"] == {"MAX_SAFE_INTEGER", "describe", "is_safe_natural",
                                               "check_argument_names", "refuse_unknown_arguments"}
    ids = [m.id for m in mutation_score.mutation_targets(machines.get("wake-gate"))]
    assert "inboxspec.impl.values:describe:return-None:571e55da" in ids
    assert not [i for i in ids if i.startswith("inboxspec.impl.values:is_safe_integer:")]


def test_a_composed_machine_leaves_the_machines_it_composes_to_their_own_scores() -> None:
    """The host calls the wake gate, peer delivery and idle subscriptions; their modules are scored
    with those machines (whose cases include the host's projected cases), and what the host itself
    reaches of the shared modules is still the host's."""
    host = machines.get("host")
    modules = {m.id.split(":")[0] for m in mutation_score.mutation_targets(host)}
    assert modules == {"inboxspec.impl.host", "inboxspec.machines.host_driver", "inboxspec.impl.errors",
                       "inboxspec.impl.values"}
    composed = mutation_score.shared_modules(["inboxspec.impl.host"])
    assert {WAKE, "inboxspec.impl.peer_delivery", "inboxspec.impl.idle_subscriptions"} <= set(composed)
    # A machine composed of none still has the shared modules it reaches.
    alone = {m.id.split(":")[0] for m in mutation_score.mutation_targets(machines.get("wake-gate"))}
    assert alone == {WAKE, "inboxspec.machines.wake_gate_driver", "inboxspec.impl.values",
                     "inboxspec.impl.options", "inboxspec.impl.errors"}


def test_the_imports_of_a_whole_module_are_followed_whichever_module_imports_it() -> None:
    # impl/writer_fs.py imports MAX_SAFE_INTEGER from impl/values.py; the writer proofs' harness
    # imports from writer_fs too. Met after the harness, writer_fs's imports are followed all the same.
    fs, harness = "inboxspec.impl.writer_fs", "inboxspec.impl.writer_harness"
    for order in ([fs, harness], [harness, fs]):
        assert "MAX_SAFE_INTEGER" in mutation_score.shared_modules(order)["inboxspec.impl.values"], order


@pytest.mark.parametrize("mutant", [
    f"{WAKE}:is_rapid:Lt->LtE:680b6d3d",  # the floor boundary: a self-wake exactly one floor later
    f"{WAKE}:decide:False->True:e825b6f1#2",  # a counted wake leaves the refusal flag set (survivors.json)
])
def test_the_bundled_cases_kill_a_known_mutant(mutant: str) -> None:
    result = mutation_score.score("wake-gate", only=[mutant])
    assert [m.id for m, _ in result.killed] == [mutant], result.as_json()


IDLE_LABEL = "inboxspec.impl.idle_label"


@pytest.mark.parametrize("mutant", [
    f"{IDLE_LABEL}:_remove_folded_phrases.push:int+1:e9a51459",  # a first letter counts as matched
    f"{IDLE_LABEL}:_kmp_failure:NotEq->Eq:93df0c9e",  # a false start resumes one letter in (lookalikes.json)
])
def test_the_idle_subscription_cases_kill_a_phrase_search_mutant(mutant: str) -> None:
    result = mutation_score.score("idle-subscriptions", only=[mutant])
    assert [m.id for m, _ in result.killed] == [mutant], result.as_json()


def test_a_listed_idle_subscriptions_equivalent_survives() -> None:
    mutant = f"{IDLE_LABEL}:_ASCII_LOWER:Add->Sub:4dc0d10b"  # Y and Z are not lowered; the phrase has neither
    result = mutation_score.score("idle-subscriptions", only=[mutant])
    assert [m.id for m, _ in result.equivalent] == [mutant] and not result.killed


WRITER_FS = "inboxspec.impl.writer_fs"


@pytest.mark.parametrize("mutant", [
    f"{WRITER_FS}:measure_writers:Gt->GtE:4a122981",  # 32 roots are bound (mutants.json: thirty-two-roots)
    f"{WRITER_FS}:_walk:Gt->GtE:445be0f2",  # exactly 64 MiB is bound (mutants.json: bytes-at-the-bound)
])
def test_the_writer_proofs_cases_kill_a_bound_edge_mutant(mutant: str) -> None:
    result = mutation_score.score("writer-proofs", only=[mutant])
    assert [m.id for m, _ in result.killed] == [mutant], result.as_json()


def test_a_listed_writer_proofs_equivalent_survives() -> None:
    mutant = f"{WRITER_FS}:MAX_ENTRIES:int+1:e2508e88"  # 20 001 entries lie beyond the fixture limits
    result = mutation_score.score("writer-proofs", only=[mutant])
    assert [m.id for m, _ in result.equivalent] == [mutant] and not result.killed


def test_a_listed_equivalent_survives() -> None:
    mutant = f"{WAKE}:is_rapid:return-None:fdf0c491"  # None for False, used only as a condition
    result = mutation_score.score("wake-gate", only=[mutant])
    assert [m.id for m, _ in result.equivalent] == [mutant] and not result.killed


@pytest.mark.parametrize("machine", machines.names())
def test_every_listed_equivalent_is_a_mutant_with_a_reason(machine: str) -> None:
    known = {m.id for m in mutation_score.mutation_targets(machines.get(machine))}
    path = mutation_score.EQUIVALENTS_DIR / f"{machine}.json"
    assert path.exists(), f"every machine lists its equivalent mutants; {machine} has no {path.name}"
    entries = json.loads(path.read_text())["equivalent"]
    assert all(len(e["reason"]) > 20 for e in entries)
    assert not [e["id"] for e in entries if e["id"] not in known]


@pytest.mark.parametrize("machine", machines.names())
def test_every_second_review_is_an_agreement(machine: str) -> None:
    """A second review that is not "agreed" (or "agreed: <note>") would be left uncounted."""
    path = mutation_score.EQUIVALENTS_DIR / f"{machine}.json"
    if not path.exists():
        pytest.skip(f"no equivalent mutants listed for {machine}")
    entries = json.loads(path.read_text())["equivalent"]
    reviews = [e["second_review"] for e in entries if "second_review" in e]
    listed, reviewed = mutation_score.review_count(machine)
    assert (listed, reviewed) == (len(entries), len(reviews)), reviews


REVIEWED_EQUIVALENT = f"{WAKE}:is_rapid:return-None:fdf0c491"


def test_entries_with_extra_keys_load_and_only_agreements_count_as_reviews(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    reason = "None and False are both falsy, and the result is only used as a condition"
    entries: list[dict[str, Any]] = [
        {"id": REVIEWED_EQUIVALENT, "reason": reason, "second_review": "agreed", "seen_by": ["a", "b"]},
        {"id": f"{WAKE}:x:text:00000001", "reason": "a second entry", "second_review": "agreed: a note"},
        {"id": f"{WAKE}:x:text:00000002", "reason": "a third entry", "second_review": True},
        {"id": f"{WAKE}:x:text:00000003", "reason": "a fourth entry", "second_review": "disagreed: killable"},
        {"id": f"{WAKE}:x:text:00000004", "reason": "a fifth entry", "second_review": "agreedish"},
        {"id": f"{WAKE}:x:text:00000005", "reason": "a sixth entry"},
    ]
    (tmp_path / "wake-gate.json").write_text(json.dumps({"machine": "wake-gate", "equivalent": entries}))
    monkeypatch.setattr(mutation_score, "EQUIVALENTS_DIR", tmp_path)
    assert mutation_score.load_equivalents("wake-gate") == {e["id"]: e["reason"] for e in entries}
    assert mutation_score.review_count("wake-gate") == (6, 2)
    assert mutation_score.review_count("peer-delivery") == (0, 0)  # no file in tmp_path
    result = mutation_score.score("wake-gate", only=[REVIEWED_EQUIVALENT])
    assert [m.id for m, _ in result.equivalent] == [REVIEWED_EQUIVALENT]
    assert (result.as_json()["listed_equivalents"], result.as_json()["second_reviewed"]) == (6, 2)
    before = signal.getsignal(signal.SIGTERM)
    assert mutation_score.main(["wake-gate", "--only", REVIEWED_EQUIVALENT]) == 0
    assert "second review: 2 of 6 listed equivalents" in capsys.readouterr().out
    # main's own SIGTERM handler is the caller's again: this process forks later (checker/forked.py).
    assert signal.getsignal(signal.SIGTERM) is before


def _ids(module: str, source: str) -> set[str]:
    return {m.id for m in mutation_score.mutants_of_source(module, source)}


PEER = "inboxspec.impl.peer_delivery"
PEER_SOURCE = mutation_score._source(PEER)
# Each edit adds text elsewhere in the module: none may rename a mutant it does not touch.
UNRELATED_EDITS = {
    "a module constant before the others": ("\nDIALOG_EXPIRY_DEFAULT",
                                            '\nUNRELATED_NOTE = "an unrelated note"\nDIALOG_EXPIRY_DEFAULT'),
    "a new item in a tuple constant": ('"rate-limited", ', '"rate-limited", "also-unrelated", '),
    "a new function first": ("\nclass ",
                             '\ndef unrelated() -> str:\n    return "unrelated" + "x"\n\n\nclass '),
}


def test_mutant_ids_are_unique_in_every_machine() -> None:
    for machine in machines.names():
        ids = [m.id for m in mutation_score.mutation_targets(machines.get(machine))]
        assert len(ids) == len(set(ids)), machine


@pytest.mark.parametrize("edit", sorted(UNRELATED_EDITS))
def test_adding_an_unrelated_string_leaves_the_other_ids_alone(edit: str) -> None:
    anchor, replacement = UNRELATED_EDITS[edit]
    assert anchor in PEER_SOURCE, "the edit's anchor is gone from the module; choose another"
    edited = PEER_SOURCE.replace(anchor, replacement, 1)
    before, after = _ids(PEER, PEER_SOURCE), _ids(PEER, edited)
    assert before < after  # the edit adds mutants, and every earlier one keeps its id
    assert len(after - before) >= 1


def test_the_id_names_the_scope_and_the_constant() -> None:
    ids = _ids(PEER, PEER_SOURCE)
    assert any(i.startswith(f"{PEER}:DROP_REASONS:text:") for i in ids)
    assert any(i.startswith(f"{PEER}:PeerDelivery.send_message:") for i in ids)
    # Equal mutants in one scope differ by their statement: two ``= 0`` assignments are two ids.
    twice = "def f(self):\n    self.count = 0\n    self.total = 0\n"
    assert len({i for i in _ids("m", twice) if ":int+1:" in i}) == 2
    same = "def f(self):\n    self.count = 0\n    self.count = 0\n"
    assert sorted(i.rsplit(":", 1)[1][8:] for i in _ids("m", same) if ":int+1:" in i) == ["", "#2"]


def test_mutants_do_not_leak_into_the_parent() -> None:
    from inboxspec.impl import wake_gate

    before = wake_gate.is_rapid
    mutation_score.score("wake-gate", only=[f"{WAKE}:is_rapid:Lt->LtE:680b6d3d"])
    assert wake_gate.is_rapid is before
    assert wake_gate.is_rapid(0, 30_000, wake_gate.GateRules(1, 30_000, wake_gate.GateOptions())) is False


def test_a_machine_the_fresh_registry_lacks_is_a_harness_error(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a false kill: mutants run in a fresh import, where a test's machine is unknown."""
    from tests import toy_machine

    entry = toy_machine.make_machine(tmp_path)
    monkeypatch.setitem(machines.REGISTRY, entry.name, entry)
    (first, *_) = mutation_score.mutation_targets(entry)
    assert first.module == "tests.toy_machine"
    with pytest.raises(mutation_score.MutationHarnessError):
        mutation_score.score("toy-lease", only=[first.id])


def test_two_jobs_give_each_mutant_the_verdict_one_job_gives() -> None:
    chosen = [f"{WAKE}:is_rapid:Lt->LtE:680b6d3d", f"{WAKE}:is_rapid:return-None:fdf0c491",
              f"{WAKE}:decide:False->True:e825b6f1#2"]
    mutants = [m for m in mutation_score.mutation_targets(machines.get("wake-gate")) if m.id in chosen]
    one = mutation_score.run_mutants("wake-gate", mutants, 20.0, jobs=1)
    two = mutation_score.run_mutants("wake-gate", mutants, 20.0, jobs=2)
    assert one == two
    assert [mutant_id for mutant_id, reason in one.items() if reason is None] == [chosen[1]]


def test_a_child_the_run_did_not_start_is_left_to_its_owner() -> None:
    """A subprocess that ends while mutants run keeps its exit status for whoever started it."""
    (mutant,) = [m for m in mutation_score.mutation_targets(machines.get("wake-gate"))
                 if m.id == f"{WAKE}:is_rapid:return-None:fdf0c491"]
    other = subprocess.Popen(["sh", "-c", "exit 7"])
    try:
        # Ended and not yet reaped before the mutants start: a wait for any child would take it first.
        deadline = time.monotonic() + 10
        while (info := process_tree.process_info(other.pid)) is None or info.state != "Z":
            assert time.monotonic() < deadline, "the shell did not end"
            time.sleep(0.01)
        verdicts = mutation_score.run_mutants("wake-gate", [mutant], 20.0, jobs=1)
    finally:
        code = other.wait(timeout=30)
    assert verdicts == {mutant.id: None}
    assert code == 7


@pytest.mark.parametrize("parents_alarm", [signal.SIG_DFL, signal.SIG_IGN])
def test_a_child_killed_at_its_timeout_leaves_no_directory(monkeypatch: pytest.MonkeyPatch,
                                                           parents_alarm: signal.Handlers) -> None:
    """The child's alarm ends it whatever the parent does with SIGALRM (here, ignores it)."""
    (mutant,) = [m for m in mutation_score.mutation_targets(machines.get("wake-gate"))
                 if m.id == f"{WAKE}:is_rapid:Lt->LtE:680b6d3d"]
    monkeypatch.setattr(mutation_score, "_cases_kill", _write_then_hang)
    previous = signal.signal(signal.SIGALRM, parents_alarm)
    try:
        child = mutation_score.start_mutant("wake-gate", mutant, timeout=1.0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    deadline = time.monotonic() + 5
    while not os.listdir(child.tmpdir) and time.monotonic() < deadline:  # the child's own TMPDIR
        time.sleep(0.02)
    assert os.listdir(child.tmpdir), "the child wrote its file into the directory it was given"
    deadline = time.monotonic() + 10
    while (reaped := os.waitpid(child.pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if reaped[0] == 0:
        os.kill(child.pid, signal.SIGKILL)
        os.waitpid(child.pid, 0)
        pytest.fail("the child outlived its timeout")
    status = reaped[1]
    assert mutation_score.finish_mutant(child, status) == f"timeout or signal {signal.SIGALRM}"
    assert not Path(child.tmpdir).exists()


def _write_then_hang(machine_name: str, cases: Any) -> str | None:
    """A stand-in for the cases: a fixture file in the child's temporary directory, then a hang."""
    with tempfile.NamedTemporaryFile(delete=False) as handle:
        handle.write(b"fixture")
    time.sleep(30)
    return None


def test_a_child_imports_afresh_what_imports_the_mutated_module_and_nothing_else() -> None:
    import inboxspec.conformance.compare
    import inboxspec.machines.wake_gate_driver  # noqa: F401

    stale = mutation_score.stale_modules(WAKE)
    assert {WAKE, "inboxspec.machines.wake_gate_driver", "inboxspec.machines.wake_gate",
            "inboxspec.machines"} <= stale
    # What neither the mutated module nor its importers reach stays as the parent loaded it.
    assert not {"inboxspec.impl.peer_delivery", "inboxspec.impl.errors", "inboxspec.model.wake_gate"} & stale


def test_a_terminated_run_kills_its_children_and_removes_their_directories(tmp_path: Path) -> None:
    """SIGTERM (a cancelled CI job) unwinds like Ctrl-C: no child and no child's directory stays."""
    import subprocess

    process = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "mutation_score.py"), "wake-gate", "--jobs", "2"],
        env={**os.environ, "TMPDIR": str(tmp_path)}, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob("inboxspec-mutant-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(tmp_path.glob("inboxspec-mutant-*")), "the run started its children"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 128 + signal.SIGTERM
        assert not list(tmp_path.glob("inboxspec-mutant-*"))
        with pytest.raises(ProcessLookupError):  # nothing of the run's process group is left
            os.killpg(process.pid, 0)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
