"""JSON Schema validation of a document whose schema applies one subschema to each item of an array,
one distinct item at a time.

``cases lint`` validates every step of every case against its machine's case schema, and every
entry of every fixture against the fixture schema. Steps and entries repeat across cases (the
bundled cases hold about 5,000 steps, 2,400 of them distinct), and jsonschema takes a tenth of a
millisecond or more per item, so most of the linter's time went to validating the same item again.

:class:`ItemwiseValidator` splits the schema in two: the *frame*, the schema with the array's
``items`` taken out, validated once per document, and the *item schema*, validated once per
distinct item (remembered by :func:`~inboxspec.machines.interface.json_key`, which tells apart
every two values the validator can). This is exact: ``items`` applies its subschema to each
element on its own, so an element's errors depend on nothing but the element, and every other
keyword of the schema is still in the frame. The split refuses a schema where that would not hold
(``prefixItems``, which shifts where ``items`` starts, and ``unevaluatedItems``, which reads what
``items`` evaluated).

A ``narrow`` function may give, per item, a smaller item schema with exactly the same errors for
that item (the case schema's rule for the step's own event, say); it is the caller's to show.
``tests/test_itemwise.py`` compares every error of this validator with jsonschema's own over the
whole schema, on every bundled case and fixture and on broken ones.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

import jsonschema

from inboxspec.machines.interface import json_key

# An error as the callers report it: its path in the document (as jsonschema's
# ``absolute_path``) and its message.
Error = tuple[tuple[str | int, ...], str]

# The keywords that carry a schema's resources: an item schema validated on its own keeps them, so
# that a ``$ref`` in it resolves as it did in the whole schema.
_ROOT_KEYWORDS = ("$schema", "$id", "$defs")
_REMEMBERED = 16_384  # items remembered per validator before the memo starts again


class ItemwiseValidator:
    """Validates documents against ``schema`` whose ``properties[array]`` is an array schema with
    ``items``; :meth:`errors` gives what ``iter_errors`` over the whole schema gives, sorted by path."""

    def __init__(self, schema: Mapping[str, Any], array: str,
                 narrow: Callable[[Any, Mapping[str, Any]], tuple[Hashable, Mapping[str, Any]]] | None = None
                 ) -> None:
        """``narrow(item, item_schema)``, if given, returns a key and a schema that gives ``item``
        exactly the errors ``item_schema`` gives it: the item is then validated against that schema
        (one validator per key)."""
        array_schema = schema["properties"][array]
        refused = {"prefixItems", "unevaluatedItems"} & set(array_schema)
        if "items" not in array_schema or refused:
            raise ValueError(f"properties.{array} must have items and none of {sorted(refused)}")
        frame = {**schema, "properties": {**schema["properties"],
                                          array: {k: v for k, v in array_schema.items() if k != "items"}}}
        self._frame = jsonschema.Draft202012Validator(frame)
        self._array = array
        self._root = {k: schema[k] for k in _ROOT_KEYWORDS if k in schema}
        self._item_schema: Mapping[str, Any] = array_schema["items"]
        self._narrow = narrow
        self._item_validators: dict[Hashable, jsonschema.Draft202012Validator] = {}
        self._known: dict[Any, list[Error]] = {}

    def errors(self, document: Any) -> list[Error]:
        found = [(tuple(e.absolute_path), e.message) for e in self._frame.iter_errors(document)]
        items = document.get(self._array) if isinstance(document, dict) else None
        if isinstance(items, list):
            for index, item in enumerate(items):
                found += [((self._array, index, *path), message) for path, message in self._item_errors(item)]
        # Sorted as the callers sorted iter_errors over the whole schema (stable: errors at one path
        # keep their order, and those all come from the frame or all from one item).
        return sorted(found, key=lambda error: [str(part) for part in error[0]])

    def _item_errors(self, item: Any) -> list[Error]:
        key = json_key(item)
        known = self._known.get(key) if key is not None else None
        if known is not None:
            return known
        narrowed_key, schema = (None, self._item_schema) if self._narrow is None \
            else self._narrow(item, self._item_schema)
        validator = self._item_validators.get(narrowed_key)
        if validator is None:
            validator = self._item_validators[narrowed_key] = jsonschema.Draft202012Validator(
                {**self._root, **schema})
        found = [(tuple(e.absolute_path), e.message) for e in validator.iter_errors(item)]
        if key is not None:
            if len(self._known) >= _REMEMBERED:
                self._known.clear()
            self._known[key] = found
        return found


def json_path(path: tuple[str | int, ...]) -> str:
    """A path as jsonschema's ``json_path`` writes it (``$.steps[0].args``)."""
    return jsonschema.ValidationError("", path=path).json_path
