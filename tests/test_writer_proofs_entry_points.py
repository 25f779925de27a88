"""The reference's entry points for a case, called directly with hostile input: the config checks
(``writer_harness.session_config``, then ``WriterProofs.from_config``, WRITER-IF-1), a step's first
fault (``check_arguments``, WRITER-IF-4) and the harness step's arguments
(``writer_harness.SwapPaths.from_arguments``, WRITER-IF-6).

Every config fault is ``invalid_config`` and every ``swap_paths`` fault ``invalid_argument``, so the
documented order of the checks shows only in which check's message a step with two faults gets:
each two-fault case below is answered by the first in the spec's order, so a reference that checks
them in another order, or skips one, fails here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NoReturn

import pytest

from inboxspec.impl import writer_harness
from inboxspec.impl.writer_harness import ScriptedEnvironment, SwapPaths, SwapScript, session_config
from inboxspec.impl.writer_proofs import (
    InvalidArgument,
    InvalidConfig,
    InvalidRoots,
    Options,
    WriterProofs,
    WriterProofsError,
    check_arguments,
)
from tests.writer_proofs_fakes import HOME, OWN_ROOT

VALID = {"home": HOME, "own_root": OWN_ROOT}


class Untouchable:
    """An environment that fails the test when anything is read: a config fault reads nothing."""

    def __getattr__(self, name: str) -> NoReturn:
        raise AssertionError(f"the environment was read ({name}) while the config was checked")


def build(config: object, resolve: Callable[[str], str] | None = None) -> WriterProofs:
    """The config checks in the order a driver calls them: the harness's, then the session's."""
    return WriterProofs.from_config(Untouchable(), session_config(config), resolve)


def config_fault(config: object) -> str:
    with pytest.raises(InvalidConfig) as raised:
        build(config)
    assert raised.value.code == "invalid_config"
    return str(raised.value)


# -- the config (WRITER-IF-1) ------------------------------------------------------------------------

NOT_OBJECTS = [None, 1, 1.5, True, "config", [], [("home", HOME)], ("home", HOME)]


@pytest.mark.parametrize("config", NOT_OBJECTS, ids=repr)
def test_a_config_that_is_not_an_object_is_refused_first(config: object) -> None:
    assert config_fault(config).startswith("config must be an object")


@pytest.mark.parametrize(("config", "first"), [
    # 2 before 3: the runner's key without a fixture, beside an unknown key
    ({**VALID, "fixture_dir": "/somewhere", "bogus": 1}, "fixture_dir is the runner's"),
    # 2 before 4
    ({"fixture_dir": "/somewhere", "home": 5}, "fixture_dir is the runner's"),
    # 3 before 4: an unknown key beside a bad home
    ({"bogus": 1, "home": 5, "own_root": OWN_ROOT}, "unknown writer-proofs config key(s): bogus"),
    # 3 before 5
    ({**VALID, "bogus": 1, "options": None}, "unknown writer-proofs config key(s): bogus"),
    # 4: home before own_root
    ({"home": "", "own_root": 5}, "home must be a non-empty string"),
    ({"own_root": None}, "home must be a non-empty string"),
    # 4 before 5: own_root before the options
    ({"home": HOME, "own_root": "", "options": 5}, "own_root must be a non-empty string"),
    ({"home": HOME, "options": {"bogus": True}}, "own_root must be a non-empty string"),
    # 5: not an object, then an unknown name, then a value that is not a boolean
    ({**VALID, "options": None}, "options must be an object of booleans"),
    ({**VALID, "options": {"bogus": 1, "attest_requires_fences": 1}}, "unknown writer-proofs option(s)"),
    ({**VALID, "options": {"attest_requires_fences": 1, "compare_writers_by_id": "no"}},
     "option attest_requires_fences must be true or false"),
])
def test_of_two_config_faults_the_first_in_the_spec_order_is_reported(config: object, first: str) -> None:
    assert config_fault(config).startswith(first)


@pytest.mark.parametrize("value", [None, 0, 1, True, "", b"/home", ["/home"], {"path": "/home"}], ids=repr)
@pytest.mark.parametrize("key", ["home", "own_root"])
def test_home_and_own_root_must_be_non_empty_strings(key: str, value: object) -> None:
    assert config_fault({**VALID, key: value}).startswith(f"{key} must be a non-empty string")
    absent = {name: path for name, path in VALID.items() if name != key}
    assert config_fault(absent).startswith(f"{key} must be a non-empty string")


@pytest.mark.parametrize("key", ["x", "Home", "fixture_dirs", "options ", ""])
def test_a_key_the_config_does_not_define_is_refused(key: str) -> None:
    assert config_fault({**VALID, key: HOME}).startswith("unknown writer-proofs config key(s)")


def test_the_runners_keys_are_the_harness_and_never_reach_the_session() -> None:
    fixture: dict[str, list[object]] = {"entries": []}
    assert session_config({**VALID, "fixture": fixture, "fixture_dir": "/d"}) == VALID
    assert session_config({**VALID, "fixture": fixture}) == VALID
    assert session_config(VALID) == VALID
    for config in NOT_OBJECTS:  # left for the session to refuse
        assert session_config(config) is config
    # the session itself knows only its own keys: the runner's are unknown to it
    for key in writer_harness.RUNNER_KEYS:
        with pytest.raises(InvalidConfig, match="unknown writer-proofs config key"):
            WriterProofs.from_config(Untouchable(), {**VALID, key: "/d"})


def test_a_fixture_dir_without_a_fixture_is_refused_by_the_harness() -> None:
    with pytest.raises(InvalidConfig, match="fixture_dir is the runner's"):
        session_config({**VALID, "fixture_dir": "/d"})


def test_a_valid_config_builds_a_session_and_resolves_its_paths_after_the_checks() -> None:
    resolved: list[str] = []

    def resolve(path: str) -> str:
        resolved.append(path)
        return path.replace("{fixture}", "/fx")

    proofs = build({"home": "{fixture}/home", "own_root": "{fixture}/cli", "fixture": {"entries": []},
                    "options": {"compare_writers_by_id": True}}, resolve)
    assert (proofs.home, proofs.own_root) == ("/fx/home", "/fx/cli")
    assert proofs.options == Options(compare_writers_by_id=True)
    assert (proofs.context, proofs.fences_held) == (None, False)
    assert resolved == ["{fixture}/home", "{fixture}/cli"]
    assert build(VALID).options == Options()
    resolved.clear()
    with pytest.raises(InvalidConfig):
        build({"home": "{fixture}/home", "own_root": "{fixture}/cli", "options": None}, resolve)
    assert resolved == []  # a refused config resolves nothing


# -- a step's first fault (WRITER-IF-4) -------------------------------------------------------------

@pytest.mark.parametrize("args", [None, [], [("roots", [])], "roots", 1, True], ids=repr)
def test_args_that_are_not_an_object_are_invalid_argument(args: object) -> None:
    with pytest.raises(InvalidArgument, match="args must be an object") as raised:
        check_arguments("initial", args, ("roots",))
    assert raised.value.code == "invalid_argument"


def test_an_argument_the_event_does_not_take_comes_before_its_arguments_own_faults() -> None:
    with pytest.raises(InvalidArgument, match=r"initial takes no argument\(s\) extra"):
        check_arguments("initial", {"roots": None, "extra": 1}, ("roots",))
    with pytest.raises(InvalidArgument, match=r"attest takes no argument\(s\) roots"):
        check_arguments("attest", {"roots": []}, ())
    with pytest.raises(InvalidArgument, match=r"swap_paths takes no argument\(s\) third"):
        check_arguments("swap_paths", {"first": 1, "third": "c"}, ("first", "second", "during"))
    args = {"roots": None}
    assert check_arguments("initial", args, ("roots",)) is args  # the value is the event's to check
    assert check_arguments("attest", {}, ()) == {}


def test_without_the_first_fault_the_event_checks_its_own_arguments() -> None:
    proofs = build(VALID)
    for bad in (None, "roots", [1], ("a", 1)):
        with pytest.raises(InvalidRoots):
            proofs.initial(bad)
        with pytest.raises(InvalidRoots):
            proofs.preview(bad)


# -- the harness step's arguments (WRITER-IF-6) -----------------------------------------------------

def swap_fault(args: Mapping[str, object]) -> str:
    with pytest.raises(InvalidArgument) as raised:
        SwapPaths.from_arguments(args)
    assert raised.value.code == "invalid_argument"
    return str(raised.value)


@pytest.mark.parametrize(("args", "first"), [
    ({}, "swap_paths: first"),
    ({"second": "b"}, "swap_paths: first"),
    ({"first": None, "second": "b"}, "swap_paths: first"),
    ({"first": ["a"], "second": "b", "during": "before_read"}, "swap_paths: first"),
    # first before second, second before during
    ({"first": 1, "second": 2}, "swap_paths: first"),
    ({"first": "a"}, "swap_paths: second"),
    ({"first": "a", "second": b"b", "during": "never"}, "swap_paths: second"),
    ({"first": "a", "second": "b", "during": None}, "swap_paths: during"),
    ({"first": "a", "second": "b", "during": "before_walk"}, "swap_paths: during"),
    ({"first": "a", "second": "b", "during": "BEFORE_READ"}, "swap_paths: during"),
    ({"first": "a", "second": "b", "during": ["before_read"]}, "swap_paths: during"),
    ({"first": "a", "second": "b", "during": 0}, "swap_paths: during"),
])
def test_swap_paths_arguments_are_checked_in_their_order(args: Mapping[str, object], first: str) -> None:
    assert swap_fault(args).startswith(first)


def test_valid_swap_paths_arguments() -> None:
    assert SwapPaths.from_arguments({"first": "a", "second": "b"}) == SwapPaths("a", "b", None)
    for moment in writer_harness.SWAP_MOMENTS:
        step = SwapPaths.from_arguments({"first": "", "second": "../b", "during": moment})
        assert step == SwapPaths("", "../b", moment)  # the paths are checked when the swap is made


def test_the_harness_step_checks_its_arguments_before_its_world() -> None:
    """A session whose world is not scripted has nothing to swap; bad arguments are still reported
    as the arguments' fault first."""
    with pytest.raises(InvalidArgument, match="swap_paths: second"):
        writer_harness.swap_paths(Untouchable(), {"first": "a"})
    with pytest.raises(InvalidArgument, match="world has none"):
        writer_harness.swap_paths(Untouchable(), {"first": "a", "second": "b"})


class Exchanges:
    """A fake exchange of two fixture paths: records each call, raising ``error`` if given one."""

    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[tuple[str, str]] = []
        self.error = error

    def __call__(self, first: str, second: str) -> None:
        self.calls.append((first, second))
        if self.error is not None:
            raise self.error


@pytest.mark.parametrize("error", [OSError(2, "neither exists"), ValueError("leaves the fixture")],
                         ids=["oserror", "valueerror"])
def test_a_swap_made_now_that_cannot_be_made_is_invalid_argument(error: Exception) -> None:
    exchanges = Exchanges(error)
    with pytest.raises(InvalidArgument, match="swap_paths failed") as raised:
        SwapScript(exchanges).step(SwapPaths("a", "b"))
    assert raised.value.code == "invalid_argument"
    assert exchanges.calls == [("a", "b")]


def test_an_armed_swap_moves_nothing_until_its_moment_and_replaces_one_armed_before() -> None:
    exchanges = Exchanges()
    env = ScriptedEnvironment(exchanges)
    writer_harness.swap_paths(env, {"first": "a", "second": "b", "during": "before_read"})
    writer_harness.swap_paths(env, {"first": "c", "second": "d", "during": "before_restat"})
    assert exchanges.calls == []
    assert env.before_read is not None and env.between is not None
    env.before_read()  # the first armed swap was replaced: nothing is armed for this moment
    assert exchanges.calls == []
    env.between()
    env.between()  # performed once, then disarmed
    assert exchanges.calls == [("c", "d")]
    assert env.swaps.armed is None
    writer_harness.swap_paths(env, {"first": "e", "second": "f"})  # made now
    assert exchanges.calls == [("c", "d"), ("e", "f")]


def test_an_armed_swap_that_cannot_be_made_moves_nothing_and_is_disarmed() -> None:
    script = SwapScript(Exchanges(OSError(2, "neither exists")))
    script.step(SwapPaths("a", "b", "before_read"))
    script.perform("before_read")  # no error: the measurement goes on
    assert script.armed is None


@pytest.mark.parametrize("call", [
    lambda: build([]), lambda: build({"home": 1}), lambda: check_arguments("attest", None, ()),
    lambda: SwapPaths.from_arguments({}), lambda: SwapScript(Exchanges(OSError())).step(SwapPaths("a", "b")),
], ids=["from_config", "home", "check_arguments", "swap_paths", "swap_now"])
def test_every_entry_point_raises_the_machines_typed_errors(call: Callable[[], object]) -> None:
    with pytest.raises(WriterProofsError):
        call()
