"""Arbitrary Python values into every public entry point raise only the spec's typed errors
(WRITER-ERR-1, WRITER-ERR-2, WRITER-IF-5) and change nothing."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from inboxspec.impl.writer_proofs import InvalidConfig, InvalidRoots, Options, WriterProofs, WriterProofsError
from inboxspec.machines.writer_proofs_driver import build
from inboxspec.model.writer_proofs import Locator, ModelWriter, World
from tests.typed_errors import raises_only
from tests.writer_proofs_fakes import HOME, OWN_ROOT, FakeEnvironment

anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | st.binary(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
WORLD = World(
    "/cli",
    "/cli",
    (),
    (),
    "0.22.0",
    Locator(("/cli",), (ModelWriter("/cli", "0.22.0", "sha256:a"),)),
    (("/cli", "ok", "/cli"),),
    (("/cli", ("ok", "0.22.0", "sha256:a")),),
)


def _is_paths(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(type(v) is str for v in value)


def _session() -> WriterProofs:
    proofs = WriterProofs(FakeEnvironment(WORLD), HOME, OWN_ROOT)
    proofs.initial([OWN_ROOT])
    proofs.hold_fences()
    return proofs


@settings(max_examples=40)
@given(value=anything)
def test_bad_roots_and_requests_are_typed_and_change_nothing(value: Any) -> None:
    proofs = _session()
    context, fences = proofs.context, proofs.fences_held
    for call in (proofs.initial, proofs.preview):
        if _is_paths(value):
            continue
        try:
            call(value)
        except InvalidRoots:
            pass
        else:
            raise AssertionError(f"{call.__name__}({value!r}) was accepted")
        assert (proofs.context, proofs.fences_held) == (context, fences)


@settings(max_examples=40)
@given(home=anything, own_root=anything, options=anything)
def test_constructor_and_options_raise_only_invalid_config(home: Any, own_root: Any, options: Any) -> None:
    with contextlib.suppress(InvalidConfig):
        WriterProofs(FakeEnvironment(WORLD), home, own_root)
    with contextlib.suppress(InvalidConfig):
        Options.from_mapping(options)
    with contextlib.suppress(InvalidConfig):
        WriterProofs(FakeEnvironment(WORLD), HOME, OWN_ROOT, options)


@settings(max_examples=40)
@given(config=anything | st.dictionaries(st.sampled_from(["home", "own_root", "options", "x"]), anything))
def test_case_config_raises_only_invalid_config(config: Any) -> None:
    raises_only(WriterProofsError, "invalid_config", lambda: build(config, "/nowhere"))
