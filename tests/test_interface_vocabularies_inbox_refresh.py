"""Every vocabulary constant and default of the inbox refresh's reference (impl/) and model
(model/) equals its interface data (spec/inbox-refresh.interface.json); the case driver's
scripted world reads the data itself. impl and model stay two independent descriptions with
their own constants: this test ties both to the one written list."""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path
from types import ModuleType

import pytest

from inboxspec.impl import inbox_refresh as impl
from inboxspec.machines import interface
from inboxspec.machines.inbox_refresh_driver import FakeSource, JobScript, Session
from inboxspec.model import inbox_refresh as model

DATA = interface.load("inbox-refresh")
SCRIPT = DATA.records["job_script"]


def option_names(options: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(options))


def string_literals(module: ModuleType) -> set[str]:
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    return {node.value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def test_reference_constants_equal_the_data() -> None:
    assert DATA.config_key("max_items").default == impl.DEFAULT_MAX_ITEMS
    assert DATA.config_key("max_bytes").default == impl.DEFAULT_MAX_BYTES
    assert option_names(impl.RefreshOptions) == DATA.options
    assert SCRIPT.field("message").default == impl.WORKER_CHANGED
    assert tuple(impl.TITLE) == tuple(impl.DETAIL) == DATA.vocabulary("status_kinds")
    assert typing.get_args(impl.ErrorKind) == DATA.vocabulary("error_kinds")
    callers = DATA.events["snapshot"].argument("callers")
    assert (callers.default, callers.schema["maximum"]) == (1, impl.MAX_CALLERS)
    assert DATA.events["advance"].argument("now_ms").schema["maximum"] == impl.MAX_TIME_MS
    assert DATA.config_key("start_ms").schema["maximum"] == impl.MAX_TIME_MS
    codes = {cls.code for cls in (impl.InvalidConfig, impl.InvalidTime, impl.InvalidCallers,
                                  impl.InvalidInvalidation, impl.InvalidArgument, impl.ProviderClosed)}
    assert codes == {code for code, _ in DATA.errors}
    defaults = DATA.events["invalidate"].defaults()
    record = impl.Invalidation()
    assert (record.hard, record.capacity, list(record.remove_ids), record.added) == (
        defaults["hard"], defaults["capacity"], defaults["remove_ids"], defaults["added"])


def test_model_constants_equal_the_data() -> None:
    assert DATA.config_key("max_items").default == model.DEFAULT_MAX_ITEMS
    assert DATA.config_key("max_bytes").default == model.DEFAULT_MAX_BYTES
    assert option_names(model.RefreshModelOptions) == DATA.options
    assert DATA.config_key("start_ms").schema["maximum"] == model.MAX_TIME_MS
    script = model.Script("result")
    assert {f.name: getattr(script, f.name) for f in SCRIPT.fields if f.has_default} == SCRIPT.defaults()
    assert model.Script(**DATA.vocabularies["unscripted_job"]) == model.UNSCRIPTED
    chart = model.InboxRefreshChart()
    start = DATA.vocabularies["fake_source_start"]
    assert (chart.version, chart.layout, chart.world_policy, chart.readable) == (
        start["version"], start["layout"], start["policy"], start["readable"])


@pytest.mark.parametrize("module", [impl, model], ids=["impl", "model"])
@pytest.mark.parametrize("vocabulary", ["outcomes", "settlements", "cancels", "status_kinds", "error_kinds"])
def test_every_word_is_written_in_the_description(module: ModuleType, vocabulary: str) -> None:
    """A description that spells an outcome, a settlement or a kind differently is caught."""
    words = set(DATA.vocabulary(vocabulary))
    if module is impl and vocabulary in ("outcomes", "cancels"):
        words = set()  # the reference never sees a script: the driver's world reads them from the data
    if module is model and vocabulary == "outcomes":
        words -= {"result"}  # the model's settle takes every other outcome first, then the result
    assert words <= string_literals(module), sorted(words - string_literals(module))


def test_the_scripted_world_reads_the_data() -> None:
    script = JobScript.from_json({"outcome": "moved"})
    assert {f.name: getattr(script, f.name) for f in SCRIPT.fields if f.has_default} == SCRIPT.defaults()
    source = FakeSource([])
    start = DATA.vocabularies["fake_source_start"]
    assert (source.version, source.layout, source.policy, source.readable) == (
        start["version"], start["layout"], start["policy"], start["readable"])
    session = Session({})
    assert session.log_throws is DATA.config_key("log_throws").default
    assert session.source.deny == tuple(DATA.config_key("deny").default)
