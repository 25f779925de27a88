"""Untrusted errors (WRITER-SAFE-1..3): forgeries become the generic refusal of the given category.

Python analogues of the seed's checks: a spoofed ``__class__``, proxies that compute attributes
(``__getattr__``, ``__getattribute__``), fields that are properties or class attributes instead
of the instance's own data, and values outside the vocabularies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from inboxspec.impl.writer_proofs import (
    PlacementWriterContextError,
    SharedWriterRevisionError,
    WriterMeasurementError,
    extract_failure,
    safe_refusal,
)

GENERIC = {
    "category": "declared writer",
    "cause": "unavailable",
    "phase": "initial",
    "detail": None,
    "renewal_state": None,
}


def fields(refusal: PlacementWriterContextError) -> dict[str, Any]:
    return {k: v for k, v in refusal.as_json().items() if k != "message"}


class SpoofedClass(Exception):
    """Claims to be a refusal through ``__class__``."""

    __class__ = PlacementWriterContextError  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__("forged")
        self.category = "running CLI"
        self.cause_class = "missing"


class GetattrProxy(PlacementWriterContextError):
    def __init__(self) -> None:
        Exception.__init__(self, "forged")

    def __getattr__(self, name: str) -> Any:
        return {"category": "running CLI", "cause_class": "missing"}.get(name)


class GetattributeProxy(PlacementWriterContextError):
    def __getattribute__(self, name: str) -> Any:
        if name in ("category", "cause_class"):
            return "running CLI" if name == "category" else "missing"
        return super().__getattribute__(name)


class PropertyFields(PlacementWriterContextError):
    def __init__(self) -> None:
        Exception.__init__(self, "forged")

    @property
    def category(self) -> str:  # type: ignore[override]  # forged: a property, not instance data
        return "running CLI"

    @property
    def cause_class(self) -> str:  # type: ignore[override]  # forged: a property, not instance data
        return "missing"


class ClassAttributeFields(PlacementWriterContextError):
    category = "running CLI"
    cause_class = "missing"

    def __init__(self) -> None:
        Exception.__init__(self, "forged")


def out_of_vocabulary() -> PlacementWriterContextError:
    error = PlacementWriterContextError("running CLI", "missing")
    error.category = "kernel"
    return error


def bad_cause() -> PlacementWriterContextError:
    error = PlacementWriterContextError("running CLI", "missing")
    error.cause_class = "stolen"
    return error


def non_string_category() -> PlacementWriterContextError:
    error = PlacementWriterContextError("running CLI", "missing")
    error.category = ["running CLI"]  # type: ignore[assignment]
    return error


FORGERIES: dict[str, Callable[[], object]] = {
    "spoofed __class__": SpoofedClass,
    "__getattr__ proxy": GetattrProxy,
    "__getattribute__ proxy": lambda: GetattributeProxy("running CLI", "missing"),
    "property fields": PropertyFields,
    "class attribute fields": ClassAttributeFields,
    "out-of-vocabulary category": out_of_vocabulary,
    "out-of-vocabulary cause": bad_cause,
    "non-string category": non_string_category,
    "a foreign error": lambda: OSError("EIO"),
    "a plain object": lambda: {"category": "running CLI", "cause_class": "missing"},
    "None": lambda: None,
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_forged_refusal_becomes_the_generic_refusal(name: str) -> None:
    """WRITER-SAFE-1."""
    refusal = safe_refusal(FORGERIES[name](), "declared writer", "initial")
    assert fields(refusal) == GENERIC


def test_genuine_refusal_is_rebuilt_in_the_given_phase() -> None:
    """WRITER-SAFE-3: own fields kept, phase replaced, unknown detail dropped."""
    genuine = PlacementWriterContextError("setup receipt", "changed", "active", "changed")
    assert fields(safe_refusal(genuine, "declared writer", "initial")) == {
        "category": "setup receipt",
        "cause": "changed",
        "phase": "initial",
        "detail": "changed",
        "renewal_state": None,
    }
    genuine.detail = "root-kit"
    genuine.renewal_state = "later"
    assert fields(safe_refusal(genuine, "declared writer"))["detail"] is None
    assert fields(safe_refusal(genuine, "declared writer"))["renewal_state"] is None


class RenewalProxy(SharedWriterRevisionError):
    def __getattr__(self, name: str) -> Any:
        return "pending"


class RenewalProperty(SharedWriterRevisionError):
    def __init__(self) -> None:
        Exception.__init__(self, "forged")

    @property
    def code(self) -> str:  # type: ignore[override]  # forged: a property, not instance data
        return "staging"


class RenewalSpoof(Exception):
    __class__ = SharedWriterRevisionError  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__("forged")
        self.code = "pending"


def renewal_bad_code() -> SharedWriterRevisionError:
    error = SharedWriterRevisionError("pending")
    error.code = "done"
    return error


@pytest.mark.parametrize(
    "forge",
    [lambda: RenewalProxy("pending"), RenewalProperty, RenewalSpoof, renewal_bad_code],
    ids=["proxy", "property", "spoofed __class__", "out-of-vocabulary code"],
)
def test_forged_renewal_becomes_the_generic_refusal(forge: Any) -> None:
    """WRITER-SAFE-1, WRITER-SAFE-2: only an own code of exactly pending or staging counts."""
    assert fields(safe_refusal(forge(), "active locator")) == {
        "category": "active locator",
        "cause": "unavailable",
        "phase": "active",
        "detail": None,
        "renewal_state": None,
    }


@pytest.mark.parametrize("state", ["pending", "staging"])
def test_genuine_renewal_is_the_writer_renewal_refusal(state: str) -> None:
    """WRITER-SAFE-2, WRITER-MSG-3."""
    refusal = safe_refusal(SharedWriterRevisionError(state), "active locator", "initial")
    assert fields(refusal) == {
        "category": "writer renewal",
        "cause": "unavailable",
        "phase": "initial",
        "detail": None,
        "renewal_state": state,
    }
    assert str(refusal) == str(SharedWriterRevisionError(state))


class FailureProxy(WriterMeasurementError):
    def __getattr__(self, name: str) -> Any:
        return "bound"


class FailureProperty(WriterMeasurementError):
    def __init__(self) -> None:
        Exception.__init__(self, "forged")

    @property
    def detail(self) -> str:  # type: ignore[override]  # forged: a property, not instance data
        return "bound"


def failure_bad_detail() -> WriterMeasurementError:
    error = WriterMeasurementError("bound", 0)
    error.detail = "pwned"
    return error


@pytest.mark.parametrize(
    "forge",
    [lambda: FailureProxy("bound"), FailureProperty, failure_bad_detail, lambda: ValueError("bound")],
    ids=["proxy", "property", "out-of-vocabulary detail", "foreign"],
)
def test_forged_measurement_failure_is_not_extracted(forge: Any) -> None:
    """WRITER-COMP-2: a failure that is not genuine reads as unreadable, with no index."""
    assert extract_failure(forge()) is None


def test_genuine_measurement_failure_is_extracted() -> None:
    assert extract_failure(WriterMeasurementError("changed", 2)) == ("changed", "changed", 2)
    assert extract_failure(WriterMeasurementError("bound")) == ("failed", "bound", None)
