"""Every vocabulary constant and default of the idle-subscriptions reference (impl/) and model
(model/) equals its interface data (spec/idle-subscriptions.interface.json).

impl and model stay two independent descriptions with their own constants; this test ties
both to the one written list. Words a description writes inline (the model's phases and
verdicts) are checked by reading its source.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from inboxspec.impl import idle_label as impl_label
from inboxspec.impl import idle_subscriptions as impl_idle
from inboxspec.impl.idle_errors import IdleSubscriptionError
from inboxspec.machines import interface
from inboxspec.model import idle_subscriptions as model_idle

IDLE = interface.load("idle-subscriptions")
TEXTS = IDLE.vocabularies["texts"]
CONFIG_DEFAULTS = {key.name: key.default for key in IDLE.config_keys if key.name != "options"}


def option_names(dataclass: type) -> tuple[str, ...]:
    """A dataclass's field names, in order (the options, or a record's fields)."""
    return tuple(f.name for f in dataclasses.fields(dataclass))


def test_reference_config_defaults_and_options_equal_the_data() -> None:
    defaults = impl_idle.IdleConfig()
    assert {f.name for f in dataclasses.fields(impl_idle.IdleConfig)} == {k.name for k in IDLE.config_keys}
    assert {name: getattr(defaults, name) for name in CONFIG_DEFAULTS} == CONFIG_DEFAULTS
    assert option_names(impl_idle.IdleOptions) == IDLE.options
    # The seed-named constants (IDLE-DEF-1) are the defaults the data gives.
    assert CONFIG_DEFAULTS["ttl_ms"] == impl_idle.PEER_IDLE_SUBSCRIPTION_TTL_MS
    assert CONFIG_DEFAULTS["outstanding_cap"] == impl_idle.PEER_IDLE_OUTSTANDING_CAP
    assert CONFIG_DEFAULTS["priors_kept"] == impl_idle.PEER_IDLE_PRIORS_KEPT
    assert CONFIG_DEFAULTS["subscriber_cap"] == impl_idle.PEER_IDLE_SUBSCRIBER_TABLE_CAP
    assert CONFIG_DEFAULTS["debounce_ms"] == impl_idle.PEER_IDLE_FIRE_DEBOUNCE_MS
    assert CONFIG_DEFAULTS["held_backoff_ms"] == impl_idle.PEER_IDLE_HELD_BACKOFF_MS


def test_reference_vocabularies_equal_the_data() -> None:
    assert tuple(phase.value for phase in impl_idle.Phase) == IDLE.vocabulary("phases")
    assert tuple(phase.value for phase in impl_idle.CLOSED) == IDLE.vocabulary("closed_phases")
    assert IDLE.vocabulary("notice_kinds") == impl_label.PEER_IDLE_NOTICE_KINDS
    assert IDLE.vocabulary("answer_kinds") == impl_idle.RECOGNISED_ANSWERS
    assert option_names(impl_idle.RenderedNotice) == IDLE.vocabulary("notice_fields")
    assert option_names(impl_idle.SentNotice) == IDLE.vocabulary("sent_fields")
    assert option_names(impl_idle.Swept) == IDLE.vocabulary("swept_fields")
    assert IDLE.vocabularies["limits"]["label_max"] == impl_label.PEER_IDLE_LABEL_MAX
    assert {
        "tag": impl_label.NOTICE_TAG, "tail": impl_label.NOTICE_TAIL,
        "causes": impl_label.PEER_IDLE_UNAVAILABLE_CAUSES, "prefix_phrase": impl_label.PREFIX_PHRASE,
        "unnamed_label": impl_label.UNNAMED_LABEL, "clock_placeholder": impl_label.CLOCK_PLACEHOLDER,
    } == TEXTS
    offset = IDLE.config_key("reader_utc_offset_min")
    assert impl_label.MAX_UTC_OFFSET_MIN == offset.schema["maximum"] == -offset.schema["minimum"]


def test_reference_recognises_exactly_the_answer_fields() -> None:
    """IDLE-REQ-6: an answer with one more field than answer_fields is not recognised."""
    full = {"kind": "idle", "finished_at": 1, "detail": "d"}
    assert tuple(full) == IDLE.vocabulary("answer_fields")
    assert impl_idle.read_answer(full) == ("idle", 1, "d")
    assert impl_idle.read_answer({**full, "extra": 1}) == ("unavailable", None, None)
    assert model_idle.recognised(full) == ("idle", 1, "d")
    assert model_idle.recognised({**full, "extra": 1}) == ("unavailable", None, None)


def test_reference_helper_defaults_equal_the_data() -> None:
    """Each helper entry point's defaults (an absent argument) are the data's (IDLE-IF-1)."""
    calls: dict[str, Callable[..., object]] = {"format_clock": impl_label.format_peer_notice_clock,
             "render_notice": impl_label.render_idle_notice,
             "describe_subscription": impl_label.describe_peer_idle_subscription,
             "is_notice_kind": impl_label.is_peer_idle_notice_kind}
    for event, function in calls.items():
        parameters = inspect.signature(function).parameters
        for argument in IDLE.events[event].arguments:
            # A None default is the entry point's "absent": it then applies the data's default.
            assert argument.required == (parameters[argument.name].default is inspect.Parameter.empty), \
                (event, argument.name)
    for event in ("format_clock", "render_notice"):
        assert IDLE.events[event].argument("utc_offset_min").default == impl_label.DEFAULT_UTC_OFFSET_MIN
    assert IDLE.events["describe_subscription"].argument("detail_shared").default is False
    describe = impl_label.describe_peer_idle_subscription
    assert describe("a") == describe("a", None) == describe("a", False) != describe("a", True)


def test_reference_error_codes_equal_the_data() -> None:
    codes = {error.code for error in _subclasses(IdleSubscriptionError)}
    assert codes == {code for code, _ in IDLE.errors}


def _subclasses(cls: type[IdleSubscriptionError]) -> set[type[IdleSubscriptionError]]:
    found: set[type[IdleSubscriptionError]] = set(cls.__subclasses__())
    return found | {sub for child in found for sub in _subclasses(child)}


def test_model_defaults_and_vocabularies_equal_the_data() -> None:
    assert model_idle.DEFAULTS == CONFIG_DEFAULTS
    assert option_names(model_idle.IdleModelOptions) == IDLE.options
    assert IDLE.vocabulary("notice_kinds") == model_idle.NOTICE_KINDS
    assert IDLE.vocabularies["limits"]["label_max"] == model_idle.LABEL_MAX
    assert TEXTS["prefix_phrase"] == model_idle.PHRASE
    assert TEXTS["causes"] == model_idle.CAUSES
    assert TEXTS["tail"] == model_idle.TAIL
    assert tuple(state.id for state in model_idle.IdleSubscriptionsChart.states) == IDLE.vocabulary("phases")


def string_literals(module: ModuleType) -> set[str]:
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    return {node.value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


WRITTEN: list[tuple[ModuleType, str]] = [
    (model_idle, "phases"), (model_idle, "verdicts"), (model_idle, "answer_kinds"),
    (model_idle, "sent_fields"), (model_idle, "swept_fields"), (model_idle, "notice_fields"),
    (impl_idle, "verdicts"),
]


@pytest.mark.parametrize(("module", "vocabulary"), WRITTEN,
                         ids=[f"{m.__name__.rsplit('.', 2)[-2]}-{v}" for m, v in WRITTEN])
def test_every_word_is_written_in_the_description(module: ModuleType, vocabulary: str) -> None:
    words = set(IDLE.vocabulary(vocabulary))
    assert words <= string_literals(module), sorted(words - string_literals(module))


@pytest.mark.parametrize("text", ["tag", "unnamed_label", "clock_placeholder"])
def test_the_model_writes_the_fixed_texts(text: str) -> None:
    source = Path(model_idle.__file__).read_text(encoding="utf-8")
    assert TEXTS[text] in source
